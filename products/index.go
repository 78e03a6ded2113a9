package products

import (
	"math/bits"
	"slices"
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

// posting is one product's weight for a ranking term.
type posting struct {
	pos    int32
	weight int32
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
	budget map[string][]spend
	// formatOption maps product-local format_option_ids, and
	// legacyFormat the published format_ids (formatKey), to the products
	// that accept them.
	formatOption, legacyFormat map[string]bitset
	// byID maps product ids to positions.
	byID map[string]int
	// postings map ranking terms to the products that carry them.
	postings map[string][]posting
}

func buildIndex(entries []*entry, terms []map[string]int, in *interner) *index {
	n := len(entries)
	x := &index{
		n: n, all: newBitset(n), priced: newBitset(n),
		fixed: newBitset(n), auction: newBitset(n), unfixed: newBitset(n), custom: newBitset(n),
		budget: map[string][]spend{}, byID: make(map[string]int, n), postings: map[string][]posting{},
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
				x.budget[po.Currency] = append(x.budget[po.Currency], spend{m, i})
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
			x.postings[t] = append(x.postings[t], posting{int32(i), int32(w)})
		}
	}
	for _, l := range x.budget {
		slices.SortStableFunc(l, func(a, b spend) int {
			switch {
			case a.min < b.min:
				return -1
			case a.min > b.min:
				return 1
			}
			return 0
		})
	}
	return x
}

// any returns the products that have at least one of values in m.
func (x *index) any(m map[string]bitset, values []string) bitset {
	out := newBitset(x.n)
	for _, v := range values {
		if b, ok := m[v]; ok {
			out.or(b)
		}
	}
	return out
}

// one returns the products that have value in m.
func (x *index) one(m map[string]bitset, value string) bitset {
	if b, ok := m[value]; ok {
		return b.clone()
	}
	return newBitset(x.n)
}

// within returns the products whose minimum spend in currency is at most
// max, or that price in currency at all when max is nil.
func (x *index) within(currency string, max *float64) bitset {
	out := newBitset(x.n)
	for _, s := range x.budget[currency] {
		if max != nil && s.min > *max {
			break
		}
		out.set(s.pos)
	}
	return out
}

// not returns the complement of b.
func (x *index) not(b bitset) bitset {
	out := x.all.clone()
	out.andNot(b)
	return out
}
