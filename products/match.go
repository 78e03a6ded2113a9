package products

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math/bits"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/storefront/storefront/adcp"
	"github.com/storefront/storefront/internal/jsonesc"
	"github.com/storefront/storefront/sanitize"
)

// Match is the catalogue's answer to a request before pagination.
type Match struct {
	// Excluded counts, per filter name, the products that filter alone
	// excluded.
	Excluded map[string]int
	// Considered is the number of products before filtering.
	Considered int
	// Total is the number of products in the answer, over every page.
	Total int
	// found are the brief's terms the catalogue has, in order of the
	// words, for the scores and brief_relevance.
	found []*term

	c *Catalogue
	// ranked are the matching products the brief scored; nil when it
	// scored none.
	ranked *scores
	// rest are the matching products the brief did not score, in
	// catalogue order after every scored one; nil when the answer keeps
	// only relevant products.
	rest bitset
	// scratch holds rest and the scores' words until Release.
	scratch *scratch
}

// scratch is the words a match's bit sets and score planes are carved
// from: one buffer per request, pooled, so that a brief over a large
// catalogue does not allocate its sets anew on every call.
type scratch struct{ buf []uint64 }

var scratches = sync.Pool{New: func() any { return new(scratch) }}

// take returns n zeroed words, newly allocated from a nil scratch. When
// the buffer is full a larger one replaces it; the words taken before
// keep the old one.
func (s *scratch) take(n int) []uint64 {
	if s == nil {
		return make([]uint64, n)
	}
	if len(s.buf)+n > cap(s.buf) {
		s.buf = make([]uint64, 0, max(2*cap(s.buf), n, 512))
	}
	out := s.buf[len(s.buf) : len(s.buf)+n]
	s.buf = s.buf[:len(s.buf)+n]
	clear(out)
	return out
}

// set returns an empty set of n products.
func (s *scratch) set(n int) bitset { return bitset(s.take((n + 63) / 64)) }

// copyOf returns a copy of b.
func (s *scratch) copyOf(b bitset) bitset {
	out := bitset(s.take(len(b)))
	copy(out, b)
	return out
}

// Release hands the match's words back for the next request. The match
// must not be read afterwards; what Page returned stays valid.
func (m *Match) Release() {
	if m.scratch == nil {
		return
	}
	m.scratch.buf = m.scratch.buf[:0]
	scratches.Put(m.scratch)
	m.scratch, m.ranked, m.rest = nil, nil, nil
}

// filter is one structured filter: the products that pass it.
type filter struct {
	name string
	pass bitset
}

// filters builds the structured filters of f as sets of the products each
// one passes. Every filter excludes what does not match ("filter, don't
// fail").
func (c *Catalogue) filters(f Filters, geo []string, sc *scratch) []filter {
	x := c.index
	var out []filter
	add := func(name string, pass bitset) { out = append(out, filter{name, pass}) }
	if len(f.Channels) > 0 {
		add("channels", x.any(sc, x.channel, f.Channels))
	}
	if len(f.FormatKinds) > 0 {
		add("format_kinds", x.any(sc, x.kind, f.FormatKinds))
	}
	if len(f.FormatOptionRefs) > 0 {
		add("format_option_refs", c.formatOptionPass(sc, f.FormatOptionRefs))
	}
	if len(f.FormatIDs) > 0 {
		add("format_ids", c.formatIDPass(sc, f.FormatIDs))
	}
	if f.DeliveryType != "" {
		add("delivery_type", x.one(sc, x.delivery, f.DeliveryType))
	}
	if b := f.Budget; b != nil {
		add("budget_range", x.within(sc, b.Currency, b.Max))
	}
	if want, name, ok := flightFilter(f); ok {
		pass := sc.copyOf(x.all)
		for _, i := range x.windowed {
			if !bookable(c.entries[i].p, want) {
				pass.clear(i)
			}
		}
		add(name, pass)
	}
	if len(f.PricingCurrencies) > 0 {
		add("pricing_currencies", c.currencyPass(sc, f.PricingCurrencies))
	}
	countries := geo
	name := "targeting_overlay.geo_countries"
	if len(countries) == 0 {
		countries, name = f.Countries, "countries"
	}
	if len(countries) > 0 {
		add(name, x.any(sc, x.country, countries))
	}
	if f.IsFixedPrice != nil {
		if *f.IsFixedPrice {
			add("is_fixed_price", sc.copyOf(x.fixed))
		} else {
			add("is_fixed_price", sc.copyOf(x.unfixed))
		}
	}
	if len(f.PricingStructures) > 0 {
		pass := sc.set(x.n)
		if oneOf(f.PricingStructures, "fixed") {
			pass.or(x.fixed)
		}
		if oneOf(f.PricingStructures, "auction") {
			pass.or(x.auction)
		}
		add("pricing_structures", pass)
	}
	if f.Exclusivity != "" {
		add("exclusivity", x.one(sc, x.exclusivity, f.Exclusivity))
	}
	if len(f.VideoPlacementTypes) > 0 {
		add("video_placement_types", x.any(sc, x.placement, f.VideoPlacementTypes))
	}
	if len(f.AudioDistributionTypes) > 0 {
		add("audio_distribution_types", x.any(sc, x.audio, f.AudioDistributionTypes))
	}
	if len(f.RequiredMetrics) > 0 {
		pass := sc.copyOf(x.all)
		for _, m := range f.RequiredMetrics {
			pass.and(x.one(sc, x.metric, m))
		}
		add("required_metrics", pass)
	}
	if f.StandardFormatsOnly {
		add("standard_formats_only", x.not(sc, x.custom))
	}
	for _, u := range f.Unmodelled {
		add(u, sc.set(x.n))
	}
	return out
}

// flightFilter is the flight the dates of f ask for, and the filter's name:
// a single date stands for a one-day flight.
func flightFilter(f Filters) (adcp.DateRange, string, bool) {
	if f.StartDate.IsZero() && f.EndDate.IsZero() {
		return adcp.DateRange{}, "", false
	}
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
	return want, name, true
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

// passing returns the priced products that pass every filter, and counts
// into excluded, per filter, the priced products that filter alone
// excluded. It goes a word of 64 products at a time: what passes the
// filters before each one and what passes those after it are words, not
// sets, so the one set it makes is the answer.
func (c *Catalogue) passing(fs []filter, excluded map[string]int, sc *scratch) bitset {
	out := sc.copyOf(c.index.priced)
	if excluded == nil {
		for _, f := range fs {
			out.and(f.pass)
		}
		return out
	}
	alone := make([]int, len(fs))
	// after[j] is the word of what passes filters j.. .
	after := make([]uint64, len(fs)+1)
	after[len(fs)] = ^uint64(0)
	for w, before := range out {
		for j := len(fs) - 1; j >= 0; j-- {
			after[j] = after[j+1] & fs[j].pass[w]
		}
		for j, f := range fs {
			alone[j] += bits.OnesCount64(before & after[j+1] &^ f.pass[w])
			before &= f.pass[w]
		}
		out[w] = before
	}
	for j, n := range alone {
		if n > 0 {
			excluded[fs[j].name] += n
		}
	}
	return out
}

// Offers reports whether the product with id passes the filters, as
// get_products would judge it; when it does not, it names the first filter
// that excludes it ("" for an unknown or unpriced product). A media buy
// uses it so that a package is never bought on terms discovery would not
// have offered the product for.
func (c *Catalogue) Offers(id string, f Filters, geo []string) (bool, string) {
	for i, e := range c.entries {
		if e.p.ProductID != id {
			continue
		}
		if !c.index.priced.has(i) {
			return false, ""
		}
		for _, fl := range c.filters(f, geo, nil) {
			if !fl.pass.has(i) {
				return false, fl.name
			}
		}
		return true, ""
	}
	return false, ""
}

// Any reports whether any product passes the filters: what a suggestion
// check needs, without ranking.
func (c *Catalogue) Any(f Filters, geo []string) bool {
	return c.passing(c.filters(f, geo, nil), nil, nil).any()
}

// Find filters and ranks the catalogue for a request. text is the brief
// prose (or refine asks); curate keeps only products the text is relevant to
// when any is; omit lists product ids the buyer asked to leave out.
func (c *Catalogue) Find(f Filters, geo []string, text string, curate bool, omit map[string]bool) *Match {
	m := &Match{Considered: len(c.entries), Excluded: map[string]int{}, found: c.foundTerms(briefTerms(text)), c: c, scratch: scratches.Get().(*scratch)}
	pass := c.passing(c.filters(f, geo, m.scratch), m.Excluded, m.scratch)
	if len(m.found) > 0 {
		m.ranked = c.score(pass, m.found, m.scratch)
	}
	// Whether to keep only relevant products is decided before the
	// buyer's omissions: omitting every relevant product leaves none,
	// rather than turning the answer into the irrelevant rest.
	curated := curate && m.ranked != nil && m.ranked.n > 0
	for id := range omit {
		if i, ok := c.index.byID[id]; ok {
			pass.clear(i)
			if m.ranked != nil {
				m.ranked.forget(i)
			}
		}
	}
	scored := 0
	if m.ranked != nil {
		scored = m.ranked.n
	}
	if curated {
		m.Total = scored
		return m
	}
	m.rest = pass
	if m.ranked != nil {
		m.rest.andNot(m.ranked.scored)
	}
	m.Total = scored + m.rest.count()
	return m
}

// Page returns the products ranked offset to offset+n-1: scored products
// best first, then unscored ones in catalogue order. Only the ranking the
// page reaches is read.
func (m *Match) Page(offset, n int) []*entry {
	if offset < 0 || n <= 0 || offset >= m.Total {
		return nil
	}
	end := min(offset+n, m.Total)
	out := make([]*entry, 0, end-offset)
	scored := 0
	if m.ranked != nil {
		scored = m.ranked.n
		m.ranked.each(offset, func(i int) bool {
			out = append(out, m.c.entries[i])
			return len(out) < end-offset
		})
	}
	if end > scored && m.rest != nil {
		skip := max(0, offset-scored)
		m.rest.each(func(i int) bool {
			if skip > 0 {
				skip--
				return true
			}
			out = append(out, m.c.entries[i])
			return len(out) < end-offset
		})
	}
	return out
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

// relevance lists the brief terms a product matched, for
// brief_relevance: the first eight in order of the words.
func (m *Match) relevance(e *entry) []string { return m.appendRelevance(nil, e) }

// appendRelevance appends relevance's terms to out.
func (m *Match) appendRelevance(out []string, e *entry) []string {
	for _, t := range m.found {
		if t.weight(e.pos) > 0 {
			out = append(out, t.word)
			if len(out) == 8 {
				break
			}
		}
	}
	return out
}

// foundTerms are the terms of a brief the catalogue has, in order of the
// words.
func (c *Catalogue) foundTerms(terms map[string]bool) []*term {
	var out []*term
	for t := range terms {
		if x, ok := c.index.terms[t]; ok {
			out = append(out, x)
		}
	}
	slices.SortFunc(out, func(a, b *term) int { return strings.Compare(a.word, b.word) })
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
	// Each part, after its length, written into one buffer, on the stack
	// for a request's parts.
	var scratch [1536]byte
	b := scratch[:0]
	for _, p := range parts {
		b = binary.BigEndian.AppendUint64(b, uint64(len(p)))
		b = append(b, p...)
	}
	sum := sha256.Sum256(b)
	return [8]byte(sum[:8])
}

// queryFingerprint is the fingerprint a cursor for req carries: of the
// snapshot it was issued under (publisher, catalogue and rulebook
// versions) and of queryKey(req), both written on the stack.
func queryFingerprint(snap *Snapshot, req *Request) [8]byte {
	var at [128]byte
	s := append(at[:0], snap.Publisher.ID...)
	s = append(s, '|')
	s = strconv.AppendInt(s, snap.CatalogueVersion, 10)
	s = append(s, '|')
	s = strconv.AppendInt(s, snap.RulebookVersion, 10)
	var kb [1024]byte
	key, ok := appendQueryKey(kb[:0], req)
	if !ok {
		key = nil
	}
	return fingerprint(s, key)
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

// pageWriter writes a completed answer's products (outcome.ProductWriter):
// each entry projected as the request asks, straight into the encoded
// answer rather than into a buffer of its own first.
type pageWriter struct {
	entries    []*entry
	fields     []string
	currencies []string
	// relevance is each entry's brief_relevance, encoded; nil for none.
	relevance []json.RawMessage
	// texts is the catalogue's room for escaped encodings; nil keeps
	// none.
	texts *textRoom
	// escaped are the spans of the last Append's products whose escaped
	// form is kept (outcome.EscapingWriter).
	escaped []jsonesc.Span
}

func (p *pageWriter) Count() int { return len(p.entries) }

func (p *pageWriter) Size() int {
	n := len(p.entries)
	for i, e := range p.entries {
		n += 2 + len(p.relevance[i]) + len(`,"brief_relevance":`)
		for _, f := range e.fields {
			n += len(f.name) + len(f.raw) + 4
		}
	}
	return n
}

func (p *pageWriter) Append(dst []byte) []byte {
	// Only a product written whole, every field and every pricing
	// option, is what its kept text escapes.
	whole := p.texts != nil && len(p.fields) == 0 && len(p.currencies) == 0
	p.escaped = p.escaped[:0]
	if whole && cap(p.escaped) < len(p.entries) {
		p.escaped = make([]jsonesc.Span, 0, len(p.entries))
	}
	for i, e := range p.entries {
		if i > 0 {
			dst = append(dst, ',')
		}
		at := len(dst)
		dst = appendFields(dst, e, p.fields, p.currencies)
		if whole {
			if t := p.texts.of(e, dst[at:]); t != nil {
				p.escaped = append(p.escaped, jsonesc.Span{At: at, Len: len(dst) - at, Text: t})
			}
		}
		dst = appendRelevance(dst, e, p.fields, p.relevance[i])
	}
	return dst
}

// Escaped implements outcome.EscapingWriter.
func (p *pageWriter) Escaped() []jsonesc.Span { return p.escaped }

// textRoom bounds the bytes a catalogue keeps of its entries' escaped
// encodings: the products answers carry are kept until the room is
// spent, and the rest escaped on every answer that carries them.
type textRoom struct {
	used atomic.Int64
}

// maxTextBytes is a catalogue's room for escaped encodings: at about
// 1.5 KiB a product, the ten thousand products answers carry most.
const maxTextBytes = 16 << 20

// of returns e's text, escaping enc, e's encoding up to its closing
// brace as appendFields wrote it with every field, and keeping it while
// there is room; nil when there is none and it was not kept before.
func (r *textRoom) of(e *entry, enc []byte) []byte {
	if t := e.text.Load(); t != nil {
		return *t
	}
	if r.used.Load() >= maxTextBytes {
		return nil
	}
	t := jsonesc.Append(make([]byte, 0, len(enc)+len(enc)/4+16), enc)
	if !e.text.CompareAndSwap(nil, &t) {
		return *e.text.Load()
	}
	r.used.Add(int64(cap(t)))
	return t
}

// appendProduct appends one product encoded with the requested fields
// (all when fields is empty; the schema-required ones always, see
// projects), pricing options narrowed to the requested currencies, and
// rel, the encoded brief_relevance, when there is one and it is asked for.
func appendProduct(b []byte, e *entry, fields []string, currencies []string, rel json.RawMessage) []byte {
	return appendRelevance(appendFields(b, e, fields, currencies), e, fields, rel)
}

// appendFields appends the opening of e's encoding, its brace and the
// fields appendProduct writes, up to brief_relevance.
func appendFields(b []byte, e *entry, fields []string, currencies []string) []byte {
	b = append(b, '{')
	n := 0
	for _, f := range e.fields {
		if !projects(fields, f.name) {
			continue
		}
		raw := f.raw
		if f.name == "pricing_options" && len(currencies) > 0 {
			var kept []PricingOption
			for _, po := range e.p.PricingOptions {
				if oneOf(currencies, po.Currency) {
					kept = append(kept, po)
				}
			}
			raw, _ = json.Marshal(kept)
		}
		if n > 0 {
			b = append(b, ',')
		}
		n++
		b = appendMember(b, f.name, raw)
	}
	return b
}

// appendRelevance ends the encoding appendFields began: rel, when there is
// one and it is asked for, and the closing brace.
func appendRelevance(b []byte, e *entry, fields []string, rel json.RawMessage) []byte {
	if rel != nil && projects(fields, "brief_relevance") {
		if len(b) > 0 && b[len(b)-1] != '{' {
			b = append(b, ',')
		}
		b = appendMember(b, "brief_relevance", rel)
	}
	return append(b, '}')
}

// appendMember appends "name":raw. Field names are fixed ASCII
// identifiers: no escaping needed.
func appendMember(b []byte, name string, raw []byte) []byte {
	b = append(b, '"')
	b = append(b, name...)
	b = append(b, '"', ':')
	return append(b, raw...)
}

// relevanceLines are the brief_relevance lines a catalogue's answers have
// carried, screened and encoded. Products mostly share their matched
// terms, within an answer and across answers, so each distinct line is
// screened once per snapshot rather than once per product. A line is
// made of catalogue words, but their combinations are many: past
// maxRelevanceLines distinct lines, new ones are screened each time and
// not kept.
type relevanceLines struct {
	mu sync.RWMutex
	m  map[string]json.RawMessage // line → its encoding, nil for a line the screen refused
}

const maxRelevanceLines = 4096

// encoded is line, screened with the vendor screen (brief_relevance lists
// the buyer's own words: it is never screened with the deny-list, or
// whether it appears would tell the buyer which words it typed form a
// confidential phrase) and encoded as a JSON string; nil when the screen
// refuses it. The bytes are shared: they are copied, never written. The
// line is read, not kept: the caller may reuse it.
func (l *relevanceLines) encoded(line []byte) json.RawMessage {
	l.mu.RLock()
	raw, ok := l.m[string(line)]
	l.mu.RUnlock()
	if ok {
		return raw
	}
	if s, ok := sanitize.Vendor().Line(string(line), 500); ok {
		raw, _ = json.Marshal(s)
	}
	l.mu.Lock()
	if l.m == nil {
		l.m = map[string]json.RawMessage{}
	}
	if len(l.m) < maxRelevanceLines {
		l.m[string(line)] = raw
	}
	l.mu.Unlock()
	return raw
}
