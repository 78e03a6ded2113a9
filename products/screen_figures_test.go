package products_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/storefront/storefront/demo"
	"github.com/storefront/storefront/merch"
	"github.com/storefront/storefront/products"
	"github.com/storefront/storefront/vocab"
)

func previewOf(t *testing.T, snap *products.Snapshot, args string) map[string]any {
	t.Helper()
	svc := &products.Service{Now: func() time.Time { return time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC) }}
	res := svc.Preview(context.Background(), products.Call{Publisher: snap.Publisher.ID, Args: []byte(args)}, snap)
	var m map[string]any
	if err := json.Unmarshal(res.Payload, &m); err != nil {
		t.Fatalf("answer is not JSON: %v", err)
	}
	return m
}

// A rule id that spells its own threshold ("FLR-5120-USD-CTV" and a 5,120
// USD floor) must not hide the threshold the rule discloses: the figure
// is the composer's, screened as a figure, not as publisher text. Before,
// the id's fragment matched "5,120 USD", so every exact-level decline lost
// its figure and its suggestion and was marked final.
func TestDisclosedThresholdSurvivesAnIDThatSpellsIt(t *testing.T) {
	for _, tone := range vocab.Tones() {
		for _, level := range []vocab.Level{vocab.Range, vocab.Exact} {
			rb := merch.Rulebook{Format: merch.Format,
				Voice: vocab.Voice{SellerName: "Lakeside Media", Tone: tone, Templates: map[vocab.Slug]string{
					vocab.BudgetBelowMinimum: "Per FLR-5120-USD-CTV budgets start at {{minimum}}.",
				}},
				Rules: []merch.Rule{{
					ID: "FLR-5120-USD-CTV", Name: "CTV floor for Q4",
					Notes: "Agreed with dana okonkwo, see JIRA-88213.",
					When:  merch.Condition{BudgetBelow: &merch.BudgetFloor{Currency: "USD", Minimum: 5120}},
					Decline: merch.Action{Slug: vocab.BudgetBelowMinimum, Disclosure: level,
						Suggest: []vocab.SuggestionKind{vocab.RaiseBudget}},
				}}}
			if err := rb.Validate(); err != nil {
				t.Fatal(err)
			}
			snap := products.NewSnapshot(products.Publisher{ID: "lakeside", Name: "Lakeside Media", Domain: "lakeside.example", AnonymousDiscovery: true}, demo.Products(), 1, &rb, 1)
			m := previewOf(t, snap, `{"adcp_version":"3.2-beta.5","brief":"display","filters":{"budget_range":{"max":1000,"currency":"USD"}}}`)
			name := fmt.Sprintf("%s/%s", tone, level)
			if m["status"] != "rejected" {
				t.Fatalf("%s: status %v, want rejected: %v", name, m["status"], m)
			}
			reason, _ := m["reason"].(string)
			sugg, _ := m["suggestions"].([]any)
			want := "5,120 USD"
			if level == vocab.Range {
				want = "10,000 USD"
			}
			if !strings.Contains(reason, want) {
				t.Errorf("%s: reason %q does not name %s", name, reason, want)
			}
			if len(sugg) == 0 || !strings.Contains(fmt.Sprint(sugg...), want) {
				t.Errorf("%s: suggestions %v, want one naming %s (a larger budget clears the rule)", name, sugg, want)
			}
			for _, secret := range []string{"FLR", "okonkwo", "88213", "JIRA"} {
				if strings.Contains(strings.ToLower(reason+fmt.Sprint(sugg...)), strings.ToLower(secret)) {
					t.Errorf("%s: %q leaks %q", name, reason, secret)
				}
			}
		}
	}
}

// The words of public text stay usable however the demo's confidential
// fields use them, and the identifying fragments of those fields do not.
func TestDemoScreenFragments(t *testing.T) {
	rb := demo.Rulebook()
	snap := products.NewSnapshot(demo.Publisher(), demo.Products(), 1, &rb, 1)
	for _, public := range []string{
		"Acme Outdoor trail shoes", "Reported in America/New_York time.", "Outdoor running audiences",
		"Budgets of 1,000 USD or more fit this inventory.", "U.S.A. and U.K. markets", "a b c d e",
		"Thank you for considering Northwind Media.",
	} {
		if _, ok := snap.Screen.Line(public, 200); !ok {
			t.Errorf("the demo screen silences %q", public)
		}
	}
	for _, secret := range []string{
		"Ask Okafor", "ask okafor", "O.k.a.f.o.r", "O k a f o r", "WHITFIELD", "W-h-i-t-f-i-e-l-d",
		"Brightline", "ticket 4471", "IO 1029", "line item 88213", "8 8 2 1 3", "ENG 2210", "Triton",
	} {
		if _, ok := snap.Screen.Line(secret, 200); ok {
			t.Errorf("the demo screen lets %q through", secret)
		}
	}
}

// A buyer's bad value that names a vendor is described, not quoted, and
// the message keeps its meaning instead of becoming "Internal error.".
func TestBadValueNamingAVendorKeepsTheMessage(t *testing.T) {
	rb := demo.Rulebook()
	snap := products.NewSnapshot(demo.Publisher(), demo.Products(), 1, &rb, 1)
	m := previewOf(t, snap, `{"adcp_version":"3.2-beta.5","buying_mode":"brief","brief":"x","filters":{"channels":["FreeWheel"]}}`)
	b, _ := json.Marshal(m)
	if m["status"] != "failed" || strings.Contains(string(b), "Internal error") || strings.Contains(strings.ToLower(string(b)), "freewheel") {
		t.Fatalf("answer %s: want a validation failure that keeps its message and does not quote the vendor", b)
	}
	if !strings.Contains(string(b), "the value given") {
		t.Errorf("answer %s: want the bad value described as \"the value given\"", b)
	}
}
