package vocab

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
	for _, e := range Vocabulary() {
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
		for _, k := range SuggestionKinds() {
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
	for _, k := range SuggestionKinds() {
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
	if !slices.IsSorted(names) || len(names) != len(Placeholders()) {
		t.Errorf("PlaceholderNames() = %q", names)
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

// TestCopies checks that what the package hands out is the caller's own:
// changing it changes nothing anyone else publishes.
func TestCopies(t *testing.T) {
	v := Vocabulary()
	v[0].Reason = "changed"
	v[0].Suggests[0] = ChangeFormat
	if e, _ := Lookup(v[0].Slug); e.Reason == "changed" || e.Suggests[0] == ChangeFormat {
		t.Errorf("changing Vocabulary()'s result changed the table: %+v", e)
	}
	e, _ := Lookup(BudgetBelowMinimum)
	e.Suggests[0] = ChangeFormat
	if again, _ := Lookup(BudgetBelowMinimum); again.Suggests[0] != RaiseBudget {
		t.Errorf("changing Lookup's result changed the table: %v", again.Suggests)
	}
	if e, _ := Lookup(CommerciallyDeclined); e.Suggests != nil {
		t.Errorf("a final entry's Suggests = %#v, want nil (published as null)", e.Suggests)
	}
	k := SuggestionKinds()
	k[0] = ChangeFormat
	if SuggestionKinds()[0] != RaiseBudget {
		t.Error("changing SuggestionKinds()'s result changed the list")
	}
	tones := Tones()
	tones[0] = Direct
	if Tones()[0] != Neutral {
		t.Error("changing Tones()'s result changed the list")
	}
	p := Placeholders()
	p["minimum"] = None
	delete(p, "seller")
	if q := Placeholders(); q["minimum"] != Range || q["seller"] != Category {
		t.Error("changing Placeholders()'s result changed the map")
	}
	if !BudgetBelowMinimum.Known() || Slug("made_up").Known() || Slug("").Known() {
		t.Error("Known disagrees with the table")
	}
}
