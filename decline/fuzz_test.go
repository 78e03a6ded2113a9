package decline

import (
	"github.com/storefront/storefront/vocab"
	"math"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/storefront/storefront/adcp"
	"github.com/storefront/storefront/sanitize"
)

// FuzzCompose builds grounds, voice and verification from arbitrary input
// and checks the composer's promises: it never panics, the reason is never
// empty, the limits hold, nothing is offered without verification, level
// none reveals nothing, and nothing that leaves names a deny-listed term.
func FuzzCompose(f *testing.F) {
	f.Add(uint8(0), uint8(2), uint8(3), uint8(3), 3200.0, "ctv,display", "US", "image", int16(1), uint8(6), int16(3), uint8(1), "Northwind Media", "Budgets of {{minimum}} or more fit {{seller}}.", "", uint16(0xffff))
	f.Add(uint8(2), uint8(3), uint8(3), uint8(4), 0.0, "ctv", "", "", int16(20), uint8(8), int16(0), uint8(2), "", "", "", uint16(1))
	f.Add(uint8(4), uint8(1), uint8(1), uint8(16), 0.0, "", "DE,FR", "", int16(0), uint8(0), int16(0), uint8(0), "Seller", "We serve {{markets}}.", "Forced MR-2291-CTV-FLOOR reason.", uint16(0))
	f.Add(uint8(7), uint8(0), uint8(3), uint8(255), math.Inf(1), "", "", "", int16(-5), uint8(255), int16(400), uint8(3), "MR-2291-CTV-FLOOR", "{{lead_time}} {{open_flight}}", "", uint16(0xaaaa))
	screen := sanitize.New(sanitize.NewDenyList([]sanitize.Term{
		{Value: "MR-2291-CTV-FLOOR", Kind: sanitize.KindRuleID},
		{Value: "Acme Retail Group", Kind: sanitize.KindNoteTerm},
	}, nil))
	today := adcp.MustDate("2026-11-29")
	entries, tones := vocab.Vocabulary(), vocab.Tones()
	split := func(s string) []string {
		if s == "" {
			return nil
		}
		return strings.Split(s, ",")
	}
	f.Fuzz(func(t *testing.T, slug, level, capLevel, allowed uint8, minimum float64, channels, countries, formats string,
		startOff int16, days uint8, earliestOff int16, tone uint8, seller, template, forced string, verifyMask uint16) {
		s := entries[int(slug)%len(entries)].Slug
		var kinds []vocab.SuggestionKind
		for i, k := range vocab.SuggestionKinds() {
			if allowed&(1<<i) != 0 {
				kinds = append(kinds, k)
			}
		}
		start := today.AddDays(int(startOff))
		facts := vocab.Facts{
			Currency: "USD", Budget: 100, Minimum: minimum,
			Channels: split(channels), AlternativeChannels: split(channels),
			Flight:        adcp.DateRange{Start: start, End: start.AddDays(int(days))},
			EarliestStart: today.AddDays(int(earliestOff)), LeadDays: int(earliestOff),
			Countries: split(countries), ServedCountries: split(countries),
			FormatKinds: split(formats), OfferedFormatKinds: split(formats),
		}
		if days%3 == 0 {
			open := adcp.DateRange{Start: start.AddDays(30), End: start.AddDays(30 + int(days))}
			facts.OpenFlight = &open
		}
		g := vocab.Grounds{Slug: s, Level: vocab.Level(int(level) % 5), Allowed: kinds, Facts: facts}
		second := g
		second.Slug = entries[int(slug+3)%len(entries)].Slug
		in := Input{
			Grounds: []vocab.Grounds{g, second},
			Voice:   vocab.Voice{SellerName: seller, Tone: tones[int(tone)%len(tones)], Templates: map[vocab.Slug]string{s: template}},
			Cap:     vocab.Level(int(capLevel) % 4),
		}
		calls := 0
		if verifyMask != 0 {
			in.Verify = func(Change) bool {
				calls++
				return verifyMask&(1<<(calls%16)) != 0
			}
		}
		if forced != "" {
			in.Forced = &Forced{Reason: forced, Suggestions: strings.Split(forced, ".")}
		}

		c := Compose(in, screen)

		r := c.Reason.String()
		if r == "" {
			t.Fatal("empty reason")
		}
		if n := utf8.RuneCountInString(r); n > sanitize.MaxReason {
			t.Errorf("reason is %d characters", n)
		}
		if screen.Names(r) {
			t.Errorf("reason %q names a deny-listed term", r)
		}
		if len(c.Suggestions) > sanitize.MaxSuggestions {
			t.Errorf("%d suggestions", len(c.Suggestions))
		}
		for _, sg := range c.Suggestions {
			if sg.IsZero() || utf8.RuneCountInString(sg.String()) > sanitize.MaxSuggestion || screen.Names(sg.String()) {
				t.Errorf("bad suggestion %q", sg)
			}
		}
		if _, ok := vocab.Lookup(c.Slug); !ok {
			t.Errorf("slug %q is not in the vocabulary", c.Slug)
		}
		if c.Level > in.Cap && in.Forced == nil {
			t.Errorf("level %s above the cap %s", c.Level, in.Cap)
		}
		if c.Checks > MaxChecks || calls != c.Checks {
			t.Errorf("Checks = %d, Verify called %d times, bound %d", c.Checks, calls, MaxChecks)
		}
		if in.Forced == nil {
			if in.Verify == nil && len(c.Suggestions) > 0 {
				t.Errorf("suggestions %v offered without verification", c.Suggestions)
			}
			if len(c.Offered) != len(c.Suggestions) {
				t.Errorf("%d offered changes for %d suggestions", len(c.Offered), len(c.Suggestions))
			}
			if g.Level.Cap(in.Cap) == vocab.None && second.Level.Cap(in.Cap) == vocab.None &&
				(c.Slug != vocab.CommerciallyDeclined || len(c.Suggestions) > 0) {
				t.Errorf("level none revealed %s with %d suggestions", c.Slug, len(c.Suggestions))
			}
		}
	})
}
