package decline

import (
	"github.com/storefront/storefront/vocab"
	"slices"
	"strings"
	"testing"

	"github.com/storefront/storefront/adcp"
	"github.com/storefront/storefront/sanitize"
)

var plain = sanitize.New(nil)

func always(Change) bool { return true }

func texts(ts []sanitize.Text) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.String()
	}
	return out
}

func budgetGrounds(level vocab.Level, minimum float64) vocab.Grounds {
	return vocab.Grounds{
		Slug: vocab.BudgetBelowMinimum, Level: level, Allowed: []vocab.SuggestionKind{vocab.RaiseBudget, vocab.SwitchChannel},
		Facts: vocab.Facts{Currency: "USD", Budget: 1000, Minimum: minimum, Channels: []string{"ctv"}, AlternativeChannels: []string{"display", "olv"}},
	}
}

func leadGrounds(level vocab.Level) vocab.Grounds {
	return vocab.Grounds{
		Slug: vocab.LeadTimeTooShort, Level: level, Allowed: []vocab.SuggestionKind{vocab.LaterStart},
		Facts: vocab.Facts{
			Flight:        adcp.DateRange{Start: adcp.MustDate("2026-11-30"), End: adcp.MustDate("2026-12-05")},
			EarliestStart: adcp.MustDate("2026-12-02"), LeadDays: 3,
		},
	}
}

func TestComposeLevels(t *testing.T) {
	for _, test := range []struct {
		name            string
		grounds         vocab.Grounds
		wantSlug        vocab.Slug
		wantLevel       vocab.Level
		wantReason      string
		wantSuggestions []string
	}{
		{
			name:       "none: the generic line and nothing else",
			grounds:    budgetGrounds(vocab.None, 3200),
			wantSlug:   vocab.CommerciallyDeclined,
			wantLevel:  vocab.None,
			wantReason: "This seller has declined the request.",
		},
		{
			name:       "category: the slug's line, suggestions without figures",
			grounds:    budgetGrounds(vocab.Category, 3200),
			wantSlug:   vocab.BudgetBelowMinimum,
			wantLevel:  vocab.Category,
			wantReason: "The requested budget is below the minimum for this inventory.",
			wantSuggestions: []string{
				"A larger budget would fit this brief.",
				"Display inventory would fit this brief.",
				"Online video inventory would fit this brief.",
			},
		},
		{
			name:       "range: thresholds rounded up into the 1-2.5-5 series",
			grounds:    budgetGrounds(vocab.Range, 3200),
			wantSlug:   vocab.BudgetBelowMinimum,
			wantLevel:  vocab.Range,
			wantReason: "The requested budget is below the minimum for this inventory. Budgets of 5,000 USD or more fit this inventory.",
			wantSuggestions: []string{
				"A budget of 5,000 USD or more would fit this brief.",
				"Display inventory would fit this brief.",
				"Online video inventory would fit this brief.",
			},
		},
		{
			name:       "exact: thresholds as they are",
			grounds:    budgetGrounds(vocab.Exact, 3200.001),
			wantSlug:   vocab.BudgetBelowMinimum,
			wantLevel:  vocab.Exact,
			wantReason: "The requested budget is below the minimum for this inventory. The minimum for this inventory is 3,200.01 USD.",
			wantSuggestions: []string{
				"A budget of at least 3,200.01 USD would fit this brief.",
				"Display inventory would fit this brief.",
				"Online video inventory would fit this brief.",
			},
		},
		{
			name:            "exact lead time",
			grounds:         leadGrounds(vocab.Exact),
			wantSlug:        vocab.LeadTimeTooShort,
			wantLevel:       vocab.Exact,
			wantReason:      "The requested start date does not allow enough lead time. Flights must start on or after 2026-12-02.",
			wantSuggestions: []string{"A start on or after 2026-12-02 would fit this brief."},
		},
		{
			name:            "range lead time",
			grounds:         leadGrounds(vocab.Range),
			wantSlug:        vocab.LeadTimeTooShort,
			wantLevel:       vocab.Range,
			wantReason:      "The requested start date does not allow enough lead time. Flights need a few days of lead time.",
			wantSuggestions: []string{"A start in early December 2026 would fit this brief."},
		},
		{
			name:            "category lead time",
			grounds:         leadGrounds(vocab.Category),
			wantSlug:        vocab.LeadTimeTooShort,
			wantLevel:       vocab.Category,
			wantReason:      "The requested start date does not allow enough lead time.",
			wantSuggestions: []string{"A later start date would fit this brief."},
		},
	} {
		t.Run(test.name, func(t *testing.T) {
			verified := 0
			c := Compose(Input{Grounds: []vocab.Grounds{test.grounds}, Cap: vocab.Exact, Verify: func(Change) bool { verified++; return true }}, plain)
			if c.Slug != test.wantSlug || c.Level != test.wantLevel {
				t.Errorf("Compose slug/level = %s/%s, want %s/%s", c.Slug, c.Level, test.wantSlug, test.wantLevel)
			}
			if c.Reason.String() != test.wantReason {
				t.Errorf("Compose reason = %q, want %q", c.Reason, test.wantReason)
			}
			if got := texts(c.Suggestions); !slices.Equal(got, test.wantSuggestions) {
				t.Errorf("Compose suggestions = %q, want %q", got, test.wantSuggestions)
			}
			if len(c.Offered) != len(c.Suggestions) || c.Final() != (len(test.wantSuggestions) == 0) {
				t.Errorf("Offered = %d, Final = %v for %d suggestions", len(c.Offered), c.Final(), len(c.Suggestions))
			}
			if test.wantLevel == vocab.None && (verified != 0 || c.Checks != 0) {
				t.Errorf("level none verified %d changes, want none", verified)
			}
			if c.Checks != verified {
				t.Errorf("Checks = %d, Verify called %d times", c.Checks, verified)
			}
		})
	}
}

// TestComposeNoFigures makes sure category level never leaks a threshold:
// neither the minimum nor its bucket appears anywhere.
func TestComposeNoFigures(t *testing.T) {
	c := Compose(Input{Grounds: []vocab.Grounds{budgetGrounds(vocab.Category, 3200)}, Cap: vocab.Exact, Verify: always}, plain)
	all := c.Reason.String() + " " + strings.Join(texts(c.Suggestions), " ")
	for _, figure := range []string{"3,200", "3200", "5,000", "5000", "USD"} {
		if strings.Contains(all, figure) {
			t.Errorf("category decline %q shows %q", all, figure)
		}
	}
}

func TestCoarse(t *testing.T) {
	for _, test := range []struct{ in, want float64 }{
		{0, 0}, {-5, 0}, {1, 1}, {1.2, 2.5}, {2.5, 2.5}, {3, 5}, {5, 5}, {7, 10},
		{999, 1000}, {1000, 1000}, {1001, 2500}, {2000, 2500}, {2600, 5000},
		{5001, 10000}, {25000, 25000}, {30000, 50000}, {0.3, 0.5},
	} {
		if got := coarse(test.in); got != test.want {
			t.Errorf("coarse(%v) = %v, want %v", test.in, got, test.want)
		}
		if test.in > 0 && coarse(test.in) < test.in {
			t.Errorf("coarse(%v) rounds down", test.in)
		}
	}
}

func TestMoneyAndExactUp(t *testing.T) {
	for _, test := range []struct {
		amount   float64
		currency string
		want     string
	}{
		{0, "USD", "0 USD"},
		{999, "USD", "999 USD"},
		{1000, "USD", "1,000 USD"},
		{25000, "GBP", "25,000 GBP"},
		{1234567.5, "EUR", "1,234,567.50 EUR"},
		{3200.01, "USD", "3,200.01 USD"},
		{99.999, "USD", "100 USD"},
	} {
		if got := money(test.amount, test.currency); got != test.want {
			t.Errorf("money(%v, %q) = %q, want %q", test.amount, test.currency, got, test.want)
		}
	}
	for _, test := range []struct{ in, want float64 }{{3200, 3200}, {3200.001, 3200.01}, {0.1 + 0.2, 0.3}, {10.555, 10.56}} {
		if got := exactUp(test.in); got != test.want {
			t.Errorf("exactUp(%v) = %v, want %v", test.in, got, test.want)
		}
	}
}

func TestComposeTrustCap(t *testing.T) {
	for _, test := range []struct {
		name      string
		rule, cap vocab.Level
		wantLevel vocab.Level
		wantSlug  vocab.Slug
	}{
		{"cap lowers exact to category", vocab.Exact, vocab.Category, vocab.Category, vocab.BudgetBelowMinimum},
		{"cap lowers exact to range", vocab.Exact, vocab.Range, vocab.Range, vocab.BudgetBelowMinimum},
		{"cap never raises category", vocab.Category, vocab.Exact, vocab.Category, vocab.BudgetBelowMinimum},
		{"cap never raises range", vocab.Range, vocab.Exact, vocab.Range, vocab.BudgetBelowMinimum},
		{"cap none hides everything", vocab.Exact, vocab.None, vocab.None, vocab.CommerciallyDeclined},
	} {
		t.Run(test.name, func(t *testing.T) {
			c := Compose(Input{Grounds: []vocab.Grounds{budgetGrounds(test.rule, 3200)}, Cap: test.cap, Verify: always}, plain)
			if c.Level != test.wantLevel || c.Slug != test.wantSlug {
				t.Errorf("Compose(rule %s, cap %s) = %s/%s, want %s/%s", test.rule, test.cap, c.Slug, c.Level, test.wantSlug, test.wantLevel)
			}
			all := c.Reason.String() + strings.Join(texts(c.Suggestions), "")
			if shows := strings.Contains(all, "3,200"); shows != (test.wantLevel == vocab.Exact) {
				t.Errorf("Compose(rule %s, cap %s) = %q: shows the exact minimum = %v", test.rule, test.cap, all, shows)
			}
			if shows := strings.Contains(all, "5,000"); shows != (test.wantLevel == vocab.Range) {
				t.Errorf("Compose(rule %s, cap %s) = %q: shows the bucket = %v", test.rule, test.cap, all, shows)
			}
		})
	}
	for _, test := range []struct{ l, max, want vocab.Level }{{vocab.Exact, vocab.Category, vocab.Category}, {vocab.Category, vocab.Exact, vocab.Category}, {vocab.None, vocab.Exact, vocab.None}, {vocab.Range, vocab.None, vocab.None}} {
		if got := test.l.Cap(test.max); got != test.want {
			t.Errorf("%s.Cap(%s) = %s, want %s", test.l, test.max, got, test.want)
		}
	}
}

func TestComposeTemplates(t *testing.T) {
	voice := vocab.Voice{SellerName: "Northwind Media", Templates: map[vocab.Slug]string{
		vocab.BudgetBelowMinimum: "{{seller}} accepts budgets of {{ minimum }} or more.",
		vocab.ChannelNotOffered:  "{{seller}} sells {{channels}}.",
		vocab.GeoNotServed:       "We serve {{markets}}.",
	}}
	geo := vocab.Grounds{Slug: vocab.GeoNotServed, Level: vocab.Category, Allowed: []vocab.SuggestionKind{vocab.TargetMarket}, Facts: vocab.Facts{Countries: []string{"DE"}, ServedCountries: []string{"US", "GB"}}}
	channel := vocab.Grounds{Slug: vocab.ChannelNotOffered, Level: vocab.Category, Allowed: []vocab.SuggestionKind{vocab.SwitchChannel}, Facts: vocab.Facts{Channels: []string{"dooh"}, AlternativeChannels: []string{"display", "olv", "ctv"}}}
	for _, test := range []struct {
		name  string
		g     vocab.Grounds
		voice vocab.Voice
		want  string
	}{
		{"range fills every placeholder", budgetGrounds(vocab.Range, 3200), voice, "Northwind Media accepts budgets of 5,000 USD or more."},
		{"exact fills every placeholder", budgetGrounds(vocab.Exact, 3200), voice, "Northwind Media accepts budgets of 3,200 USD or more."},
		{"category has no minimum: canned line", budgetGrounds(vocab.Category, 3200), voice, "The requested budget is below the minimum for this inventory."},
		{"category placeholders fill at category", channel, voice, "Northwind Media sells display, online video and connected TV."},
		{"no seller name: canned line", channel, vocab.Voice{Templates: voice.Templates}, "The requested channel is not offered by this seller. Channels offered: display, online video and connected TV."},
		{"markets", geo, voice, "We serve the United States and the United Kingdom."},
		{"no template: canned line", leadGrounds(vocab.Category), voice, "The requested start date does not allow enough lead time."},
	} {
		t.Run(test.name, func(t *testing.T) {
			c := Compose(Input{Grounds: []vocab.Grounds{test.g}, Voice: test.voice, Cap: vocab.Exact, Verify: always}, plain)
			if c.Reason.String() != test.want {
				t.Errorf("Compose reason = %q, want %q", c.Reason, test.want)
			}
		})
	}
	// The channels detail shows at category level when there is no
	// template.
	c := Compose(Input{Grounds: []vocab.Grounds{channel}, Cap: vocab.Exact}, plain)
	if want := "The requested channel is not offered by this seller. Channels offered: display, online video and connected TV."; c.Reason.String() != want {
		t.Errorf("Compose reason = %q, want %q", c.Reason, want)
	}
}

func TestComposeTones(t *testing.T) {
	for _, test := range []struct {
		name   string
		voice  vocab.Voice
		verify func(Change) bool
		want   string
	}{
		{"neutral", vocab.Voice{SellerName: "Northwind"}, always,
			"The requested start date does not allow enough lead time."},
		{"direct", vocab.Voice{SellerName: "Northwind", Tone: vocab.Direct}, always,
			"The requested start date does not allow enough lead time."},
		{"warm with a seller name", vocab.Voice{SellerName: "Northwind", Tone: vocab.Warm}, always,
			"Thank you for considering Northwind. The requested start date does not allow enough lead time. We would be glad to look at a revised brief."},
		{"warm without a seller name", vocab.Voice{Tone: vocab.Warm}, always,
			"Thank you for the brief. The requested start date does not allow enough lead time. We would be glad to look at a revised brief."},
		{"warm and final: no closer", vocab.Voice{SellerName: "Northwind", Tone: vocab.Warm}, nil,
			"Thank you for considering Northwind. The requested start date does not allow enough lead time."},
		{"formal with a seller name", vocab.Voice{SellerName: "Northwind", Tone: vocab.Formal}, always,
			"Northwind is unable to accept this brief as submitted. The requested start date does not allow enough lead time. A revised brief would be welcome."},
		{"formal without a seller name and final", vocab.Voice{Tone: vocab.Formal}, func(Change) bool { return false },
			"We are unable to accept this brief as submitted. The requested start date does not allow enough lead time."},
	} {
		t.Run(test.name, func(t *testing.T) {
			c := Compose(Input{Grounds: []vocab.Grounds{leadGrounds(vocab.Category)}, Voice: test.voice, Cap: vocab.Exact, Verify: test.verify}, plain)
			if c.Reason.String() != test.want {
				t.Errorf("Compose reason = %q, want %q", c.Reason, test.want)
			}
		})
	}
}

func TestComposeVerification(t *testing.T) {
	// Many visible grounds, each with several candidates.
	var gs []vocab.Grounds
	for i := 0; i < 6; i++ {
		gs = append(gs, budgetGrounds(vocab.Exact, float64(1000*(i+2))))
		gs = append(gs, vocab.Grounds{Slug: vocab.GeoNotServed, Level: vocab.Category, Allowed: []vocab.SuggestionKind{vocab.TargetMarket}, Facts: vocab.Facts{ServedCountries: []string{"US", "CA", "GB"}}})
	}

	calls := 0
	c := Compose(Input{Grounds: gs, Cap: vocab.Exact, Verify: func(Change) bool { calls++; return false }}, plain)
	if calls != MaxChecks || c.Checks != MaxChecks {
		t.Errorf("Verify called %d times, Checks = %d, want both %d", calls, c.Checks, MaxChecks)
	}
	if !c.Final() || len(c.Offered) != 0 {
		t.Errorf("unverified changes were offered: %q", texts(c.Suggestions))
	}
	if c.Reason.IsZero() {
		t.Error("empty reason")
	}

	calls = 0
	c = Compose(Input{Grounds: gs, Cap: vocab.Exact, Verify: func(Change) bool { calls++; return true }}, plain)
	if len(c.Suggestions) == 0 || len(c.Suggestions) > 4 || calls > MaxChecks {
		t.Errorf("Compose offered %d suggestions after %d checks, want 1..4 within %d", len(c.Suggestions), calls, MaxChecks)
	}

	// Verify nil: nothing can be verified, nothing is offered.
	c = Compose(Input{Grounds: gs, Cap: vocab.Exact}, plain)
	if !c.Final() || c.Checks != 0 {
		t.Errorf("Compose with nil Verify offered %q after %d checks", texts(c.Suggestions), c.Checks)
	}

	// Only the changes Verify accepts are offered, in candidate order.
	c = Compose(Input{Grounds: []vocab.Grounds{budgetGrounds(vocab.Exact, 3200)}, Cap: vocab.Exact, Verify: func(ch Change) bool {
		return ch.Edits[0].Kind == vocab.SwitchChannel && ch.Edits[0].Channel == "olv"
	}}, plain)
	if got, want := texts(c.Suggestions), []string{"Online video inventory would fit this brief."}; !slices.Equal(got, want) {
		t.Errorf("suggestions = %q, want %q", got, want)
	}
	if len(c.Offered) != 1 || c.Offered[0].Edits[0].Channel != "olv" {
		t.Errorf("Offered = %+v, want the olv change", c.Offered)
	}
}

// TestComposeCompound: when several rules fire, one change must clear
// them all; the compound change is tried first, and each of its edits is
// worded at its own rule's level.
func TestComposeCompound(t *testing.T) {
	var tried []int
	c := Compose(Input{
		Grounds: []vocab.Grounds{budgetGrounds(vocab.Range, 3200), leadGrounds(vocab.Exact)},
		Voice:   vocab.Voice{SellerName: "Northwind", Tone: vocab.Formal},
		Cap:     vocab.Exact,
		Verify: func(ch Change) bool {
			tried = append(tried, len(ch.Edits))
			return len(ch.Edits) == 2
		},
	}, plain)
	if len(tried) == 0 || tried[0] != 2 {
		t.Errorf("changes tried have %v edits, want the compound change first", tried)
	}
	want := []string{"A budget of 5,000 USD or more and a start on or after 2026-12-02 would fit this brief."}
	if got := texts(c.Suggestions); !slices.Equal(got, want) {
		t.Errorf("suggestions = %q, want %q", got, want)
	}
	if len(c.Offered) != 1 || c.Offered[0].Level() != vocab.Range {
		t.Fatalf("Offered = %+v, want one change at range level", c.Offered)
	}
	e := c.Offered[0].Edits
	if e[0].Kind != vocab.RaiseBudget || e[0].Budget != 5000 || e[1].Kind != vocab.LaterStart || e[1].Flight.Start != adcp.MustDate("2026-12-02") || e[1].Flight.End != adcp.MustDate("2026-12-07") {
		t.Errorf("compound edits = %+v", e)
	}
	// Both reasons are in the reason, in rulebook order.
	r := c.Reason.String()
	if i, j := strings.Index(r, "budget is below"), strings.Index(r, "lead time"); i < 0 || j < 0 || i > j {
		t.Errorf("reason %q does not give both reasons in order", r)
	}
	if c.Slug != vocab.BudgetBelowMinimum {
		t.Errorf("slug = %s, want the first rule's", c.Slug)
	}

	// A rule at level none contributes no candidate and stays hidden.
	hidden := budgetGrounds(vocab.None, 3200)
	c = Compose(Input{Grounds: []vocab.Grounds{hidden, leadGrounds(vocab.Exact)}, Cap: vocab.Exact, Verify: always}, plain)
	if c.Slug != vocab.LeadTimeTooShort || strings.Contains(c.Reason.String(), "budget") {
		t.Errorf("Compose = %s %q, want the visible rule only", c.Slug, c.Reason)
	}
}

func TestComposeReasonLimits(t *testing.T) {
	// Three distinct slugs at most; repeated slugs are said once.
	gs := []vocab.Grounds{
		leadGrounds(vocab.Category), leadGrounds(vocab.Category),
		budgetGrounds(vocab.Category, 1), {Slug: vocab.GeoNotServed, Level: vocab.Category},
		{Slug: vocab.FormatNotOffered, Level: vocab.Category},
	}
	c := Compose(Input{Grounds: gs, Cap: vocab.Exact}, plain)
	r := c.Reason.String()
	if strings.Count(r, "lead time") != 1 {
		t.Errorf("reason %q repeats a slug", r)
	}
	if strings.Contains(r, "formats") || strings.Contains(r, "creative formats") {
		t.Errorf("reason %q gives a fourth slug", r)
	}
	if !strings.Contains(r, "markets") {
		t.Errorf("reason %q lacks the third slug", r)
	}
}

func TestComposeScreensOutput(t *testing.T) {
	screen := sanitize.New(sanitize.NewDenyList([]sanitize.Term{
		{Value: "MR-2291-CTV-FLOOR", Kind: sanitize.KindRuleID},
		{Value: "Acme Retail Group", Kind: sanitize.KindNoteTerm},
	}, nil))
	voice := vocab.Voice{Tone: vocab.Warm, SellerName: "Northwind", Templates: map[vocab.Slug]string{
		vocab.BudgetBelowMinimum: "Rule ｍｒ-２２９１-ctv-floor says budgets of {{minimum}} or more.",
		vocab.LeadTimeTooShort:   "Acme\u200bRetail\u200bGroup needs {{lead_time}}.",
	}}
	c := Compose(Input{Grounds: []vocab.Grounds{budgetGrounds(vocab.Range, 3200)}, Voice: voice, Cap: vocab.Exact, Verify: always}, screen)
	r := c.Reason.String()
	if screen.Names(r) || strings.Contains(sanitize.Skeleton(r), "mr229lctvfloor") {
		t.Errorf("reason %q names the rule", r)
	}
	// The template's sentence is dropped and the slug's canned line takes
	// its place with the sentence the level allows, so the reason still
	// says why and keeps its figure; the opener and closer stay.
	if want := "Thank you for considering Northwind. The requested budget is below the minimum for this inventory. Budgets of 5,000 USD or more fit this inventory. We would be glad to look at a revised brief."; r != want {
		t.Errorf("reason = %q, want %q", r, want)
	}

	c = Compose(Input{Grounds: []vocab.Grounds{leadGrounds(vocab.Range)}, Voice: vocab.Voice{Templates: voice.Templates}, Cap: vocab.Exact, Verify: always}, screen)
	if want := "The requested start date does not allow enough lead time. Flights need a few days of lead time."; c.Reason.String() != want {
		t.Errorf("reason = %q, want the canned line with its sentence %q", c.Reason, want)
	}
}

func TestComposeForced(t *testing.T) {
	screen := sanitize.New(sanitize.NewDenyList([]sanitize.Term{{Value: "MR-2291-CTV-FLOOR", Kind: sanitize.KindRuleID}}, nil))
	forced := &Forced{
		Reason:      "Rule MR-2291-CTV-FLOOR fired. <b>Please</b> try a larger budget.",
		Suggestions: []string{"Ask about M R 2291 CTV FLOOR.", "<i>Raise</i> the budget.", "", "Raise the budget."},
	}
	verified := 0
	c := Compose(Input{Grounds: []vocab.Grounds{budgetGrounds(vocab.Exact, 3200)}, Cap: vocab.Exact, Forced: forced, Verify: func(Change) bool { verified++; return true }}, screen)
	if c.Reason.String() != "Please try a larger budget." {
		t.Errorf("forced reason = %q, want %q", c.Reason, "Please try a larger budget.")
	}
	if got, want := texts(c.Suggestions), []string{"Raise the budget."}; !slices.Equal(got, want) {
		t.Errorf("forced suggestions = %q, want %q", got, want)
	}
	if c.Slug != vocab.BudgetBelowMinimum || c.Level != vocab.Exact || verified != 0 {
		t.Errorf("forced = %s/%s after %d checks, want the fired rule's slug and no checks", c.Slug, c.Level, verified)
	}

	// Nothing fired: the forced decline is commercially_declined.
	c = Compose(Input{Cap: vocab.Exact, Forced: &Forced{Reason: "MR-2291-CTV-FLOOR"}}, screen)
	if c.Slug != vocab.CommerciallyDeclined || c.Level != vocab.Category || c.Reason.String() != "This seller has declined the request." {
		t.Errorf("forced with no grounds = %s/%s %q", c.Slug, c.Level, c.Reason)
	}
	c = Compose(Input{Cap: vocab.Exact, Forced: &Forced{}}, screen)
	if c.Reason.IsZero() {
		t.Error("forced with an empty reason gave an empty reason")
	}
}

func TestComposeNoGrounds(t *testing.T) {
	c := Compose(Input{Cap: vocab.Exact, Verify: always}, plain)
	if c.Slug != vocab.CommerciallyDeclined || c.Reason.String() != "This seller has declined the request." || !c.Final() {
		t.Errorf("Compose(no grounds) = %s %q %q", c.Slug, c.Reason, texts(c.Suggestions))
	}
}

func TestChangeText(t *testing.T) {
	r := adcp.DateRange{Start: adcp.MustDate("2027-01-03"), End: adcp.MustDate("2027-01-10")}
	facts := vocab.Facts{
		Currency: "USD", Minimum: 25000, AlternativeChannels: []string{"streaming_audio"}, OpenFlight: &r,
		Flight: adcp.DateRange{Start: adcp.MustDate("2026-12-01"), End: adcp.MustDate("2026-12-08")}, EarliestStart: adcp.MustDate("2027-01-03"), LeadDays: 35,
		ServedCountries: []string{"GB"}, OfferedFormatKinds: []string{"video_vast"},
	}
	for _, test := range []struct {
		kind  vocab.SuggestionKind
		level vocab.Level
		want  string
	}{
		{vocab.RaiseBudget, vocab.Exact, "A budget of at least 25,000 USD would fit this brief."},
		{vocab.RaiseBudget, vocab.Range, "A budget of 25,000 USD or more would fit this brief."},
		{vocab.RaiseBudget, vocab.Category, "A larger budget would fit this brief."},
		{vocab.SwitchChannel, vocab.Category, "Streaming audio inventory would fit this brief."},
		{vocab.MoveFlight, vocab.Exact, "A flight from 2027-01-03 to 2027-01-10 would fit this brief."},
		{vocab.MoveFlight, vocab.Range, "A flight of the same length starting in early January 2027 would fit this brief."},
		{vocab.MoveFlight, vocab.Category, "Different flight dates would fit this brief."},
		{vocab.LaterStart, vocab.Exact, "A start on or after 2027-01-03 would fit this brief."},
		{vocab.LaterStart, vocab.Range, "A start in early January 2027 would fit this brief."},
		{vocab.LaterStart, vocab.Category, "A later start date would fit this brief."},
		{vocab.TargetMarket, vocab.Category, "Targeting the United Kingdom would fit this brief."},
		{vocab.ChangeFormat, vocab.Category, "VAST video creative would fit this brief."},
	} {
		cs := candidates(vocab.Grounds{Level: test.level, Allowed: []vocab.SuggestionKind{test.kind}, Facts: facts}, vocab.Voice{})
		if len(cs) == 0 {
			t.Fatalf("no %s candidate at %s", test.kind, test.level)
		}
		if got := cs[0].Text(); got != test.want {
			t.Errorf("candidate %s at %s: Text() = %q, want %q", test.kind, test.level, got, test.want)
		}
	}
	// A change built by hand has no disclosure: it names no figure.
	hand := Change{Edits: []Edit{{Kind: vocab.RaiseBudget, Budget: 25000, Currency: "USD"}, {Kind: vocab.TargetMarket, Country: "ZZ"}}}
	if got, want := hand.Text(), "A larger budget and targeting ZZ would fit this brief."; got != want {
		t.Errorf("hand-built change Text() = %q, want %q", got, want)
	}
}

func TestMonthPartAndLeadBucket(t *testing.T) {
	for _, test := range []struct{ date, want string }{
		{"2026-12-01", "early December 2026"}, {"2026-12-10", "early December 2026"},
		{"2026-12-11", "mid December 2026"}, {"2026-12-20", "mid December 2026"},
		{"2026-12-21", "late December 2026"}, {"2027-01-31", "late January 2027"},
	} {
		if got := monthPart(adcp.MustDate(test.date)); got != test.want {
			t.Errorf("monthPart(%s) = %q, want %q", test.date, got, test.want)
		}
	}
	for _, test := range []struct {
		days int
		want string
	}{{1, "a few days"}, {3, "a few days"}, {4, "about a week"}, {14, "about two weeks"}, {30, "about a month"}, {90, "more than a month"}} {
		if got := leadBucket(test.days); got != test.want {
			t.Errorf("leadBucket(%d) = %q, want %q", test.days, got, test.want)
		}
	}
}

// TestCandidatesPerKind checks that each suggestion kind yields concrete
// changes from the facts, and only the kinds the grounds allow.
func TestCandidatesPerKind(t *testing.T) {
	open := adcp.DateRange{Start: adcp.MustDate("2027-01-03"), End: adcp.MustDate("2027-01-10")}
	facts := vocab.Facts{
		Currency: "USD", Minimum: 3200, AlternativeChannels: []string{"display", "olv", "ctv"},
		OpenFlight: &open, Flight: adcp.DateRange{Start: adcp.MustDate("2026-11-30"), End: adcp.MustDate("2026-12-05")},
		EarliestStart: adcp.MustDate("2026-12-02"), ServedCountries: []string{"US", "CA", "GB"},
		OfferedFormatKinds: []string{"image", "video_vast", "audio_hosted"},
	}
	for _, test := range []struct {
		kind vocab.SuggestionKind
		want []Edit
	}{
		{vocab.RaiseBudget, []Edit{{Kind: vocab.RaiseBudget, Budget: 3200, Currency: "USD"}}},
		{vocab.SwitchChannel, []Edit{{Kind: vocab.SwitchChannel, Channel: "display"}, {Kind: vocab.SwitchChannel, Channel: "olv"}}},
		{vocab.MoveFlight, []Edit{{Kind: vocab.MoveFlight, Flight: open}}},
		{vocab.LaterStart, []Edit{{Kind: vocab.LaterStart, Flight: adcp.DateRange{Start: adcp.MustDate("2026-12-02"), End: adcp.MustDate("2026-12-07")}}}},
		{vocab.TargetMarket, []Edit{{Kind: vocab.TargetMarket, Country: "US"}, {Kind: vocab.TargetMarket, Country: "CA"}}},
		{vocab.ChangeFormat, []Edit{{Kind: vocab.ChangeFormat, FormatKind: "image"}, {Kind: vocab.ChangeFormat, FormatKind: "video_vast"}}},
	} {
		got := candidates(vocab.Grounds{Slug: vocab.CommerciallyDeclined, Level: vocab.Exact, Allowed: []vocab.SuggestionKind{test.kind}, Facts: facts}, vocab.Voice{})
		var edits []Edit
		for _, c := range got {
			if len(c.Edits) != 1 {
				t.Fatalf("%s candidate has %d edits", test.kind, len(c.Edits))
			}
			e := c.Edits[0]
			if e.clause == "" {
				t.Errorf("%s candidate has no words", test.kind)
			}
			e.clause, e.figures = "", ""
			edits = append(edits, e)
		}
		if !slices.Equal(edits, test.want) {
			t.Errorf("candidates(%s) = %+v, want %+v", test.kind, edits, test.want)
		}
	}
	if got := candidates(vocab.Grounds{Level: vocab.Exact, Facts: facts}, vocab.Voice{}); len(got) != 0 {
		t.Errorf("candidates with nothing allowed = %+v, want none", got)
	}
	if got := candidates(vocab.Grounds{Level: vocab.Exact, Allowed: vocab.SuggestionKinds()}, vocab.Voice{}); len(got) != 0 {
		t.Errorf("candidates with no facts = %+v, want none", got)
	}
}

// TestComposeOfferedAligned: two rules can both suggest the same change.
// The buyer sees it once, and Offered stays aligned with Suggestions one to
// one, which callers index in step.
func TestComposeOfferedAligned(t *testing.T) {
	channel := vocab.Grounds{Slug: vocab.ChannelNotOffered, Level: vocab.Category, Allowed: []vocab.SuggestionKind{vocab.SwitchChannel}, Facts: vocab.Facts{AlternativeChannels: []string{"display", "olv"}}}
	c := Compose(Input{Grounds: []vocab.Grounds{budgetGrounds(vocab.Category, 3200), channel}, Cap: vocab.Exact, Verify: func(ch Change) bool {
		return len(ch.Edits) == 1 && ch.Edits[0].Kind == vocab.SwitchChannel
	}}, plain)
	want := []string{"Display inventory would fit this brief.", "Online video inventory would fit this brief."}
	if got := texts(c.Suggestions); !slices.Equal(got, want) {
		t.Errorf("suggestions = %q, want %q", got, want)
	}
	if len(c.Offered) != len(c.Suggestions) {
		t.Fatalf("%d offered changes for %d suggestions", len(c.Offered), len(c.Suggestions))
	}
	for i, ch := range c.Offered {
		if ch.Text() != c.Suggestions[i].String() {
			t.Errorf("Offered[%d] reads %q, Suggestions[%d] = %q", i, ch.Text(), i, c.Suggestions[i])
		}
	}
}
