package products

import (
	"encoding/json"
	"errors"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/storefront/storefront/jsonfield"
	"github.com/storefront/storefront/sanitize"
)

func intp(n int) *int { return &n }

// signalProduct is a display product priced in USD with the given signal
// options and rules.
func signalProduct(id string, rules *SignalRules, options ...SignalOption) Product {
	p := testProduct(id, "Signal "+id, "display", "image", "non_guaranteed", []string{"US"},
		[]PricingOption{{PricingOptionID: id + "_usd", PricingModel: "cpm", Currency: "USD", FixedPrice: num(10)}})
	p.SignalTargetingAllowed = true
	p.SignalTargetingOptions = options
	p.SignalTargetingRules = rules
	return p
}

// signal is a product-scoped binary signal charged a CPM in each currency.
func signal(id string, defaultSelected bool, currencies ...string) SignalOption {
	o := SignalOption{SignalRef: SignalRef{Scope: "product", SignalID: id}, Name: "Signal " + id, ValueType: "binary", DefaultSelected: defaultSelected}
	for _, c := range currencies {
		o.PricingOptions = append(o.PricingOptions, SignalPrice{PricingOptionID: id + "_" + c, Model: "cpm", CPM: num(1), Currency: c})
	}
	return o
}

func grouped(o SignalOption, group string) SignalOption {
	o.SelectionGroup = group
	return o
}

// TestSignalChargesPayable: pricing_currencies keeps a product only when
// the signal charges a package of it must carry are payable in a
// requested currency (core/product-filters.json; pricing_currency_filter
// caught a product kept although its fixed signal was EUR only).
func TestSignalChargesPayable(t *testing.T) {
	usd, eur := []string{"USD"}, []string{"EUR"}
	for _, test := range []struct {
		name    string
		p       Product
		payable map[string]bool // currency list (joined) -> payable
		charged bool
	}{
		{"no signals", signalProduct("none", nil), map[string]bool{"USD": true}, false},
		{"optional EUR signal", signalProduct("opt", &SignalRules{SelectionMode: "optional"}, signal("a", false, "EUR")), map[string]bool{"USD": true}, false},
		{"optional by default", signalProduct("dflt", nil, signal("a", true, "EUR")), map[string]bool{"USD": true}, false},
		{"fixed EUR signal applied by the seller", signalProduct("fixed", &SignalRules{SelectionMode: "fixed"}, signal("a", true, "EUR")),
			map[string]bool{"USD": false, "EUR": true, "USD,EUR": true}, true},
		{"fixed, the EUR signal not applied", signalProduct("fixed_off", &SignalRules{SelectionMode: "fixed"}, signal("a", false, "EUR"), signal("b", true)), map[string]bool{"USD": true}, false},
		{"fixed, priced in both", signalProduct("fixed_both", &SignalRules{SelectionMode: "fixed"}, signal("a", true, "EUR", "USD")), map[string]bool{"USD": true, "EUR": true}, true},
		{"fixed signal with no incremental price", signalProduct("fixed_free", &SignalRules{SelectionMode: "fixed"}, signal("a", true)), map[string]bool{"USD": true}, false},
		{"required: one of two, one payable", signalProduct("req", &SignalRules{SelectionMode: "required"}, signal("a", false, "EUR"), signal("b", false, "USD")),
			map[string]bool{"USD": true, "EUR": true, "GBP": false}, true},
		{"required: two of two, one payable", signalProduct("req2", &SignalRules{SelectionMode: "required", MinSelectedSignals: intp(2)}, signal("a", false, "EUR"), signal("b", false, "USD")),
			map[string]bool{"USD": false, "EUR": false, "USD,EUR": true}, true},
		{"required minimum zero", signalProduct("req0", &SignalRules{SelectionMode: "required", MinSelectedSignals: intp(0)}, signal("a", false, "EUR")), map[string]bool{"USD": true}, false},
		{"a group's fixed rule over an optional product", signalProduct("grp", &SignalRules{SelectionMode: "optional", SelectionGroupRules: []SelectionGroupRule{{SelectionGroup: "suppress", SelectionMode: "fixed"}}},
			grouped(signal("a", true, "EUR"), "suppress"), signal("b", true, "EUR")), map[string]bool{"USD": false, "EUR": true}, true},
		{"a group's optional rule over a fixed product", signalProduct("grp2", &SignalRules{SelectionMode: "fixed", SelectionGroupRules: []SelectionGroupRule{{SelectionGroup: "extras", SelectionMode: "optional"}}},
			grouped(signal("a", true, "EUR"), "extras"), signal("b", true, "USD")), map[string]bool{"USD": true, "EUR": false}, true},
		{"a group rule without a mode follows the product's", signalProduct("grp3", &SignalRules{SelectionMode: "fixed", SelectionGroupRules: []SelectionGroupRule{{SelectionGroup: "g", TargetingMode: "include"}}},
			grouped(signal("a", true, "EUR"), "g")), map[string]bool{"USD": false, "EUR": true}, true},
	} {
		t.Run(test.name, func(t *testing.T) {
			if err := test.p.Validate(); err != nil {
				t.Fatalf("Validate() = %v", err)
			}
			if got := test.p.hasMandatorySignalCharges(); got != test.charged {
				t.Errorf("hasMandatorySignalCharges() = %v, want %v", got, test.charged)
			}
			for list, want := range test.payable {
				currencies := splitComma(list)
				if got := test.p.SignalChargesPayable(currencies); got != want {
					t.Errorf("SignalChargesPayable(%v) = %v, want %v", currencies, got, want)
				}
			}
		})
	}
	// And through the catalogue's filter, with the other filters.
	c := newCatalogue([]Product{
		signalProduct("mixed", &SignalRules{SelectionMode: "optional"}, signal("a", false, "EUR")),
		signalProduct("fixed_eur", &SignalRules{SelectionMode: "fixed"}, signal("b", true, "EUR")),
	}, sanitize.New(nil), nil)
	m := c.Find(Filters{PricingCurrencies: usd}, nil, "", false, nil)
	if got := rankedIDs(m); !slices.Equal(got, []string{"mixed"}) {
		t.Errorf("USD products = %v, want [mixed]", got)
	}
	if diff := cmp.Diff(map[string]int{"pricing_currencies": 1}, m.Excluded); diff != "" {
		t.Errorf("Excluded (-want +got):\n%s", diff)
	}
	// fixed_eur has no EUR product price, so EUR alone excludes both.
	if m := c.Find(Filters{PricingCurrencies: eur}, nil, "", false, nil); m.Total != 0 {
		t.Errorf("EUR products = %v, want none (no product prices in EUR)", rankedIDs(m))
	}
}

func splitComma(s string) []string {
	var out []string
	start := 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == ',' {
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return out
}

// TestValidateSignals: what the catalogue cannot honour is refused with a
// pointer to the field, never stored and ignored.
func TestValidateSignals(t *testing.T) {
	base := func(edit func(p *Product)) Product {
		p := signalProduct("p", &SignalRules{SelectionMode: "optional"}, signal("a", false, "EUR"))
		edit(&p)
		return p
	}
	opt := func(p *Product) *SignalOption { return &p.SignalTargetingOptions[0] }
	for _, test := range []struct {
		name string
		p    Product
		want []string // pointers
	}{
		{"not allowed", base(func(p *Product) { p.SignalTargetingAllowed = false }), []string{"/signal_targeting_allowed"}},
		{"unknown scope", base(func(p *Product) { opt(p).SignalRef.Scope = "seller" }), []string{"/signal_targeting_options/0/signal_ref/scope"}},
		{"bad signal id", base(func(p *Product) { opt(p).SignalRef.SignalID = "a b" }), []string{"/signal_targeting_options/0/signal_ref/signal_id"}},
		{"product scope without a name", base(func(p *Product) { opt(p).Name = "" }), []string{"/signal_targeting_options/0/name"}},
		{"product scope without a value type", base(func(p *Product) { opt(p).ValueType = "" }), []string{"/signal_targeting_options/0/value_type"}},
		{"data provider without a domain", base(func(p *Product) { opt(p).SignalRef.Scope = "data_provider" }), []string{"/signal_targeting_options/0/signal_ref/data_provider_domain"}},
		{"signal source without a URL", base(func(p *Product) { opt(p).SignalRef.Scope = "signal_source" }), []string{"/signal_targeting_options/0/signal_ref/signal_source_url"}},
		{"offered twice", base(func(p *Product) { p.SignalTargetingOptions = append(p.SignalTargetingOptions, signal("a", false)) }), []string{"/signal_targeting_options/1/signal_ref"}},
		{"categories on a binary signal", base(func(p *Product) { opt(p).Categories = []string{"x"} }), []string{"/signal_targeting_options/0/categories"}},
		{"activation without a handle", base(func(p *Product) { opt(p).ActivationStatus = "requires_activation" }), []string{"/signal_targeting_options/0/signal_agent_segment_id"}},
		{"a targeting mode twice", base(func(p *Product) { opt(p).AllowedTargetingModes = []string{"include", "include"} }), []string{"/signal_targeting_options/0/allowed_targeting_modes/1"}},
		{"custom pricing", base(func(p *Product) {
			opt(p).PricingOptions[0] = SignalPrice{PricingOptionID: "c", Model: "custom", Currency: "EUR"}
		}), []string{"/signal_targeting_options/0/pricing_options/0/model"}},
		{"cpm without an amount", base(func(p *Product) { opt(p).PricingOptions[0].CPM = nil }), []string{"/signal_targeting_options/0/pricing_options/0/cpm"}},
		{"another model's amount", base(func(p *Product) { opt(p).PricingOptions[0].Amount = num(3) }), []string{"/signal_targeting_options/0/pricing_options/0/amount"}},
		{"no currency", base(func(p *Product) { opt(p).PricingOptions[0].Currency = "" }), []string{"/signal_targeting_options/0/pricing_options/0/currency"}},
		{"percent over 100", base(func(p *Product) {
			opt(p).PricingOptions[0] = SignalPrice{PricingOptionID: "pm", Model: "percent_of_media", Percent: num(120), Currency: "EUR"}
		}), []string{"/signal_targeting_options/0/pricing_options/0/percent"}},
		{"flat fee without a period", base(func(p *Product) {
			opt(p).PricingOptions[0] = SignalPrice{PricingOptionID: "ff", Model: "flat_fee", Amount: num(100), Currency: "EUR"}
		}), []string{"/signal_targeting_options/0/pricing_options/0/period"}},
		{"empty pricing list", base(func(p *Product) { opt(p).PricingOptions = []SignalPrice{} }), []string{"/signal_targeting_options/0/pricing_options"}},
		{"unknown selection mode", base(func(p *Product) { p.SignalTargetingRules.SelectionMode = "always" }), []string{"/signal_targeting_rules/selection_mode"}},
		{"min over max", base(func(p *Product) {
			p.SignalTargetingRules.MinSelectedSignals, p.SignalTargetingRules.MaxSelectedSignals = intp(3), intp(2)
		}),
			[]string{"/signal_targeting_rules/min_selected_signals"}},
		{"required with too few options", base(func(p *Product) {
			p.SignalTargetingRules.SelectionMode, p.SignalTargetingRules.MinSelectedSignals = "required", intp(2)
		}), []string{"/signal_targeting_rules/selection_mode"}},
		{"a rule for a group no option is in", base(func(p *Product) {
			p.SignalTargetingRules.SelectionGroupRules = []SelectionGroupRule{{SelectionGroup: "nobody", SelectionMode: "fixed"}}
		}), []string{"/signal_targeting_rules/selection_group_rules/0/selection_group"}},
	} {
		t.Run(test.name, func(t *testing.T) {
			var inv jsonfield.Invalid
			if err := test.p.Validate(); !errors.As(err, &inv) {
				t.Fatalf("Validate() = %v, want field problems", err)
			}
			var got []string
			for _, f := range inv {
				got = append(got, f.Pointer)
			}
			if diff := cmp.Diff(test.want, got); diff != "" {
				t.Errorf("pointers (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDecodeSignalFields: the admin API's and the controller's strict
// decoding refuses signal fields the catalogue does not model.
func TestDecodeSignalFields(t *testing.T) {
	p := signalProduct("p", &SignalRules{SelectionMode: "fixed"}, signal("a", true, "EUR"))
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	var back Product
	if err := jsonfield.Decode(b, &back); err != nil {
		t.Fatalf("a product's own JSON does not decode: %v", err)
	}
	if diff := cmp.Diff(p, back); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	m["signal_targeting_options"].([]any)[0].(map[string]any)["demographic_predicate"] = map[string]any{"age": map[string]any{"min": 18}}
	b, _ = json.Marshal(m)
	if err := jsonfield.Decode(b, &back); err == nil {
		t.Error("a signal option with demographic_predicate decoded; the catalogue does not model it")
	}
}

// TestWireSignalsScreened: signal names and descriptions reach buyers
// only through the screen.
func TestWireSignalsScreened(t *testing.T) {
	o := signal("a", false, "EUR")
	o.Name = "Kestrel Partners affinity"
	o.Description = "Built with Kestrel Partners data. Refreshed weekly."
	o.ValueType, o.Categories = "categorical", []string{"hikers", "Kestrel Partners"}
	p := signalProduct("p", nil, o)
	screen := sanitize.New(sanitize.NewDenyList([]sanitize.Term{{Value: "Kestrel Partners", Kind: sanitize.KindRuleName}}, nil))
	got := wireSignals(p, screen)[0]
	if got.Name != "Audience signal 1" {
		t.Errorf("name = %q, want the neutral name", got.Name)
	}
	if got.Description != "Refreshed weekly." {
		t.Errorf("description = %q, want only the clean sentence", got.Description)
	}
	if !slices.Equal(got.Categories, []string{"hikers"}) {
		t.Errorf("categories = %q, want [hikers]", got.Categories)
	}
	if p.SignalTargetingOptions[0].Name != "Kestrel Partners affinity" {
		t.Error("wireSignals changed the catalogue's product")
	}
}
