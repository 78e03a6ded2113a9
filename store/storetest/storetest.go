// Package storetest is the conformance suite for the storage roles: one
// set of tests every implementation must pass, so that the in-memory store
// and PostgreSQL behave the same to everything above them. It has one
// function per role (Accounts, Ledgers, ...); each test gets an empty
// store of its own, and the tests run in parallel.
//
// The suite exercises the contract through the interface only; what an
// implementation needs beyond it (reaching under it to tamper, two
// processes on one database) belongs in that implementation's own tests.
package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/storefront/storefront/demo"
	"github.com/storefront/storefront/merch"
	"github.com/storefront/storefront/products"
	"github.com/storefront/storefront/store"
)

// NewStore returns a new, empty store and arranges for it to be closed
// when t ends. The suite sets each store's clock (see Epoch).
type NewStore func(t *testing.T) store.Store

// The suite is one function per storage role: each runs the tests of that
// role, every test in parallel on an empty store of its own from
// newStore. An implementation's tests call every one (and Contract, for
// the rules all roles share); the roles it does not implement are not
// called. Each test may use other roles to set up (publishers, most
// often), so newStore returns the whole Store.

// Publishers tests store.Publishers.
func Publishers(t *testing.T, newStore NewStore) {
	run(t, newStore, tests{
		{"Publishers", testPublishers},
	})
}

// Products tests store.Products and store.BulkCatalogue.
func Products(t *testing.T, newStore NewStore) {
	run(t, newStore, tests{
		{"Catalogue", testCatalogue},
		{"BulkCatalogue", testBulkCatalogue},
		{"CatalogueConcurrentIfMatch", testCatalogueConcurrentIfMatch},
		{"CatalogueConcurrentWriters", testCatalogueConcurrentWriters},
	})
}

// Catalogues tests store.Catalogues, the catalogue history.
func Catalogues(t *testing.T, newStore NewStore) {
	run(t, newStore, tests{
		{"CatalogueHistory", testCatalogueHistory},
		{"CatalogueImport", testCatalogueImport},
		{"CatalogueCopies", testCatalogueCopies},
	})
}

// Rulebooks tests store.Rulebooks.
func Rulebooks(t *testing.T, newStore NewStore) {
	run(t, newStore, tests{
		{"Rulebooks", testRulebooks},
		{"RulebookConcurrentIfMatch", testRulebookConcurrentIfMatch},
	})
}

// Accounts tests store.Accounts.
func Accounts(t *testing.T, newStore NewStore) {
	run(t, newStore, tests{
		{"Accounts", testAccounts},
		{"EnsureAccountRace", testEnsureAccountRace},
	})
}

// Tokens tests store.Tokens.
func Tokens(t *testing.T, newStore NewStore) {
	run(t, newStore, tests{
		{"Tokens", testTokens},
		{"TokenNoRescope", testTokenNoRescope},
		{"TokenRotation", testTokenRotation},
	})
}

// Audit tests store.Audit.
func Audit(t *testing.T, newStore NewStore) {
	run(t, newStore, tests{
		{"Audit", testAudit},
		{"AuditConcurrentAppends", testAuditConcurrentAppends},
	})
}

// Ledgers tests store.Ledgers.
func Ledgers(t *testing.T, newStore NewStore) {
	run(t, newStore, tests{
		{"Ledger", testLedger},
		{"LedgerDecisionFilters", testDecisionFilters},
		{"LedgerConcurrentAppends", testLedgerConcurrentAppends},
	})
}

// Recordings tests store.Recordings and store.Retention: the requests
// kept beside the ledger, and what retention drops.
func Recordings(t *testing.T, newStore NewStore) {
	run(t, newStore, tests{
		{"RecordedRequests", testRecordedRequests},
		{"Retention", testRetention},
	})
}

// Sandbox tests store.Sandbox: directives and seeded catalogues.
func Sandbox(t *testing.T, newStore NewStore) {
	run(t, newStore, tests{
		{"Directives", testDirectives},
		{"DirectiveTakenOnce", testDirectiveTakenOnce},
		{"DirectiveClaims", testDirectiveClaims},
		{"SeededCatalogue", testSeededCatalogue},
		{"SeedConcurrent", testSeedConcurrent},
	})
}

// Replays tests store.Replays.
func Replays(t *testing.T, newStore NewStore) {
	run(t, newStore, tests{
		{"Replays", testReplays},
		{"ReplayOwnership", testReplayOwnership},
		{"ReplayLease", testReplayLease},
		{"ReplayPayloadBytes", testReplayPayloadBytes},
		{"ReplayStale", testReplayStale},
		{"ReplayRace", testReplayRace},
		{"PurgeReplays", testPurgeReplays},
	})
}

// AsyncTasks tests store.AsyncTasks.
func AsyncTasks(t *testing.T, newStore NewStore) {
	run(t, newStore, tests{
		{"Tasks", testTasks},
		{"TaskDelivery", testTaskDelivery},
		{"FinishTaskRace", testFinishTaskRace},
		{"ListTasks", testListTasks},
		{"PrincipalTasks", testPrincipalTasks},
	})
}

// SigningKeys tests store.SigningKeys.
func SigningKeys(t *testing.T, newStore NewStore) {
	run(t, newStore, tests{
		{"SigningKeys", testSigningKeys},
		{"SigningKeyRaces", testSigningKeyRaces},
	})
}

// Secrets tests store.Secrets: the secrets every role keeps sealed.
func Secrets(t *testing.T, newStore NewStore) {
	run(t, newStore, tests{
		{"Secrets", testSecrets},
	})
}

// Changes tests store.Changes.
func Changes(t *testing.T, newStore NewStore) {
	run(t, newStore, tests{
		{"Changes", testChanges},
		{"ChangesBurst", testChangesBurst},
	})
}

// MediaBuys tests store.MediaBuys.
func MediaBuys(t *testing.T, newStore NewStore) {
	run(t, newStore, tests{
		{"AccountTerms", testAccountTerms},
		{"MediaBuys", testMediaBuys},
		{"MediaBuyRevisionRace", testMediaBuyRevisionRace},
		{"Orders", testOrders},
		{"OrderDecidedOnce", testOrderDecidedOnce},
		{"Delivery", testDelivery},
		{"DeliveryConcurrentSimulations", testDeliveryConcurrentSimulations},
		{"LedgerTask", testLedgerTask},
	})
}

// Governance tests store.Governance.
func Governance(t *testing.T, newStore NewStore) {
	run(t, newStore, tests{
		{"GovernanceAgents", testGovernanceAgents},
	})
}

// Run runs the whole suite against a store: the contract every role
// shares, then each role's tests. Both stores call it, so a role added
// here is tested on both.
func Run(t *testing.T, newStore NewStore) {
	Contract(t, newStore)
	Publishers(t, newStore)
	Products(t, newStore)
	Catalogues(t, newStore)
	Rulebooks(t, newStore)
	Accounts(t, newStore)
	Tokens(t, newStore)
	Audit(t, newStore)
	Ledgers(t, newStore)
	Recordings(t, newStore)
	Sandbox(t, newStore)
	Replays(t, newStore)
	AsyncTasks(t, newStore)
	SigningKeys(t, newStore)
	Secrets(t, newStore)
	Changes(t, newStore)
	MediaBuys(t, newStore)
	Governance(t, newStore)
}

// Contract tests the rules every role keeps (see store.Store): tenancy,
// unknown publishers, refused writes and keys no store can hold, across
// all the roles at once.
func Contract(t *testing.T, newStore NewStore) {
	run(t, newStore, tests{
		{"Tenancy", testTenancy},
		{"UnknownPublisher", testUnknownPublisher},
		{"InvalidWrites", testInvalidWrites},
		{"UnkeepableKeys", testUnkeepableKeys},
	})
}

// tests are one role's tests, by name.
type tests []struct {
	name string
	fn   func(*testing.T, store.Store)
}

// run runs each test in parallel on an empty store of its own, on the
// suite's clock.
func run(t *testing.T, newStore NewStore, ts tests) {
	t.Helper()
	for _, test := range ts {
		t.Run(test.name, func(t *testing.T) {
			t.Parallel()
			test.fn(t, withClock(t, newStore(t)))
		})
	}
}

// The publishers every test starts from (those that need them). ghost is
// never created.
var (
	alpha = products.Publisher{ID: "alpha", Name: "Alpha Media", Domain: "alpha.example", AnonymousDiscovery: true}
	beta  = products.Publisher{ID: "beta", Name: "Beta Broadcasting", Domain: "beta.example"}
)

const ghost = "ghost"

// withPublishers puts alpha and beta.
func withPublishers(t *testing.T, s store.Store) {
	t.Helper()
	for _, p := range []products.Publisher{alpha, beta} {
		if err := s.PutPublisher(t.Context(), p); err != nil {
			t.Fatalf("PutPublisher(%q) = %v", p.ID, err)
		}
	}
}

// demoProducts returns n products of the demo catalogue: real products,
// with format params, pricing pointers and availability windows.
func demoProducts(t *testing.T, n int) []products.Product {
	t.Helper()
	ps := demo.Products()
	if len(ps) < n {
		t.Fatalf("the demo catalogue has %d products; the test needs %d", len(ps), n)
	}
	return ps[:n]
}

// rulebook returns the demo rulebook with its seller name set to name, so
// that versions are told apart by content.
func rulebook(name string, rules int) merch.Rulebook {
	rb := demo.Rulebook()
	rb.Voice.SellerName = name
	if rules < len(rb.Rules) {
		rb.Rules = rb.Rules[:rules]
	}
	return rb
}

// sameJSON fails unless got and want encode to the same JSON. Stores
// persist these types as JSON, and some (adcp.Date) hide their fields from
// cmp, so JSON is the equality that matters.
func sameJSON(t *testing.T, what string, got, want any) {
	t.Helper()
	g, err := json.MarshalIndent(got, "", "  ")
	if err != nil {
		t.Fatalf("%s: encoding got: %v", what, err)
	}
	w, err := json.MarshalIndent(want, "", "  ")
	if err != nil {
		t.Fatalf("%s: encoding want: %v", what, err)
	}
	if diff := cmp.Diff(string(w), string(g)); diff != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", what, diff)
	}
}

// wantErr fails unless errors.Is(err, target); target nil means no error.
func wantErr(t *testing.T, call string, err, target error) {
	t.Helper()
	switch {
	case target == nil && err != nil:
		t.Fatalf("%s = %v, want no error", call, err)
	case target != nil && !errors.Is(err, target):
		t.Fatalf("%s = %v, want %v", call, err, target)
	}
}

// parallel runs fn(i) for i in [0, n) at once, released together, and
// waits for all.
func parallel(n int, fn func(i int)) {
	var (
		wg    sync.WaitGroup
		start = make(chan struct{})
	)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			fn(i)
		}()
	}
	close(start)
	wg.Wait()
}

func testPublishers(t *testing.T, s store.Store) {
	ctx := t.Context()
	got, err := s.Publishers(ctx)
	wantErr(t, "Publishers() on an empty store", err, nil)
	if len(got) != 0 {
		t.Fatalf("Publishers() on an empty store = %v, want none", got)
	}
	_, err = s.Publisher(ctx, alpha.ID)
	wantErr(t, "Publisher(alpha) before it exists", err, store.ErrNotFound)
	_, err = s.Versions(ctx, alpha.ID)
	wantErr(t, "Versions(alpha) before it exists", err, store.ErrNotFound)

	withPublishers(t, s)
	got, err = s.Publishers(ctx)
	wantErr(t, "Publishers()", err, nil)
	if diff := cmp.Diff([]products.Publisher{alpha, beta}, got); diff != "" {
		t.Errorf("Publishers() mismatch (-want +got):\n%s", diff)
	}
	p, err := s.Publisher(ctx, beta.ID)
	wantErr(t, "Publisher(beta)", err, nil)
	if diff := cmp.Diff(beta, p); diff != "" {
		t.Errorf("Publisher(beta) mismatch (-want +got):\n%s", diff)
	}
	v, err := s.Versions(ctx, alpha.ID)
	wantErr(t, "Versions(alpha)", err, nil)
	if v != (store.Versions{}) {
		t.Errorf("Versions(alpha) of a new publisher = %+v, want zero", v)
	}
	cat, cv, err := s.Catalogue(ctx, alpha.ID)
	wantErr(t, "Catalogue(alpha)", err, nil)
	if len(cat) != 0 || cv != 0 {
		t.Errorf("Catalogue(alpha) of a new publisher = %d products at version %d, want none at 0", len(cat), cv)
	}

	// Replacing settings keeps the publisher's place (the first one added
	// is the default) and touches no version.
	renamed := alpha
	renamed.Name, renamed.AnonymousDiscovery = "Alpha Media Group", false
	wantErr(t, "PutPublisher(alpha renamed)", s.PutPublisher(ctx, renamed), nil)
	got, err = s.Publishers(ctx)
	wantErr(t, "Publishers()", err, nil)
	if diff := cmp.Diff([]products.Publisher{renamed, beta}, got); diff != "" {
		t.Errorf("Publishers() after replacing alpha mismatch (-want +got):\n%s", diff)
	}
	p, err = s.Publisher(ctx, alpha.ID)
	wantErr(t, "Publisher(alpha)", err, nil)
	if diff := cmp.Diff(renamed, p); diff != "" {
		t.Errorf("Publisher(alpha) after replacing mismatch (-want +got):\n%s", diff)
	}
	if v, _ := s.Versions(ctx, alpha.ID); v != (store.Versions{}) {
		t.Errorf("Versions(alpha) after PutPublisher = %+v, want zero", v)
	}
}

// testUnknownPublisher checks that every publisher-scoped method answers
// ErrNotFound for a publisher that does not exist, reads and writes alike.
func testUnknownPublisher(t *testing.T, s store.Store) {
	ctx := t.Context()
	withPublishers(t, s)
	p := demoProducts(t, 1)[0]
	digest := store.TokenDigest("sf_buyer_ghost")
	calls := []struct {
		name string
		call func() error
	}{
		{"Publisher", func() error { _, err := s.Publisher(ctx, ghost); return err }},
		{"Versions", func() error { _, err := s.Versions(ctx, ghost); return err }},
		{"Catalogue", func() error { _, _, err := s.Catalogue(ctx, ghost); return err }},
		{"PutProduct", func() error { _, err := s.PutProduct(ctx, ghost, p, 0); return err }},
		{"PutProduct with If-Match", func() error { _, err := s.PutProduct(ctx, ghost, p, 1); return err }},
		{"DeleteProduct", func() error { _, err := s.DeleteProduct(ctx, ghost, p.ProductID, 0); return err }},
		{"Rulebook", func() error { _, err := s.Rulebook(ctx, ghost); return err }},
		{"RulebookAt", func() error { _, err := s.RulebookAt(ctx, ghost, 1); return err }},
		{"RulebookHistory", func() error { _, err := s.RulebookHistory(ctx, ghost); return err }},
		{"SaveRulebook", func() error { _, err := s.SaveRulebook(ctx, ghost, rulebook("x", 1), 0, "a", ""); return err }},
		{"SaveRulebook with If-Match", func() error { _, err := s.SaveRulebook(ctx, ghost, rulebook("x", 1), 3, "a", ""); return err }},
		{"AccountByID", func() error { _, err := s.AccountByID(ctx, ghost, "acct_1"); return err }},
		{"AccountByKey", func() error { _, err := s.AccountByKey(ctx, ghost, "nk:a/b"); return err }},
		{"EnsureAccount", func() error {
			_, err := s.EnsureAccount(ctx, ghost, store.Account{Operator: "op.example", BrandDomain: "brand.example"})
			return err
		}},
		{"PutAccount", func() error {
			_, err := s.PutAccount(ctx, ghost, store.Account{ID: "acct_1", Operator: "op.example", BrandDomain: "brand.example"})
			return err
		}},
		{"ListAccounts", func() error { _, err := s.ListAccounts(ctx, ghost); return err }},
		{"CreateToken", func() error {
			_, err := s.CreateToken(ctx, digest, store.Token{Kind: store.BuyerToken, Publisher: ghost, Buyer: &store.Buyer{ID: "b"}})
			return err
		}},
		{"UseToken", func() error { _, err := s.UseToken(ctx, store.BuyerToken, ghost, digest, t0); return err }},
		{"Token", func() error { _, err := s.Token(ctx, ghost, "tok_1"); return err }},
		{"RevokeToken", func() error { _, err := s.RevokeToken(ctx, ghost, "tok_1", t0); return err }},
		{"Append", func() error { _, err := s.Append(ctx, record(ghost, 0)); return err }},
		{"Decisions", func() error { _, err := s.Decisions(ctx, ghost, store.DecisionFilter{}); return err }},
		{"WalkLedger", func() error { return s.WalkLedger(ctx, ghost, func(e ledgerEntry) error { return nil }) }},
		{"LedgerLen", func() error { _, err := s.LedgerLen(ctx, ghost); return err }},
		{"SetDirective", func() error {
			return s.SetDirective(ctx, ghost, "acct_1", "buyer", directive("x"))
		}},
		{"ClaimDirective", func() error { _, err := s.ClaimDirective(ctx, ghost, "acct_1", "buyer", "tok", time.Hour); return err }},
		{"SpendDirective", func() error { return s.SpendDirective(ctx, ghost, "acct_1", "buyer", "tok") }},
		{"ReleaseDirective", func() error { return s.ReleaseDirective(ctx, ghost, "acct_1", "buyer", "tok") }},
		{"ReserveReplay", func() error {
			_, err := s.ReserveReplay(ctx, ghost, store.Replay{Scope: "buyer|acct_1|get_products", Key: "k", RequestHash: "h", Token: "tok"}, time.Hour)
			return err
		}},
		{"CompleteReplay", func() error {
			return s.CompleteReplay(ctx, ghost, "buyer|acct_1|get_products", "k", "tok", []byte(`{}`), false, "")
		}},
		{"ReleaseReplay", func() error { return s.ReleaseReplay(ctx, ghost, "buyer|acct_1|get_products", "k", "tok") }},
		{"PurgeReplays", func() error { _, err := s.PurgeReplays(ctx, ghost, now(t, s).Add(time.Hour)); return err }},
		{"CreateTask", func() error {
			return s.CreateTask(ctx, ghost, newTask("task_1", owner, "get_products", "submitted", true))
		}},
		{"Task", func() error { _, err := s.Task(ctx, ghost, owner, "task_1"); return err }},
		{"PrincipalTasks", func() error { _, err := s.PrincipalTasks(ctx, ghost, "buyer", "task_1"); return err }},
		{"ListTasks", func() error { _, _, err := s.ListTasks(ctx, ghost, owner, store.TaskFilter{}); return err }},
		{"FinishTask", func() error {
			_, err := s.FinishTask(ctx, ghost, owner, "task_1", "completed", nil, now(t, s))
			return err
		}},
		{"RecordDelivery", func() error { return s.RecordDelivery(ctx, ghost, owner, "task_1", store.Delivery{Attempts: 1}) }},
		{"SeedProduct", func() error { _, err := s.SeedProduct(ctx, ghost, "sandbox-buyer", "run-1", p); return err }},
		{"SeededCatalogue", func() error { _, _, err := s.SeededCatalogue(ctx, ghost, "sandbox-buyer"); return err }},
		{"SigningKeys", func() error { _, err := s.SigningKeys(ctx, ghost); return err }},
		{"CreateSigningKey", func() error { return s.CreateSigningKey(ctx, ghost, signingKey("k-ghost", 1)) }},
		{"RotateSigningKey", func() error { return s.RotateSigningKey(ctx, ghost, signingKey("k-ghost", 1)) }},
	}
	for _, c := range calls {
		if err := c.call(); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("%s(%q) = %v, want ErrNotFound", c.name, ghost, err)
		}
	}
	// Nothing above may have brought the publisher into being.
	pubs, err := s.Publishers(ctx)
	wantErr(t, "Publishers()", err, nil)
	for _, p := range pubs {
		if p.ID == ghost {
			t.Errorf("Publishers() lists %q after calls that all failed", ghost)
		}
	}
}

// testChangesBurst writes to many publishers while the subscriber reads
// nothing, as a subscriber busy rebuilding a snapshot does, then reads: no
// publisher's change may be lost, however many there were, since a
// settings change carries no version a later request could notice.
func testChangesBurst(t *testing.T, s store.Store) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	ch := s.Changes(ctx)
	const n = 64
	unheard := map[string]bool{}
	for i := range n {
		p := products.Publisher{ID: fmt.Sprintf("burst-%02d", i), Name: "Burst Media", Domain: fmt.Sprintf("burst-%02d.example", i)}
		if err := s.PutPublisher(ctx, p); err != nil {
			t.Fatalf("PutPublisher(%q) = %v", p.ID, err)
		}
		unheard[p.ID] = true
	}
	timeout := time.After(10 * time.Second)
	for len(unheard) > 0 {
		select {
		case id, ok := <-ch:
			if !ok {
				t.Fatalf("Changes closed with %d publishers unheard", len(unheard))
			}
			delete(unheard, id)
		case <-timeout:
			t.Fatalf("after a burst of %d writes, %d publishers' changes were never announced", n, len(unheard))
		}
	}
}

// testChanges checks that writes to a catalogue, a rulebook and publisher
// settings are announced, that failed writes are not, and that the channel
// closes when its context ends.
func testChanges(t *testing.T, s store.Store) {
	withPublishers(t, s)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	ch := s.Changes(ctx)
	expect := func(after, want string) {
		t.Helper()
		timeout := time.After(10 * time.Second)
		for {
			select {
			case id, ok := <-ch:
				if !ok {
					t.Fatalf("Changes closed before announcing %q after %s", want, after)
				}
				if id == want {
					return
				}
			case <-timeout:
				t.Fatalf("Changes did not announce %q within 10s after %s", want, after)
			}
		}
	}
	// expectNext is stricter: the very next notice must be want.
	expectNext := func(after, want string) {
		t.Helper()
		select {
		case id := <-ch:
			if id != want {
				t.Fatalf("after %s, Changes announced %q first, want %q", after, id, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("Changes did not announce %q within 10s after %s", want, after)
		}
	}
	ps := demoProducts(t, 2)
	if _, err := s.PutProduct(ctx, alpha.ID, ps[0], 0); err != nil {
		t.Fatal(err)
	}
	expect("PutProduct(alpha)", alpha.ID)
	if _, err := s.SaveRulebook(ctx, beta.ID, rulebook("Beta", 2), 0, "test", ""); err != nil {
		t.Fatal(err)
	}
	expect("SaveRulebook(beta)", beta.ID)
	renamed := alpha
	renamed.Name = "Alpha Renamed"
	if err := s.PutPublisher(ctx, renamed); err != nil {
		t.Fatal(err)
	}
	expect("PutPublisher(alpha)", alpha.ID)
	if _, err := s.DeleteProduct(ctx, alpha.ID, ps[0].ProductID, 0); err != nil {
		t.Fatal(err)
	}
	expect("DeleteProduct(alpha)", alpha.ID)

	// Failed writes change nothing and announce nothing: the next notice
	// is the one from the write that succeeded after them.
	if _, err := s.PutProduct(ctx, alpha.ID, ps[1], 99); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("PutProduct with a stale If-Match = %v, want ErrConflict", err)
	}
	if _, err := s.SaveRulebook(ctx, alpha.ID, rulebook("x", 1), 5, "test", ""); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("SaveRulebook with a stale If-Match = %v, want ErrConflict", err)
	}
	if _, err := s.DeleteProduct(ctx, alpha.ID, "no-such-product", 0); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("DeleteProduct of a missing product = %v, want ErrNotFound", err)
	}
	if _, err := s.PutProduct(ctx, beta.ID, ps[1], 0); err != nil {
		t.Fatal(err)
	}
	expectNext("failed writes to alpha and PutProduct(beta)", beta.ID)

	cancel()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case _, ok := <-ch:
			if !ok {
				return
			}
		case <-timeout:
			t.Fatal("Changes did not close within 10s of its context ending")
		}
	}
}
