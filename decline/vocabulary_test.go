package decline

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/storefront/storefront/adcp"
)

func TestVocabulary(t *testing.T) {
	want := []string{
		"budget_below_minimum", "channel_not_offered", "flight_unavailable", "lead_time_too_short",
		"geo_not_served", "format_not_offered", "category_not_accepted", "commercially_declined",
	}
	if got := Slugs(); !slices.Equal(got, want) {
		t.Errorf("Slugs() = %q, want %q", got, want)
	}
	for _, e := range Vocabulary {
		if e.Reason == "" || !strings.HasSuffix(e.Reason, ".") {
			t.Errorf("%s: canned line %q must be one full sentence", e.Slug, e.Reason)
		}
		if e.Fixable != (len(e.Suggests) > 0) {
			t.Errorf("%s: fixable = %v but suggests %v", e.Slug, e.Fixable, e.Suggests)
		}
		if e.LegacyCode.Recovery() != adcp.Correctable {
			t.Errorf("%s: legacy code %s is %s, want correctable", e.Slug, e.LegacyCode, e.LegacyCode.Recovery())
		}
		if got, ok := Lookup(e.Slug); !ok || got.Slug != e.Slug {
			t.Errorf("Lookup(%s) = %v, %v", e.Slug, got, ok)
		}
		for _, k := range e.Suggests {
			if !e.Allows(k) {
				t.Errorf("%s.Allows(%s) = false", e.Slug, k)
			}
		}
	}
	if _, ok := Lookup("made_up"); ok {
		t.Error("Lookup(made_up) found an entry")
	}
	b, _ := Lookup(BudgetBelowMinimum)
	if b.Allows(MoveFlight) || !b.Allows(RaiseBudget) || !b.Allows(SwitchChannel) {
		t.Errorf("budget_below_minimum allows %v", b.Suggests)
	}
	for _, s := range []Slug{CategoryNotAccepted, CommerciallyDeclined} {
		e, _ := Lookup(s)
		for _, k := range SuggestionKinds {
			if e.Allows(k) {
				t.Errorf("%s allows %s; it is final", s, k)
			}
		}
	}
	if got := BudgetBelowMinimum.Kebab(); got != "budget-below-minimum" {
		t.Errorf("Kebab() = %q", got)
	}
}

func TestParseSlug(t *testing.T) {
	for _, test := range []struct {
		in      string
		wantErr bool
	}{
		{"budget_below_minimum", false},
		{"commercially_declined", false},
		{"Budget_Below_Minimum", true},
		{"budget-below-minimum", true},
		{"budget_too_low", true},
		{"", true},
	} {
		got, err := ParseSlug(test.in)
		if (err != nil) != test.wantErr {
			t.Errorf("ParseSlug(%q) = %q, %v, want error %v", test.in, got, err, test.wantErr)
		}
		if err == nil && string(got) != test.in {
			t.Errorf("ParseSlug(%q) = %q", test.in, got)
		}
		if err != nil && !strings.Contains(err.Error(), "budget_below_minimum") {
			t.Errorf("ParseSlug(%q) error %q does not list the slugs", test.in, err)
		}
	}
}

func TestParseSuggestionKind(t *testing.T) {
	for _, k := range SuggestionKinds {
		if got, err := ParseSuggestionKind(string(k)); err != nil || got != k {
			t.Errorf("ParseSuggestionKind(%q) = %q, %v", k, got, err)
		}
	}
	if _, err := ParseSuggestionKind("lower_price"); err == nil {
		t.Error("ParseSuggestionKind(lower_price) succeeded")
	}
}

func TestParseLevel(t *testing.T) {
	for _, test := range []struct {
		in      string
		want    Level
		wantErr bool
	}{
		{"none", None, false},
		{"category", Category, false},
		{"range", Range, false},
		{"exact", Exact, false},
		{"Exact", None, true},
		{"full", None, true},
		{"", None, true},
	} {
		got, err := ParseLevel(test.in)
		if got != test.want || (err != nil) != test.wantErr {
			t.Errorf("ParseLevel(%q) = %v, %v, want %v, error %v", test.in, got, err, test.want, test.wantErr)
		}
	}
	if got := Level(9).String(); got != "Level(9)" {
		t.Errorf("Level(9).String() = %q", got)
	}
	if got := Levels(); !slices.Equal(got, []string{"none", "category", "range", "exact"}) {
		t.Errorf("Levels() = %q", got)
	}
	if !(None < Category && Category < Range && Range < Exact) {
		t.Error("levels are not ordered")
	}

	var v struct {
		L Level `json:"l"`
	}
	if err := json.Unmarshal([]byte(`{"l":"range"}`), &v); err != nil || v.L != Range {
		t.Errorf("Unmarshal range = %v, %v", v.L, err)
	}
	b, _ := json.Marshal(v)
	if string(b) != `{"l":"range"}` {
		t.Errorf("Marshal = %s", b)
	}
	for _, bad := range []string{`{"l":2}`, `{"l":"total"}`} {
		if err := json.Unmarshal([]byte(bad), &v); err == nil {
			t.Errorf("Unmarshal(%s) succeeded", bad)
		}
	}
}

func TestCheckTemplate(t *testing.T) {
	for _, test := range []struct {
		name    string
		in      string
		wantErr string // "" for no error
	}{
		{"plain text", "We cannot take this brief.", ""},
		{"known placeholders", "{{seller}} accepts {{ minimum }} or more from {{earliest_start}}.", ""},
		{"every placeholder", "{{seller}} {{channels}} {{markets}} {{formats}} {{minimum}} {{earliest_start}} {{open_flight}} {{lead_time}}", ""},
		{"internal placeholder", "Rule {{rule_id}} fired.", "{{rule_id}} refers to an internal field"},
		{"unknown placeholder", "Hello {{buyer}}.", "unknown placeholder {{buyer}}"},
		{"dotted placeholder", "{{facts.minimum}}", "unknown placeholder"},
		{"unbalanced open", "Budgets of {{minimum or more.", "unbalanced"},
		{"unbalanced close", "Budgets of minimum}} or more.", "unbalanced"},
		{"empty", "  ", "empty"},
		{"too long", strings.Repeat("x", MaxTemplate+1), "limit"},
		{"at the limit", strings.Repeat("x", MaxTemplate), ""},
	} {
		t.Run(test.name, func(t *testing.T) {
			err := CheckTemplate(test.in)
			if test.wantErr == "" {
				if err != nil {
					t.Errorf("CheckTemplate(%q) = %v, want nil", test.in, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), test.wantErr) {
				t.Errorf("CheckTemplate(%q) = %v, want an error mentioning %q", test.in, err, test.wantErr)
			}
		})
	}
	if got := TemplatePlaceholders("{{a}} {{ b }} {{a}}"); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("TemplatePlaceholders = %q", got)
	}
	names := PlaceholderNames()
	if !slices.IsSorted(names) || len(names) != len(Placeholders) {
		t.Errorf("PlaceholderNames() = %q", names)
	}
}

// TestPlaceholderLevels checks that a disclosure gives each placeholder a value
// exactly from its documented level on, given facts for all of them.
func TestPlaceholderLevels(t *testing.T) {
	open := adcp.DateRange{Start: adcp.MustDate("2027-01-03"), End: adcp.MustDate("2027-01-10")}
	facts := Facts{
		Currency: "USD", Minimum: 3200, AlternativeChannels: []string{"display"}, OpenFlight: &open,
		EarliestStart: adcp.MustDate("2026-12-02"), LeadDays: 3, ServedCountries: []string{"US"}, OfferedFormatKinds: []string{"image"},
	}
	for _, level := range []Level{None, Category, Range, Exact} {
		d := disclose(Grounds{Slug: BudgetBelowMinimum, Level: level, Facts: facts}, Voice{SellerName: "Northwind"})
		if d.level() != level {
			t.Errorf("disclose at %s built a %s disclosure", level, d.level())
		}
		shown := d.values()
		for name, from := range Placeholders {
			if has := shown[name] != ""; has != (level >= from) {
				t.Errorf("disclosure at %s: %s shown = %v, want %v (from %s)", level, name, has, level >= from, from)
			}
		}
		for name := range shown {
			if _, ok := Placeholders[name]; !ok {
				t.Errorf("disclosure at %s gives %q, which is not a documented placeholder", level, name)
			}
		}
	}
}

func TestParseTone(t *testing.T) {
	for _, test := range []struct {
		in      string
		want    Tone
		wantErr bool
	}{
		{"", Neutral, false},
		{"neutral", Neutral, false},
		{"warm", Warm, false},
		{"formal", Formal, false},
		{"direct", Direct, false},
		{"Warm", "", true},
		{"snarky", "", true},
	} {
		got, err := ParseTone(test.in)
		if got != test.want || (err != nil) != test.wantErr {
			t.Errorf("ParseTone(%q) = %q, %v, want %q, error %v", test.in, got, err, test.want, test.wantErr)
		}
	}
}

func TestLabels(t *testing.T) {
	for _, ch := range adcp.Channels() {
		if ChannelLabels[ch] == "" {
			t.Errorf("channel %s has no label", ch)
		}
	}
	for _, k := range adcp.FormatKinds() {
		if FormatLabels[k] == "" {
			t.Errorf("format kind %s has no label", k)
		}
	}
	if got := ChannelList([]string{"display", "olv", "streaming_audio"}); got != "display, online video and streaming audio" {
		t.Errorf("ChannelList = %q", got)
	}
	if got := ChannelList(nil); got != "" {
		t.Errorf("ChannelList(nil) = %q", got)
	}
}
