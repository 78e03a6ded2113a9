package products

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"sort"
	"strings"

	"github.com/storefront/storefront/adcp"
	"github.com/storefront/storefront/sanitize"
)

// Match is the catalogue's answer to a request before pagination.
type Match struct {
	// Ranked are the products that passed every filter, best first.
	Ranked []*entry
	// Excluded counts, per filter name, the products that filter alone
	// excluded.
	Excluded map[string]int
	// Considered is the number of products before filtering.
	Considered int
	// terms are the brief terms, for brief_relevance.
	terms map[string]bool
}

// filter is one structured filter: it reports whether a product passes.
type filter struct {
	name string
	pass func(e *entry) bool
}

// filters builds the structured filters of f. Every filter excludes what
// does not match ("filter, don't fail").
func filters(f Filters, geo []string) []filter {
	var out []filter
	add := func(name string, pass func(*entry) bool) { out = append(out, filter{name, pass}) }
	if len(f.Channels) > 0 {
		add("channels", func(e *entry) bool { return overlaps(e.p.Channels, f.Channels) })
	}
	if len(f.FormatKinds) > 0 {
		add("format_kinds", func(e *entry) bool { return overlaps(e.kinds, f.FormatKinds) })
	}
	if f.DeliveryType != "" {
		add("delivery_type", func(e *entry) bool { return e.p.DeliveryType == f.DeliveryType })
	}
	if b := f.Budget; b != nil && b.Max != nil {
		add("budget_range", func(e *entry) bool {
			min, ok := e.p.MinSpend(b.Currency)
			return ok && min <= *b.Max
		})
	} else if b != nil {
		add("budget_range", func(e *entry) bool {
			_, ok := e.p.MinSpend(b.Currency)
			return ok
		})
	}
	if !f.StartDate.IsZero() || !f.EndDate.IsZero() {
		want := adcp.DateRange{Start: f.StartDate, End: f.EndDate}
		if want.Start.IsZero() {
			want.Start = want.End
		}
		if want.End.IsZero() {
			want.End = want.Start
		}
		name := "start_date"
		if f.StartDate.IsZero() {
			name = "end_date"
		}
		add(name, func(e *entry) bool { return bookable(e.p, want) })
	}
	if len(f.PricingCurrencies) > 0 {
		add("pricing_currencies", func(e *entry) bool {
			for _, po := range e.p.PricingOptions {
				if oneOf(f.PricingCurrencies, po.Currency) {
					return true
				}
			}
			return false
		})
	}
	countries := geo
	name := "targeting_overlay.geo_countries"
	if len(countries) == 0 {
		countries, name = f.Countries, "countries"
	}
	if len(countries) > 0 {
		add(name, func(e *entry) bool { return overlaps(e.p.Countries, countries) })
	}
	if f.IsFixedPrice != nil {
		want := *f.IsFixedPrice
		add("is_fixed_price", func(e *entry) bool {
			for _, po := range e.p.PricingOptions {
				if (po.FixedPrice != nil) == want {
					return true
				}
			}
			return false
		})
	}
	if len(f.PricingStructures) > 0 {
		add("pricing_structures", func(e *entry) bool {
			for _, po := range e.p.PricingOptions {
				if (po.FixedPrice != nil && oneOf(f.PricingStructures, "fixed")) ||
					(po.FloorPrice != nil && oneOf(f.PricingStructures, "auction")) {
					return true
				}
			}
			return false
		})
	}
	if f.Exclusivity != "" {
		add("exclusivity", func(e *entry) bool {
			ex := e.p.Exclusivity
			if ex == "" {
				ex = "none"
			}
			return ex == f.Exclusivity
		})
	}
	if len(f.VideoPlacementTypes) > 0 {
		add("video_placement_types", func(e *entry) bool { return overlaps(e.p.VideoPlacementTypes, f.VideoPlacementTypes) })
	}
	if len(f.AudioDistributionTypes) > 0 {
		add("audio_distribution_types", func(e *entry) bool { return overlaps(e.p.AudioDistributionTypes, f.AudioDistributionTypes) })
	}
	if len(f.RequiredMetrics) > 0 {
		add("required_metrics", func(e *entry) bool {
			for _, m := range f.RequiredMetrics {
				if !oneOf(e.p.ReportingCapabilities.AvailableMetrics, m) {
					return false
				}
			}
			return true
		})
	}
	if f.StandardFormatsOnly {
		add("standard_formats_only", func(e *entry) bool { return !oneOf(e.kinds, "custom") })
	}
	for _, u := range f.Unmodelled {
		add(u, func(*entry) bool { return false })
	}
	return out
}

// bookable reports whether the product can be booked for every day of r.
func bookable(p Product, r adcp.DateRange) bool {
	if len(p.Availability) == 0 {
		return true
	}
	for _, w := range p.Availability {
		if !r.Start.Before(w.Start) && !r.End.After(w.End) {
			return true
		}
	}
	return false
}

func overlaps(a, b []string) bool {
	for _, x := range a {
		if oneOf(b, x) {
			return true
		}
	}
	return false
}

// Find filters and ranks the catalogue for a request. text is the brief
// prose (or refine asks); curate keeps only products the text is relevant to
// when any is.
func (c *Catalogue) Find(f Filters, geo []string, text string, curate bool) Match {
	fs := filters(f, geo)
	m := Match{Considered: len(c.entries), Excluded: map[string]int{}, terms: briefTerms(text)}
	type scored struct {
		e     *entry
		score int
		idx   int
	}
	var kept []scored
	for i, e := range c.entries {
		if len(e.p.PricingOptions) == 0 {
			// A seeded fixture still waiting for its price cannot be
			// bought, so it is not offered.
			continue
		}
		failed := -1
		failures := 0
		for j, fl := range fs {
			if !fl.pass(e) {
				failures++
				if failed < 0 {
					failed = j
				}
			}
		}
		if failures == 1 {
			m.Excluded[fs[failed].name]++
		}
		if failures > 0 {
			continue
		}
		kept = append(kept, scored{e, score(e, m.terms), i})
	}
	if curate && len(m.terms) > 0 {
		relevant := kept[:0:0]
		for _, s := range kept {
			if s.score > 0 {
				relevant = append(relevant, s)
			}
		}
		if len(relevant) > 0 {
			kept = relevant
		}
	}
	sort.SliceStable(kept, func(i, j int) bool {
		if kept[i].score != kept[j].score {
			return kept[i].score > kept[j].score
		}
		return kept[i].idx < kept[j].idx
	})
	for _, s := range kept {
		m.Ranked = append(m.Ranked, s.e)
	}
	return m
}

func briefTerms(text string) map[string]bool {
	t := map[string]bool{}
	for _, w := range words(text) {
		if len(w) >= 3 && !stopwords[w] {
			t[w] = true
		}
	}
	return t
}

func score(e *entry, terms map[string]bool) int {
	s := 0
	for t := range terms {
		s += e.terms[t]
	}
	return s
}

// relevance lists the brief terms a product matched, for brief_relevance.
func relevance(e *entry, terms map[string]bool) []string {
	var out []string
	for t := range terms {
		if e.terms[t] > 0 {
			out = append(out, t)
		}
	}
	sort.Strings(out)
	if len(out) > 8 {
		out = out[:8]
	}
	return out
}

// cursor is the opaque pagination token: the offset of the next page and a
// fingerprint of the query and snapshot, so a cursor cannot be replayed
// against a different query or a changed catalogue.
type cursor struct {
	offset      int
	fingerprint [8]byte
}

var errBadCursor = errors.New("pagination.cursor is not a cursor this storefront issued for this query")

func fingerprint(parts ...[]byte) [8]byte {
	h := sha256.New()
	for _, p := range parts {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(p)))
		h.Write(n[:])
		h.Write(p)
	}
	var out [8]byte
	copy(out[:], h.Sum(nil))
	return out
}

func (c cursor) encode() string {
	var b [12]byte
	binary.BigEndian.PutUint32(b[:4], uint32(c.offset))
	copy(b[4:], c.fingerprint[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

func decodeCursor(s string, fp [8]byte) (int, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) != 12 || !bytes.Equal(b[4:], fp[:]) {
		return 0, errBadCursor
	}
	return int(binary.BigEndian.Uint32(b[:4])), nil
}

// project encodes one product with the requested fields (all when fields
// is empty; product_id and name always), pricing options narrowed to the
// requested currencies, and brief_relevance when the brief matched.
func project(e *entry, fields []string, currencies []string, rel []string, screen *sanitize.Screen) json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('{')
	n := 0
	write := func(name string, raw []byte) {
		if n > 0 {
			b.WriteByte(',')
		}
		n++
		k, _ := json.Marshal(name)
		b.Write(k)
		b.WriteByte(':')
		b.Write(raw)
	}
	want := func(name string) bool {
		return len(fields) == 0 || name == "product_id" || name == "name" || oneOf(fields, name)
	}
	for _, f := range e.fields {
		if !want(f.name) {
			continue
		}
		if f.name == "pricing_options" && len(currencies) > 0 {
			var kept []PricingOption
			for _, po := range e.p.PricingOptions {
				if oneOf(currencies, po.Currency) {
					kept = append(kept, po)
				}
			}
			raw, _ := json.Marshal(kept)
			write(f.name, raw)
			continue
		}
		write(f.name, f.raw)
	}
	if len(rel) > 0 && want("brief_relevance") {
		if s, ok := screen.Line("Matches brief terms: "+strings.Join(rel, ", ")+".", 500); ok {
			raw, _ := json.Marshal(s)
			write("brief_relevance", raw)
		}
	}
	b.WriteByte('}')
	return b.Bytes()
}
