// Package compliance is comply_test_controller: the sandbox-only tool
// compliance runs use to force get_products into each arm, complete tasks,
// and seed fixture products, so that they can assert on the wire.
//
// It exists only in sandbox mode: outside it the tool is never registered,
// so it is absent from tools/list, the A2A card and the capabilities. Even
// in sandbox mode it serves only sandbox principals acting on persisted
// sandbox accounts; anyone else is FORBIDDEN before the scenario is even
// looked up. A forced rejection is not an answer it writes itself: it
// registers a directive that the next get_products consumes through the
// real composer, screen and ledger.
package compliance
