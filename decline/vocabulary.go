package decline

import (
	"fmt"
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

// SuggestionKinds lists every suggestion kind, in a stable order.
var SuggestionKinds = []SuggestionKind{RaiseBudget, SwitchChannel, MoveFlight, LaterStart, TargetMarket, ChangeFormat}

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

// Vocabulary is the published decline vocabulary, in its stable order.
var Vocabulary = []Entry{
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

var bySlug = func() map[Slug]Entry {
	m := make(map[Slug]Entry, len(Vocabulary))
	for _, e := range Vocabulary {
		m[e.Slug] = e
	}
	return m
}()

// Lookup returns the vocabulary entry for s.
func Lookup(s Slug) (Entry, bool) {
	e, ok := bySlug[s]
	return e, ok
}

// ParseSlug checks that s is a published slug.
func ParseSlug(s string) (Slug, error) {
	if _, ok := bySlug[Slug(s)]; !ok {
		return "", fmt.Errorf("%q is not a published decline slug (want one of %s)", s, strings.Join(Slugs(), ", "))
	}
	return Slug(s), nil
}

// Slugs lists the published slugs in vocabulary order.
func Slugs() []string {
	out := make([]string, len(Vocabulary))
	for i, e := range Vocabulary {
		out[i] = string(e.Slug)
	}
	return out
}

// Kebab returns the slug in kebab case, as the A2A refusal extension keys
// its rules.
func (s Slug) Kebab() string { return strings.ReplaceAll(string(s), "_", "-") }

// ParseSuggestionKind checks that s is a suggestion kind.
func ParseSuggestionKind(s string) (SuggestionKind, error) {
	for _, k := range SuggestionKinds {
		if string(k) == s {
			return k, nil
		}
	}
	names := make([]string, len(SuggestionKinds))
	for i, k := range SuggestionKinds {
		names[i] = string(k)
	}
	return "", fmt.Errorf("%q is not a suggestion kind (want one of %s)", s, strings.Join(names, ", "))
}

// Allows reports whether entry e can carry suggestions of kind k.
func (e Entry) Allows(k SuggestionKind) bool {
	for _, x := range e.Suggests {
		if x == k {
			return true
		}
	}
	return false
}
