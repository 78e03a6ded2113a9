package storetest

import (
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/storefront/storefront/store"
)

// t0 is the time the token and audit tests start at. Every time they
// pass is t0 plus an offset, so no test depends on today's date.
var t0 = time.Date(2026, 3, 14, 9, 26, 53, 589793000, time.UTC)

func tAt(d time.Duration) time.Time { return t0.Add(d) }

func ptrTime(t time.Time) *time.Time { return &t }

func adminTok(publisher, name string) store.Token {
	return store.Token{Kind: store.AdminToken, Publisher: publisher, Name: name, Prefix: "sf_admin_0123abcd", CreatedAt: t0, CreatedBy: "command line"}
}

func buyerTok(publisher, id string, accounts ...string) store.Token {
	return store.Token{Kind: store.BuyerToken, Publisher: publisher, Name: id, Prefix: "sf_buyer_4567ef01", CreatedAt: t0,
		Buyer: &store.Buyer{ID: id, Operator: "pinnacle-agency.example", Accounts: accounts}}
}

// use authenticates and fails the test unless the token is accepted.
func use(t *testing.T, s store.Store, kind store.TokenKind, publisher, digest string, when time.Time) store.Token {
	t.Helper()
	got, err := s.UseToken(t.Context(), kind, publisher, digest, when)
	if err != nil {
		t.Fatalf("UseToken(%s, %q) at %v = %v, want the token", kind, publisher, when, err)
	}
	return got
}

func refused(t *testing.T, s store.Store, why string, kind store.TokenKind, publisher, digest string, when time.Time) {
	t.Helper()
	_, err := s.UseToken(t.Context(), kind, publisher, digest, when)
	wantErr(t, "UseToken("+why+")", err, store.ErrNotFound)
}

func testTokens(t *testing.T, s store.Store) {
	ctx := t.Context()
	withPublishers(t, s)

	adminDigest := store.TokenDigest("sf_admin_0123456789")
	admin, err := s.CreateToken(ctx, adminDigest, adminTok(alpha.ID, "ops"))
	wantErr(t, "CreateToken(admin)", err, nil)
	want := adminTok(alpha.ID, "ops")
	want.ID = admin.ID
	want.CreatedAt = t0.Truncate(time.Microsecond)
	if admin.ID == "" {
		t.Fatal("CreateToken gave the token no id")
	}
	if diff := cmp.Diff(want, admin); diff != "" {
		t.Errorf("CreateToken(admin) mismatch (-want +got):\n%s", diff)
	}
	for name, get := range map[string]func() (store.Token, error){
		"Token":         func() (store.Token, error) { return s.Token(ctx, alpha.ID, admin.ID) },
		"TokenByDigest": func() (store.Token, error) { return s.TokenByDigest(ctx, adminDigest) },
	} {
		got, err := get()
		wantErr(t, name, err, nil)
		if diff := cmp.Diff(admin, got); diff != "" {
			t.Errorf("%s mismatch (-want +got):\n%s", name, diff)
		}
	}

	// Using a token records its last use, to the minute.
	got := use(t, s, store.AdminToken, "", adminDigest, tAt(time.Second))
	if got.LastUsedAt == nil || !got.LastUsedAt.Equal(tAt(time.Second).Truncate(time.Microsecond)) {
		t.Errorf("UseToken: LastUsedAt = %v, want %v", got.LastUsedAt, tAt(time.Second))
	}
	if got.Admin() != (store.Admin{Publisher: alpha.ID, Name: "ops", TokenID: admin.ID}) {
		t.Errorf("Admin() = %+v", got.Admin())
	}
	use(t, s, store.AdminToken, "", adminDigest, tAt(30*time.Second))
	if got, _ := s.Token(ctx, alpha.ID, admin.ID); got.LastUsedAt == nil || !got.LastUsedAt.Equal(tAt(time.Second).Truncate(time.Microsecond)) {
		t.Errorf("a use within %v of the last rewrote LastUsedAt to %v", store.LastUseGranularity, got.LastUsedAt)
	}
	use(t, s, store.AdminToken, "", adminDigest, tAt(2*time.Minute))
	if got, _ := s.Token(ctx, alpha.ID, admin.ID); got.LastUsedAt == nil || !got.LastUsedAt.Equal(tAt(2*time.Minute).Truncate(time.Microsecond)) {
		t.Errorf("LastUsedAt after a later use = %v, want %v", got.LastUsedAt, tAt(2*time.Minute))
	}

	buyerDigest := store.TokenDigest("sf_buyer_0123456789")
	buyer, err := s.CreateToken(ctx, buyerDigest, buyerTok(alpha.ID, "buyer-1", "acct_1", "acct_2"))
	wantErr(t, "CreateToken(buyer)", err, nil)
	if got := use(t, s, store.BuyerToken, alpha.ID, buyerDigest, t0); cmp.Diff(buyer.Buyer, got.Buyer) != "" {
		t.Errorf("UseToken(buyer).Buyer = %+v, want %+v", got.Buyer, buyer.Buyer)
	}
	refused(t, s, "a buyer token at another publisher", store.BuyerToken, beta.ID, buyerDigest, t0)
	refused(t, s, "a buyer token as an admin token", store.AdminToken, "", buyerDigest, t0)
	refused(t, s, "an admin token as a buyer token", store.BuyerToken, alpha.ID, adminDigest, t0)
	refused(t, s, "an unknown token", store.AdminToken, "", store.TokenDigest("sf_admin_unknown"), t0)

	// An admin token has no buyer, whatever it is given.
	odd := adminTok(alpha.ID, "odd")
	odd.Buyer = &store.Buyer{ID: "x"}
	if got, err := s.CreateToken(ctx, store.TokenDigest("sf_admin_odd"), odd); err != nil || got.Buyer != nil {
		t.Errorf("CreateToken(admin with a buyer) = %+v, %v, want an admin token without one", got.Buyer, err)
	}

	// Only digests are stored, and only for publishers that exist.
	if _, err := s.CreateToken(ctx, "sf_admin_raw_token", adminTok(alpha.ID, "raw")); err == nil {
		t.Error("CreateToken(a raw secret) = nil error: tokens are stored as digests only")
	}
	_, err = s.CreateToken(ctx, store.TokenDigest("sf_admin_ghost"), adminTok(ghost, "ghost"))
	wantErr(t, "CreateToken(unknown publisher)", err, store.ErrNotFound)
	_, err = s.Token(ctx, alpha.ID, "tok_nonesuch")
	wantErr(t, "Token(unknown id)", err, store.ErrNotFound)
	_, err = s.TokenByDigest(ctx, store.TokenDigest("sf_admin_unknown"))
	wantErr(t, "TokenByDigest(unknown)", err, store.ErrNotFound)

	// Listing: alpha's tokens, oldest first; none of beta's.
	later := adminTok(alpha.ID, "later")
	later.CreatedAt = tAt(time.Hour)
	laterTok, err := s.CreateToken(ctx, store.TokenDigest("sf_admin_later"), later)
	wantErr(t, "CreateToken(later)", err, nil)
	list, err := s.ListTokens(ctx, alpha.ID)
	wantErr(t, "ListTokens(alpha)", err, nil)
	if len(list) != 4 || list[3].ID != laterTok.ID {
		t.Errorf("ListTokens(alpha) = %d tokens ending %v, want 4 ending with %s", len(list), list[len(list)-1].ID, laterTok.ID)
	}
	for i := 1; i < len(list); i++ {
		if store.CompareTokens(list[i-1], list[i]) > 0 {
			t.Errorf("ListTokens(alpha) out of order at %d: %s then %s", i, list[i-1].ID, list[i].ID)
		}
	}
	if l, err := s.ListTokens(ctx, beta.ID); err != nil || len(l) != 0 {
		t.Errorf("ListTokens(beta) = %d, %v, want none", len(l), err)
	}
	_, err = s.ListTokens(ctx, ghost)
	wantErr(t, "ListTokens(unknown publisher)", err, store.ErrNotFound)

	// Expiry: usable strictly before it.
	exp := buyerTok(alpha.ID, "buyer-exp")
	exp.ExpiresAt = ptrTime(tAt(time.Hour))
	expDigest := store.TokenDigest("sf_buyer_expiring")
	if _, err := s.CreateToken(ctx, expDigest, exp); err != nil {
		t.Fatal(err)
	}
	use(t, s, store.BuyerToken, alpha.ID, expDigest, tAt(59*time.Minute))
	refused(t, s, "at its expiry", store.BuyerToken, alpha.ID, expDigest, tAt(time.Hour))
	refused(t, s, "after its expiry", store.BuyerToken, alpha.ID, expDigest, tAt(2*time.Hour))

	// Revocation is immediate and absolute: refused at any time after,
	// even at a time before it was revoked, and revoking again keeps the
	// first revocation.
	revoked, err := s.RevokeToken(ctx, alpha.ID, admin.ID, tAt(5*time.Minute))
	wantErr(t, "RevokeToken", err, nil)
	if revoked.RevokedAt == nil || !revoked.RevokedAt.Equal(tAt(5*time.Minute).Truncate(time.Microsecond)) {
		t.Errorf("RevokeToken: RevokedAt = %v, want %v", revoked.RevokedAt, tAt(5*time.Minute))
	}
	refused(t, s, "a revoked token", store.AdminToken, "", adminDigest, tAt(6*time.Minute))
	refused(t, s, "a revoked token, at a time before it was revoked", store.AdminToken, "", adminDigest, tAt(time.Minute))
	again, err := s.RevokeToken(ctx, alpha.ID, admin.ID, tAt(9*time.Minute))
	wantErr(t, "RevokeToken(again)", err, nil)
	if !again.RevokedAt.Equal(*revoked.RevokedAt) {
		t.Errorf("revoking again moved RevokedAt from %v to %v", revoked.RevokedAt, again.RevokedAt)
	}
	if got, err := s.TokenByDigest(ctx, adminDigest); err != nil || got.RevokedAt == nil || got.Status(tAt(time.Hour)) != "revoked" {
		t.Errorf("TokenByDigest(revoked) = %+v, %v, want the revoked token", got, err)
	}
	_, err = s.RevokeToken(ctx, beta.ID, buyer.ID, t0)
	wantErr(t, "RevokeToken(another publisher's token)", err, store.ErrNotFound)
	use(t, s, store.BuyerToken, alpha.ID, buyerDigest, tAt(time.Hour))
}

// testTokenNoRescope: creating a token under a digest that is already
// stored fails and leaves the stored token as it was, whichever publisher
// or kind the new one names.
func testTokenNoRescope(t *testing.T, s store.Store) {
	ctx := t.Context()
	withPublishers(t, s)
	digest := store.TokenDigest("sf_admin_shared_secret")
	orig, err := s.CreateToken(ctx, digest, adminTok(alpha.ID, "alpha-ops"))
	wantErr(t, "CreateToken(alpha)", err, nil)
	for name, tok := range map[string]store.Token{
		"an admin token of another publisher": adminTok(beta.ID, "beta-ops"),
		"a buyer token of another publisher":  buyerTok(beta.ID, "beta-buyer"),
		"a buyer token of the same publisher": buyerTok(alpha.ID, "alpha-buyer"),
		"an admin token renamed":              adminTok(alpha.ID, "renamed"),
	} {
		_, err := s.CreateToken(ctx, digest, tok)
		wantErr(t, "CreateToken(the same digest as "+name+")", err, store.ErrExists)
	}
	got := use(t, s, store.AdminToken, "", digest, t0)
	got.LastUsedAt = nil
	if diff := cmp.Diff(orig, got); diff != "" {
		t.Errorf("after creates that collided, the token changed (-was +now):\n%s", diff)
	}

	bDigest := store.TokenDigest("sf_buyer_shared_secret")
	b, err := s.CreateToken(ctx, bDigest, buyerTok(alpha.ID, "buyer-a", "acct_a"))
	wantErr(t, "CreateToken(buyer)", err, nil)
	_, err = s.CreateToken(ctx, bDigest, buyerTok(alpha.ID, "buyer-b", "acct_b", "acct_c"))
	wantErr(t, "CreateToken(buyer, same digest, other scope)", err, store.ErrExists)
	if got := use(t, s, store.BuyerToken, alpha.ID, bDigest, t0); cmp.Diff(b.Buyer, got.Buyer) != "" {
		t.Errorf("a colliding create changed the buyer token's scope to %+v", got.Buyer)
	}
	// The id is unique too.
	dupID := adminTok(beta.ID, "dup-id")
	dupID.ID = orig.ID
	_, err = s.CreateToken(ctx, store.TokenDigest("sf_admin_other"), dupID)
	wantErr(t, "CreateToken(an id that is taken)", err, store.ErrExists)

	// Of 16 creates of one digest at once, exactly one succeeds.
	race := store.TokenDigest("sf_admin_race")
	var ok atomic.Int32
	parallel(16, func(i int) {
		pub := alpha.ID
		if i%2 == 1 {
			pub = beta.ID
		}
		_, err := s.CreateToken(ctx, race, adminTok(pub, fmt.Sprintf("racer-%d", i)))
		switch {
		case err == nil:
			ok.Add(1)
		case !errors.Is(err, store.ErrExists):
			t.Errorf("CreateToken(racer %d) = %v, want nil or ErrExists", i, err)
		}
	})
	if n := ok.Load(); n != 1 {
		t.Errorf("%d of 16 concurrent creates of one digest succeeded, want 1", n)
	}
}

// testTokenRotation: the new token takes the old one's scope; the old one
// works until the overlap ends, then is refused; a token is rotated once.
func testTokenRotation(t *testing.T, s store.Store) {
	ctx := t.Context()
	withPublishers(t, s)
	oldDigest, newDigest := store.TokenDigest("sf_buyer_old"), store.TokenDigest("sf_buyer_new")
	orig, err := s.CreateToken(ctx, oldDigest, buyerTok(alpha.ID, "agency", "acct_1"))
	wantErr(t, "CreateToken", err, nil)

	next := store.Token{Prefix: "sf_buyer_newprefx", CreatedAt: tAt(time.Hour), CreatedBy: "tok_rotator"}
	old, created, err := s.RotateToken(ctx, alpha.ID, orig.ID, newDigest, next, tAt(2*time.Hour))
	wantErr(t, "RotateToken", err, nil)
	if created.ID == "" || created.ID == orig.ID || created.Replaces != orig.ID || old.ReplacedBy != created.ID {
		t.Errorf("RotateToken linked %s -> %s (replaces %q, replaced by %q)", orig.ID, created.ID, created.Replaces, old.ReplacedBy)
	}
	if created.Kind != orig.Kind || created.Name != orig.Name || created.Publisher != orig.Publisher ||
		cmp.Diff(orig.Buyer, created.Buyer) != "" || created.Prefix != next.Prefix || created.CreatedBy != "tok_rotator" {
		t.Errorf("the rotated token = %+v, want the old one's kind, name and scope with its own prefix", created)
	}
	if old.ExpiresAt == nil || !old.ExpiresAt.Equal(tAt(2*time.Hour).Truncate(time.Microsecond)) || old.RevokedAt != nil {
		t.Errorf("the old token expires at %v (revoked %v), want at the end of the overlap", old.ExpiresAt, old.RevokedAt)
	}
	if got, _ := s.Token(ctx, alpha.ID, orig.ID); cmp.Diff(old, got) != "" {
		t.Errorf("RotateToken returned an old token other than the one stored:\n%s", cmp.Diff(old, got))
	}
	if got, _ := s.TokenByDigest(ctx, newDigest); cmp.Diff(created, got) != "" {
		t.Errorf("RotateToken returned a new token other than the one stored:\n%s", cmp.Diff(created, got))
	}
	// During the overlap both work; after it only the new one.
	use(t, s, store.BuyerToken, alpha.ID, oldDigest, tAt(90*time.Minute))
	use(t, s, store.BuyerToken, alpha.ID, newDigest, tAt(90*time.Minute))
	refused(t, s, "the old token after the overlap", store.BuyerToken, alpha.ID, oldDigest, tAt(2*time.Hour))
	use(t, s, store.BuyerToken, alpha.ID, newDigest, tAt(3*time.Hour))
	if got, _ := s.Token(ctx, alpha.ID, orig.ID); got.Status(tAt(90*time.Minute)) != "rotated" || got.Status(tAt(3*time.Hour)) != "expired" {
		t.Errorf("the old token's status = %q during the overlap and %q after, want rotated and expired",
			got.Status(tAt(90*time.Minute)), got.Status(tAt(3*time.Hour)))
	}

	// A token is rotated once; a revoked or expired one not at all.
	_, _, err = s.RotateToken(ctx, alpha.ID, orig.ID, store.TokenDigest("sf_buyer_third"), next, tAt(2*time.Hour))
	wantErr(t, "RotateToken(already rotated)", err, store.ErrConflict)
	if _, err := s.TokenByDigest(ctx, store.TokenDigest("sf_buyer_third")); err == nil {
		t.Error("a refused rotation stored its new token")
	}
	_, err = s.RevokeToken(ctx, alpha.ID, created.ID, tAt(4*time.Hour))
	wantErr(t, "RevokeToken", err, nil)
	_, _, err = s.RotateToken(ctx, alpha.ID, created.ID, store.TokenDigest("sf_buyer_fourth"), store.Token{CreatedAt: tAt(5 * time.Hour)}, tAt(6*time.Hour))
	wantErr(t, "RotateToken(revoked)", err, store.ErrConflict)
	_, _, err = s.RotateToken(ctx, beta.ID, created.ID, store.TokenDigest("sf_buyer_fifth"), next, tAt(6*time.Hour))
	wantErr(t, "RotateToken(another publisher's token)", err, store.ErrNotFound)

	// No overlap: the old token is revoked at once. An overlap beyond the
	// old token's own expiry leaves that expiry.
	adminDigest := store.TokenDigest("sf_admin_rotate_now")
	expiring := adminTok(alpha.ID, "expiring")
	expiring.ExpiresAt = ptrTime(tAt(3 * time.Hour))
	a, err := s.CreateToken(ctx, adminDigest, expiring)
	wantErr(t, "CreateToken(admin)", err, nil)
	// The times have nanoseconds, which stores do not keep.
	now := store.Token{CreatedAt: tAt(time.Hour + 7)}
	old, created, err = s.RotateToken(ctx, alpha.ID, a.ID, store.TokenDigest("sf_admin_rotated_now"), now, tAt(time.Hour+7))
	wantErr(t, "RotateToken(no overlap)", err, nil)
	if old.RevokedAt == nil || !old.RevokedAt.Equal(tAt(time.Hour).Truncate(time.Microsecond)) {
		t.Errorf("a rotation without overlap left the old token revoked at %v, want at once", old.RevokedAt)
	}
	refused(t, s, "the old token after a rotation without overlap", store.AdminToken, "", adminDigest, tAt(time.Hour))
	if created.Kind != store.AdminToken || created.Buyer != nil {
		t.Errorf("rotating an admin token made %+v", created)
	}
	b, err := s.CreateToken(ctx, store.TokenDigest("sf_admin_short"), expiring)
	wantErr(t, "CreateToken(admin)", err, nil)
	old, created, err = s.RotateToken(ctx, alpha.ID, b.ID, store.TokenDigest("sf_admin_short_next"), store.Token{CreatedAt: tAt(time.Hour)}, tAt(10*time.Hour))
	wantErr(t, "RotateToken(overlap past the old expiry)", err, nil)
	if old.ExpiresAt == nil || !old.ExpiresAt.Equal(tAt(3*time.Hour).Truncate(time.Microsecond)) {
		t.Errorf("rotation moved the old token's expiry from %v to %v; it may only bring it forward", tAt(3*time.Hour), old.ExpiresAt)
	}
	// The successor lasts as long as the old token was made to: 3 hours.
	if created.ExpiresAt == nil || !created.ExpiresAt.Equal(tAt(4*time.Hour).Truncate(time.Microsecond)) {
		t.Errorf("the successor of a 3-hour token expires at %v, want 3 hours after it was made (%v)", created.ExpiresAt, tAt(4*time.Hour))
	}

	// Of 8 rotations of one token at once, exactly one succeeds.
	c, err := s.CreateToken(ctx, store.TokenDigest("sf_admin_contended"), adminTok(alpha.ID, "contended"))
	wantErr(t, "CreateToken(contended)", err, nil)
	var ok atomic.Int32
	parallel(8, func(i int) {
		_, _, err := s.RotateToken(ctx, alpha.ID, c.ID, store.TokenDigest(fmt.Sprintf("sf_admin_contender_%d", i)), now, tAt(2*time.Hour))
		switch {
		case err == nil:
			ok.Add(1)
		case !errors.Is(err, store.ErrConflict):
			t.Errorf("RotateToken(contender %d) = %v, want nil or ErrConflict", i, err)
		}
	})
	if n := ok.Load(); n != 1 {
		t.Errorf("%d of 8 concurrent rotations of one token succeeded, want 1", n)
	}
}
