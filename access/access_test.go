package access_test

import (
	"errors"
	"testing"

	"github.com/storefront/storefront/access"
	"github.com/storefront/storefront/products"
	"github.com/storefront/storefront/store"
	"github.com/storefront/storefront/store/memstore"
	"github.com/storefront/storefront/vocab"
)

const pub = "northwind"

// fixture is a store with a publisher and three accounts: a live one of
// op.example, a sandbox one of op.example, and a live one of another
// operator.
func fixture(t *testing.T) (*memstore.Store, map[string]store.Account) {
	t.Helper()
	s := memstore.New()
	t.Cleanup(func() { _ = s.Close() })
	ctx := t.Context()
	if err := s.PutPublisher(ctx, products.Publisher{ID: pub, Name: "Northwind", Domain: "northwind.example"}); err != nil {
		t.Fatal(err)
	}
	accts := map[string]store.Account{}
	for name, a := range map[string]store.Account{
		"live":    {ID: "acct_live", Operator: "op.example", BrandDomain: "acme.example", Disclosure: vocab.Exact},
		"sandbox": {ID: "acct_sandbox", Operator: "op.example", BrandDomain: "acme.example", Sandbox: true, Disclosure: vocab.Exact},
		"other":   {ID: "acct_other", Operator: "other.example", BrandDomain: "acme.example", Disclosure: vocab.Exact},
	} {
		stored, err := s.PutAccount(ctx, pub, a)
		if err != nil {
			t.Fatalf("PutAccount(%s) = %v", name, err)
		}
		accts[name] = stored
	}
	return s, accts
}

func TestResolve(t *testing.T) {
	live := products.Principal{ID: "buyer", Operator: "op.example"}
	listed := products.Principal{ID: "agency", Operator: "agency.example", Accounts: []string{"acct_other"}}
	sandbox := products.Principal{ID: "kit", Operator: "op.example", Sandbox: true}
	byID := func(id string) *products.AccountRef { return &products.AccountRef{AccountID: id} }
	natural := func(op string, sandbox bool) *products.AccountRef {
		return &products.AccountRef{Operator: op, Brand: &products.BrandRef{Domain: "acme.example"}, Sandbox: sandbox}
	}
	for _, c := range []struct {
		name string
		p    products.Principal
		ref  *products.AccountRef
		// want is the account id resolved; "" wants ErrAccountNotFound.
		want        string
		wantSandbox bool
	}{
		{"operator's live account by id", live, byID("acct_live"), "acct_live", false},
		{"operator's sandbox account by id", live, byID("acct_sandbox"), "acct_sandbox", true},
		{"another operator's account by id", live, byID("acct_other"), "", false},
		{"no such account", live, byID("acct_none"), "", false},
		{"token's account by id", listed, byID("acct_other"), "acct_other", false},
		{"account not on the token", listed, byID("acct_live"), "", false},
		{"operator's natural key", live, natural("op.example", false), "acct_live", false},
		{"operator's sandbox natural key", live, natural("op.example", true), "acct_sandbox", true},
		{"another operator's natural key", live, natural("other.example", false), "", false},
		{"sandbox principal, live natural key", sandbox, natural("op.example", false), "acct_sandbox", true},
		{"sandbox principal, sandbox account by id", sandbox, byID("acct_sandbox"), "acct_sandbox", true},
		{"sandbox principal, live account by id", sandbox, byID("acct_live"), "", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, _ := fixture(t)
			got, err := access.Accounts{Store: s}.Resolve(t.Context(), pub, c.p, c.ref)
			if c.want == "" {
				if !errors.Is(err, products.ErrAccountNotFound) {
					t.Fatalf("Resolve = %+v, %v, want ErrAccountNotFound", got, err)
				}
				return
			}
			if err != nil || got.Key != c.want || got.Sandbox != c.wantSandbox || got.Disclosure != vocab.Exact {
				t.Fatalf("Resolve = %+v, %v, want account %s (sandbox %v)", got, err, c.want, c.wantSandbox)
			}
		})
	}
}

// TestResolveProvisions: a natural key with no account yet is provisioned
// on first use, once, with the rules' own disclosure; a sandbox
// principal's is a sandbox account even when the reference does not say
// so, and a live principal's is kept apart from it.
func TestResolveProvisions(t *testing.T) {
	s, _ := fixture(t)
	ctx := t.Context()
	a := access.Accounts{Store: s}
	ref := &products.AccountRef{Operator: "op.example", Brand: &products.BrandRef{Domain: "new.example"}}
	kit := products.Principal{ID: "kit", Operator: "op.example", Sandbox: true}
	first, err := a.Resolve(ctx, pub, kit, ref)
	if err != nil || !first.Sandbox || first.Disclosure != vocab.Exact {
		t.Fatalf("Resolve(new natural key, sandbox principal) = %+v, %v, want a new sandbox account", first, err)
	}
	if ref.Sandbox {
		t.Error("Resolve changed the caller's reference")
	}
	again, err := a.Resolve(ctx, pub, kit, ref)
	if err != nil || again.Key != first.Key {
		t.Fatalf("Resolve again = %+v, %v, want %s again", again, err, first.Key)
	}
	live, err := a.Resolve(ctx, pub, products.Principal{ID: "buyer", Operator: "op.example"}, ref)
	if err != nil || live.Sandbox || live.Key == first.Key {
		t.Fatalf("Resolve(new natural key, live principal) = %+v, %v, want a live account of its own", live, err)
	}
	all, err := s.ListAccounts(ctx, pub)
	if err != nil || len(all) != 5 {
		t.Fatalf("ListAccounts = %d accounts, %v, want the 3 fixtures and 2 provisioned", len(all), err)
	}
}

// TestListed: a listing shows a live principal its token's accounts and
// its operator's live ones, not the sandbox ones it may still name by id;
// a sandbox principal, the sandbox accounts only.
func TestListed(t *testing.T) {
	_, accts := fixture(t)
	for _, c := range []struct {
		name       string
		p          products.Principal
		acct       string
		listed, by bool
	}{
		{"operator's live account", products.Principal{Operator: "op.example"}, "live", true, true},
		{"operator's sandbox account", products.Principal{Operator: "op.example"}, "sandbox", false, true},
		{"another operator's account", products.Principal{Operator: "op.example"}, "other", false, false},
		{"token's account", products.Principal{Accounts: []string{"acct_other"}}, "other", true, true},
		{"no operator matches no operator", products.Principal{}, "live", false, false},
		{"sandbox principal, sandbox account", products.Principal{Operator: "other.example", Sandbox: true}, "sandbox", true, true},
		{"sandbox principal, its token's live account", products.Principal{Accounts: []string{"acct_live"}, Sandbox: true}, "live", false, false},
	} {
		if got := access.Listed(c.p, accts[c.acct]); got != c.listed {
			t.Errorf("%s: Listed = %v, want %v", c.name, got, c.listed)
		}
		if got := access.MayName(c.p, accts[c.acct]); got != c.by {
			t.Errorf("%s: MayName = %v, want %v", c.name, got, c.by)
		}
	}
}
