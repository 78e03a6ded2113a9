package decline

import (
	"fmt"

	"github.com/storefront/storefront/vocab"
)

// A disclosure is what one disclosure level lets a decline say about its
// figures. Each level has its own type, built from the facts by its own
// constructor, and a coarser type has no field that could hold a finer
// value: the composer renders from a disclosure only, never from Facts, so
// no code path can write more than the rule's level allows.
type disclosure interface {
	level() vocab.Level
	// values are the template placeholder values the level reveals.
	values() map[string]string
	// sentence is what the canned line gains at this level, if anything.
	sentence(s vocab.Slug) string
	// figures are the amounts and dates the level reveals, as formatted:
	// the screen lets them through even where a confidential id contains
	// them (see withFigures).
	figures() []string
}

// noneDisclosure reveals nothing.
type noneDisclosure struct{}

// categoryDisclosure reveals the category and public facts of the offer:
// the seller's name and what it carries. No thresholds.
type categoryDisclosure struct {
	seller, channels, markets, formats string
}

// rangeDisclosure adds thresholds rounded into coarse public buckets.
type rangeDisclosure struct {
	categoryDisclosure
	bucketMinimum, startMonth, leadBucket, openMonth string
}

// exactDisclosure adds thresholds as they are.
type exactDisclosure struct {
	categoryDisclosure
	minimum, earliestStart, leadDays, openFlight string
}

// disclose builds the disclosure for g at g.Level. It is the one function
// that reads Facts for the reason's text.
func disclose(g vocab.Grounds, v vocab.Voice) disclosure {
	if g.Level <= vocab.None {
		return noneDisclosure{}
	}
	f := g.Facts
	c := categoryDisclosure{seller: v.SellerName}
	if len(f.AlternativeChannels) > 0 {
		c.channels = mapList(f.AlternativeChannels, ChannelLabel, 4)
	}
	if len(f.ServedCountries) > 0 {
		c.markets = mapList(f.ServedCountries, countryLabel, 6)
	}
	if len(f.OfferedFormatKinds) > 0 {
		c.formats = mapList(f.OfferedFormatKinds, FormatLabel, 6)
	}
	switch g.Level {
	case vocab.Category:
		return c
	case vocab.Range:
		r := rangeDisclosure{categoryDisclosure: c}
		if f.Minimum > 0 {
			r.bucketMinimum = money(coarse(f.Minimum), f.Currency)
		}
		if !f.EarliestStart.IsZero() {
			r.startMonth = monthPart(f.EarliestStart)
			r.leadBucket = leadBucket(f.LeadDays)
		}
		if f.OpenFlight != nil {
			r.openMonth = monthPart(f.OpenFlight.Start)
		}
		return r
	}
	e := exactDisclosure{categoryDisclosure: c}
	if f.Minimum > 0 {
		e.minimum = money(exactUp(f.Minimum), f.Currency)
	}
	if !f.EarliestStart.IsZero() {
		e.earliestStart = f.EarliestStart.String()
		e.leadDays = fmt.Sprintf("%d days", f.LeadDays)
	}
	if f.OpenFlight != nil {
		e.openFlight = fmt.Sprintf("from %s to %s", f.OpenFlight.Start, f.OpenFlight.End)
	}
	return e
}

func (noneDisclosure) level() vocab.Level         { return vocab.None }
func (noneDisclosure) values() map[string]string  { return map[string]string{} }
func (noneDisclosure) sentence(vocab.Slug) string { return "" }
func (noneDisclosure) figures() []string          { return nil }
func (categoryDisclosure) figures() []string      { return nil }

func (r rangeDisclosure) figures() []string {
	return nonEmpty(r.bucketMinimum, r.startMonth, r.openMonth)
}

func (e exactDisclosure) figures() []string {
	return nonEmpty(e.minimum, e.earliestStart, e.leadDays, e.openFlight)
}

func nonEmpty(values ...string) []string {
	var out []string
	for _, v := range values {
		if v != "" {
			out = append(out, v)
		}
	}
	return out
}

func (categoryDisclosure) level() vocab.Level { return vocab.Category }

func (c categoryDisclosure) values() map[string]string {
	out := map[string]string{}
	put(out, "seller", c.seller)
	put(out, "channels", c.channels)
	put(out, "markets", c.markets)
	put(out, "formats", c.formats)
	return out
}

func (c categoryDisclosure) sentence(s vocab.Slug) string {
	switch s {
	case vocab.ChannelNotOffered:
		if c.channels != "" {
			return "Channels offered: " + c.channels + "."
		}
	case vocab.GeoNotServed:
		if c.markets != "" {
			return "Markets served: " + c.markets + "."
		}
	case vocab.FormatNotOffered:
		if c.formats != "" {
			return "Format kinds offered: " + c.formats + "."
		}
	}
	return ""
}

func (rangeDisclosure) level() vocab.Level { return vocab.Range }

func (r rangeDisclosure) values() map[string]string {
	out := r.categoryDisclosure.values()
	put(out, "minimum", r.bucketMinimum)
	put(out, "earliest_start", r.startMonth)
	put(out, "lead_time", r.leadBucket)
	if r.openMonth != "" {
		out["open_flight"] = "starting in " + r.openMonth
	}
	return out
}

func (r rangeDisclosure) sentence(s vocab.Slug) string {
	switch s {
	case vocab.BudgetBelowMinimum:
		if r.bucketMinimum != "" {
			return "Budgets of " + r.bucketMinimum + " or more fit this inventory."
		}
	case vocab.LeadTimeTooShort:
		if r.leadBucket != "" {
			return "Flights need " + r.leadBucket + " of lead time."
		}
	case vocab.FlightUnavailable:
		if r.openMonth != "" {
			return "Flights of the same length starting in " + r.openMonth + " are open."
		}
	}
	return r.categoryDisclosure.sentence(s)
}

func (exactDisclosure) level() vocab.Level { return vocab.Exact }

func (e exactDisclosure) values() map[string]string {
	out := e.categoryDisclosure.values()
	put(out, "minimum", e.minimum)
	put(out, "earliest_start", e.earliestStart)
	put(out, "lead_time", e.leadDays)
	put(out, "open_flight", e.openFlight)
	return out
}

func (e exactDisclosure) sentence(s vocab.Slug) string {
	switch s {
	case vocab.BudgetBelowMinimum:
		if e.minimum != "" {
			return "The minimum for this inventory is " + e.minimum + "."
		}
	case vocab.LeadTimeTooShort:
		if e.earliestStart != "" {
			return "Flights must start on or after " + e.earliestStart + "."
		}
	case vocab.FlightUnavailable:
		if e.openFlight != "" {
			return "The same flight length is open " + e.openFlight + "."
		}
	}
	return e.categoryDisclosure.sentence(s)
}

var countryNames = map[string]string{
	"US": "the United States", "CA": "Canada", "GB": "the United Kingdom",
	"IE": "Ireland", "AU": "Australia", "NZ": "New Zealand", "DE": "Germany",
	"FR": "France", "ES": "Spain", "IT": "Italy", "NL": "the Netherlands",
	"BE": "Belgium", "SE": "Sweden", "NO": "Norway", "DK": "Denmark",
	"FI": "Finland", "MX": "Mexico", "BR": "Brazil", "JP": "Japan",
	"IN": "India", "SG": "Singapore",
}

func countryLabel(code string) string {
	if n, ok := countryNames[code]; ok {
		return n
	}
	return code
}

// put sets a placeholder value, leaving out what a level does not have.
func put(out map[string]string, k, v string) {
	if v != "" {
		out[k] = v
	}
}
