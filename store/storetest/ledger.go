package storetest

import (
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/storefront/storefront/audit"
	"github.com/storefront/storefront/ledger"
	"github.com/storefront/storefront/products"
	"github.com/storefront/storefront/store"
)

type ledgerEntry = ledger.Entry

// record makes the i-th of a varied run of decisions.
func record(publisher string, i int) ledger.Record {
	r := ledger.Record{
		Publisher:       publisher,
		Account:         fmt.Sprintf("acct_%d", i%3),
		Principal:       fmt.Sprintf("buyer-%d", i%2),
		RequestDigest:   ledger.Digest(fmt.Appendf(nil, "request %d", i)),
		RulebookVersion: int64(1 + i%2),
		Arm:             "completed",
		ResponseDigest:  ledger.Digest(fmt.Appendf(nil, "response %d", i)),
		Sandbox:         i%5 == 0,
	}
	switch i % 4 {
	case 1:
		r.Arm, r.Slug, r.RuleIDs = "rejected", "budget_below_minimum", []string{"MR-1", "MR-2"}
	case 2:
		r.Arm, r.Slug, r.RuleIDs = "rejected", "channel_not_offered", []string{"MR-3"}
	case 3:
		if i%8 == 7 {
			r.Arm, r.Forced = "failed", true
		}
	}
	return r
}

// verify walks the chain through a ledger.Verifier and returns it.
func verify(t *testing.T, s store.Store, publisher string) []ledger.Entry {
	t.Helper()
	var (
		v       ledger.Verifier
		entries []ledger.Entry
	)
	err := s.WalkLedger(t.Context(), publisher, func(e ledger.Entry) error {
		entries = append(entries, e)
		return v.Check(e)
	})
	if err != nil {
		t.Fatalf("verifying %s's chain over WalkLedger: %v", publisher, err)
	}
	n, err := s.LedgerLen(t.Context(), publisher)
	wantErr(t, "LedgerLen", err, nil)
	if v.Checked() != n {
		t.Fatalf("WalkLedger(%q) verified %d entries; LedgerLen = %d", publisher, v.Checked(), n)
	}
	return entries
}

var equateEmpty = cmpopts.EquateEmpty()

func testLedger(t *testing.T, s store.Store) {
	ctx := t.Context()
	withPublishers(t, s)
	if n, err := s.LedgerLen(ctx, alpha.ID); err != nil || n != 0 {
		t.Fatalf("LedgerLen(alpha) of a new publisher = %d, %v, want 0", n, err)
	}
	if got := verify(t, s, alpha.ID); len(got) != 0 {
		t.Fatalf("WalkLedger(alpha) of a new publisher visited %d entries", len(got))
	}
	if got, err := s.Decisions(ctx, alpha.ID, store.DecisionFilter{}); err != nil || len(got) != 0 {
		t.Fatalf("Decisions(alpha) of a new publisher = %d entries, %v, want none", len(got), err)
	}

	var appended []ledger.Entry
	before := now(t, s)
	for i := range 12 {
		r := record(alpha.ID, i)
		e, err := s.Append(ctx, r)
		wantErr(t, fmt.Sprintf("Append(#%d)", i), err, nil)
		// The entry is sealed from the record as given; changing the
		// caller's slice afterwards changes nothing stored.
		if len(r.RuleIDs) > 0 {
			r.RuleIDs[0] = "scribbled"
		}
		want := record(alpha.ID, i)
		if diff := cmp.Diff(want, e.Record, equateEmpty); diff != "" {
			t.Errorf("Append(#%d) record mismatch (-want +got):\n%s", i, diff)
		}
		wantPrev := ledger.Genesis
		if i > 0 {
			wantPrev = appended[i-1].Hash
		}
		switch {
		case e.Sequence != int64(i+1):
			t.Errorf("Append(#%d).Sequence = %d, want %d", i, e.Sequence, i+1)
		case e.PrevHash != wantPrev:
			t.Errorf("Append(#%d).PrevHash = %s, want %s", i, e.PrevHash, wantPrev)
		case e.Hash != e.ComputeHash():
			t.Errorf("Append(#%d).Hash = %s, want %s", i, e.Hash, e.ComputeHash())
		case e.Time.Location() != time.UTC || !e.Time.Equal(e.Time.Truncate(time.Microsecond)) || e.Time.Before(before.Truncate(time.Microsecond)) || e.Time.After(now(t, s)):
			t.Errorf("Append(#%d).Time = %v, want the store's clock's time (after %v), UTC, in whole microseconds", i, e.Time, before)
		case i > 0 && e.Time.Before(appended[i-1].Time):
			t.Errorf("Append(#%d).Time = %v is before the previous entry's %v", i, e.Time, appended[i-1].Time)
		}
		appended = append(appended, e)
	}

	// The chain read back is the chain appended, and verifies: stored
	// fields reproduce every hash exactly.
	walked := verify(t, s, alpha.ID)
	if diff := cmp.Diff(appended, walked, equateEmpty); diff != "" {
		t.Errorf("WalkLedger(alpha) mismatch with what Append returned (-want +got):\n%s", diff)
	}
	if n, _ := s.LedgerLen(ctx, alpha.ID); n != 12 {
		t.Errorf("LedgerLen(alpha) = %d, want 12", n)
	}
	// Beta's chain is its own and starts from genesis.
	b, err := s.Append(ctx, record(beta.ID, 0))
	wantErr(t, "Append(beta)", err, nil)
	if b.Sequence != 1 || b.PrevHash != ledger.Genesis {
		t.Errorf("beta's first entry = sequence %d after %s, want 1 after genesis", b.Sequence, b.PrevHash)
	}
	if n, _ := s.LedgerLen(ctx, alpha.ID); n != 12 {
		t.Errorf("LedgerLen(alpha) after appending to beta = %d, want 12", n)
	}

	// WalkLedger stops at the first error fn returns, and returns it.
	stop := errors.New("stop here")
	visited := 0
	err = s.WalkLedger(ctx, alpha.ID, func(e ledger.Entry) error {
		visited++
		if e.Sequence == 3 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || visited != 3 {
		t.Errorf("WalkLedger with fn failing at sequence 3 = %v after %d entries, want %v after 3", err, visited, stop)
	}
}

// testDecisionFilters checks Decisions against store.Matches, the
// definition, over a chain whose entries have distinct times.
func testDecisionFilters(t *testing.T, s store.Store) {
	ctx := t.Context()
	withPublishers(t, s)
	var all []ledger.Entry
	for i := range 24 {
		e, err := s.Append(ctx, record(alpha.ID, i))
		wantErr(t, "Append", err, nil)
		if i > 0 && !e.Time.After(all[i-1].Time) {
			t.Fatalf("entry %d has time %v, not after the previous %v", e.Sequence, e.Time, all[i-1].Time)
		}
		all = append(all, e)
		// Distinct times, a millisecond apart, so that time bounds select.
		time.Sleep(time.Millisecond)
	}
	if _, err := s.Append(ctx, record(beta.ID, 1)); err != nil {
		t.Fatal(err)
	}
	newestFirst := slices.Clone(all)
	slices.Reverse(newestFirst)
	at := func(seq int) time.Time { return all[seq-1].Time }
	for _, test := range []struct {
		name    string
		filter  store.DecisionFilter
		atLeast int
	}{
		{"everything", store.DecisionFilter{}, 24},
		{"arm", store.DecisionFilter{Arm: "rejected"}, 12},
		{"slug", store.DecisionFilter{Slug: "budget_below_minimum"}, 6},
		{"account", store.DecisionFilter{Account: "acct_1"}, 8},
		{"arm and account", store.DecisionFilter{Arm: "completed", Account: "acct_0"}, 1},
		{"since", store.DecisionFilter{Since: at(10)}, 15},
		{"until", store.DecisionFilter{Until: at(10)}, 9},
		{"since and until", store.DecisionFilter{Since: at(5), Until: at(20)}, 15},
		{"since between microseconds", store.DecisionFilter{Since: at(10).Add(500 * time.Nanosecond)}, 14},
		{"until between microseconds", store.DecisionFilter{Until: at(10).Add(500 * time.Nanosecond)}, 10},
		{"before", store.DecisionFilter{Before: 7}, 6},
		{"limit", store.DecisionFilter{Limit: 5}, 5},
		{"before, limit and arm", store.DecisionFilter{Before: 20, Limit: 3, Arm: "completed"}, 3},
		{"slug and since", store.DecisionFilter{Slug: "channel_not_offered", Since: at(12)}, 3},
		{"no such arm", store.DecisionFilter{Arm: "submitted"}, 0},
		{"no such account", store.DecisionFilter{Account: "acct_nobody"}, 0},
		{"before the first", store.DecisionFilter{Before: 1}, 0},
	} {
		t.Run(test.name, func(t *testing.T) {
			limit := test.filter.Limit
			if limit <= 0 {
				limit = 100
			}
			want := []ledger.Entry{}
			for _, e := range newestFirst {
				if len(want) < limit && store.Matches(e, test.filter) {
					want = append(want, e)
				}
			}
			if len(want) < test.atLeast {
				t.Fatalf("the fixture gives %d entries for %+v, want at least %d: the test no longer tests", len(want), test.filter, test.atLeast)
			}
			got, err := s.Decisions(ctx, alpha.ID, test.filter)
			wantErr(t, "Decisions", err, nil)
			if diff := cmp.Diff(want, got, equateEmpty); diff != "" {
				t.Errorf("Decisions(alpha, %+v) mismatch (-want +got):\n%s", test.filter, diff)
			}
		})
	}
	// The default limit is 100, newest first.
	for i := range 90 {
		if _, err := s.Append(ctx, record(alpha.ID, i)); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Decisions(ctx, alpha.ID, store.DecisionFilter{})
	wantErr(t, "Decisions", err, nil)
	if len(got) != 100 || got[0].Sequence != 114 || got[99].Sequence != 15 {
		t.Errorf("Decisions(alpha, no filter) over 114 entries = %d entries from %d, want 100 from 114 down to 15", len(got), got[0].Sequence)
	}
}

// testLedgerConcurrentAppends: writers appending at once to one publisher
// (and to another beside it) keep one unbroken chain each, with every
// sequence given out once.
func testLedgerConcurrentAppends(t *testing.T, s store.Store) {
	ctx := t.Context()
	withPublishers(t, s)
	// Enough entries that a walk in pages crosses a page boundary.
	const writers, each, betaWriters = 8, 80, 2
	seqs := make([][]int64, writers)
	var betaAppends atomic.Int32
	parallel(writers+betaWriters, func(w int) {
		if w >= writers {
			for i := range each / 4 {
				if _, err := s.Append(ctx, record(beta.ID, i)); err != nil {
					t.Errorf("Append(beta) = %v", err)
					return
				}
				betaAppends.Add(1)
			}
			return
		}
		for i := range each {
			e, err := s.Append(ctx, record(alpha.ID, w*each+i))
			if err != nil {
				t.Errorf("Append(alpha) = %v", err)
				return
			}
			seqs[w] = append(seqs[w], e.Sequence)
		}
	})
	var all []int64
	for w, ss := range seqs {
		if !slices.IsSorted(ss) {
			t.Errorf("writer %d got sequences out of order: %v", w, ss)
		}
		all = append(all, ss...)
	}
	slices.Sort(all)
	for i, seq := range all {
		if seq != int64(i+1) {
			t.Fatalf("concurrent appends got sequences %v..., want each of 1..%d once", all[max(0, i-3):min(len(all), i+3)], writers*each)
		}
	}
	if got := verify(t, s, alpha.ID); len(got) != writers*each {
		t.Errorf("alpha's chain has %d entries, want %d", len(got), writers*each)
	}
	if got := verify(t, s, beta.ID); len(got) != int(betaAppends.Load()) {
		t.Errorf("beta's chain has %d entries, want %d", len(got), betaAppends.Load())
	}
}

// take claims the directive for (account, principal) and spends it at
// once, as a call answered with it does; nil when there is none to claim.
func take(t *testing.T, s store.Store, publisher, account, principal string) *products.Directive {
	t.Helper()
	ctx := t.Context()
	token := fmt.Sprintf("take-%s-%s-%s", publisher, account, principal)
	d, err := s.ClaimDirective(ctx, publisher, account, principal, token, fresh)
	wantErr(t, fmt.Sprintf("ClaimDirective(%q, %q, %q)", publisher, account, principal), err, nil)
	if d != nil {
		wantErr(t, fmt.Sprintf("SpendDirective(%q, %q, %q)", publisher, account, principal), s.SpendDirective(ctx, publisher, account, principal, token), nil)
	}
	return d
}

func testDirectives(t *testing.T, s store.Store) {
	ctx := t.Context()
	withPublishers(t, s)
	if d := take(t, s, alpha.ID, "acct_1", "buyer"); d != nil {
		t.Fatalf("ClaimDirective with none set = %+v, want nil", d)
	}
	first, second := directive("first"), products.Directive{Arm: "submitted", TaskID: "task-42", Message: "queued for review"}
	wantErr(t, "SetDirective", s.SetDirective(ctx, alpha.ID, "acct_1", "buyer", first), nil)
	wantErr(t, "SetDirective(again)", s.SetDirective(ctx, alpha.ID, "acct_1", "buyer", second), nil)
	got := take(t, s, alpha.ID, "acct_1", "buyer")
	if diff := cmp.Diff(&second, got, equateEmpty); diff != "" {
		t.Errorf("ClaimDirective after two sets: want the later one (-want +got):\n%s", diff)
	}
	if d := take(t, s, alpha.ID, "acct_1", "buyer"); d != nil {
		t.Errorf("ClaimDirective after it was spent = %+v, want nil", d)
	}

	// A directive is for its account and principal only.
	wantErr(t, "SetDirective", s.SetDirective(ctx, alpha.ID, "acct_1", "buyer", first), nil)
	for _, other := range [][3]string{
		{alpha.ID, "acct_1", "other-buyer"},
		{alpha.ID, "acct_2", "buyer"},
		{beta.ID, "acct_1", "buyer"},
	} {
		if d := take(t, s, other[0], other[1], other[2]); d != nil {
			t.Errorf("ClaimDirective(%q, %q, %q) took the directive set for (alpha, acct_1, buyer)", other[0], other[1], other[2])
		}
	}
	got = take(t, s, alpha.ID, "acct_1", "buyer")
	if diff := cmp.Diff(&first, got, equateEmpty); diff != "" {
		t.Errorf("ClaimDirective mismatch (-want +got):\n%s", diff)
	}
}

// testDirectiveTakenOnce: of 16 callers claiming one directive at once,
// exactly one gets it.
func testDirectiveTakenOnce(t *testing.T, s store.Store) {
	ctx := t.Context()
	withPublishers(t, s)
	for round := range 5 {
		reason := fmt.Sprintf("round %d", round)
		if err := s.SetDirective(ctx, alpha.ID, "acct_1", "buyer", directive(reason)); err != nil {
			t.Fatal(err)
		}
		var taken atomic.Int32
		parallel(16, func(i int) {
			token := fmt.Sprintf("claimant-%d-%d", round, i)
			d, err := s.ClaimDirective(ctx, alpha.ID, "acct_1", "buyer", token, fresh)
			if err != nil {
				t.Errorf("ClaimDirective = %v", err)
				return
			}
			if d != nil {
				taken.Add(1)
				if d.Reason != reason {
					t.Errorf("ClaimDirective = %q, want %q", d.Reason, reason)
				}
				if err := s.SpendDirective(ctx, alpha.ID, "acct_1", "buyer", token); err != nil {
					t.Errorf("SpendDirective(the one claimant) = %v", err)
				}
			}
		})
		if n := taken.Load(); n != 1 {
			t.Fatalf("round %d: %d of 16 concurrent claimants got the directive, want exactly 1", round, n)
		}
	}
}

// testDirectiveClaims: a claimed directive is no one else's while the
// claim's lease lasts; released, it is the next call's; spent only by its
// claimant; a claim that ran out is taken by the next call, and the first
// claimant can then no longer spend it; a directive set anew replaces a
// claimed one, which its claimant can then not spend.
func testDirectiveClaims(t *testing.T, s store.Store) {
	ctx := t.Context()
	withPublishers(t, s)
	clock := withTestClock(t, s, t0)
	const lease = 30 * time.Second
	claim := func(token string) *products.Directive {
		t.Helper()
		d, err := s.ClaimDirective(ctx, alpha.ID, "acct_1", "buyer", token, lease)
		wantErr(t, fmt.Sprintf("ClaimDirective(%s)", token), err, nil)
		return d
	}
	spend := func(token string) error { return s.SpendDirective(ctx, alpha.ID, "acct_1", "buyer", token) }
	release := func(token string) {
		t.Helper()
		wantErr(t, fmt.Sprintf("ReleaseDirective(%s)", token), s.ReleaseDirective(ctx, alpha.ID, "acct_1", "buyer", token), nil)
	}
	d := directive("claimed")
	wantErr(t, "SetDirective", s.SetDirective(ctx, alpha.ID, "acct_1", "buyer", d), nil)

	// Claimed: no one else gets it, nor spends or releases it.
	if got := claim("first"); got == nil || got.Reason != "claimed" {
		t.Fatalf("ClaimDirective(first) = %+v, want the directive", got)
	}
	if got := claim("second"); got != nil {
		t.Fatalf("ClaimDirective(second) while first holds it = %+v, want nil", got)
	}
	wantErr(t, "SpendDirective(not the claimant)", spend("second"), store.ErrConflict)
	wantErr(t, "SpendDirective(no token)", spend(""), store.ErrConflict)
	release("second")
	if got := claim("third"); got != nil {
		t.Fatalf("ClaimDirective(third) after another token's release = %+v, want nil: first still holds it", got)
	}

	// Released by its claimant: the next call gets it, the releaser can
	// no longer spend it.
	release("first")
	if got := claim("second"); got == nil {
		t.Fatal("ClaimDirective(second) after first released = nil, want the directive")
	}
	wantErr(t, "SpendDirective(first, after releasing)", spend("first"), store.ErrConflict)

	// The claim runs out on the store's clock, to the microsecond.
	clock.advance(lease - time.Microsecond)
	if got := claim("third"); got != nil {
		t.Fatalf("ClaimDirective a microsecond before second's lease ends = %+v, want nil", got)
	}
	clock.advance(time.Microsecond)
	if got := claim("third"); got == nil {
		t.Fatal("ClaimDirective as second's lease ends = nil, want the directive")
	}
	wantErr(t, "SpendDirective(second, after third took it over)", spend("second"), store.ErrConflict)
	release("second") // a late release of a lost claim frees nothing
	if got := claim("fourth"); got != nil {
		t.Fatalf("ClaimDirective(fourth) while third holds it = %+v, want nil", got)
	}
	wantErr(t, "SpendDirective(third)", spend("third"), nil)
	if got := claim("fourth"); got != nil {
		t.Fatalf("ClaimDirective after it was spent = %+v, want nil", got)
	}
	wantErr(t, "SpendDirective(third, twice)", spend("third"), store.ErrConflict)

	// A new directive replaces a claimed one: the old claim spends
	// nothing, and the new directive is the next call's.
	wantErr(t, "SetDirective", s.SetDirective(ctx, alpha.ID, "acct_1", "buyer", directive("old")), nil)
	if got := claim("old-claim"); got == nil || got.Reason != "old" {
		t.Fatalf("ClaimDirective(old) = %+v", got)
	}
	wantErr(t, "SetDirective(replacing a claimed one)", s.SetDirective(ctx, alpha.ID, "acct_1", "buyer", directive("new")), nil)
	wantErr(t, "SpendDirective(the replaced claim)", spend("old-claim"), store.ErrConflict)
	if got := claim("new-claim"); got == nil || got.Reason != "new" {
		t.Fatalf("ClaimDirective after the replacement = %+v, want the new directive", got)
	}
	wantErr(t, "SpendDirective(new)", spend("new-claim"), nil)

	// A claim needs a token; an unknown publisher has no directive.
	if _, err := s.ClaimDirective(ctx, alpha.ID, "acct_1", "buyer", "", lease); err == nil {
		t.Error("ClaimDirective(without a token) = nil error, want a refusal")
	}
	_, err := s.ClaimDirective(ctx, ghost, "acct_1", "buyer", "ghostly", lease)
	wantErr(t, "ClaimDirective(ghost)", err, store.ErrNotFound)
}

// testTenancy: publisher alpha's data is not found from beta, whatever the
// method, and beta's writes never touch it.
func testTenancy(t *testing.T, s store.Store) {
	ctx := t.Context()
	withPublishers(t, s)
	p := demoProducts(t, 1)[0]
	if _, err := s.PutProduct(ctx, alpha.ID, p, 0); err != nil {
		t.Fatal(err)
	}
	rb, err := s.SaveRulebook(ctx, alpha.ID, rulebook("Alpha", 2), 0, "alice", "")
	if err != nil {
		t.Fatal(err)
	}
	acct, err := s.EnsureAccount(ctx, alpha.ID, store.Account{Operator: "op.example", BrandDomain: "brand.example"})
	if err != nil {
		t.Fatal(err)
	}
	digest := store.TokenDigest("sf_buyer_alpha")
	tok, err := s.CreateToken(ctx, digest, store.Token{Kind: store.BuyerToken, Publisher: alpha.ID, Name: "alpha-buyer",
		Buyer: &store.Buyer{ID: "alpha-buyer"}, CreatedAt: t0})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.AppendAudit(ctx, audit.Record{Publisher: alpha.ID, Action: audit.TokenCreate, Target: tok.ID}, t0); err != nil {
		t.Fatal(err)
	}
	if err := s.SetDirective(ctx, alpha.ID, acct.ID, "alpha-buyer", directive("alpha only")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(ctx, record(alpha.ID, 1)); err != nil {
		t.Fatal(err)
	}

	if cat, v, err := s.Catalogue(ctx, beta.ID); err != nil || len(cat) != 0 || v != 0 {
		t.Errorf("Catalogue(beta) = %d products at %d, %v, want none", len(cat), v, err)
	}
	_, err = s.DeleteProduct(ctx, beta.ID, p.ProductID, 0)
	wantErr(t, "DeleteProduct(beta, alpha's product)", err, store.ErrNotFound)
	_, err = s.Rulebook(ctx, beta.ID)
	wantErr(t, "Rulebook(beta)", err, store.ErrNotFound)
	_, err = s.RulebookAt(ctx, beta.ID, rb.Version)
	wantErr(t, "RulebookAt(beta, alpha's version)", err, store.ErrNotFound)
	if h, err := s.RulebookHistory(ctx, beta.ID); err != nil || len(h) != 0 {
		t.Errorf("RulebookHistory(beta) = %d versions, %v, want none", len(h), err)
	}
	_, err = s.AccountByID(ctx, beta.ID, acct.ID)
	wantErr(t, "AccountByID(beta, alpha's account)", err, store.ErrNotFound)
	_, err = s.AccountByKey(ctx, beta.ID, acct.NaturalKey())
	wantErr(t, "AccountByKey(beta, alpha's key)", err, store.ErrNotFound)
	if l, err := s.ListAccounts(ctx, beta.ID); err != nil || len(l) != 0 {
		t.Errorf("ListAccounts(beta) = %d, %v, want none", len(l), err)
	}
	_, err = s.UseToken(ctx, store.BuyerToken, beta.ID, digest, t0)
	wantErr(t, "UseToken(beta, alpha's token)", err, store.ErrNotFound)
	_, err = s.Token(ctx, beta.ID, tok.ID)
	wantErr(t, "Token(beta, alpha's token id)", err, store.ErrNotFound)
	_, err = s.RevokeToken(ctx, beta.ID, tok.ID, t0)
	wantErr(t, "RevokeToken(beta, alpha's token id)", err, store.ErrNotFound)
	if l, err := s.ListTokens(ctx, beta.ID); err != nil || len(l) != 0 {
		t.Errorf("ListTokens(beta) = %d, %v, want none", len(l), err)
	}
	if l, err := s.AuditTrail(ctx, beta.ID, audit.Filter{}); err != nil || len(l) != 0 {
		t.Errorf("AuditTrail(beta) = %d, %v, want none", len(l), err)
	}
	if d, err := s.ClaimDirective(ctx, beta.ID, acct.ID, "alpha-buyer", "beta-token", fresh); err != nil || d != nil {
		t.Errorf("ClaimDirective(beta, alpha's directive) = %+v, %v, want nil", d, err)
	}
	wantErr(t, "SpendDirective(beta, alpha's directive)", s.SpendDirective(ctx, beta.ID, acct.ID, "alpha-buyer", "beta-token"), store.ErrConflict)
	if d, err := s.Decisions(ctx, beta.ID, store.DecisionFilter{}); err != nil || len(d) != 0 {
		t.Errorf("Decisions(beta) = %d, %v, want none", len(d), err)
	}
	if n, err := s.LedgerLen(ctx, beta.ID); err != nil || n != 0 {
		t.Errorf("LedgerLen(beta) = %d, %v, want 0", n, err)
	}

	// The same keys at beta are beta's own.
	changed := p
	changed.Name = "beta's version"
	if _, err := s.PutProduct(ctx, beta.ID, changed, 0); err != nil {
		t.Fatal(err)
	}
	bAcct, err := s.EnsureAccount(ctx, beta.ID, store.Account{Operator: "op.example", BrandDomain: "brand.example"})
	wantErr(t, "EnsureAccount(beta, alpha's natural key)", err, nil)
	if bAcct.ID == acct.ID {
		t.Errorf("EnsureAccount(beta) returned alpha's account %s", acct.ID)
	}
	_, err = s.AccountByID(ctx, alpha.ID, bAcct.ID)
	wantErr(t, "AccountByID(alpha, beta's account)", err, store.ErrNotFound)
	if _, err := s.SaveRulebook(ctx, beta.ID, rulebook("Beta", 1), 0, "bob", ""); err != nil {
		t.Errorf("SaveRulebook(beta, ifMatch=0) = %v: beta's rulebook versions are its own", err)
	}
	wantCatalogue(t, s, alpha.ID, []products.Product{p}, 1)
	wantRulebookVersion(t, s, alpha.ID, 1)
	if d := take(t, s, alpha.ID, acct.ID, "alpha-buyer"); d == nil {
		t.Error("ClaimDirective(alpha) after beta's attempts = nil, want alpha's directive")
	}
	if _, err := s.UseToken(ctx, store.BuyerToken, alpha.ID, digest, t0); err != nil {
		t.Errorf("UseToken(alpha) after beta's attempts = %v, want alpha's token", err)
	}
	verify(t, s, alpha.ID)
}
