package merch_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/storefront/storefront/adcp"
	"github.com/storefront/storefront/merch"
	"github.com/storefront/storefront/vocab"
)

var today = adcp.MustDate("2026-11-29")

func d(s string) adcp.Date { return adcp.MustDate(s) }

func f(v float64) *float64 { return &v }

func flight(a, b string) adcp.DateRange { return adcp.DateRange{Start: d(a), End: d(b)} }

var market = merch.Market{
	Channels:    []string{"ctv", "display", "olv", "streaming_audio"},
	FormatKinds: []string{"audio_hosted", "image", "video_hosted", "video_vast"},
	Countries:   []string{"CA", "GB", "US"},
	Currencies:  []string{"GBP", "USD"},
}

// one evaluates a rulebook holding just the rule with condition c.
func one(t *testing.T, c merch.Condition, slug vocab.Slug, b merch.Brief, m merch.Market) (vocab.Facts, bool) {
	t.Helper()
	rb := &merch.Rulebook{Format: merch.Format, Rules: []merch.Rule{{
		ID: "R-1", Name: "rule", When: c, Decline: merch.Action{Slug: slug, Disclosure: vocab.Exact},
	}}}
	if b.Today.IsZero() {
		b.Today = today
	}
	dec, err := merch.Evaluate(rb, b, m)
	if err != nil {
		t.Fatalf("Evaluate: %v", err)
	}
	if !dec.Declined() {
		return vocab.Facts{}, false
	}
	g := dec.Grounds()
	if len(g) != 1 || g[0].Slug != slug {
		t.Fatalf("Evaluate grounds = %+v, want one %s", g, slug)
	}
	return g[0].Facts, true
}

// factsOpts compares facts: dates by value, nil and empty lists alike.
var factsOpts = cmp.Options{cmpopts.EquateEmpty(), cmp.Comparer(func(a, b adcp.Date) bool { return a == b })}

func TestBudgetBelow(t *testing.T) {
	floor := &merch.BudgetFloor{Currency: "USD", Minimum: 1000, PerChannel: map[string]float64{"display": 1000, "olv": 2500, "streaming_audio": 2000, "ctv": 25000}}
	budget := func(max float64, cur string) *merch.Budget { return &merch.Budget{Max: f(max), Currency: cur} }
	for _, test := range []struct {
		name      string
		floor     *merch.BudgetFloor
		brief     merch.Brief
		m         merch.Market
		wantFired bool
		want      vocab.Facts
	}{
		{
			name:  "below the channel minimum",
			floor: floor, m: market,
			brief:     merch.Brief{Channels: []string{"ctv"}, Budget: budget(10000, "USD")},
			wantFired: true,
			want:      vocab.Facts{Currency: "USD", Budget: 10000, Minimum: 25000, Channels: []string{"ctv"}, AlternativeChannels: []string{"display", "streaming_audio", "olv"}},
		},
		{
			name:  "cheapest of the channels asked applies",
			floor: floor, m: market,
			brief: merch.Brief{Channels: []string{"ctv", "display"}, Budget: budget(5000, "USD")},
		},
		{
			name:  "at the minimum does not fire",
			floor: floor, m: market,
			brief: merch.Brief{Channels: []string{"olv"}, Budget: budget(2500, "USD")},
		},
		{
			name:  "no channels asked: cheapest market channel",
			floor: floor, m: market,
			brief:     merch.Brief{Budget: budget(500, "USD")},
			wantFired: true,
			want:      vocab.Facts{Currency: "USD", Budget: 500, Minimum: 1000},
		},
		{
			name:  "no channels asked, budget above the cheapest market channel",
			floor: floor, m: market,
			brief: merch.Brief{Budget: budget(1500, "USD")},
		},
		{
			name:  "no channels asked, market only carries expensive channels",
			floor: floor, m: merch.Market{Channels: []string{"ctv", "olv"}},
			brief:     merch.Brief{Budget: budget(2000, "USD")},
			wantFired: true,
			want:      vocab.Facts{Currency: "USD", Budget: 2000, Minimum: 2500},
		},
		{
			name:  "no channels anywhere: the rule's minimum",
			floor: floor, m: merch.Market{},
			brief:     merch.Brief{Budget: budget(900, "USD")},
			wantFired: true,
			want:      vocab.Facts{Currency: "USD", Budget: 900, Minimum: 1000},
		},
		{
			name:  "channel without its own minimum uses the rule's minimum",
			floor: floor, m: market,
			brief:     merch.Brief{Channels: []string{"podcast"}, Budget: budget(900, "USD")},
			wantFired: true,
			want:      vocab.Facts{Currency: "USD", Budget: 900, Minimum: 1000, Channels: []string{"podcast"}},
		},
		{
			name:  "budget min is the amount when there is no max",
			floor: floor, m: market,
			brief:     merch.Brief{Channels: []string{"olv"}, Budget: &merch.Budget{Min: f(2000), Currency: "USD"}},
			wantFired: true,
			want:      vocab.Facts{Currency: "USD", Budget: 2000, Minimum: 2500, Channels: []string{"olv"}, AlternativeChannels: []string{"display", "streaming_audio"}},
		},
		{
			name:  "max wins over min",
			floor: floor, m: market,
			brief: merch.Brief{Channels: []string{"olv"}, Budget: &merch.Budget{Min: f(100), Max: f(3000), Currency: "USD"}},
		},
		{
			name:  "another currency is not compared",
			floor: floor, m: market,
			brief: merch.Brief{Channels: []string{"ctv"}, Budget: budget(10, "EUR")},
		},
		{
			name:  "no budget",
			floor: floor, m: market,
			brief: merch.Brief{Channels: []string{"ctv"}},
		},
		{
			name:  "budget with neither min nor max",
			floor: floor, m: market,
			brief: merch.Brief{Channels: []string{"ctv"}, Budget: &merch.Budget{Currency: "USD"}},
		},
	} {
		t.Run(test.name, func(t *testing.T) {
			got, fired := one(t, merch.Condition{BudgetBelow: test.floor}, vocab.BudgetBelowMinimum, test.brief, test.m)
			if fired != test.wantFired {
				t.Fatalf("budget_below fired = %v, want %v", fired, test.wantFired)
			}
			if diff := cmp.Diff(test.want, got, factsOpts); diff != "" {
				t.Errorf("facts (-want +got):\n%s", diff)
			}
		})
	}
}

func TestOfferedLists(t *testing.T) {
	for _, test := range []struct {
		name      string
		c         merch.Condition
		slug      vocab.Slug
		brief     merch.Brief
		m         merch.Market
		wantFired bool
		want      vocab.Facts
	}{
		{
			name: "channel not offered", slug: vocab.ChannelNotOffered, m: market,
			c:         merch.Condition{ChannelsOffered: []string{"display", "olv", "ctv", "podcast"}},
			brief:     merch.Brief{Channels: []string{"dooh"}},
			wantFired: true,
			// podcast is offered by the rule but not carried by the catalogue.
			want: vocab.Facts{Channels: []string{"dooh"}, AlternativeChannels: []string{"display", "olv", "ctv"}},
		},
		{
			name: "one of the channels is offered", slug: vocab.ChannelNotOffered, m: market,
			c:     merch.Condition{ChannelsOffered: []string{"display", "olv"}},
			brief: merch.Brief{Channels: []string{"dooh", "display"}},
		},
		{
			name: "no channels asked", slug: vocab.ChannelNotOffered, m: market,
			c: merch.Condition{ChannelsOffered: []string{"display"}},
		},
		{
			name: "empty market: alternatives are the rule's list", slug: vocab.ChannelNotOffered,
			c:         merch.Condition{ChannelsOffered: []string{"display", "podcast"}},
			brief:     merch.Brief{Channels: []string{"radio"}},
			wantFired: true,
			want:      vocab.Facts{Channels: []string{"radio"}, AlternativeChannels: []string{"display", "podcast"}},
		},
		{
			name: "market not served", slug: vocab.GeoNotServed, m: market,
			c:         merch.Condition{CountriesServed: []string{"US", "CA", "GB", "IE"}},
			brief:     merch.Brief{Countries: []string{"DE", "FR"}},
			wantFired: true,
			want:      vocab.Facts{Countries: []string{"DE", "FR"}, ServedCountries: []string{"US", "CA", "GB"}},
		},
		{
			// Only the predicates present record facts: the channels the
			// brief asks for are no business of a geo rule.
			name: "facts come from present predicates only", slug: vocab.GeoNotServed, m: market,
			c:         merch.Condition{CountriesServed: []string{"US"}},
			brief:     merch.Brief{Countries: []string{"DE"}, Channels: []string{"ctv"}, FormatKinds: []string{"html5"}},
			wantFired: true,
			want:      vocab.Facts{Countries: []string{"DE"}, ServedCountries: []string{"US"}},
		},
		{
			name: "one market served", slug: vocab.GeoNotServed, m: market,
			c:     merch.Condition{CountriesServed: []string{"US", "CA", "GB"}},
			brief: merch.Brief{Countries: []string{"DE", "GB"}},
		},
		{
			name: "no markets asked", slug: vocab.GeoNotServed, m: market,
			c: merch.Condition{CountriesServed: []string{"US"}},
		},
		{
			name: "format kind not offered", slug: vocab.FormatNotOffered, m: market,
			c:         merch.Condition{FormatKindsOffered: []string{"image", "video_hosted", "video_vast", "audio_hosted"}},
			brief:     merch.Brief{FormatKinds: []string{"html5"}},
			wantFired: true,
			want:      vocab.Facts{FormatKinds: []string{"html5"}, OfferedFormatKinds: []string{"image", "video_hosted", "video_vast", "audio_hosted"}},
		},
		{
			name: "a format kind is offered", slug: vocab.FormatNotOffered, m: market,
			c:     merch.Condition{FormatKindsOffered: []string{"image"}},
			brief: merch.Brief{FormatKinds: []string{"html5", "image"}},
		},
		{
			name: "currency not accepted", slug: vocab.CommerciallyDeclined, m: market,
			c:         merch.Condition{CurrenciesAccepted: []string{"USD", "GBP"}},
			brief:     merch.Brief{Currencies: []string{"EUR"}},
			wantFired: true,
		},
		{
			name: "budget currency not accepted", slug: vocab.CommerciallyDeclined, m: market,
			c:         merch.Condition{CurrenciesAccepted: []string{"USD"}},
			brief:     merch.Brief{Budget: &merch.Budget{Max: f(1), Currency: "EUR"}},
			wantFired: true,
		},
		{
			name: "one currency accepted", slug: vocab.CommerciallyDeclined, m: market,
			c:     merch.Condition{CurrenciesAccepted: []string{"USD"}},
			brief: merch.Brief{Currencies: []string{"EUR", "USD"}},
		},
		{
			name: "budget currency accepted though the pricing currency is not", slug: vocab.CommerciallyDeclined, m: market,
			c:     merch.Condition{CurrenciesAccepted: []string{"USD"}},
			brief: merch.Brief{Currencies: []string{"EUR"}, Budget: &merch.Budget{Max: f(1), Currency: "USD"}},
		},
		{
			name: "no currency named", slug: vocab.CommerciallyDeclined, m: market,
			c: merch.Condition{CurrenciesAccepted: []string{"USD"}},
		},
		{
			name: "delivery type not offered", slug: vocab.CommerciallyDeclined, m: market,
			c:         merch.Condition{DeliveryTypesOffered: []string{"guaranteed"}},
			brief:     merch.Brief{DeliveryType: "non_guaranteed"},
			wantFired: true,
		},
		{
			name: "delivery type offered", slug: vocab.CommerciallyDeclined, m: market,
			c:     merch.Condition{DeliveryTypesOffered: []string{"guaranteed"}},
			brief: merch.Brief{DeliveryType: "guaranteed"},
		},
		{
			name: "no delivery type asked", slug: vocab.CommerciallyDeclined, m: market,
			c: merch.Condition{DeliveryTypesOffered: []string{"guaranteed"}},
		},
	} {
		t.Run(test.name, func(t *testing.T) {
			got, fired := one(t, test.c, test.slug, test.brief, test.m)
			if fired != test.wantFired {
				t.Fatalf("fired = %v, want %v", fired, test.wantFired)
			}
			if diff := cmp.Diff(test.want, got, factsOpts); diff != "" {
				t.Errorf("facts (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSoldOut(t *testing.T) {
	holiday := []merch.Window{{Start: d("2026-12-18"), End: d("2027-01-02")}}
	ctvOnly := []merch.Window{{Start: d("2026-12-18"), End: d("2027-01-02"), Channels: []string{"ctv"}}}
	open := func(a, b string) *adcp.DateRange { r := flight(a, b); return &r }
	for _, test := range []struct {
		name      string
		windows   []merch.Window
		scope     []string
		brief     merch.Brief
		wantFired bool
		wantOpen  *adcp.DateRange
	}{
		{
			name: "flight inside the window", windows: holiday,
			brief:     merch.Brief{Flight: flight("2026-12-20", "2026-12-27")},
			wantFired: true, wantOpen: open("2027-01-03", "2027-01-10"),
		},
		{
			name: "flight overlapping the window's start", windows: holiday,
			brief:     merch.Brief{Flight: flight("2026-12-10", "2026-12-18")},
			wantFired: true, wantOpen: open("2027-01-03", "2027-01-11"),
		},
		{
			name: "flight ending the day before", windows: holiday,
			brief: merch.Brief{Flight: flight("2026-12-10", "2026-12-17")},
		},
		{
			name: "flight starting the day after", windows: holiday,
			brief: merch.Brief{Flight: flight("2027-01-03", "2027-01-05")},
		},
		{
			name: "no end date", windows: holiday,
			brief: merch.Brief{Flight: adcp.DateRange{Start: d("2026-12-20")}},
		},
		{
			name: "no flight", windows: holiday,
		},
		{
			name: "open flight is never in the past", windows: []merch.Window{{Start: d("2026-11-01"), End: d("2026-11-10")}},
			brief:     merch.Brief{Flight: flight("2026-11-05", "2026-11-06")},
			wantFired: true, wantOpen: open("2026-11-29", "2026-11-30"),
		},
		{
			name: "open flight skips a second window", windows: []merch.Window{{Start: d("2026-12-18"), End: d("2027-01-02")}, {Start: d("2027-01-05"), End: d("2027-01-20")}},
			brief:     merch.Brief{Flight: flight("2026-12-20", "2026-12-27")},
			wantFired: true, wantOpen: open("2027-01-21", "2027-01-28"),
		},
		{
			name: "no open flight within a year", windows: []merch.Window{{Start: d("2026-12-01"), End: d("2028-12-31")}},
			brief:     merch.Brief{Flight: flight("2026-12-20", "2026-12-27")},
			wantFired: true,
		},
		{
			name: "channel window applies to that channel", windows: ctvOnly,
			brief:     merch.Brief{Channels: []string{"ctv"}, Flight: flight("2026-12-20", "2026-12-27")},
			wantFired: true, wantOpen: open("2027-01-03", "2027-01-10"),
		},
		{
			name: "channel window does not apply to others", windows: ctvOnly,
			brief: merch.Brief{Channels: []string{"display"}, Flight: flight("2026-12-20", "2026-12-27")},
		},
		{
			name: "channel window does not apply to a mixed ask", windows: ctvOnly,
			brief: merch.Brief{Channels: []string{"ctv", "display"}, Flight: flight("2026-12-20", "2026-12-27")},
		},
		{
			name: "channel window does not apply when no channel is asked", windows: ctvOnly,
			brief: merch.Brief{Flight: flight("2026-12-20", "2026-12-27")},
		},
		{
			name: "rule scoped to ctv fires for ctv", windows: holiday, scope: []string{"ctv"},
			brief:     merch.Brief{Channels: []string{"ctv"}, Flight: flight("2026-12-20", "2026-12-27")},
			wantFired: true, wantOpen: open("2027-01-03", "2027-01-10"),
		},
		{
			name: "rule scoped to ctv ignores display", windows: holiday, scope: []string{"ctv"},
			brief: merch.Brief{Channels: []string{"display"}, Flight: flight("2026-12-20", "2026-12-27")},
		},
		{
			name: "rule scoped to ctv ignores briefs with no channel", windows: holiday, scope: []string{"ctv"},
			brief: merch.Brief{Flight: flight("2026-12-20", "2026-12-27")},
		},
	} {
		t.Run(test.name, func(t *testing.T) {
			got, fired := one(t, merch.Condition{Channels: test.scope, SoldOut: test.windows}, vocab.FlightUnavailable, test.brief, market)
			if fired != test.wantFired {
				t.Fatalf("sold_out fired = %v, want %v", fired, test.wantFired)
			}
			if !fired {
				return
			}
			if got.Flight != test.brief.Flight {
				t.Errorf("Facts.Flight = %v, want the brief's %v", got.Flight, test.brief.Flight)
			}
			if diff := cmp.Diff(test.wantOpen, got.OpenFlight, factsOpts); diff != "" {
				t.Errorf("Facts.OpenFlight (-want +got):\n%s", diff)
			}
			if got.OpenFlight != nil && got.OpenFlight.Days() != test.brief.Flight.Days() {
				t.Errorf("open flight is %d days, want the brief's %d", got.OpenFlight.Days(), test.brief.Flight.Days())
			}
		})
	}
}

func TestLeadTime(t *testing.T) {
	for _, test := range []struct {
		name      string
		days      int
		start     string
		wantFired bool
	}{
		{"tomorrow with three days lead", 3, "2026-11-30", true},
		{"the day before the earliest", 3, "2026-12-01", true},
		{"on the earliest day", 3, "2026-12-02", false},
		{"after it", 3, "2026-12-20", false},
		{"no lead time, today", 0, "2026-11-29", false},
		{"no lead time, yesterday", 0, "2026-11-28", true},
	} {
		t.Run(test.name, func(t *testing.T) {
			lead := test.days
			b := merch.Brief{Flight: adcp.DateRange{Start: d(test.start)}}
			got, fired := one(t, merch.Condition{LeadTimeDays: &lead}, vocab.LeadTimeTooShort, b, market)
			if fired != test.wantFired {
				t.Fatalf("lead_time_days %d, start %s: fired = %v, want %v", test.days, test.start, fired, test.wantFired)
			}
			if fired {
				want := vocab.Facts{Flight: b.Flight, EarliestStart: today.AddDays(test.days), LeadDays: test.days}
				if diff := cmp.Diff(want, got, factsOpts); diff != "" {
					t.Errorf("facts (-want +got):\n%s", diff)
				}
			}
		})
	}
	lead := 3
	if _, fired := one(t, merch.Condition{LeadTimeDays: &lead}, vocab.LeadTimeTooShort, merch.Brief{}, market); fired {
		t.Error("lead_time_days fired without a start date")
	}
}

func TestMatchers(t *testing.T) {
	for _, test := range []struct {
		name  string
		c     merch.Condition
		brief merch.Brief
		want  bool
	}{
		{"industry", merch.Condition{Industries: []string{"gambling_betting", "cannabis"}}, merch.Brief{Industries: []string{"cannabis"}}, true},
		{"sub-industry", merch.Condition{Industries: []string{"gambling_betting"}}, merch.Brief{Industries: []string{"gambling_betting.casino"}}, true},
		{"industry case and spaces", merch.Condition{Industries: []string{"Cannabis"}}, merch.Brief{Industries: []string{" CANNABIS "}}, true},
		{"industry prefix without a dot", merch.Condition{Industries: []string{"gambling"}}, merch.Brief{Industries: []string{"gambling_betting"}}, false},
		{"parent industry of a listed sub-industry", merch.Condition{Industries: []string{"gambling_betting.casino"}}, merch.Brief{Industries: []string{"gambling_betting"}}, false},
		{"no industries", merch.Condition{Industries: []string{"cannabis"}}, merch.Brief{}, false},

		{"keyword", merch.Condition{Keywords: []string{"casino"}}, merch.Brief{Text: "Launch our new casino app"}, true},
		{"keyword through punctuation and case", merch.Condition{Keywords: []string{"casino"}}, merch.Brief{Text: "Our (CASINO)!"}, true},
		{"keyword inside a word", merch.Condition{Keywords: []string{"casino"}}, merch.Brief{Text: "casinos and casinobet"}, false},
		{"phrase", merch.Condition{Keywords: []string{"payday loan"}}, merch.Brief{Text: "Fast payday-loan offers"}, true},
		{"phrase across a line break", merch.Condition{Keywords: []string{"payday loan"}}, merch.Brief{Text: "PAYDAY\nLOAN"}, true},
		{"phrase words apart", merch.Condition{Keywords: []string{"payday loan"}}, merch.Brief{Text: "payday and loan"}, false},
		{"phrase plural", merch.Condition{Keywords: []string{"payday loan"}}, merch.Brief{Text: "payday loans"}, false},
		{"keyword with punctuation", merch.Condition{Keywords: []string{"e-cigarette"}}, merch.Brief{Text: "E cigarette brand"}, true},
		{"no text", merch.Condition{Keywords: []string{"casino"}}, merch.Brief{}, false},

		{"brand domain", merch.Condition{BrandDomains: []string{"bet.example"}}, merch.Brief{BrandDomain: "bet.example"}, true},
		{"brand subdomain", merch.Condition{BrandDomains: []string{"bet.example"}}, merch.Brief{BrandDomain: "www.bet.example"}, true},
		{"brand domain case and trailing dot", merch.Condition{BrandDomains: []string{"bet.example"}}, merch.Brief{BrandDomain: "WWW.Bet.Example."}, true},
		{"brand domain suffix without a dot", merch.Condition{BrandDomains: []string{"bet.example"}}, merch.Brief{BrandDomain: "notbet.example"}, false},
		{"no brand domain", merch.Condition{BrandDomains: []string{"bet.example"}}, merch.Brief{}, false},
	} {
		t.Run(test.name, func(t *testing.T) {
			if _, got := one(t, test.c, vocab.CategoryNotAccepted, test.brief, market); got != test.want {
				t.Errorf("%+v against %+v fired = %v, want %v", test.c, test.brief, got, test.want)
			}
		})
	}
}

// TestConjunction checks that every predicate given must hold.
func TestConjunction(t *testing.T) {
	c := merch.Condition{
		ChannelsOffered: []string{"display"},
		Keywords:        []string{"casino"},
	}
	for _, test := range []struct {
		name  string
		brief merch.Brief
		want  bool
	}{
		{"both hold", merch.Brief{Channels: []string{"ctv"}, Text: "casino"}, true},
		{"only the channel predicate holds", merch.Brief{Channels: []string{"ctv"}, Text: "shoes"}, false},
		{"only the keyword holds", merch.Brief{Channels: []string{"display"}, Text: "casino"}, false},
		{"neither holds", merch.Brief{Channels: []string{"display"}}, false},
	} {
		if _, got := one(t, c, vocab.CommerciallyDeclined, test.brief, market); got != test.want {
			t.Errorf("%s: fired = %v, want %v", test.name, got, test.want)
		}
	}
	// A channel scope alone is not a predicate: the rule never fires.
	if _, got := one(t, merch.Condition{Channels: []string{"ctv"}}, vocab.CommerciallyDeclined, merch.Brief{Channels: []string{"ctv"}}, market); got {
		t.Error("a condition with only a channel scope fired")
	}
	// An empty condition never fires.
	if _, got := one(t, merch.Condition{}, vocab.CommerciallyDeclined, merch.Brief{Channels: []string{"ctv"}, Text: "casino"}, market); got {
		t.Error("an empty condition fired")
	}
}

func TestEvaluateOrderAndProjection(t *testing.T) {
	lead := 3
	rb := &merch.Rulebook{Format: merch.Format, Rules: []merch.Rule{
		{ID: "R-geo", Name: "geo", When: merch.Condition{CountriesServed: []string{"US"}},
			Decline: merch.Action{Slug: vocab.GeoNotServed, Disclosure: vocab.Category, Suggest: []vocab.SuggestionKind{vocab.TargetMarket}}},
		{ID: "R-off", Name: "disabled", Disabled: true, When: merch.Condition{CountriesServed: []string{"CA"}},
			Decline: merch.Action{Slug: vocab.GeoNotServed, Disclosure: vocab.Exact}},
		{ID: "R-budget", Name: "budget", When: merch.Condition{BudgetBelow: &merch.BudgetFloor{Currency: "USD", Minimum: 5000}},
			// move_flight is not a kind budget_below_minimum can carry: it is
			// narrowed away.
			Decline: merch.Action{Slug: vocab.BudgetBelowMinimum, Disclosure: vocab.Range, Suggest: []vocab.SuggestionKind{vocab.MoveFlight, vocab.RaiseBudget}}},
		{ID: "R-miss", Name: "does not hold", When: merch.Condition{Keywords: []string{"casino"}},
			Decline: merch.Action{Slug: vocab.CategoryNotAccepted, Disclosure: vocab.None}},
		{ID: "R-lead", Name: "lead", When: merch.Condition{LeadTimeDays: &lead},
			Decline: merch.Action{Slug: vocab.LeadTimeTooShort, Disclosure: vocab.Exact, Suggest: []vocab.SuggestionKind{vocab.LaterStart}}},
	}}
	b := merch.Brief{Countries: []string{"DE"}, Budget: &merch.Budget{Max: f(100), Currency: "USD"}, Flight: flight("2026-11-30", "2026-12-05"), Text: "shoes", Today: today}
	dec, err := merch.Evaluate(rb, b, market)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := dec.RuleIDs(), []string{"R-geo", "R-budget", "R-lead"}; !slices.Equal(got, want) {
		t.Errorf("RuleIDs() = %q, want %q", got, want)
	}
	var idx []int
	var slugs []vocab.Slug
	for _, r := range dec.Reasons() {
		idx = append(idx, r.Index)
		slugs = append(slugs, r.Slug)
		if r.Grounds().Slug != r.Slug || r.Grounds().Level != r.Level {
			t.Errorf("reason %s: grounds %v/%v differ from the reason %v/%v", r.RuleID, r.Grounds().Slug, r.Grounds().Level, r.Slug, r.Level)
		}
	}
	if !slices.Equal(idx, []int{0, 2, 4}) {
		t.Errorf("reason indexes = %v, want [0 2 4]", idx)
	}
	if want := []vocab.Slug{vocab.GeoNotServed, vocab.BudgetBelowMinimum, vocab.LeadTimeTooShort}; !slices.Equal(slugs, want) {
		t.Errorf("reason slugs = %v, want %v", slugs, want)
	}
	g := dec.Grounds()
	if len(g) != 3 || g[0].Slug != vocab.GeoNotServed || g[1].Slug != vocab.BudgetBelowMinimum || g[2].Slug != vocab.LeadTimeTooShort {
		t.Fatalf("Grounds() = %+v", g)
	}
	if !slices.Equal(g[1].Allowed, []vocab.SuggestionKind{vocab.RaiseBudget}) {
		t.Errorf("budget grounds allow %v, want [raise_budget]", g[1].Allowed)
	}
	if g[1].Level != vocab.Range || g[2].Level != vocab.Exact {
		t.Errorf("levels = %v, %v", g[1].Level, g[2].Level)
	}
	// Evaluation is a pure function of its inputs.
	again, _ := merch.Evaluate(rb, b, market)
	if !slices.Equal(again.RuleIDs(), dec.RuleIDs()) {
		t.Errorf("second Evaluate = %v, first %v", again.RuleIDs(), dec.RuleIDs())
	}

	clear := merch.Brief{Countries: []string{"US"}, Today: today}
	dec, err = merch.Evaluate(rb, clear, market)
	if err != nil || dec.Declined() || len(dec.Grounds()) != 0 {
		t.Errorf("Evaluate(clear brief) = %v, %v, want no decline", dec.RuleIDs(), err)
	}
}

func TestEvaluateErrors(t *testing.T) {
	if _, err := merch.Evaluate(nil, merch.Brief{Today: today}, market); !errors.Is(err, merch.ErrNoRulebook) {
		t.Errorf("Evaluate(nil) error = %v, want ErrNoRulebook", err)
	}
	rb := &merch.Rulebook{Format: merch.Format}
	if _, err := merch.Evaluate(rb, merch.Brief{}, market); err == nil {
		t.Error("Evaluate with no evaluation date succeeded, want an error")
	}
	dec, err := merch.Evaluate(rb, merch.Brief{Today: today}, market)
	if err != nil || dec.Declined() {
		t.Errorf("Evaluate(empty rulebook) = %v, %v, want no decline", dec.RuleIDs(), err)
	}
}

// TestEvaluateNeverPanics runs rules with odd but representable values
// against odd briefs. Evaluate must return, never panic.
func TestEvaluateNeverPanics(t *testing.T) {
	neg := -5
	huge := 100000
	rb := &merch.Rulebook{Rules: []merch.Rule{
		{When: merch.Condition{BudgetBelow: &merch.BudgetFloor{}}},
		{When: merch.Condition{BudgetBelow: &merch.BudgetFloor{Currency: "USD", Minimum: -1, PerChannel: map[string]float64{"": 1}}}},
		{When: merch.Condition{SoldOut: []merch.Window{{}, {Start: d("2027-01-02"), End: d("2026-01-01")}}}},
		{When: merch.Condition{LeadTimeDays: &neg}},
		{When: merch.Condition{LeadTimeDays: &huge}},
		{When: merch.Condition{ChannelsOffered: []string{}, CountriesServed: []string{""}, FormatKindsOffered: nil}},
		{When: merch.Condition{Industries: []string{""}, Keywords: []string{"", "  "}, BrandDomains: []string{""}}},
		{When: merch.Condition{CurrenciesAccepted: []string{}, DeliveryTypesOffered: []string{""}}},
		{Decline: merch.Action{Slug: "not_a_slug", Disclosure: vocab.Level(99), Suggest: []vocab.SuggestionKind{"nope"}}, When: merch.Condition{Keywords: []string{"x"}}},
	}}
	briefs := []merch.Brief{
		{Today: today},
		{Today: today, Budget: &merch.Budget{}, Flight: adcp.DateRange{End: d("2026-01-01")}},
		{Today: today, Budget: &merch.Budget{Max: f(-1), Currency: "USD"}, Channels: []string{""}, Text: "x"},
		{Today: today, Flight: flight("2027-01-02", "2026-01-01")},
		{Today: today, Flight: flight("2026-01-01", "2026-01-01"), Countries: []string{""}, Industries: []string{""}, BrandDomain: "."},
		{Today: d("0001-01-02"), Flight: flight("0001-01-01", "9999-12-31")},
	}
	for i, b := range briefs {
		func() {
			defer func() {
				if p := recover(); p != nil {
					t.Errorf("Evaluate(brief %d) panicked: %v", i, p)
				}
			}()
			merch.Evaluate(rb, b, market)
			merch.Evaluate(rb, b, merch.Market{})
		}()
	}
}

func TestBudgetAmountAndClone(t *testing.T) {
	var nilBudget *merch.Budget
	if _, ok := nilBudget.Amount(); ok {
		t.Error("nil budget has an amount")
	}
	b := merch.Brief{Channels: []string{"ctv"}, Budget: &merch.Budget{Min: f(1), Max: f(2), Currency: "USD"}, Industries: []string{"x"}}
	c := b.Clone()
	c.Channels[0] = "display"
	*c.Budget.Max = 99
	c.Industries[0] = "y"
	if b.Channels[0] != "ctv" || *b.Budget.Max != 2 || b.Industries[0] != "x" {
		t.Errorf("Clone shares state with the original: %+v", b)
	}
	if b.HasFlight() {
		t.Error("HasFlight() with no dates")
	}
	if !(merch.Brief{Flight: flight("2026-12-01", "2026-12-02")}).HasFlight() {
		t.Error("HasFlight() = false with both dates")
	}
}
