package vocab

import (
	"fmt"
	"slices"
	"strings"

	"github.com/storefront/storefront/adcp"
)

// Slug names a public decline category. The set is closed: every value is
// an entry of [Vocabulary].
type Slug string

// The vocabulary's slugs.
const (
	BudgetBelowMinimum   Slug = "budget_below_minimum"
	ChannelNotOffered    Slug = "channel_not_offered"
	FlightUnavailable    Slug = "flight_unavailable"
	LeadTimeTooShort     Slug = "lead_time_too_short"
	GeoNotServed         Slug = "geo_not_served"
	FormatNotOffered     Slug = "format_not_offered"
	CategoryNotAccepted  Slug = "category_not_accepted"
	CommerciallyDeclined Slug = "commercially_declined"
)

// SuggestionKind is a kind of structured change a decline may suggest.
type SuggestionKind string

// The suggestion kinds.
const (
	RaiseBudget   SuggestionKind = "raise_budget"
	SwitchChannel SuggestionKind = "switch_channel"
	MoveFlight    SuggestionKind = "move_flight"
	LaterStart    SuggestionKind = "later_start"
	TargetMarket  SuggestionKind = "target_market"
	ChangeFormat  SuggestionKind = "change_format"
)

var kinds = []SuggestionKind{RaiseBudget, SwitchChannel, MoveFlight, LaterStart, TargetMarket, ChangeFormat}

// SuggestionKinds lists every suggestion kind, in a stable order. The
// slice is the caller's own.
func SuggestionKinds() []SuggestionKind { return slices.Clone(kinds) }

// Entry is one published decline.
type Entry struct {
	Slug Slug `json:"slug"`
	// Reason is the one-line public reason: the canned line.
	Reason string `json:"reason"`
	// Fixable says whether a buyer can change the brief to clear it.
	Fixable bool `json:"fixable"`
	// Suggests lists the suggestion kinds this decline can carry.
	Suggests []SuggestionKind `json:"suggests"`
	// LegacyCode is the error code a decline becomes for a buyer pinned
	// below 3.2, where the rejected arm does not exist.
	LegacyCode adcp.Code `json:"legacy_error_code"`
}

// clone returns e with a Suggests of its own; nil stays nil, so a final
// entry still publishes "suggests": null.
func (e Entry) clone() Entry {
	e.Suggests = slices.Clone(e.Suggests)
	return e
}

// table is the published decline vocabulary, in its stable order.
var table = []Entry{
	{BudgetBelowMinimum, "The requested budget is below the minimum for this inventory.", true,
		[]SuggestionKind{RaiseBudget, SwitchChannel}, adcp.BudgetTooLow},
	{ChannelNotOffered, "The requested channel is not offered by this seller.", true,
		[]SuggestionKind{SwitchChannel}, adcp.UnsupportedFeature},
	{FlightUnavailable, "The requested flight dates are not available.", true,
		[]SuggestionKind{MoveFlight}, adcp.ProductUnavailable},
	{LeadTimeTooShort, "The requested start date does not allow enough lead time.", true,
		[]SuggestionKind{LaterStart}, adcp.ProductUnavailable},
	{GeoNotServed, "The requested markets are not served by this seller.", true,
		[]SuggestionKind{TargetMarket}, adcp.UnsupportedFeature},
	{FormatNotOffered, "The requested creative formats are not offered for this inventory.", true,
		[]SuggestionKind{ChangeFormat}, adcp.UnsupportedFeature},
	{CategoryNotAccepted, "This advertiser category is not accepted for this inventory.", false,
		nil, adcp.PolicyViolation},
	{CommerciallyDeclined, "This seller has declined the request.", false,
		nil, adcp.PolicyViolation},
}

var bySlug = func() map[Slug]int {
	m := make(map[Slug]int, len(table))
	for i, e := range table {
		m[e.Slug] = i
	}
	return m
}()

// Vocabulary returns the published decline vocabulary, in its stable
// order. The entries are the caller's own: changing them changes nothing
// anyone else publishes.
func Vocabulary() []Entry {
	out := make([]Entry, len(table))
	for i, e := range table {
		out[i] = e.clone()
	}
	return out
}

// Lookup returns the vocabulary entry for s.
func Lookup(s Slug) (Entry, bool) {
	i, ok := bySlug[s]
	if !ok {
		return Entry{}, false
	}
	return table[i].clone(), true
}

// Known reports whether s is a published slug.
func (s Slug) Known() bool {
	_, ok := bySlug[s]
	return ok
}

// ParseSlug checks that s is a published slug.
func ParseSlug(s string) (Slug, error) {
	if !Slug(s).Known() {
		return "", fmt.Errorf("%q is not a published decline slug (want one of %s)", s, strings.Join(Slugs(), ", "))
	}
	return Slug(s), nil
}

// Slugs lists the published slugs in vocabulary order.
func Slugs() []string {
	out := make([]string, len(table))
	for i, e := range table {
		out[i] = string(e.Slug)
	}
	return out
}

// Kebab returns the slug in kebab case, as the A2A refusal extension keys
// its rules.
func (s Slug) Kebab() string { return strings.ReplaceAll(string(s), "_", "-") }

// ParseSuggestionKind checks that s is a suggestion kind.
func ParseSuggestionKind(s string) (SuggestionKind, error) {
	for _, k := range kinds {
		if string(k) == s {
			return k, nil
		}
	}
	names := make([]string, len(kinds))
	for i, k := range kinds {
		names[i] = string(k)
	}
	return "", fmt.Errorf("%q is not a suggestion kind (want one of %s)", s, strings.Join(names, ", "))
}

// Allows reports whether entry e can carry suggestions of kind k.
func (e Entry) Allows(k SuggestionKind) bool { return slices.Contains(e.Suggests, k) }
