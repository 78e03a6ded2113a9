package storetest

import (
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/storefront/storefront/decline"
	"github.com/storefront/storefront/products"
	"github.com/storefront/storefront/store"
)

// ignoreCreated leaves creation times out of a comparison; tests check
// them on their own.
var ignoreCreated = cmpopts.IgnoreFields(store.Account{}, "CreatedAt")

func testAccounts(t *testing.T, s store.Store) {
	ctx := t.Context()
	withPublishers(t, s)
	start := time.Now().Add(-time.Minute)

	a := store.Account{Operator: "pinnacle-agency.example", BrandDomain: "acme.example", Disclosure: decline.Range}
	got, err := s.EnsureAccount(ctx, alpha.ID, a)
	wantErr(t, "EnsureAccount(new)", err, nil)
	if got.ID == "" {
		t.Fatal("EnsureAccount(new) gave the account no id")
	}
	if got.CreatedAt.Before(start) || got.CreatedAt.Location() != time.UTC {
		t.Errorf("EnsureAccount(new).CreatedAt = %v, want about now, in UTC", got.CreatedAt)
	}
	want := a
	want.ID = got.ID
	if diff := cmp.Diff(want, got, ignoreCreated); diff != "" {
		t.Errorf("EnsureAccount(new) mismatch (-want +got):\n%s", diff)
	}

	// Ensuring again returns the account as it is; it does not rewrite it.
	again := a
	again.Disclosure = decline.Exact
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
	fixed := store.Account{ID: "acct_fixed", Operator: "pinnacle-agency.example", BrandDomain: "fixed.example", Disclosure: decline.Category}
	wantErr(t, "PutAccount(new)", s.PutAccount(ctx, alpha.ID, fixed), nil)
	fixedGot, err := s.AccountByID(ctx, alpha.ID, fixed.ID)
	wantErr(t, "AccountByID(acct_fixed)", err, nil)
	if diff := cmp.Diff(fixed, fixedGot, ignoreCreated); diff != "" {
		t.Errorf("AccountByID(acct_fixed) mismatch (-want +got):\n%s", diff)
	}
	if fixedGot.CreatedAt.IsZero() {
		t.Error("PutAccount(new) left CreatedAt unset")
	}

	// ...refuses a natural key another account holds, changing nothing...
	dup := store.Account{ID: "acct_dup", Operator: a.Operator, BrandDomain: a.BrandDomain}
	wantErr(t, "PutAccount(another account's natural key)", s.PutAccount(ctx, alpha.ID, dup), store.ErrExists)
	_, err = s.AccountByID(ctx, alpha.ID, dup.ID)
	wantErr(t, "AccountByID(refused account)", err, store.ErrNotFound)
	steal := fixed
	steal.BrandDomain = a.BrandDomain
	wantErr(t, "PutAccount(acct_fixed onto another account's natural key)", s.PutAccount(ctx, alpha.ID, steal), store.ErrExists)
	if r, err := s.AccountByKey(ctx, alpha.ID, fixed.NaturalKey()); err != nil || r.ID != fixed.ID {
		t.Errorf("after a refused PutAccount, AccountByKey(%q) = %+v, %v, want %s unchanged", fixed.NaturalKey(), r, err, fixed.ID)
	}
	if r, err := s.AccountByKey(ctx, alpha.ID, a.NaturalKey()); err != nil || r.ID != got.ID {
		t.Errorf("after a refused PutAccount, AccountByKey(%q) = %+v, %v, want %s unchanged", a.NaturalKey(), r, err, got.ID)
	}

	// ...and replaces, keeping the creation time and moving the key.
	moved := fixed
	moved.BrandDomain, moved.Disclosure, moved.Sandbox = "moved.example", decline.None, true
	wantErr(t, "PutAccount(replace)", s.PutAccount(ctx, alpha.ID, moved), nil)
	movedGot, err := s.AccountByID(ctx, alpha.ID, fixed.ID)
	wantErr(t, "AccountByID(acct_fixed)", err, nil)
	if diff := cmp.Diff(moved, movedGot, ignoreCreated); diff != "" {
		t.Errorf("AccountByID after replacing mismatch (-want +got):\n%s", diff)
	}
	if !movedGot.CreatedAt.Equal(fixedGot.CreatedAt) {
		t.Errorf("PutAccount(replace) changed CreatedAt from %v to %v", fixedGot.CreatedAt, movedGot.CreatedAt)
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
		a := store.Account{Operator: "race.example", BrandDomain: fmt.Sprintf("brand%d.example", round), Disclosure: decline.Exact}
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

func testTokens(t *testing.T, s store.Store) {
	ctx := t.Context()
	withPublishers(t, s)
	digest := store.TokenDigest("sf_buyer_0123456789")
	buyer := store.Buyer{ID: "buyer-1", Operator: "pinnacle-agency.example", Accounts: []string{"acct_1", "acct_2"}}
	wantErr(t, "PutBuyerToken", s.PutBuyerToken(ctx, alpha.ID, digest, buyer), nil)
	got, err := s.BuyerByToken(ctx, alpha.ID, digest)
	wantErr(t, "BuyerByToken", err, nil)
	if diff := cmp.Diff(buyer, got); diff != "" {
		t.Errorf("BuyerByToken mismatch (-want +got):\n%s", diff)
	}
	// Putting again replaces.
	replaced := store.Buyer{ID: "buyer-1", Operator: "pinnacle-agency.example"}
	wantErr(t, "PutBuyerToken(replace)", s.PutBuyerToken(ctx, alpha.ID, digest, replaced), nil)
	got, err = s.BuyerByToken(ctx, alpha.ID, digest)
	wantErr(t, "BuyerByToken", err, nil)
	if diff := cmp.Diff(replaced, got, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("BuyerByToken after replacing mismatch (-want +got):\n%s", diff)
	}
	_, err = s.BuyerByToken(ctx, alpha.ID, store.TokenDigest("sf_buyer_unknown"))
	wantErr(t, "BuyerByToken(unknown token)", err, store.ErrNotFound)
	_, err = s.BuyerByToken(ctx, beta.ID, digest)
	wantErr(t, "BuyerByToken(alpha's token at beta)", err, store.ErrNotFound)

	// Only digests are stored: a raw token is refused, and cannot be
	// found by itself.
	raw := "sf_buyer_raw_token"
	if err := s.PutBuyerToken(ctx, alpha.ID, raw, buyer); err == nil {
		t.Error("PutBuyerToken(a raw token) = nil, want an error: tokens are stored as digests only")
	}
	_, err = s.BuyerByToken(ctx, alpha.ID, raw)
	wantErr(t, "BuyerByToken(raw token)", err, store.ErrNotFound)

	admin := store.Admin{Publisher: alpha.ID, Name: "ops"}
	adminDigest := store.TokenDigest("sf_admin_0123456789")
	wantErr(t, "PutAdminToken", s.PutAdminToken(ctx, adminDigest, admin), nil)
	gotAdmin, err := s.AdminByToken(ctx, adminDigest)
	wantErr(t, "AdminByToken", err, nil)
	if gotAdmin != admin {
		t.Errorf("AdminByToken = %+v, want %+v", gotAdmin, admin)
	}
	_, err = s.AdminByToken(ctx, store.TokenDigest("sf_admin_unknown"))
	wantErr(t, "AdminByToken(unknown)", err, store.ErrNotFound)
	_, err = s.AdminByToken(ctx, digest)
	wantErr(t, "AdminByToken(a buyer token)", err, store.ErrNotFound)
	if err := s.PutAdminToken(ctx, "sf_admin_raw", admin); err == nil {
		t.Error("PutAdminToken(a raw token) = nil, want an error: tokens are stored as digests only")
	}
	moved := store.Admin{Publisher: beta.ID, Name: "ops-beta"}
	wantErr(t, "PutAdminToken(replace)", s.PutAdminToken(ctx, adminDigest, moved), nil)
	if gotAdmin, err := s.AdminByToken(ctx, adminDigest); err != nil || gotAdmin != moved {
		t.Errorf("AdminByToken after replacing = %+v, %v, want %+v", gotAdmin, err, moved)
	}
}

func directive(reason string) products.Directive {
	return products.Directive{Arm: "rejected", Reason: reason, Suggestions: []string{"raise the budget", "try display"}}
}
