// Package sanitize is the mechanical screen between the storefront and the
// buyer. It is the only code that can produce [Text], the type every
// buyer-visible string must have: decline reasons, suggestions, error
// messages, transport text parts and webhook bodies.
//
// The screen strips markup, reads the text as its skeleton (each character
// as the character it looks like, by Unicode's confusables table), and drops
// any sentence that names something on the deny-list (internal rule ids and
// names, words of the notes that identify them, internal catalogue ids,
// vendor names, and each distinctive word of those on its own), however it
// is split or spelled out. Figures the caller formatted itself are judged as
// figures, so a confidential id cannot hide a disclosed threshold. When
// nothing survives it falls back to a caller-supplied canned line and, past
// that, to a fixed line owned by this package. It fails closed: a string
// that cannot be shown safely is not shown.
//
// A fixed line the storefront writes itself (an error message, a field
// name) is made with [Const], which accepts only a string constant and
// still screens it with the shared vendor screen, [Vendor]; a test checks
// that every such constant passes that screen unchanged.
//
// This package must never import another storefront package; it sits at the
// bottom of the pipeline so that nothing it does can depend on the data it
// guards.
package sanitize
