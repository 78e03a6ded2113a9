package products

import (
	"math/bits"
	"slices"
	"sort"
)

// bitset is a set of catalogue positions.
type bitset []uint64

func newBitset(n int) bitset { return make(bitset, (n+63)/64) }

func (b bitset) set(i int)      { b[i/64] |= 1 << (uint(i) % 64) }
func (b bitset) has(i int) bool { return b[i/64]&(1<<(uint(i)%64)) != 0 }
func (b bitset) clear(i int)    { b[i/64] &^= 1 << (uint(i) % 64) }

func (b bitset) clone() bitset { return slices.Clone(b) }

// and keeps in b only what is also in o.
func (b bitset) and(o bitset) {
	for i := range b {
		b[i] &= o[i]
	}
}

// or adds o to b.
func (b bitset) or(o bitset) {
	for i := range b {
		b[i] |= o[i]
	}
}

// andNot removes o from b.
func (b bitset) andNot(o bitset) {
	for i := range b {
		b[i] &^= o[i]
	}
}

func (b bitset) count() int {
	n := 0
	for _, w := range b {
		n += bits.OnesCount64(w)
	}
	return n
}

func (b bitset) any() bool {
	for _, w := range b {
		if w != 0 {
			return true
		}
	}
	return false
}

// each calls fn for every position in b, in order, until fn returns false.
func (b bitset) each(fn func(int) bool) {
	for wi, w := range b {
		for w != 0 {
			i := wi*64 + bits.TrailingZeros64(w)
			if !fn(i) {
				return
			}
			w &= w - 1
		}
	}
}

// spend is one product's minimum spend in a currency.
type spend struct {
	min float64
	pos int
}

// spends are one currency's minimum spends, lowest first, with marks
// along the list: marks[m] holds the products of the first m*stride
// spends, so the products within a budget are a copy of a mark and at
// most stride more, not a pass over every product that prices in the
// currency.
type spends struct {
	byMin  []spend
	stride int
	marks  []bitset
}

// maxMarks bounds the marks of a currency: they take at most as many bits
// per product, so the marks of a currency weigh about what its list of
// spends does.
const maxMarks = 64

// mark builds the marks, for a catalogue of n products.
func (l *spends) mark(n int) {
	l.stride = max(64, (len(l.byMin)+maxMarks-1)/maxMarks)
	b := newBitset(n)
	l.marks = append(l.marks, b.clone())
	for i, s := range l.byMin {
		if i > 0 && i%l.stride == 0 {
			l.marks = append(l.marks, b.clone())
		}
		b.set(s.pos)
	}
}

// posting is one product's weight for a ranking term.
type posting struct {
	pos    int32
	weight int32
}

// term is where one ranking term's weights are kept: as postings when few
// products carry it, or as bit planes when many do, whichever takes less
// memory. A brief's frequent words (a channel's synonyms, a topic of half
// the catalogue) are then scored a word of 64 products at a time instead of
// a product at a time.
type term struct {
	word string
	// postings are in catalogue order; nil when the term has planes.
	postings []posting
	// planes holds the weights bit-sliced and word-major: bit i%64 of
	// planes[(i/64)*len + j] is bit j of product i's weight, len being
	// bits.Len32(max).
	planes []uint64
	// max is the term's largest weight.
	max int32
}

// planeCount is how many bit planes hold the term's weights.
func (t *term) planeCount() int { return bits.Len32(uint32(t.max)) }

// weight is the term's weight for the product at pos, 0 when it lacks the
// term.
func (t *term) weight(pos int32) int32 {
	if t.planes == nil {
		i, ok := slices.BinarySearchFunc(t.postings, pos, func(p posting, pos int32) int { return int(p.pos - pos) })
		if !ok {
			return 0
		}
		return t.postings[i].weight
	}
	k := t.planeCount()
	word, bit := int(pos)/64, uint(pos)%64
	var w int32
	for j := range k {
		w |= int32(t.planes[word*k+j]>>bit&1) << j
	}
	return w
}

// layout decides how a term's weights are kept.
type layout int

const (
	// smallest keeps each term the way that takes less memory.
	smallest layout = iota
	// allPostings and allPlanes force one way, for tests that check the
	// two score alike.
	allPostings
	allPlanes
)

// newTerm keeps ps, the postings of word with weights of at least 1, the
// way l says.
func newTerm(word string, ps []posting, n int, l layout) *term {
	t := &term{word: word}
	for _, p := range ps {
		t.max = max(t.max, p.weight)
	}
	k := t.planeCount()
	words := (n + 63) / 64
	dense := len(ps) > k*words
	if l != smallest {
		dense = l == allPlanes
	}
	if !dense {
		t.postings = slices.Clip(ps)
		return t
	}
	t.planes = make([]uint64, words*k)
	for _, p := range ps {
		word, bit := int(p.pos)/64, uint(p.pos)%64
		for j := range k {
			t.planes[word*k+j] |= uint64(p.weight>>j&1) << bit
		}
	}
	return t
}

// index is the catalogue's inverted index, built once per snapshot: for
// each value a filter can ask for, the set of products that have it. A
// request's filters become a few set operations instead of a pass over
// every product, so matching cost follows what the request selects, not
// the catalogue's size.
type index struct {
	n int
	// all holds every position; priced those with a pricing option (a
	// seeded fixture still waiting for its price cannot be bought).
	all, priced                                                                       bitset
	channel, kind, delivery, country, currency, exclusivity, placement, audio, metric map[string]bitset
	// fixed: has a fixed-price option; auction: has a floor-price option;
	// unfixed: has an option without a fixed price; custom: accepts a
	// custom format kind.
	fixed, auction, unfixed, custom bitset
	// windowed are the products with availability windows; the rest are
	// always bookable.
	windowed []int
	// signalCharged are the products with signal charges a package cannot
	// avoid; pricing_currencies checks them one by one.
	signalCharged []int
	// budget lists, per currency, each product's minimum spend, lowest
	// first.
	budget map[string]*spends
	// formatOption maps product-local format_option_ids, and
	// legacyFormat the published format_ids (formatKey), to the products
	// that accept them.
	formatOption, legacyFormat map[string]bitset
	// byID maps product ids to positions.
	byID map[string]int
	// terms map ranking terms to the products that carry them, with
	// their weights.
	terms map[string]*term
}

func buildIndex(entries []*entry, terms []map[string]int, in *interner, l layout) *index {
	n := len(entries)
	x := &index{
		n: n, all: newBitset(n), priced: newBitset(n),
		fixed: newBitset(n), auction: newBitset(n), unfixed: newBitset(n), custom: newBitset(n),
		budget: map[string]*spends{}, byID: make(map[string]int, n), terms: map[string]*term{},
		formatOption: map[string]bitset{}, legacyFormat: map[string]bitset{},
	}
	maps := []*map[string]bitset{&x.channel, &x.kind, &x.delivery, &x.country, &x.currency, &x.exclusivity, &x.placement, &x.audio, &x.metric}
	for _, m := range maps {
		*m = map[string]bitset{}
	}
	put := func(m map[string]bitset, key string, i int) {
		b, ok := m[key]
		if !ok {
			b = newBitset(n)
			m[key] = b
		}
		b.set(i)
	}
	postings := map[string][]posting{}
	for i, e := range entries {
		p := &e.p
		x.all.set(i)
		x.byID[p.ProductID] = i
		if len(p.PricingOptions) > 0 && !e.withheld {
			x.priced.set(i)
		}
		for _, v := range p.Channels {
			put(x.channel, v, i)
		}
		for _, v := range e.kinds {
			put(x.kind, v, i)
			if v == "custom" {
				x.custom.set(i)
			}
		}
		for _, f := range p.FormatOptions {
			if f.FormatOptionID != "" {
				put(x.formatOption, f.FormatOptionID, i)
			}
		}
		for k := range p.legacyFormats() {
			put(x.legacyFormat, k, i)
		}
		put(x.delivery, p.DeliveryType, i)
		for _, v := range p.Countries {
			put(x.country, v, i)
		}
		ex := p.Exclusivity
		if ex == "" {
			ex = "none"
		}
		put(x.exclusivity, ex, i)
		for _, v := range p.VideoPlacementTypes {
			put(x.placement, v, i)
		}
		for _, v := range p.AudioDistributionTypes {
			put(x.audio, v, i)
		}
		for _, v := range p.ReportingCapabilities.AvailableMetrics {
			put(x.metric, v, i)
		}
		seen := map[string]bool{}
		for _, po := range p.PricingOptions {
			put(x.currency, po.Currency, i)
			if po.FixedPrice != nil {
				x.fixed.set(i)
			} else {
				x.unfixed.set(i)
			}
			if po.FloorPrice != nil {
				x.auction.set(i)
			}
			if !seen[po.Currency] {
				seen[po.Currency] = true
				m, _ := p.MinSpend(po.Currency)
				l := x.budget[po.Currency]
				if l == nil {
					l = &spends{}
					x.budget[po.Currency] = l
				}
				l.byMin = append(l.byMin, spend{m, i})
			}
		}
		if len(p.Availability) > 0 {
			x.windowed = append(x.windowed, i)
		}
		if p.hasMandatorySignalCharges() {
			x.signalCharged = append(x.signalCharged, i)
		}
		for t, w := range terms[i] {
			t = in.word(t)
			postings[t] = append(postings[t], posting{int32(i), int32(w)})
		}
	}
	for t, ps := range postings {
		x.terms[t] = newTerm(t, ps, n, l)
	}
	for _, l := range x.budget {
		slices.SortStableFunc(l.byMin, func(a, b spend) int {
			switch {
			case a.min < b.min:
				return -1
			case a.min > b.min:
				return 1
			}
			return 0
		})
		l.mark(n)
	}
	return x
}

// any returns the products that have at least one of values in m.
func (x *index) any(sc *scratch, m map[string]bitset, values []string) bitset {
	out := sc.set(x.n)
	for _, v := range values {
		if b, ok := m[v]; ok {
			out.or(b)
		}
	}
	return out
}

// one returns the products that have value in m.
func (x *index) one(sc *scratch, m map[string]bitset, value string) bitset {
	if b, ok := m[value]; ok {
		return sc.copyOf(b)
	}
	return sc.set(x.n)
}

// within returns the products whose minimum spend in currency is at most
// max, or that price in currency at all when max is nil.
func (x *index) within(sc *scratch, currency string, max *float64) bitset {
	l := x.budget[currency]
	if l == nil {
		return sc.set(x.n)
	}
	cut := len(l.byMin)
	if max != nil {
		cut = sort.Search(len(l.byMin), func(i int) bool { return l.byMin[i].min > *max })
	}
	m := min(cut/l.stride, len(l.marks)-1)
	out := sc.copyOf(l.marks[m])
	for _, s := range l.byMin[m*l.stride : cut] {
		out.set(s.pos)
	}
	return out
}

// not returns the complement of b.
func (x *index) not(sc *scratch, b bitset) bitset {
	out := sc.copyOf(x.all)
	out.andNot(b)
	return out
}
