package compliance_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/storefront/storefront/internal/kittest"
	"github.com/storefront/storefront/internal/testenv"
)

// seed calls a seed scenario the way the storyboard runner does: one
// seeding session (the runner sends no context at all; here every call
// shares the correlation prefix "seeds--").
func seed(t *testing.T, cs *mcp.ClientSession, scenario, params string) map[string]any {
	t.Helper()
	return kittest.ControlRaw(t, cs, `{"adcp_version":"3.2-beta.5","scenario":"`+scenario+`","account":{"sandbox":true},"context":{"correlation_id":"seeds--`+scenario+`"},"params":`+params+`}`)
}

// seedProduct seeds one fixture product and returns the controller's
// answer.
func seedProduct(t *testing.T, cs *mcp.ClientSession, id, fixture string) map[string]any {
	t.Helper()
	return seed(t, cs, "seed_product", `{"product_id":`+kittest.JSONString(id)+`,"fixture":`+fixture+`}`)
}

func seedPrice(t *testing.T, cs *mcp.ClientSession, product, id, fixture string) {
	t.Helper()
	kittest.MustSucceed(t, seed(t, cs, "seed_pricing_option", `{"product_id":`+kittest.JSONString(product)+`,"pricing_option_id":`+kittest.JSONString(id)+`,"fixture":`+fixture+`}`))
}

// TestSeedSignalCharges: the pricing_currency_filter fixtures. A product
// whose fixed signal is charged only in EUR is not offered to a buyer who
// pays in USD, while one whose EUR signal is optional is, with its product
// pricing narrowed to USD and its signals served as seeded; the projection
// the storyboard asks for is a valid product.
func TestSeedSignalCharges(t *testing.T) {
	env := testenv.Start(t, "--sandbox")
	cs := kittest.Connect(t, env.BaseURL, kittest.Kit)
	const display = `"delivery_type":"non_guaranteed","channels":["display"],"format_options":[{"format_option_id":"display_300x250","format_kind":"image","params":{"width":300,"height":250}}],"signal_targeting_allowed":true`
	kittest.MustSucceed(t, seedProduct(t, cs, "mixed_currency_display", `{`+display+`,
		"signal_targeting_rules":{"resolution_model":"direct_targeting","selection_mode":"optional"},
		"signal_targeting_options":[{"signal_ref":{"scope":"product","signal_id":"premium_outdoor_affinity"},"name":"Premium outdoor affinity","value_type":"binary","default_selected":false,
			"pricing_options":[{"pricing_option_id":"premium_outdoor_affinity_eur_cpm","model":"cpm","cpm":1.00,"currency":"EUR"}]}]}`))
	kittest.MustSucceed(t, seedProduct(t, cs, "mandatory_eur_signal_display", `{`+display+`,
		"signal_targeting_rules":{"resolution_model":"direct_targeting","selection_mode":"fixed"},
		"signal_targeting_options":[{"signal_ref":{"scope":"product","signal_id":"fixed_sports_affinity"},"name":"Fixed sports affinity","value_type":"binary","default_selected":true,
			"pricing_options":[{"pricing_option_id":"fixed_sports_affinity_eur_cpm","model":"cpm","cpm":1.50,"currency":"EUR"}]}]}`))
	seedPrice(t, cs, "mixed_currency_display", "mixed_display_usd_cpm", `{"pricing_model":"cpm","currency":"USD","fixed_price":12.00}`)
	seedPrice(t, cs, "mixed_currency_display", "mixed_display_eur_cpm", `{"pricing_model":"cpm","currency":"EUR","fixed_price":11.00}`)
	seedPrice(t, cs, "mandatory_eur_signal_display", "mandatory_eur_base_usd_cpm", `{"pricing_model":"cpm","currency":"USD","fixed_price":10.00}`)

	const request = `{"adcp_version":"3.2-beta.5","buying_mode":"wholesale","filters":{"pricing_currencies":[%q]},
		"fields":["product_id","name","pricing_options","signal_targeting_allowed","signal_targeting_options","signal_targeting_rules"],
		"account":{"brand":{"domain":"acmeoutdoor.example"},"operator":"pinnacle-agency.example","sandbox":true}}`
	usd := kittest.GetProducts(t, cs, strings.Replace(request, "%q", `"USD"`, 1))
	kittest.WantStatus(t, usd, "completed")
	ps, _ := usd["products"].([]any)
	if len(ps) != 1 {
		t.Fatalf("USD products = %v, want mixed_currency_display alone", usd["products"])
	}
	p := ps[0].(map[string]any)
	if p["product_id"] != "mixed_currency_display" {
		t.Errorf("product = %v, want mixed_currency_display", p["product_id"])
	}
	if diff := cmp.Diff([]any{map[string]any{"pricing_option_id": "mixed_display_usd_cpm", "pricing_model": "cpm", "currency": "USD", "fixed_price": 12.0}}, p["pricing_options"]); diff != "" {
		t.Errorf("pricing_options (-want +got):\n%s", diff)
	}
	opts, _ := p["signal_targeting_options"].([]any)
	if len(opts) != 1 || p["signal_targeting_allowed"] != true || p["signal_targeting_rules"] == nil {
		t.Errorf("signal fields not served as seeded: %v", p)
	}
	// The optional add-on's EUR price is the buyer's to avoid, not pruned.
	if len(opts) == 1 {
		if prices, _ := opts[0].(map[string]any)["pricing_options"].([]any); len(prices) != 1 {
			t.Errorf("the optional signal's pricing = %v, want its EUR CPM", prices)
		}
	}

	eur := kittest.GetProducts(t, cs, strings.Replace(request, "%q", `"EUR"`, 1))
	var got []string
	for _, p := range eur["products"].([]any) {
		got = append(got, p.(map[string]any)["product_id"].(string))
	}
	// mandatory_eur_signal_display has no product price in EUR.
	if diff := cmp.Diff([]string{"mixed_currency_display"}, got); diff != "" {
		t.Errorf("EUR products (-want +got):\n%s", diff)
	}
}

// TestSeedRefusesWhatItCannotHonour: a fixture field the catalogue does
// not model, or signal terms it cannot evaluate, are refused with
// INVALID_PARAMS naming the field; nothing is seeded.
func TestSeedRefusesWhatItCannotHonour(t *testing.T) {
	env := testenv.Start(t, "--sandbox")
	cs := kittest.Connect(t, env.BaseURL, kittest.Kit)
	for _, test := range []struct {
		name, fixture, field string
	}{
		{"an unmodelled product field", `{"channels":["display"],"included_signals":[{"signal_ref":{"scope":"product","signal_id":"a"}}]}`, "included_signals"},
		{"custom signal pricing", `{"channels":["display"],"signal_targeting_allowed":true,"signal_targeting_options":[{"signal_ref":{"scope":"product","signal_id":"a"},"name":"A","value_type":"binary",
			"pricing_options":[{"pricing_option_id":"c","model":"custom","description":"Kicker","metadata":{"summary_for_operator":"x"}}]}]}`, "metadata"},
		{"an unmodelled signal option field", `{"channels":["display"],"signal_targeting_allowed":true,"signal_targeting_options":[{"signal_ref":{"scope":"product","signal_id":"a"},"name":"A","value_type":"binary","methodology_url":"https://m.example"}]}`, "methodology_url"},
		{"options without signal_targeting_allowed", `{"channels":["display"],"signal_targeting_options":[{"signal_ref":{"scope":"product","signal_id":"a"},"name":"A","value_type":"binary"}]}`, "signal_targeting_allowed"},
	} {
		t.Run(test.name, func(t *testing.T) {
			m := seedProduct(t, cs, "refused_product", test.fixture)
			if m["success"] != false || m["error"] != "INVALID_PARAMS" {
				t.Fatalf("seed_product = %v, want INVALID_PARAMS", m)
			}
			if detail, _ := m["error_detail"].(string); !strings.Contains(detail, test.field) {
				t.Errorf("error_detail = %q, want it to name %s", detail, test.field)
			}
		})
	}
	// Nothing was seeded: the principal still sees the publisher's
	// catalogue.
	got := kittest.GetProducts(t, cs, `{"adcp_version":"3.2-beta.5","buying_mode":"wholesale"}`)
	for _, p := range got["products"].([]any) {
		if p.(map[string]any)["product_id"] == "refused_product" {
			t.Fatal("a refused fixture is served")
		}
	}
}

// TestSeedFormatOptionRefsPagination: get-products-pagination-integrity.
// Two fixtures share a format option; a wholesale walk filtered by it
// returns one per page, and the second page is the last.
func TestSeedFormatOptionRefsPagination(t *testing.T) {
	env := testenv.Start(t, "--sandbox")
	cs := kittest.Connect(t, env.BaseURL, kittest.Kit)
	for _, id := range []string{"pagination_product_1", "pagination_product_2"} {
		kittest.MustSucceed(t, seedProduct(t, cs, id, `{"name":"Pagination `+id+`","description":"Fixture.","delivery_type":"non_guaranteed","channels":["display"],
			"publisher_properties":[{"publisher_domain":"acmeoutdoor.example"}],
			"format_options":[{"format_option_id":"pagination_integrity_display","format_kind":"image","params":{"width":300,"height":250}}]}`))
		seedPrice(t, cs, id, id+"_cpm", `{"pricing_model":"cpm","currency":"USD","floor_price":1.0}`)
	}
	const request = `{"adcp_version":"3.2-beta.5","buying_mode":"wholesale","account":{"brand":{"domain":"acmeoutdoor.example"},"operator":"pinnacle-agency.example"},
		"filters":{"format_option_refs":[{"scope":"product","format_option_id":"pagination_integrity_display"}]},"pagination":{"max_results":1%s}}`
	first := kittest.GetProducts(t, cs, strings.Replace(request, "%s", "", 1))
	page, _ := first["pagination"].(map[string]any)
	if ps, _ := first["products"].([]any); len(ps) != 1 || page["has_more"] != true || page["cursor"] == nil {
		t.Fatalf("first page = %v, want one product and a cursor", first)
	}
	second := kittest.GetProducts(t, cs, strings.Replace(request, "%s", `,"cursor":`+kittest.JSONString(page["cursor"].(string)), 1))
	page2, _ := second["pagination"].(map[string]any)
	if ps, _ := second["products"].([]any); len(ps) != 1 || page2["has_more"] != false || page2["cursor"] != nil {
		t.Fatalf("second page = %v, want the other product and no cursor", second)
	}
	a := first["products"].([]any)[0].(map[string]any)["product_id"]
	b := second["products"].([]any)[0].(map[string]any)["product_id"]
	if a == b {
		t.Errorf("both pages returned %v", a)
	}
}
