package decline

import "github.com/storefront/storefront/adcp"

// Grounds are the public grounds of one fired rule: what the composer may
// work from. There is deliberately no field for a rule's id, name or notes.
type Grounds struct {
	Slug  Slug
	Level Level
	// Allowed lists the suggestion kinds the rule permits, already
	// narrowed to those the slug can carry.
	Allowed []SuggestionKind
	Facts   Facts
}

// Allows reports whether g permits suggestions of kind k.
func (g Grounds) Allows(k SuggestionKind) bool {
	for _, x := range g.Allowed {
		if x == k {
			return true
		}
	}
	return false
}

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

// Edit is one structured change to a brief.
type Edit struct {
	Kind       SuggestionKind
	Budget     float64        // raise_budget: the new budget
	Currency   string         // raise_budget
	Channel    string         // switch_channel
	Flight     adcp.DateRange // move_flight, later_start
	Country    string         // target_market
	FormatKind string         // change_format
	// clause is the edit in words, written from its rule's disclosure.
	clause string
	// figures are the disclosure's formatted figures the clause may use,
	// each ended by a NUL (a string keeps Edit comparable).
	figures string
}

// Change is a suggestion as structure: the edits that, applied together to
// the brief, are claimed to clear the decline. A change is offered only
// after it has been verified.
type Change struct {
	Edits []Edit
	// level is the disclosure level the change's text is rendered at.
	level Level
}
