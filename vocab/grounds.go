package vocab

import (
	"slices"

	"github.com/storefront/storefront/adcp"
)

// Grounds are the public grounds of one fired rule: what the rulebook hands
// the composer. There is deliberately no field for a rule's id, name or
// notes.
type Grounds struct {
	Slug  Slug
	Level Level
	// Allowed lists the suggestion kinds the rule permits, already
	// narrowed to those the slug can carry.
	Allowed []SuggestionKind
	Facts   Facts
}

// Allows reports whether g permits suggestions of kind k.
func (g Grounds) Allows(k SuggestionKind) bool { return slices.Contains(g.Allowed, k) }

// Facts are the figures behind a decline that a disclosure level may reveal.
// Every field is optional. They are either the buyer's own (its budget, its
// flight) or public terms of the offer (a minimum budget, the channels
// carried, the markets served).
type Facts struct {
	Currency string
	Budget   float64 // the buyer's budget, when known
	Minimum  float64 // the minimum budget that applies, when the rule has one

	Channels            []string // channels the buyer asked for
	AlternativeChannels []string // channels the buyer could switch to

	Flight        adcp.DateRange  // the buyer's flight
	OpenFlight    *adcp.DateRange // an open flight of the same length
	EarliestStart adcp.Date       // the first start date that satisfies the lead time
	LeadDays      int

	Countries       []string // markets the buyer asked for
	ServedCountries []string

	FormatKinds        []string // format kinds the buyer asked for
	OfferedFormatKinds []string
}
