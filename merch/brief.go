package merch

import (
	"strings"

	"github.com/storefront/storefront/adcp"
)

// Brief is a get_products request normalised into the facts rules are
// written against. The zero value of each field means the buyer did not say.
type Brief struct {
	Mode string // brief, wholesale or refine
	Text string // the brief prose, or the refine asks joined

	Channels    []string
	FormatKinds []string
	// DeliveryType is guaranteed or non_guaranteed, or "".
	DeliveryType string
	// Budget is the buyer's budget range; nil when none was given.
	Budget     *Budget
	Flight     adcp.DateRange // zero Start or End: not given
	Currencies []string
	Countries  []string

	BrandDomain string
	Industries  []string

	// Today is the evaluation date. It is part of the brief so that
	// evaluation stays a pure function of its inputs.
	Today adcp.Date
}

// Budget is the buyer's budget range in one currency.
type Budget struct {
	Min, Max *float64
	Currency string
}

// Amount is the most the buyer says it will spend: the range's max, or its
// min when no max was given.
func (b *Budget) Amount() (float64, bool) {
	if b == nil {
		return 0, false
	}
	if b.Max != nil {
		return *b.Max, true
	}
	if b.Min != nil {
		return *b.Min, true
	}
	return 0, false
}

// Clone returns a deep copy of b, so a suggestion can be tried on the copy.
func (b Brief) Clone() Brief {
	c := b
	c.Channels = append([]string(nil), b.Channels...)
	c.FormatKinds = append([]string(nil), b.FormatKinds...)
	c.Currencies = append([]string(nil), b.Currencies...)
	c.Countries = append([]string(nil), b.Countries...)
	c.Industries = append([]string(nil), b.Industries...)
	if b.Budget != nil {
		nb := *b.Budget
		if b.Budget.Min != nil {
			v := *b.Budget.Min
			nb.Min = &v
		}
		if b.Budget.Max != nil {
			v := *b.Budget.Max
			nb.Max = &v
		}
		c.Budget = &nb
	}
	return c
}

// HasFlight reports whether the buyer gave both flight dates.
func (b Brief) HasFlight() bool { return !b.Flight.Start.IsZero() && !b.Flight.End.IsZero() }

// Market is the public summary of what the catalogue carries. Rules use it to
// work out what a buyer could switch to.
type Market struct {
	Channels    []string
	FormatKinds []string
	Countries   []string
	Currencies  []string
}

func containsFold(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}

func intersect(a, b []string) []string {
	var out []string
	for _, x := range a {
		if containsFold(b, x) && !containsFold(out, x) {
			out = append(out, x)
		}
	}
	return out
}

// allIn reports whether every value of a is in b, ignoring case.
func allIn(a, b []string) bool {
	for _, x := range a {
		if !containsFold(b, x) {
			return false
		}
	}
	return true
}

func minus(a, b []string) []string {
	var out []string
	for _, x := range a {
		if !containsFold(b, x) && !containsFold(out, x) {
			out = append(out, x)
		}
	}
	return out
}
