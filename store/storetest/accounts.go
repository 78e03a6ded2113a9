package storetest

import (
	"fmt"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/storefront/storefront/products"
	"github.com/storefront/storefront/store"
	"github.com/storefront/storefront/vocab"
)

// ignoreCreated leaves creation times out of a comparison; tests check
// them on their own.
var ignoreCreated = cmpopts.IgnoreFields(store.Account{}, "CreatedAt")

func testAccounts(t *testing.T, s store.Store) {
	ctx := t.Context()
	withPublishers(t, s)
	start := now(t, s)

	a := store.Account{Operator: "pinnacle-agency.example", BrandDomain: "acme.example", Disclosure: vocab.Range}
	got, err := s.EnsureAccount(ctx, alpha.ID, a)
	wantErr(t, "EnsureAccount(new)", err, nil)
	if got.ID == "" {
		t.Fatal("EnsureAccount(new) gave the account no id")
	}
	wantNear(t, "EnsureAccount(new).CreatedAt", got.CreatedAt, start, now(t, s))
	want := a
	want.ID = got.ID
	if diff := cmp.Diff(want, got, ignoreCreated); diff != "" {
		t.Errorf("EnsureAccount(new) mismatch (-want +got):\n%s", diff)
	}

	// Ensuring again returns the account as it is; it does not rewrite it.
	again := a
	again.Disclosure = vocab.Exact
	again2, err := s.EnsureAccount(ctx, alpha.ID, again)
	wantErr(t, "EnsureAccount(existing)", err, nil)
	if diff := cmp.Diff(got, again2); diff != "" {
		t.Errorf("EnsureAccount(existing) mismatch (-want +got):\n%s", diff)
	}
	byID, err := s.AccountByID(ctx, alpha.ID, got.ID)
	wantErr(t, "AccountByID", err, nil)
	if diff := cmp.Diff(got, byID); diff != "" {
		t.Errorf("AccountByID mismatch (-want +got):\n%s", diff)
	}
	byKey, err := s.AccountByKey(ctx, alpha.ID, a.NaturalKey())
	wantErr(t, "AccountByKey", err, nil)
	if diff := cmp.Diff(got, byKey); diff != "" {
		t.Errorf("AccountByKey mismatch (-want +got):\n%s", diff)
	}

	// The sandbox flag and the brand id are part of the natural key, and
	// the flag is kept.
	sb := a
	sb.Sandbox = true
	sandbox, err := s.EnsureAccount(ctx, alpha.ID, sb)
	wantErr(t, "EnsureAccount(sandbox)", err, nil)
	if sandbox.ID == got.ID || !sandbox.Sandbox {
		t.Errorf("EnsureAccount(sandbox) = %+v, want a new sandbox account apart from %s", sandbox, got.ID)
	}
	if r, err := s.AccountByKey(ctx, alpha.ID, sb.NaturalKey()); err != nil || !r.Sandbox || r.ID != sandbox.ID {
		t.Errorf("AccountByKey(%q) = %+v, %v, want sandbox account %s", sb.NaturalKey(), r, err, sandbox.ID)
	}
	branded := a
	branded.BrandID = "acme-snacks"
	brandedAcct, err := s.EnsureAccount(ctx, alpha.ID, branded)
	wantErr(t, "EnsureAccount(brand id)", err, nil)
	if brandedAcct.ID == got.ID || brandedAcct.ID == sandbox.ID || brandedAcct.BrandID != "acme-snacks" {
		t.Errorf("EnsureAccount(brand id) = %+v, want a third account", brandedAcct)
	}

	// PutAccount creates with the id given...
	fixed := store.Account{ID: "acct_fixed", Operator: "pinnacle-agency.example", BrandDomain: "fixed.example", Disclosure: vocab.Category}
	fixedPut, err := s.PutAccount(ctx, alpha.ID, fixed)
	wantErr(t, "PutAccount(new)", err, nil)
	fixedGot, err := s.AccountByID(ctx, alpha.ID, fixed.ID)
	wantErr(t, "AccountByID(acct_fixed)", err, nil)
	if diff := cmp.Diff(fixed, fixedGot, ignoreCreated); diff != "" {
		t.Errorf("AccountByID(acct_fixed) mismatch (-want +got):\n%s", diff)
	}
	if fixedGot.CreatedAt.IsZero() {
		t.Error("PutAccount(new) left CreatedAt unset")
	}
	// PutAccount answers with the account as stored, creation time and
	// all, not with its argument.
	if diff := cmp.Diff(fixedGot, fixedPut); diff != "" {
		t.Errorf("PutAccount(new) returned other than what is stored (-stored +returned):\n%s", diff)
	}

	// ...refuses a natural key another account holds, changing nothing...
	dup := store.Account{ID: "acct_dup", Operator: a.Operator, BrandDomain: a.BrandDomain}
	_, err = s.PutAccount(ctx, alpha.ID, dup)
	wantErr(t, "PutAccount(another account's natural key)", err, store.ErrExists)
	_, err = s.AccountByID(ctx, alpha.ID, dup.ID)
	wantErr(t, "AccountByID(refused account)", err, store.ErrNotFound)
	steal := fixed
	steal.BrandDomain = a.BrandDomain
	_, err = s.PutAccount(ctx, alpha.ID, steal)
	wantErr(t, "PutAccount(acct_fixed onto another account's natural key)", err, store.ErrExists)
	if r, err := s.AccountByKey(ctx, alpha.ID, fixed.NaturalKey()); err != nil || r.ID != fixed.ID {
		t.Errorf("after a refused PutAccount, AccountByKey(%q) = %+v, %v, want %s unchanged", fixed.NaturalKey(), r, err, fixed.ID)
	}
	if r, err := s.AccountByKey(ctx, alpha.ID, a.NaturalKey()); err != nil || r.ID != got.ID {
		t.Errorf("after a refused PutAccount, AccountByKey(%q) = %+v, %v, want %s unchanged", a.NaturalKey(), r, err, got.ID)
	}

	// ...and replaces, keeping the creation time and moving the key.
	moved := fixed
	moved.BrandDomain, moved.Disclosure, moved.Sandbox = "moved.example", vocab.None, true
	movedPut, err := s.PutAccount(ctx, alpha.ID, moved)
	wantErr(t, "PutAccount(replace)", err, nil)
	movedGot, err := s.AccountByID(ctx, alpha.ID, fixed.ID)
	wantErr(t, "AccountByID(acct_fixed)", err, nil)
	if diff := cmp.Diff(moved, movedGot, ignoreCreated); diff != "" {
		t.Errorf("AccountByID after replacing mismatch (-want +got):\n%s", diff)
	}
	if !movedGot.CreatedAt.Equal(fixedGot.CreatedAt) {
		t.Errorf("PutAccount(replace) changed CreatedAt from %v to %v", fixedGot.CreatedAt, movedGot.CreatedAt)
	}
	if diff := cmp.Diff(movedGot, movedPut); diff != "" {
		t.Errorf("PutAccount(replace) returned other than what is stored (-stored +returned):\n%s", diff)
	}
	_, err = s.AccountByKey(ctx, alpha.ID, fixed.NaturalKey())
	wantErr(t, "AccountByKey(old key)", err, store.ErrNotFound)
	if r, err := s.AccountByKey(ctx, alpha.ID, moved.NaturalKey()); err != nil || r.ID != fixed.ID {
		t.Errorf("AccountByKey(%q) = %+v, %v, want %s", moved.NaturalKey(), r, err, fixed.ID)
	}

	// EnsureAccount with an id another key holds is refused.
	taken := store.Account{ID: fixed.ID, Operator: "other.example", BrandDomain: "other.example"}
	_, err = s.EnsureAccount(ctx, alpha.ID, taken)
	wantErr(t, "EnsureAccount(id held by another key)", err, store.ErrExists)

	list, err := s.ListAccounts(ctx, alpha.ID)
	wantErr(t, "ListAccounts(alpha)", err, nil)
	wantList := []store.Account{got, sandbox, brandedAcct, movedGot}
	sort.Slice(wantList, func(i, j int) bool { return wantList[i].ID < wantList[j].ID })
	if diff := cmp.Diff(wantList, list); diff != "" {
		t.Errorf("ListAccounts(alpha), by id, mismatch (-want +got):\n%s", diff)
	}
	for _, id := range []string{"no-such-account", ""} {
		_, err = s.AccountByID(ctx, alpha.ID, id)
		wantErr(t, fmt.Sprintf("AccountByID(%q)", id), err, store.ErrNotFound)
	}
	_, err = s.AccountByKey(ctx, alpha.ID, "nk:nobody/nothing.example")
	wantErr(t, "AccountByKey(unknown)", err, store.ErrNotFound)
	if list, _ := s.ListAccounts(ctx, beta.ID); len(list) != 0 {
		t.Errorf("ListAccounts(beta) = %d accounts, want 0", len(list))
	}
}

// testEnsureAccountRace: 16 callers provisioning the same buyer-declared
// account at once all get the one account created.
func testEnsureAccountRace(t *testing.T, s store.Store) {
	ctx := t.Context()
	withPublishers(t, s)
	for round := range 3 {
		a := store.Account{Operator: "race.example", BrandDomain: fmt.Sprintf("brand%d.example", round), Disclosure: vocab.Exact}
		ids := make([]string, 16)
		parallel(16, func(i int) {
			got, err := s.EnsureAccount(ctx, alpha.ID, a)
			if err != nil {
				t.Errorf("EnsureAccount = %v", err)
				return
			}
			ids[i] = got.ID
		})
		for i, id := range ids {
			if id == "" || id != ids[0] {
				t.Fatalf("round %d: 16 concurrent EnsureAccount calls got ids %v (caller %d differs), want one id", round, ids, i)
			}
		}
		list, err := s.ListAccounts(ctx, alpha.ID)
		wantErr(t, "ListAccounts(alpha)", err, nil)
		n := 0
		for _, acct := range list {
			if acct.NaturalKey() == a.NaturalKey() {
				n++
			}
		}
		if n != 1 {
			t.Errorf("round %d: %d accounts hold natural key %q, want 1", round, n, a.NaturalKey())
		}
	}
}

func directive(reason string) products.Directive {
	return products.Directive{Arm: "rejected", Reason: reason, Suggestions: []string{"raise the budget", "try display"}}
}
