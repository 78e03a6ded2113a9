package pgstore_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/storefront/storefront/demo"
	"github.com/storefront/storefront/ledger"
	"github.com/storefront/storefront/products"
	"github.com/storefront/storefront/store"
	"github.com/storefront/storefront/store/pgstore"
	"github.com/storefront/storefront/store/pgstore/pgtest"
	"github.com/storefront/storefront/store/storetest"
)

func newStore(t *testing.T) store.Store { return pgtest.Open(t) }

// TestConformance runs the conformance suite, role by role.
func TestConformance(t *testing.T) {
	storetest.Run(t, newStore)
}

var (
	alpha = products.Publisher{ID: "alpha", Name: "Alpha Media", Domain: "alpha.example"}
	beta  = products.Publisher{ID: "beta", Name: "Beta Broadcasting", Domain: "beta.example"}
)

func putPublishers(t *testing.T, s store.Store, ps ...products.Publisher) {
	t.Helper()
	for _, p := range ps {
		if err := s.PutPublisher(t.Context(), p); err != nil {
			t.Fatalf("PutPublisher(%q) = %v", p.ID, err)
		}
	}
}

func record(publisher string, i int) ledger.Record {
	return ledger.Record{
		Publisher: publisher, Account: fmt.Sprintf("acct_%d", i%3), Principal: "buyer",
		RequestDigest: ledger.Digest(fmt.Appendf(nil, "request %d", i)), RulebookVersion: 1,
		Arm: "rejected", Slug: "budget_below_minimum", RuleIDs: []string{"MR-1"},
		ResponseDigest: ledger.Digest(fmt.Appendf(nil, "response %d", i)),
	}
}

// verify checks the publisher's chain over WalkLedger and returns the
// first break, or nil.
func verify(ctx context.Context, s store.Store, publisher string) (int64, error) {
	var v ledger.Verifier
	err := s.WalkLedger(ctx, publisher, v.Check)
	return v.Checked(), err
}

// receive waits up to d for id on ch, skipping other ids, and says how
// long it took.
func receive(t *testing.T, ch <-chan string, id string, d time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	timeout := time.After(d)
	for {
		select {
		case got, ok := <-ch:
			if !ok {
				t.Fatalf("Changes closed while waiting for %q", id)
			}
			if got == id {
				return time.Since(start)
			}
		case <-timeout:
			t.Fatalf("Changes did not deliver %q within %v", id, d)
		}
	}
}

// TestReplicas runs two stores on one database, as two storefront replicas
// would run: each sees the other's writes at once, hears of them through
// Changes within a second, and the guarantees that hold between goroutines
// hold between the two.
func TestReplicas(t *testing.T) {
	url := pgtest.NewDatabase(t)
	a, b := pgtest.OpenURL(t, url), pgtest.OpenURL(t, url)
	ctx := t.Context()
	changes := b.Changes(ctx)

	putPublishers(t, a, alpha, beta)
	if p, err := b.Publisher(ctx, alpha.ID); err != nil || p != alpha {
		t.Fatalf("replica b: Publisher(alpha) = %+v, %v, want %+v", p, err, alpha)
	}
	receive(t, changes, beta.ID, 5*time.Second)

	// A catalogue write on a reaches b's Changes within a second.
	product := demo.Products()[0]
	if _, err := a.PutProduct(ctx, alpha.ID, product, 0); err != nil {
		t.Fatal(err)
	}
	if took := receive(t, changes, alpha.ID, 5*time.Second); took > time.Second {
		t.Errorf("replica b heard of a's catalogue write after %v, want within 1s", took)
	}
	if cat, v, err := b.Catalogue(ctx, alpha.ID); err != nil || v != 1 || len(cat) != 1 {
		t.Errorf("replica b: Catalogue(alpha) = %d products at %d, %v, want 1 at 1", len(cat), v, err)
	}
	// So does a rulebook save, and b reads the new version.
	saved, err := a.SaveRulebook(ctx, alpha.ID, demo.Rulebook(), 0, "alice", "")
	if err != nil {
		t.Fatal(err)
	}
	if took := receive(t, changes, alpha.ID, 5*time.Second); took > time.Second {
		t.Errorf("replica b heard of a's rulebook save after %v, want within 1s", took)
	}
	if rb, err := b.Rulebook(ctx, alpha.ID); err != nil || rb.Version != saved.Version || rb.Author != "alice" {
		t.Errorf("replica b: Rulebook(alpha) = version %d by %q, %v, want %d by alice", rb.Version, rb.Author, err, saved.Version)
	}
	// If-Match holds across replicas: b's edit from the old version fails.
	if _, err := b.SaveRulebook(ctx, alpha.ID, demo.Rulebook(), 0, "bob", ""); !errors.Is(err, store.ErrConflict) {
		t.Errorf("replica b: SaveRulebook(ifMatch=0) after a saved version 1 = %v, want ErrConflict", err)
	}

	// Both replicas appending at once keep one chain.
	var wg sync.WaitGroup
	for w := range 8 {
		s := a
		if w%2 == 1 {
			s = b
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 20 {
				if _, err := s.Append(ctx, record(alpha.ID, w*20+i)); err != nil {
					t.Errorf("Append = %v", err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if n, err := verify(ctx, b, alpha.ID); err != nil || n != 160 {
		t.Errorf("after appends from both replicas, verification = %d entries, %v, want 160 and no break", n, err)
	}

	// A directive is consumed once, whichever replica takes it.
	for round := range 3 {
		if err := a.SetDirective(ctx, alpha.ID, "acct_1", "buyer", products.Directive{Arm: "rejected", Reason: fmt.Sprint(round)}); err != nil {
			t.Fatal(err)
		}
		var taken atomic.Int32
		for i := range 16 {
			s := a
			if i%2 == 1 {
				s = b
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				token := fmt.Sprintf("claimant-%d-%d", round, i)
				d, err := s.ClaimDirective(ctx, alpha.ID, "acct_1", "buyer", token, time.Hour)
				if err != nil {
					t.Errorf("ClaimDirective = %v", err)
				}
				if d != nil {
					taken.Add(1)
					if err := s.SpendDirective(ctx, alpha.ID, "acct_1", "buyer", token); err != nil {
						t.Errorf("SpendDirective(the claimant) = %v", err)
					}
				}
			}()
		}
		wg.Wait()
		if n := taken.Load(); n != 1 {
			t.Errorf("round %d: the directive was taken %d times across two replicas, want once", round, n)
		}
	}

	// Both replicas provisioning one account get the same one.
	ids := make([]string, 16)
	for i := range 16 {
		s := a
		if i%2 == 1 {
			s = b
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			acct, err := s.EnsureAccount(ctx, alpha.ID, store.Account{Operator: "op.example", BrandDomain: "brand.example"})
			if err != nil {
				t.Errorf("EnsureAccount = %v", err)
			}
			ids[i] = acct.ID
		}()
	}
	wg.Wait()
	for _, id := range ids {
		if id != ids[0] || id == "" {
			t.Fatalf("EnsureAccount across replicas gave ids %v, want one", ids)
		}
	}

	// What a wrote survives a closing: a third store opened afterwards
	// reads it all.
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	c := pgtest.OpenURL(t, url)
	if n, err := verify(ctx, c, alpha.ID); err != nil || n != 160 {
		t.Errorf("a store opened after a closed: verification = %d entries, %v, want 160", n, err)
	}
}

// TestTamperedLedger alters stored ledger rows under the store and checks
// that verification over WalkLedger fails and names the sequence.
func TestTamperedLedger(t *testing.T) {
	for _, test := range []struct {
		name    string
		tamper  string
		wantSeq int64
		reason  string
	}{
		{"field changed", `UPDATE ledger_entries SET slug = 'commercially_declined' WHERE sequence = 3`, 3, "altered"},
		{"rule ids changed", `UPDATE ledger_entries SET rule_ids = '{}' WHERE sequence = 4`, 4, "altered"},
		{"time moved a microsecond", `UPDATE ledger_entries SET at = at + interval '1 microsecond' WHERE sequence = 2`, 2, "altered"},
		{"entry removed", `DELETE FROM ledger_entries WHERE sequence = 3`, 4, "missing"},
		{"entry rehashed", `UPDATE ledger_entries SET hash = repeat('a', 64) WHERE sequence = 3`, 3, "altered"},
	} {
		t.Run(test.name, func(t *testing.T) {
			t.Parallel()
			s := pgtest.Open(t)
			ctx := t.Context()
			putPublishers(t, s, alpha, beta)
			for i := range 5 {
				if _, err := s.Append(ctx, record(alpha.ID, i)); err != nil {
					t.Fatal(err)
				}
				if _, err := s.Append(ctx, record(beta.ID, i)); err != nil {
					t.Fatal(err)
				}
			}
			if n, err := verify(ctx, s, alpha.ID); err != nil || n != 5 {
				t.Fatalf("before tampering: verification = %d entries, %v, want 5 and no break", n, err)
			}
			tag, err := s.Pool().Exec(ctx, test.tamper+` AND publisher_id = 'alpha'`)
			if err != nil || tag.RowsAffected() != 1 {
				t.Fatalf("tampering: %v (%d rows)", err, tag.RowsAffected())
			}
			_, err = verify(ctx, s, alpha.ID)
			var brk *ledger.Break
			if !errors.As(err, &brk) {
				t.Fatalf("verification after tampering = %v, want a *ledger.Break", err)
			}
			if brk.Sequence != test.wantSeq || !strings.Contains(brk.Reason, test.reason) {
				t.Errorf("verification after tampering broke at %d (%s), want %d (%s)", brk.Sequence, brk.Reason, test.wantSeq, test.reason)
			}
			if !strings.Contains(err.Error(), fmt.Sprintf("sequence %d", test.wantSeq)) {
				t.Errorf("the error %q does not name sequence %d", err, test.wantSeq)
			}
			// The other publisher's chain is untouched.
			if n, err := verify(ctx, s, beta.ID); err != nil || n != 5 {
				t.Errorf("beta's chain after tampering with alpha's = %d entries, %v, want 5 and no break", n, err)
			}
		})
	}
}

// TestChangesReconnects drops the listening connection from the server
// side and checks that notices flow again: the listener reconnects,
// reports every publisher (notices may have been lost), and hears new
// writes.
func TestChangesReconnects(t *testing.T) {
	s := pgtest.Open(t)
	ctx := t.Context()
	putPublishers(t, s, alpha, beta)
	changes := s.Changes(ctx)

	listenerPID := func() int32 {
		t.Helper()
		var pid int32
		err := s.Pool().QueryRow(ctx, `SELECT pid FROM pg_stat_activity
			WHERE datname = current_database() AND application_name = 'storefront-changes'`).Scan(&pid)
		if err != nil {
			t.Fatalf("finding the listening connection: %v", err)
		}
		return pid
	}
	old := listenerPID()
	var ok bool
	if err := s.Pool().QueryRow(ctx, `SELECT pg_terminate_backend($1)`, old).Scan(&ok); err != nil || !ok {
		t.Fatalf("terminating the listening connection: %v, %v", ok, err)
	}
	// After reconnecting, the listener reports every publisher.
	receive(t, changes, alpha.ID, 15*time.Second)
	receive(t, changes, beta.ID, 15*time.Second)
	if pid := listenerPID(); pid == old {
		t.Fatalf("the listener still uses terminated backend %d", pid)
	}
	if _, err := s.PutProduct(ctx, beta.ID, demo.Products()[0], 0); err != nil {
		t.Fatal(err)
	}
	if took := receive(t, changes, beta.ID, 5*time.Second); took > time.Second {
		t.Errorf("after reconnecting, a write was heard of after %v, want within 1s", took)
	}
}

// TestCloseEndsChanges checks that closing the store closes its Changes
// channels, so no listening connection outlives it.
func TestCloseEndsChanges(t *testing.T) {
	s := pgtest.Open(t)
	ch := s.Changes(context.Background())
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case _, ok := <-ch:
		if ok {
			for range ch {
			}
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Changes did not close within 10s of Close")
	}
	if _, ok := <-s.Changes(context.Background()); ok {
		t.Error("Changes on a closed store delivered a notice")
	}
}

// TestOpenUnreachable: with nothing listening, Open fails quickly and says
// where it tried. It needs no database.
func TestOpenUnreachable(t *testing.T) {
	start := time.Now()
	s, err := pgstore.Open(t.Context(), "postgres://postgres:secret-password@127.0.0.1:1/storefront?sslmode=disable", nil)
	if err == nil {
		s.Close()
		t.Fatal("Open(nothing listening) = nil error")
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("Open(nothing listening) took %v, want a quick failure", took)
	}
	msg := err.Error()
	for _, want := range []string{"cannot reach PostgreSQL", "127.0.0.1:1/storefront"} {
		if !strings.Contains(msg, want) {
			t.Errorf("Open(nothing listening) = %q, want it to mention %q", msg, want)
		}
	}
	if strings.Contains(msg, "secret-password") {
		t.Errorf("Open(nothing listening) = %q, which reveals the password", msg)
	}

	_, err = pgstore.Open(t.Context(), "postgres://%zz", nil)
	if err == nil || !strings.Contains(err.Error(), "database URL") {
		t.Errorf("Open(malformed URL) = %v, want an error about the database URL", err)
	}
}

// TestAppendGroups: many concurrent appends land as one unbroken chain
// with every sequence once, in fewer transactions than entries (entries of
// one batch share its commit time), and each caller gets its own entry.
func TestAppendGroups(t *testing.T) {
	s := pgtest.Open(t)
	putPublishers(t, s, alpha, beta)
	ctx := t.Context()
	const n = 400
	var wg sync.WaitGroup
	got := make([]ledger.Entry, n)
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pub := alpha.ID
			if i%4 == 0 {
				pub = beta.ID
			}
			got[i], errs[i] = s.Append(ctx, record(pub, i))
		}()
	}
	wg.Wait()
	seqs := map[string]map[int64]bool{alpha.ID: {}, beta.ID: {}}
	times := map[time.Time]bool{}
	for i, e := range got {
		if errs[i] != nil {
			t.Fatalf("Append %d: %v", i, errs[i])
		}
		if e.RequestDigest != record(e.Publisher, i).RequestDigest {
			t.Fatalf("caller %d got another caller's entry (sequence %d)", i, e.Sequence)
		}
		if seqs[e.Publisher][e.Sequence] {
			t.Fatalf("%s sequence %d handed out twice", e.Publisher, e.Sequence)
		}
		seqs[e.Publisher][e.Sequence] = true
		times[e.Time] = true
	}
	for _, pub := range []string{alpha.ID, beta.ID} {
		length, err := verify(ctx, s, pub)
		if err != nil {
			t.Fatalf("%s: %v", pub, err)
		}
		if length != int64(len(seqs[pub])) {
			t.Fatalf("%s chain has %d entries, want %d", pub, length, len(seqs[pub]))
		}
	}
	if len(times) >= n {
		t.Errorf("%d appends took %d transactions: nothing was grouped", n, len(times))
	}
}

// TestAppendCancelledBeforeBatch: a caller that has gone away before its
// batch starts gets its context's error and leaves no entry.
func TestAppendCancelledBeforeBatch(t *testing.T) {
	s := pgtest.Open(t)
	putPublishers(t, s, alpha)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := s.Append(ctx, record(alpha.ID, 1)); !errors.Is(err, context.Canceled) {
		t.Fatalf("Append with a cancelled context = %v, want context.Canceled", err)
	}
	if n, err := s.LedgerLen(t.Context(), alpha.ID); err != nil || n != 0 {
		t.Fatalf("LedgerLen = %d, %v; want 0", n, err)
	}
	if _, err := s.Append(t.Context(), record("nobody", 1)); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Append for an unknown publisher = %v, want ErrNotFound", err)
	}
}

// TestAppendBadRecordFailsAlone: a record the database cannot store (a NUL
// in text) fails on its own; the appends that shared its batch succeed and
// the chain stays whole.
func TestAppendBadRecordFailsAlone(t *testing.T) {
	s := pgtest.Open(t)
	putPublishers(t, s, alpha)
	ctx := t.Context()
	const n = 200
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := record(alpha.ID, i)
			if i == 77 {
				r.Account = "id:evil\x00"
			}
			_, errs[i] = s.Append(ctx, r)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if (err != nil) != (i == 77) {
			t.Errorf("append %d: %v", i, err)
		}
	}
	length, err := verify(ctx, s, alpha.ID)
	if err != nil || length != n-1 {
		t.Fatalf("chain: %d entries, %v; want %d intact", length, err, n-1)
	}
}

// TestUnavailableFromTheServer: errors PostgreSQL really gives when its
// connections are cut, and a closed store's, are store.ErrUnavailable.
func TestUnavailableFromTheServer(t *testing.T) {
	url := pgtest.NewDatabase(t)
	s := pgtest.OpenURL(t, url)
	ctx := t.Context()
	putPublishers(t, s, alpha)
	// Another session terminates every connection the store holds.
	other := pgtest.OpenURL(t, url)
	if _, err := other.Pool().Exec(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
		WHERE datname = current_database() AND pid <> pg_backend_pid()`); err != nil {
		t.Fatal(err)
	}
	_, err := s.Publisher(ctx, alpha.ID)
	if !errors.Is(err, store.ErrUnavailable) {
		t.Errorf("Publisher after the server ended the store's connection = %v, want ErrUnavailable", err)
	}
	s.Close()
	if _, err := s.Publisher(ctx, alpha.ID); !errors.Is(err, store.ErrUnavailable) {
		t.Errorf("Publisher on a closed store = %v, want ErrUnavailable", err)
	}
	// The other store, whose connection was spared, answers as before.
	if _, err := other.Publisher(ctx, "ghost"); !errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrUnavailable) {
		t.Errorf("Publisher(ghost) on a working store = %v, want ErrNotFound only", err)
	}
}

// TestResyncRetriedAfterReconnect: when listing publishers fails just
// after the listener reconnects, the resync is retried until it succeeds,
// and each failure is counted, so edits made while it was away are not
// left unheard.
func TestResyncRetriedAfterReconnect(t *testing.T) {
	s := pgtest.Open(t)
	ctx := t.Context()
	putPublishers(t, s, alpha, beta)
	var calls atomic.Int32
	pgstore.SetResyncLister(s, func(ctx context.Context) ([]products.Publisher, error) {
		if calls.Add(1) <= 3 {
			return nil, fmt.Errorf("listing publishers: %w", store.ErrUnavailable)
		}
		return s.Publishers(ctx)
	})
	changes := s.Changes(ctx)
	dropListener(t, s)
	receive(t, changes, alpha.ID, 20*time.Second)
	receive(t, changes, beta.ID, 20*time.Second)
	if n := s.ResyncFailures(); n != 3 {
		t.Errorf("ResyncFailures = %d, want the 3 failed listings counted", n)
	}
}
