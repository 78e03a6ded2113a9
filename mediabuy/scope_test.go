package mediabuy

import (
	"strings"
	"testing"
)

// TestScope: a sandbox's buys are stored under ids its scope prefixes, and
// read back under the ids their callers chose; sandboxes never share a
// stored id, and ids outside a sandbox are stored as they are.
func TestScope(t *testing.T) {
	a, b := PrincipalScope("demo-kit-a"), PrincipalScope("demo-kit-b")
	acct := AccountScope("demo-kit-a")
	if a == b || a == acct || a == "" || !strings.HasPrefix(string(a), "sandbox.") {
		t.Fatalf("scopes %q, %q, %q must be distinct sandbox prefixes", a, b, acct)
	}
	for _, test := range []struct {
		name string
		buy  Buy
		want string
	}{
		{"sandbox principal", Buy{ID: a.Stored("fixture_buy"), Principal: "demo-kit-a", Sandbox: true}, "fixture_buy"},
		{"sandbox account", Buy{ID: AccountScope("acct_1").Stored("fixture_buy"), Account: "acct_1", Principal: "buyer", Sandbox: true}, "fixture_buy"},
		{"an id that is itself prefixed", Buy{ID: a.Stored(string(b) + "x"), Principal: "demo-kit-a", Sandbox: true}, string(b) + "x"},
		{"another sandbox's prefix", Buy{ID: b.Stored("fixture_buy"), Principal: "demo-kit-a", Sandbox: true}, b.Stored("fixture_buy")},
		{"outside a sandbox", Buy{ID: a.Stored("mb_1"), Principal: "demo-kit-a"}, a.Stored("mb_1")},
		{"unscoped", Buy{ID: "mb_1", Principal: "buyer"}, "mb_1"},
	} {
		if got := test.buy.PublicID(); got != test.want {
			t.Errorf("%s: PublicID() = %q, want %q", test.name, got, test.want)
		}
	}
	if got := Scope("").StoredIDs([]string{"x"}); len(got) != 1 || got[0] != "x" {
		t.Errorf(`Scope("").StoredIDs = %v`, got)
	}
	if got := a.StoredIDs(nil); got != nil {
		t.Errorf("StoredIDs(nil) = %v, want nil (no id filter)", got)
	}
	if got := a.StoredIDs([]string{"x", "y"}); got[0] != a.Stored("x") || got[1] != a.Stored("y") {
		t.Errorf("StoredIDs = %v", got)
	}
}
