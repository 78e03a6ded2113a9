package merch_test

import (
	"encoding/json"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/storefront/storefront/adcp"
	"github.com/storefront/storefront/jsonfield"
	"github.com/storefront/storefront/merch"
	"github.com/storefront/storefront/vocab"
)

// valid returns a rulebook that validates, for tests to break one piece
// at a time.
func valid() merch.Rulebook {
	lead := 3
	return merch.Rulebook{
		Format: merch.Format,
		Voice: vocab.Voice{SellerName: "Northwind Media", Tone: vocab.Warm, Templates: map[vocab.Slug]string{
			vocab.BudgetBelowMinimum: "Budgets of {{minimum}} or more fit {{seller}}.",
		}},
		Rules: []merch.Rule{
			{ID: "MR-1", Name: "floor", Notes: "n", ConfidentialTerms: []string{"Acme"},
				When:    merch.Condition{BudgetBelow: &merch.BudgetFloor{Currency: "USD", Minimum: 1000, PerChannel: map[string]float64{"ctv": 25000}}},
				Decline: merch.Action{Slug: vocab.BudgetBelowMinimum, Disclosure: vocab.Range, Suggest: []vocab.SuggestionKind{vocab.RaiseBudget, vocab.SwitchChannel}}},
			{ID: "MR-2", Name: "channels",
				When:    merch.Condition{ChannelsOffered: []string{"display", "ctv"}},
				Decline: merch.Action{Slug: vocab.ChannelNotOffered, Disclosure: vocab.Category, Suggest: []vocab.SuggestionKind{vocab.SwitchChannel}}},
			{ID: "MR-3", Name: "sellout",
				When:    merch.Condition{Channels: []string{"ctv"}, SoldOut: []merch.Window{{Start: d("2026-12-18"), End: d("2027-01-02"), Channels: []string{"ctv"}}}},
				Decline: merch.Action{Slug: vocab.FlightUnavailable, Disclosure: vocab.Exact, Suggest: []vocab.SuggestionKind{vocab.MoveFlight}}},
			{ID: "MR-4", Name: "lead", When: merch.Condition{LeadTimeDays: &lead},
				Decline: merch.Action{Slug: vocab.LeadTimeTooShort, Disclosure: vocab.Exact}},
			{ID: "MR-5", Name: "geo", When: merch.Condition{CountriesServed: []string{"US"}},
				Decline: merch.Action{Slug: vocab.GeoNotServed, Disclosure: vocab.Category}},
			{ID: "MR-6", Name: "formats", When: merch.Condition{FormatKindsOffered: []string{"image"}},
				Decline: merch.Action{Slug: vocab.FormatNotOffered, Disclosure: vocab.Category}},
			{ID: "MR-7", Name: "category", When: merch.Condition{Industries: []string{"cannabis"}, Keywords: []string{"vape"}, BrandDomains: []string{"bet.example"}},
				Decline: merch.Action{Slug: vocab.CategoryNotAccepted, Disclosure: vocab.None}},
			{ID: "MR-8", Name: "money", When: merch.Condition{CurrenciesAccepted: []string{"USD"}, DeliveryTypesOffered: []string{"guaranteed"}},
				Decline: merch.Action{Slug: vocab.CommerciallyDeclined, Disclosure: vocab.None}},
		},
	}
}

func pointers(t *testing.T, err error) []string {
	t.Helper()
	if err == nil {
		return nil
	}
	var inv jsonfield.Invalid
	if !errors.As(err, &inv) {
		t.Fatalf("Validate() error is %T, want jsonfield.Invalid", err)
	}
	var out []string
	for _, f := range inv {
		if f.Detail == "" {
			t.Errorf("field %s has no detail", f.Pointer)
		}
		out = append(out, f.Pointer)
	}
	return out
}

func TestValidateValid(t *testing.T) {
	rb := valid()
	if err := rb.Validate(); err != nil {
		t.Errorf("Validate(valid) = %v, want nil", err)
	}
	var none *merch.Rulebook
	if got := pointers(t, none.Validate()); !slices.Equal(got, []string{""}) {
		t.Errorf("Validate(nil) pointers = %q, want [\"\"]", got)
	}
}

// TestValidateDemo validates the demo rulebook as stored: the fixture the
// rest of the tests and the embedded default rely on.
func TestValidateDemo(t *testing.T) {
	b, err := os.ReadFile("../demo/rulebook.json")
	if err != nil {
		t.Fatal(err)
	}
	var rb merch.Rulebook
	if err := json.Unmarshal(b, &rb); err != nil {
		t.Fatal(err)
	}
	if err := rb.Validate(); err != nil {
		t.Errorf("demo rulebook: %v", err)
	}
}

func TestValidatePointers(t *testing.T) {
	neg := -1
	over := 366
	for _, test := range []struct {
		name string
		edit func(*merch.Rulebook)
		want []string
	}{
		{"format", func(rb *merch.Rulebook) { rb.Format = "storefront.rulebook/v0" }, []string{"/format"}},
		{"tone", func(rb *merch.Rulebook) { rb.Voice.Tone = "sarcastic" }, []string{"/voice/tone"}},
		{"seller name too long", func(rb *merch.Rulebook) { rb.Voice.SellerName = strings.Repeat("x", vocab.MaxSellerName+1) }, []string{"/voice/seller_name"}},
		{"template for an unknown slug", func(rb *merch.Rulebook) { rb.Voice.Templates["budget/low~"] = "x" }, []string{"/voice/templates/budget~1low~0"}},
		{"template with an unknown placeholder", func(rb *merch.Rulebook) {
			rb.Voice.Templates[vocab.ChannelNotOffered] = "Try {{rule_id}}."
		}, []string{"/voice/templates/channel_not_offered"}},
		{"empty template", func(rb *merch.Rulebook) { rb.Voice.Templates[vocab.GeoNotServed] = " " }, []string{"/voice/templates/geo_not_served"}},
		{"missing id", func(rb *merch.Rulebook) { rb.Rules[1].ID = " " }, []string{"/rules/1/id"}},
		{"missing name", func(rb *merch.Rulebook) { rb.Rules[1].Name = "" }, []string{"/rules/1/name"}},
		{"id too long", func(rb *merch.Rulebook) { rb.Rules[0].ID = strings.Repeat("x", 129) }, []string{"/rules/0/id"}},
		{"notes too long", func(rb *merch.Rulebook) { rb.Rules[0].Notes = strings.Repeat("x", 4001) }, []string{"/rules/0/notes"}},
		{"empty confidential term", func(rb *merch.Rulebook) { rb.Rules[0].ConfidentialTerms = []string{"ok", ""} }, []string{"/rules/0/confidential_terms/1"}},
		{"duplicate ids", func(rb *merch.Rulebook) { rb.Rules[3].ID = "MR-1" }, []string{"/rules/3/id"}},
		{"scope channel", func(rb *merch.Rulebook) { rb.Rules[2].When.Channels = []string{"ctv", "tv"} }, []string{"/rules/2/when/channels/1"}},
		{"budget currency", func(rb *merch.Rulebook) { rb.Rules[0].When.BudgetBelow.Currency = "usd" }, []string{"/rules/0/when/budget_below/currency"}},
		{"budget minimum", func(rb *merch.Rulebook) { rb.Rules[0].When.BudgetBelow.Minimum = -1 }, []string{"/rules/0/when/budget_below/minimum"}},
		{"per-channel key", func(rb *merch.Rulebook) { rb.Rules[0].When.BudgetBelow.PerChannel["tv"] = 5 }, []string{"/rules/0/when/budget_below/per_channel/tv"}},
		{"per-channel value", func(rb *merch.Rulebook) { rb.Rules[0].When.BudgetBelow.PerChannel["ctv"] = -5 }, []string{"/rules/0/when/budget_below/per_channel/ctv"}},
		{"empty channels_offered", func(rb *merch.Rulebook) { rb.Rules[1].When.ChannelsOffered = []string{} }, []string{"/rules/1/when/channels_offered"}},
		{"bad channel offered", func(rb *merch.Rulebook) { rb.Rules[1].When.ChannelsOffered = []string{"display", "Display"} }, []string{"/rules/1/when/channels_offered/1"}},
		{"empty sold_out", func(rb *merch.Rulebook) { rb.Rules[2].When.SoldOut = []merch.Window{} }, []string{"/rules/2/when/sold_out"}},
		{"window without dates", func(rb *merch.Rulebook) { rb.Rules[2].When.SoldOut[0] = merch.Window{} }, []string{"/rules/2/when/sold_out/0/start", "/rules/2/when/sold_out/0/end"}},
		{"window ends before it starts", func(rb *merch.Rulebook) { rb.Rules[2].When.SoldOut[0].End = d("2026-12-01") }, []string{"/rules/2/when/sold_out/0/end"}},
		{"window channel", func(rb *merch.Rulebook) { rb.Rules[2].When.SoldOut[0].Channels = []string{"cable"} }, []string{"/rules/2/when/sold_out/0/channels/0"}},
		{"negative lead time", func(rb *merch.Rulebook) { rb.Rules[3].When.LeadTimeDays = &neg }, []string{"/rules/3/when/lead_time_days"}},
		{"lead time over a year", func(rb *merch.Rulebook) { rb.Rules[3].When.LeadTimeDays = &over }, []string{"/rules/3/when/lead_time_days"}},
		{"country", func(rb *merch.Rulebook) { rb.Rules[4].When.CountriesServed = []string{"us"} }, []string{"/rules/4/when/countries_served/0"}},
		{"empty countries", func(rb *merch.Rulebook) { rb.Rules[4].When.CountriesServed = []string{} }, []string{"/rules/4/when/countries_served"}},
		{"format kind", func(rb *merch.Rulebook) { rb.Rules[5].When.FormatKindsOffered = []string{"image", "gif"} }, []string{"/rules/5/when/format_kinds_offered/1"}},
		{"empty industry", func(rb *merch.Rulebook) { rb.Rules[6].When.Industries = []string{""} }, []string{"/rules/6/when/industries/0"}},
		{"empty keyword", func(rb *merch.Rulebook) { rb.Rules[6].When.Keywords = []string{"vape", " "} }, []string{"/rules/6/when/keywords/1"}},
		{"empty keyword list", func(rb *merch.Rulebook) { rb.Rules[6].When.Keywords = []string{} }, []string{"/rules/6/when/keywords"}},
		{"brand domain", func(rb *merch.Rulebook) { rb.Rules[6].When.BrandDomains = []string{"Bet.Example"} }, []string{"/rules/6/when/brand_domains/0"}},
		{"currency", func(rb *merch.Rulebook) { rb.Rules[7].When.CurrenciesAccepted = []string{"DOLLARS"} }, []string{"/rules/7/when/currencies_accepted/0"}},
		{"delivery type", func(rb *merch.Rulebook) { rb.Rules[7].When.DeliveryTypesOffered = []string{"programmatic"} }, []string{"/rules/7/when/delivery_types_offered/0"}},
		{"empty condition", func(rb *merch.Rulebook) { rb.Rules[4].When = merch.Condition{} }, []string{"/rules/4/when"}},
		{"scope only", func(rb *merch.Rulebook) { rb.Rules[4].When = merch.Condition{Channels: []string{"ctv"}} }, []string{"/rules/4/when"}},
		{"bad slug", func(rb *merch.Rulebook) { rb.Rules[4].Decline.Slug = "geo_blocked" }, []string{"/rules/4/decline/slug"}},
		{"bad disclosure", func(rb *merch.Rulebook) { rb.Rules[4].Decline.Disclosure = vocab.Level(7) }, []string{"/rules/4/decline/disclosure"}},
		{"unknown suggestion kind", func(rb *merch.Rulebook) {
			rb.Rules[1].Decline.Suggest = []vocab.SuggestionKind{"lower_price"}
		}, []string{"/rules/1/decline/suggest/0"}},
		{"suggestion kind listed twice", func(rb *merch.Rulebook) {
			rb.Rules[1].Decline.Suggest = []vocab.SuggestionKind{vocab.SwitchChannel, vocab.SwitchChannel}
		}, []string{"/rules/1/decline/suggest/1"}},
		{"suggestion kind the slug cannot carry", func(rb *merch.Rulebook) {
			rb.Rules[1].Decline.Suggest = []vocab.SuggestionKind{vocab.SwitchChannel, vocab.RaiseBudget}
		}, []string{"/rules/1/decline/suggest/1"}},
		{"category decline with suggestions", func(rb *merch.Rulebook) {
			rb.Rules[6].Decline.Suggest = []vocab.SuggestionKind{vocab.TargetMarket}
		}, []string{"/rules/6/decline/suggest/0"}},
		{"contradicting channel lists", func(rb *merch.Rulebook) {
			rb.Rules = append(rb.Rules, merch.Rule{ID: "MR-9", Name: "other channels", When: merch.Condition{ChannelsOffered: []string{"olv", "radio"}},
				Decline: merch.Action{Slug: vocab.ChannelNotOffered, Disclosure: vocab.Category}})
		}, []string{"/rules/8/when/channels_offered"}},
		{"contradicting markets", func(rb *merch.Rulebook) {
			rb.Rules = append(rb.Rules, merch.Rule{ID: "MR-9", Name: "other markets", When: merch.Condition{CountriesServed: []string{"GB"}},
				Decline: merch.Action{Slug: vocab.GeoNotServed, Disclosure: vocab.Category}})
		}, []string{"/rules/8/when/countries_served"}},
		{"contradicting per-channel floors", func(rb *merch.Rulebook) {
			rb.Rules = append(rb.Rules, merch.Rule{ID: "MR-9", Name: "other floor", When: merch.Condition{BudgetBelow: &merch.BudgetFloor{Currency: "USD", Minimum: 1000, PerChannel: map[string]float64{"ctv": 30000}}},
				Decline: merch.Action{Slug: vocab.BudgetBelowMinimum, Disclosure: vocab.Range}})
		}, []string{"/rules/8/when/budget_below/per_channel/ctv"}},
		{"several failures, all reported", func(rb *merch.Rulebook) {
			rb.Format = ""
			rb.Rules[0].ID = ""
			rb.Rules[7].When.CurrenciesAccepted = []string{"usd"}
		}, []string{"/format", "/rules/0/id", "/rules/7/when/currencies_accepted/0"}},
	} {
		t.Run(test.name, func(t *testing.T) {
			rb := valid()
			test.edit(&rb)
			got := pointers(t, rb.Validate())
			if !slices.Equal(got, test.want) {
				t.Errorf("Validate() pointers = %q, want %q", got, test.want)
			}
		})
	}
}

// TestValidateNotContradictions lists rule pairs that overlap or cannot
// both apply: none is a contradiction.
func TestValidateNotContradictions(t *testing.T) {
	for _, test := range []struct {
		name  string
		extra merch.Rule
	}{
		{"overlapping channel lists", merch.Rule{ID: "MR-9", Name: "x", When: merch.Condition{ChannelsOffered: []string{"ctv", "olv"}},
			Decline: merch.Action{Slug: vocab.ChannelNotOffered, Disclosure: vocab.Category}}},
		{"disabled rule", merch.Rule{ID: "MR-9", Name: "x", Disabled: true, When: merch.Condition{ChannelsOffered: []string{"olv"}},
			Decline: merch.Action{Slug: vocab.ChannelNotOffered, Disclosure: vocab.Category}}},
		{"scoped rule", merch.Rule{ID: "MR-9", Name: "x", When: merch.Condition{Channels: []string{"olv"}, ChannelsOffered: []string{"olv"}},
			Decline: merch.Action{Slug: vocab.ChannelNotOffered, Disclosure: vocab.Category}}},
		{"rule with a second predicate", merch.Rule{ID: "MR-9", Name: "x", When: merch.Condition{ChannelsOffered: []string{"olv"}, Keywords: []string{"x"}},
			Decline: merch.Action{Slug: vocab.ChannelNotOffered, Disclosure: vocab.Category}}},
		{"same floor twice", merch.Rule{ID: "MR-9", Name: "x", When: merch.Condition{BudgetBelow: &merch.BudgetFloor{Currency: "USD", PerChannel: map[string]float64{"ctv": 25000}}},
			Decline: merch.Action{Slug: vocab.BudgetBelowMinimum, Disclosure: vocab.Range}}},
		{"floor in another currency", merch.Rule{ID: "MR-9", Name: "x", When: merch.Condition{BudgetBelow: &merch.BudgetFloor{Currency: "GBP", PerChannel: map[string]float64{"ctv": 20000}}},
			Decline: merch.Action{Slug: vocab.BudgetBelowMinimum, Disclosure: vocab.Range}}},
	} {
		t.Run(test.name, func(t *testing.T) {
			rb := valid()
			rb.Rules = append(rb.Rules, test.extra)
			if err := rb.Validate(); err != nil {
				t.Errorf("Validate() = %v, want nil", err)
			}
		})
	}
}

func TestRuleString(t *testing.T) {
	r := merch.Rule{ID: "MR-1", Name: "Secret name", Notes: "Secret notes"}
	if got := r.String(); got != "rule MR-1" {
		t.Errorf("String() = %q, want %q: the name and notes stay out of logs", got, "rule MR-1")
	}
}

func TestRulebookJSON(t *testing.T) {
	rb := valid()
	b, err := json.Marshal(rb)
	if err != nil {
		t.Fatal(err)
	}
	var back merch.Rulebook
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if err := back.Validate(); err != nil {
		t.Errorf("round-tripped rulebook does not validate: %v", err)
	}
	if back.Rules[2].When.SoldOut[0].Start != adcp.MustDate("2026-12-18") || back.Rules[0].Decline.Disclosure != vocab.Range {
		t.Errorf("round trip lost data: %s", b)
	}
}
