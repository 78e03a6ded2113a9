package merch

import (
	"errors"
	"testing"

	"github.com/storefront/storefront/adcp"
	"github.com/storefront/storefront/jsonfield"
	"github.com/storefront/storefront/vocab"
)

func TestReviewRules(t *testing.T) {
	amount := func(v float64) *Budget { return &Budget{Max: &v, Currency: "USD"} }
	rb := &Rulebook{Format: Format, Orders: &Orders{
		ReviewTiers: []vocab.Level{vocab.None},
		Review: []ReviewRule{
			{ID: "OD-1", Name: "big orders", BudgetAtLeast: &Threshold{Currency: "USD", Amount: 100000}},
			{ID: "OD-2", Name: "ctv in the UK", When: &Condition{Channels: []string{"ctv"}, CountriesServed: []string{"US"}}},
			{ID: "OD-3", Name: "off", Disabled: true, BudgetAtLeast: &Threshold{Currency: "USD", Amount: 0}},
		},
	}}
	today := adcp.MustDate("2026-11-29")
	for _, c := range []struct {
		name string
		b    Brief
		want []string
	}{
		{"small display", Brief{Budget: amount(5000), Channels: []string{"display"}, Today: today}, nil},
		{"at the threshold", Brief{Budget: amount(100000), Today: today}, []string{"OD-1"}},
		{"another currency", Brief{Budget: &Budget{Max: ptrF(200000), Currency: "GBP"}, Today: today}, nil},
		{"ctv outside the US", Brief{Budget: amount(5000), Channels: []string{"ctv"}, Countries: []string{"GB"}, Today: today}, []string{"OD-2"}},
	} {
		got, err := Review(rb, c.b, Market{})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, r := range got {
			ids = append(ids, r.RuleID)
		}
		if len(ids) != len(c.want) || (len(ids) > 0 && ids[0] != c.want[0]) {
			t.Errorf("%s: Review = %v, want %v", c.name, ids, c.want)
		}
	}
	if !rb.Orders.ReviewsTier(vocab.None) || rb.Orders.ReviewsTier(vocab.Exact) {
		t.Error("ReviewsTier does not follow review_tiers")
	}
	var none *Orders
	if none.ReviewsTier(vocab.None) {
		t.Error("a rulebook without orders reviews a tier")
	}
}

func ptrF(v float64) *float64 { return &v }

func TestOrdersValidation(t *testing.T) {
	rb := &Rulebook{Format: Format,
		Rules: []Rule{{ID: "R-1", Name: "floor", When: Condition{LeadTimeDays: new(int)}, Decline: Action{Slug: vocab.LeadTimeTooShort, Disclosure: vocab.Exact}}},
		Orders: &Orders{ReviewTiers: []vocab.Level{vocab.Level(9)}, Review: []ReviewRule{
			{ID: "R-1", Name: "same id as a decline rule", BudgetAtLeast: &Threshold{Currency: "usd", Amount: -1}},
			{ID: "OD-2", Name: "nothing to hold on"},
		}}}
	var v jsonfield.Invalid
	if !errors.As(rb.Validate(), &v) {
		t.Fatal("an invalid orders section was accepted")
	}
	want := map[string]bool{"/orders/review_tiers/0": true, "/orders/review/0/id": true, "/orders/review/0/budget_at_least/currency": true,
		"/orders/review/0/budget_at_least/amount": true, "/orders/review/1": true}
	for _, f := range v {
		delete(want, f.Pointer)
	}
	if len(want) > 0 {
		t.Errorf("problems %v miss %v", v, want)
	}
	terms := rb.ConfidentialTerms()
	found := false
	for _, term := range terms {
		if term.Value == "OD-2" {
			found = true
		}
	}
	if !found {
		t.Error("review rule ids are not confidential")
	}
}
