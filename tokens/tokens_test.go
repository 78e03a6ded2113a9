package tokens_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/storefront/storefront/products"
	"github.com/storefront/storefront/store"
	"github.com/storefront/storefront/store/memstore"
	"github.com/storefront/storefront/tokens"
)

var t0 = time.Date(2031, 5, 6, 7, 8, 9, 0, time.UTC)

func TestSecretsAndPrefixes(t *testing.T) {
	for kind, start := range map[store.TokenKind]string{store.AdminToken: "sf_admin_", store.BuyerToken: "sf_buyer_"} {
		a, b := tokens.NewSecret(kind), tokens.NewSecret(kind)
		if !strings.HasPrefix(a, start) || len(a) != len(start)+48 || a == b {
			t.Errorf("NewSecret(%s) = %q, %q: want two distinct %s secrets of 192 bits", kind, a, b, start)
		}
		if p := tokens.Prefix(a); p != a[:len(start)+8] {
			t.Errorf("Prefix(%q) = %q, want the kind prefix and 8 characters", a, p)
		}
	}
	if p := tokens.Prefix("my-own-secret-of-24-char"); p != "my-own" {
		t.Errorf("Prefix(a secret not made here) = %q, want its first quarter", p)
	}
}

func TestExpiry(t *testing.T) {
	if e := tokens.Expiry(t0, 0); e != nil {
		t.Errorf("Expiry(0) = %v, want never", e)
	}
	if e := tokens.Expiry(t0, -time.Hour); e != nil {
		t.Errorf("Expiry(-1h) = %v, want never", e)
	}
	if e := tokens.Expiry(t0, time.Hour); e == nil || !e.Equal(t0.Add(time.Hour)) {
		t.Errorf("Expiry(1h) = %v, want %v", e, t0.Add(time.Hour))
	}
}

// TestMintAndRotate: a minted token is stored under its secret's digest
// with the secret's prefix, and a rotation's new secret opens the new
// token while the old one's still opens the old until the overlap ends.
func TestMintAndRotate(t *testing.T) {
	s := memstore.New()
	t.Cleanup(func() { _ = s.Close() })
	ctx := t.Context()
	if err := s.PutPublisher(ctx, products.Publisher{ID: "northwind", Name: "Northwind", Domain: "northwind.example"}); err != nil {
		t.Fatal(err)
	}
	secret, stored, err := tokens.Mint(ctx, s, store.Token{Kind: store.BuyerToken, Publisher: "northwind", Name: "buyer",
		Buyer: &store.Buyer{ID: "buyer", Operator: "op.example"}, CreatedAt: t0, ExpiresAt: tokens.Expiry(t0, 24*time.Hour)})
	if err != nil || stored.ID == "" || stored.Prefix != tokens.Prefix(secret) {
		t.Fatalf("Mint = %q, %+v, %v", secret, stored, err)
	}
	if got, err := s.UseToken(ctx, store.BuyerToken, "northwind", store.TokenDigest(secret), t0); err != nil || got.ID != stored.ID {
		t.Fatalf("UseToken(the minted secret) = %+v, %v, want %s", got, err, stored.ID)
	}
	if _, _, err := tokens.Mint(ctx, s, store.Token{Kind: store.AdminToken, Publisher: "ghost", Name: "x", CreatedAt: t0}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Mint for an unknown publisher = %v, want ErrNotFound", err)
	}

	now := t0.Add(time.Hour)
	next, old, created, err := tokens.Rotate(ctx, s, "northwind", stored.ID, store.Token{CreatedAt: now}, now.Add(time.Minute))
	if err != nil || old.ReplacedBy != created.ID || created.Replaces != stored.ID || created.Prefix != tokens.Prefix(next) || next == secret {
		t.Fatalf("Rotate = %q, %+v, %+v, %v", next, old, created, err)
	}
	if got, err := s.UseToken(ctx, store.BuyerToken, "northwind", store.TokenDigest(next), now); err != nil || got.ID != created.ID {
		t.Errorf("UseToken(the new secret) = %+v, %v, want %s", got, err, created.ID)
	}
	if _, err := s.UseToken(ctx, store.BuyerToken, "northwind", store.TokenDigest(secret), now.Add(2*time.Minute)); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("UseToken(the old secret after the overlap) = %v, want ErrNotFound", err)
	}
	if _, _, _, err := tokens.Rotate(ctx, s, "northwind", stored.ID, store.Token{CreatedAt: now}, now); !errors.Is(err, store.ErrConflict) {
		t.Errorf("Rotate(a rotated token) = %v, want ErrConflict", err)
	}
	if _, _, _, err := tokens.Rotate(ctx, s, "northwind", "tok_none", store.Token{CreatedAt: now}, now); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Rotate(no such token) = %v, want ErrNotFound", err)
	}
}

func TestDetails(t *testing.T) {
	exp := t0.Add(time.Hour)
	old := store.Token{ID: "tok_old", Kind: store.BuyerToken, Name: "b", Prefix: "sf_buyer_12345678", Buyer: &store.Buyer{ID: "buyer"}, ExpiresAt: &exp}
	d := tokens.RotationDetail(old, store.Token{ID: "tok_new"})
	want := map[string]string{"kind": "buyer", "name": "b", "prefix": "sf_buyer_12345678", "buyer": "buyer",
		"expires_at": "2031-05-06T08:08:09Z", "replaced_by": "tok_new", "old_token_until": "2031-05-06T08:08:09Z"}
	if len(d) != len(want) {
		t.Fatalf("RotationDetail = %v, want %v", d, want)
	}
	for k, v := range want {
		if d[k] != v {
			t.Errorf("RotationDetail[%s] = %q, want %q", k, d[k], v)
		}
	}
	if err := tokens.CheckName("ops"); err != nil {
		t.Errorf("CheckName(ops) = %v", err)
	}
	if err := tokens.CheckName("two\nlines"); err == nil {
		t.Error("CheckName(two lines) = nil, want an error")
	}
}
