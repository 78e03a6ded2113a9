package decline

import (
	"github.com/storefront/storefront/adcp"
	"github.com/storefront/storefront/vocab"
)

// Edit is one structured change to a brief.
type Edit struct {
	Kind       vocab.SuggestionKind
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
	level vocab.Level
}
