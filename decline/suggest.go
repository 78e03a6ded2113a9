package decline

import (
	"github.com/storefront/storefront/vocab"
	"strings"

	"github.com/storefront/storefront/sanitize"
)

// candidates lists the changes that could clear one fired rule, best first,
// limited to the kinds the rule allows. Values are concrete: a change is
// what gets verified, whatever its text reveals.
func candidates(g vocab.Grounds, v vocab.Voice) []Change {
	f := g.Facts
	d := disclose(g, v)
	var out []Change
	add := func(e Edit) {
		e.clause = clause(e, d)
		for _, f := range d.figures() {
			e.figures += f + "\x00"
		}
		out = append(out, Change{Edits: []Edit{e}, level: g.Level})
	}
	for _, k := range g.Allowed {
		switch k {
		case vocab.RaiseBudget:
			if f.Minimum > 0 && f.Currency != "" {
				amount := exactUp(f.Minimum)
				if g.Level < vocab.Exact {
					amount = coarse(f.Minimum)
				}
				add(Edit{Kind: vocab.RaiseBudget, Budget: amount, Currency: f.Currency})
			}
		case vocab.SwitchChannel:
			for i, ch := range f.AlternativeChannels {
				if i == 2 {
					break
				}
				add(Edit{Kind: vocab.SwitchChannel, Channel: ch})
			}
		case vocab.MoveFlight:
			if f.OpenFlight != nil {
				add(Edit{Kind: vocab.MoveFlight, Flight: *f.OpenFlight})
			}
		case vocab.LaterStart:
			if !f.EarliestStart.IsZero() && !f.Flight.Start.IsZero() {
				r := f.Flight
				shift := r.Start.DaysUntil(f.EarliestStart)
				r.Start = f.EarliestStart
				if !r.End.IsZero() {
					r.End = r.End.AddDays(shift)
				}
				add(Edit{Kind: vocab.LaterStart, Flight: r})
			}
		case vocab.TargetMarket:
			for i, c := range f.ServedCountries {
				if i == 2 {
					break
				}
				add(Edit{Kind: vocab.TargetMarket, Country: c})
			}
		case vocab.ChangeFormat:
			for i, k := range f.OfferedFormatKinds {
				if i == 2 {
					break
				}
				add(Edit{Kind: vocab.ChangeFormat, FormatKind: k})
			}
		}
	}
	return out
}

// verified builds candidate changes and keeps those Verify confirms, within
// MaxChecks. When several rules fired, one change must clear them all, so
// the first candidate of each visible rule is combined into one compound
// change and tried first. A rule the buyer may learn nothing about (level
// none) contributes no candidate, so unless some other change happens to
// clear it, nothing is offered.
func verified(visible []vocab.Grounds, v vocab.Voice, verify func(Change) bool) ([]Change, int) {
	if verify == nil || len(visible) == 0 {
		return nil, 0
	}
	var tries []Change
	if len(visible) > 1 {
		compound := Change{level: vocab.Exact}
		kinds := map[vocab.SuggestionKind]bool{}
		for _, g := range visible {
			c := candidates(g, v)
			if len(c) == 0 {
				continue
			}
			e := c[0].Edits[0]
			if kinds[e.Kind] {
				continue
			}
			kinds[e.Kind] = true
			compound.Edits = append(compound.Edits, e)
			compound.level = compound.level.Cap(g.Level)
		}
		if len(compound.Edits) > 1 {
			tries = append(tries, compound)
		}
	}
	for _, g := range visible {
		tries = append(tries, candidates(g, v)...)
	}
	var ok []Change
	checks := 0
	tried := map[string]bool{}
	for _, c := range tries {
		if checks == MaxChecks || len(ok) == maxOffered {
			break
		}
		// Two rules can propose the same change; verifying it twice
		// would spend the bound for nothing.
		if t := c.Text(); tried[t] {
			continue
		} else {
			tried[t] = true
		}
		checks++
		if verify(c) {
			ok = append(ok, c)
		}
	}
	return ok, checks
}

// Text renders the change as a sentence that says what it would do. Each
// edit's words were written from its rule's disclosure when the change was
// made, so a change cannot say more than that level allows.
func (c Change) Text() string {
	clauses := make([]string, 0, len(c.Edits))
	for _, e := range c.Edits {
		cl := e.clause
		if cl == "" {
			// A change not made by the composer has no disclosure to
			// speak from: word it at category level, which names no
			// figure.
			cl = clause(e, categoryDisclosure{})
		}
		clauses = append(clauses, cl)
	}
	return capitalise(list(clauses)) + " would fit this brief."
}

// textWithFigures is Text with each of its figures replaced by a
// sanitize.Slot, and the figures in order.
func (c Change) textWithFigures() (string, []sanitize.Figure) {
	var figs []string
	for _, e := range c.Edits {
		figs = append(figs, strings.Split(strings.TrimSuffix(e.figures, "\x00"), "\x00")...)
	}
	return withFigures(c.Text(), figs)
}

// Level is the disclosure level the change is rendered at.
func (c Change) Level() vocab.Level { return c.level }

// clause words one edit from a disclosure. Figures come from the
// disclosure, whose type holds only what its level reveals; the edit's own
// values are for verification.
func clause(e Edit, d disclosure) string {
	switch e.Kind {
	case vocab.RaiseBudget:
		switch d := d.(type) {
		case exactDisclosure:
			if d.minimum != "" {
				return "a budget of at least " + d.minimum
			}
		case rangeDisclosure:
			if d.bucketMinimum != "" {
				return "a budget of " + d.bucketMinimum + " or more"
			}
		}
		return "a larger budget"
	case vocab.SwitchChannel:
		return ChannelLabel(e.Channel) + " inventory"
	case vocab.MoveFlight:
		switch d := d.(type) {
		case exactDisclosure:
			if d.openFlight != "" {
				return "a flight " + d.openFlight
			}
		case rangeDisclosure:
			if d.openMonth != "" {
				return "a flight of the same length starting in " + d.openMonth
			}
		}
		return "different flight dates"
	case vocab.LaterStart:
		switch d := d.(type) {
		case exactDisclosure:
			if d.earliestStart != "" {
				return "a start on or after " + d.earliestStart
			}
		case rangeDisclosure:
			if d.startMonth != "" {
				return "a start in " + d.startMonth
			}
		}
		return "a later start date"
	case vocab.TargetMarket:
		return "targeting " + countryLabel(e.Country)
	case vocab.ChangeFormat:
		return strings.TrimSpace(FormatLabel(e.FormatKind)) + " creative"
	}
	return ""
}
