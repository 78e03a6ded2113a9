package products

// The indexed Find must answer exactly as the plain definition of the
// filters would: every product checked against every filter, the
// survivors sorted by score then catalogue order. refFind is that plain
// definition, kept here as the reference, and a property test compares
// the two over generated catalogues, filters, briefs and pages.

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/storefront/storefront/adcp"
	"github.com/storefront/storefront/sanitize"
)

type refFilter struct {
	name string
	pass func(e *entry) bool
}

func refFilters(f Filters, geo []string) []refFilter {
	var out []refFilter
	add := func(name string, pass func(*entry) bool) { out = append(out, refFilter{name, pass}) }
	if len(f.Channels) > 0 {
		add("channels", func(e *entry) bool { return overlaps(e.p.Channels, f.Channels) })
	}
	if len(f.FormatKinds) > 0 {
		add("format_kinds", func(e *entry) bool { return overlaps(e.kinds, f.FormatKinds) })
	}
	if f.DeliveryType != "" {
		add("delivery_type", func(e *entry) bool { return e.p.DeliveryType == f.DeliveryType })
	}
	if b := f.Budget; b != nil {
		add("budget_range", func(e *entry) bool {
			m, ok := e.p.MinSpend(b.Currency)
			return ok && (b.Max == nil || m <= *b.Max)
		})
	}
	if want, name, ok := flightFilter(f); ok {
		add(name, func(e *entry) bool { return bookable(e.p, want) })
	}
	if len(f.PricingCurrencies) > 0 {
		add("pricing_currencies", func(e *entry) bool {
			return slices.ContainsFunc(e.p.PricingOptions, func(po PricingOption) bool { return oneOf(f.PricingCurrencies, po.Currency) })
		})
	}
	countries, name := geo, "targeting_overlay.geo_countries"
	if len(countries) == 0 {
		countries, name = f.Countries, "countries"
	}
	if len(countries) > 0 {
		add(name, func(e *entry) bool { return overlaps(e.p.Countries, countries) })
	}
	if f.IsFixedPrice != nil {
		want := *f.IsFixedPrice
		add("is_fixed_price", func(e *entry) bool {
			return slices.ContainsFunc(e.p.PricingOptions, func(po PricingOption) bool { return (po.FixedPrice != nil) == want })
		})
	}
	if len(f.PricingStructures) > 0 {
		add("pricing_structures", func(e *entry) bool {
			return slices.ContainsFunc(e.p.PricingOptions, func(po PricingOption) bool {
				return (po.FixedPrice != nil && oneOf(f.PricingStructures, "fixed")) || (po.FloorPrice != nil && oneOf(f.PricingStructures, "auction"))
			})
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

// refWeights are the ranking weights of c's products as rankingTerms
// gives them for the products' public text, read without the index: the
// reference scores from these, so the index's postings and planes are
// checked, not trusted.
func refWeights(c *Catalogue, screen *sanitize.Screen) []map[string]int {
	shown := make([]Product, len(c.entries))
	for i, e := range c.entries {
		shown[i] = screenedText(e.p, e.fields, screen)
	}
	ranked := newKeywordPolicy(nil, shown)
	out := make([]map[string]int, len(shown))
	for i := range shown {
		out[i] = rankingTerms(shown[i], ranked.ranks)
	}
	return out
}

// refFind is the definition, the linear Find the index replaced together
// with the service's later removal of omitted products: every product
// scored by adding up its weights (refWeights) for the brief's terms, the
// survivors sorted by score then catalogue order. It returns the ranked
// product ids and the per-filter exclusion counts.
func refFind(c *Catalogue, weights []map[string]int, f Filters, geo []string, text string, curate bool, omit map[string]bool) ([]string, map[string]int) {
	fs := refFilters(f, geo)
	excluded := map[string]int{}
	terms := briefTerms(text)
	type scored struct {
		e          *entry
		score, idx int
	}
	var kept []scored
	for i, e := range c.entries {
		if len(e.p.PricingOptions) == 0 {
			continue
		}
		failed, failures := -1, 0
		for j, fl := range fs {
			if !fl.pass(e) {
				failures++
				if failed < 0 {
					failed = j
				}
			}
		}
		if failures == 1 {
			excluded[fs[failed].name]++
		}
		if failures > 0 {
			continue
		}
		s := 0
		for t := range terms {
			s += weights[i][t]
		}
		kept = append(kept, scored{e, s, i})
	}
	if curate && len(terms) > 0 {
		var relevant []scored
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
	// The buyer's omissions come off the ranked list last, as the
	// service did before the catalogue was indexed.
	var ids []string
	for _, s := range kept {
		if !omit[s.e.p.ProductID] {
			ids = append(ids, s.e.p.ProductID)
		}
	}
	return ids, excluded
}

var (
	genChannels  = []string{"display", "olv", "ctv", "streaming_audio", "dooh", "social"}
	genCountries = []string{"US", "CA", "GB", "FR", "DE"}
	genCurrency  = []string{"USD", "GBP", "EUR"}
	genMetrics   = []string{"impressions", "clicks", "views", "completed_views", "reach"}
	genWords     = []string{"coffee", "travel", "sports", "news", "video", "display", "audio", "premium", "homepage", "mobile", "weekend", "food"}
	genKinds     = []string{"image", "video_vast", "video_hosted", "audio_hosted", "html5", "custom"}
)

func subset(t *rapid.T, from []string, label string, min int) []string {
	return rapid.SliceOfNDistinct(rapid.SampledFrom(from), min, len(from), func(s string) string { return s }).Draw(t, label)
}

func genProduct(t *rapid.T, i int) Product {
	p := testCatalogue()[rapid.IntRange(0, 3).Draw(t, "base")]
	p.ProductID = fmt.Sprintf("p%03d", i)
	p.Name = fmt.Sprintf("%s %s", rapid.SampledFrom(genWords).Draw(t, "w1"), rapid.SampledFrom(genWords).Draw(t, "w2"))
	p.Description = fmt.Sprintf("Reaches %s and %s audiences.", rapid.SampledFrom(genWords).Draw(t, "w3"), rapid.SampledFrom(genWords).Draw(t, "w4"))
	p.Keywords = subset(t, genWords, "keywords", 0)
	p.Channels = subset(t, genChannels, "channels", 1)
	p.Countries = subset(t, genCountries, "countries", 1)
	p.DeliveryType = rapid.SampledFrom([]string{"guaranteed", "non_guaranteed"}).Draw(t, "delivery")
	p.Exclusivity = rapid.SampledFrom([]string{"", "none", "category", "exclusive"}).Draw(t, "exclusivity")
	p.VideoPlacementTypes = subset(t, []string{"instream", "interstitial"}, "placements", 0)
	p.AudioDistributionTypes = subset(t, []string{"podcast", "web_radio"}, "audio", 0)
	p.ReportingCapabilities.AvailableMetrics = subset(t, genMetrics, "metrics", 0)
	p.FormatOptions = nil
	for _, k := range subset(t, genKinds, "kinds", 1) {
		p.FormatOptions = append(p.FormatOptions, FormatOption{FormatKind: k})
	}
	p.PricingOptions = nil
	for j := range rapid.IntRange(0, 3).Draw(t, "options") {
		po := PricingOption{PricingOptionID: fmt.Sprintf("po%d", j), PricingModel: "cpm", Currency: rapid.SampledFrom(genCurrency).Draw(t, "currency")}
		price := float64(rapid.IntRange(1, 50).Draw(t, "price"))
		if rapid.Bool().Draw(t, "fixed") {
			po.FixedPrice = &price
		} else {
			po.FloorPrice = &price
		}
		if rapid.Bool().Draw(t, "hasmin") {
			m := float64(rapid.IntRange(0, 5).Draw(t, "min") * 1000)
			po.MinSpendPerPackage = &m
		}
		p.PricingOptions = append(p.PricingOptions, po)
	}
	p.Availability = nil
	if rapid.Bool().Draw(t, "windowed") {
		start := adcp.MustDate("2027-01-01").AddDays(rapid.IntRange(0, 60).Draw(t, "wstart"))
		p.Availability = []adcp.DateRange{{Start: start, End: start.AddDays(rapid.IntRange(0, 60).Draw(t, "wlen"))}}
	}
	return p
}

func genFilters(t *rapid.T) (Filters, []string) {
	var f Filters
	maybe := func(label string) bool { return rapid.IntRange(0, 3).Draw(t, label) == 0 }
	if maybe("f_channels") {
		f.Channels = subset(t, genChannels, "fchannels", 1)
	}
	if maybe("f_kinds") {
		f.FormatKinds = subset(t, genKinds, "fkinds", 1)
	}
	if maybe("f_delivery") {
		f.DeliveryType = rapid.SampledFrom([]string{"guaranteed", "non_guaranteed"}).Draw(t, "fdelivery")
	}
	if maybe("f_budget") {
		f.Budget = &BudgetRange{Currency: rapid.SampledFrom(append(genCurrency, "JPY")).Draw(t, "fbcur")}
		if rapid.Bool().Draw(t, "fbmax") {
			m := float64(rapid.IntRange(0, 6).Draw(t, "fbmaxv") * 900)
			f.Budget.Max = &m
		}
	}
	if maybe("f_dates") {
		start := adcp.MustDate("2027-01-01").AddDays(rapid.IntRange(0, 90).Draw(t, "fstart"))
		switch rapid.IntRange(0, 2).Draw(t, "fdatekind") {
		case 0:
			f.StartDate, f.EndDate = start, start.AddDays(rapid.IntRange(0, 30).Draw(t, "flen"))
		case 1:
			f.StartDate = start
		default:
			f.EndDate = start
		}
	}
	if maybe("f_currencies") {
		f.PricingCurrencies = subset(t, genCurrency, "fcur", 1)
	}
	if maybe("f_countries") {
		f.Countries = subset(t, genCountries, "fcountries", 1)
	}
	var geo []string
	if maybe("f_geo") {
		geo = subset(t, genCountries, "fgeo", 1)
	}
	if maybe("f_fixed") {
		b := rapid.Bool().Draw(t, "ffixed")
		f.IsFixedPrice = &b
	}
	if maybe("f_structures") {
		f.PricingStructures = subset(t, []string{"fixed", "auction"}, "fstruct", 1)
	}
	if maybe("f_exclusivity") {
		f.Exclusivity = rapid.SampledFrom([]string{"none", "category", "exclusive"}).Draw(t, "fexcl")
	}
	if maybe("f_placements") {
		f.VideoPlacementTypes = subset(t, []string{"instream", "interstitial"}, "fplace", 1)
	}
	if maybe("f_audio") {
		f.AudioDistributionTypes = subset(t, []string{"podcast", "web_radio"}, "faudio", 1)
	}
	if maybe("f_metrics") {
		f.RequiredMetrics = subset(t, genMetrics, "fmetrics", 1)
	}
	f.StandardFormatsOnly = maybe("f_standard")
	if rapid.IntRange(0, 15).Draw(t, "f_unmodelled") == 0 {
		f.Unmodelled = []string{"keywords"}
	}
	return f, geo
}

// TestIndexedFindMatchesDefinition checks the index, each ranking term kept
// the smaller way and every term kept as postings or as planes, against
// the definition.
func TestIndexedFindMatchesDefinition(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(0, 150).Draw(t, "products")
		ps := make([]Product, n)
		for i := range ps {
			ps[i] = genProduct(t, i)
		}
		l := rapid.SampledFrom([]layout{smallest, allPostings, allPlanes}).Draw(t, "layout")
		screen := sanitize.New(nil)
		c := newCatalogueLaidOut(ps, screen, nil, l)
		weights := refWeights(c, screen)
		for range 5 {
			f, geo := genFilters(t)
			text := ""
			for _, w := range subset(t, append(genWords, "zebra"), "brief", 0) {
				text += w + " "
			}
			curate := rapid.Bool().Draw(t, "curate")
			omit := map[string]bool{}
			for range rapid.IntRange(0, 3).Draw(t, "omits") {
				omit[fmt.Sprintf("p%03d", rapid.IntRange(0, 160).Draw(t, "omit"))] = true
			}
			wantIDs, wantExcluded := refFind(c, weights, f, geo, text, curate, omit)
			m := c.Find(f, geo, text, curate, omit)
			if !maps.Equal(m.Excluded, wantExcluded) {
				t.Fatalf("excluded %v, want %v (filters %+v geo %v)", m.Excluded, wantExcluded, f, geo)
			}
			if m.Total != len(wantIDs) {
				t.Fatalf("total %d, want %d", m.Total, len(wantIDs))
			}
			if all, _ := refFind(c, weights, f, geo, "", false, nil); c.Any(f, geo) != (len(all) > 0) {
				t.Fatalf("Any = %v with %d matches", !(len(all) > 0), len(all))
			}
			// Pages in any order and size add up to the definition's
			// ranking.
			size := rapid.IntRange(1, 12).Draw(t, "page")
			offsets := rapid.Permutation(pageOffsets(len(wantIDs), size)).Draw(t, "order")
			got := make([]string, len(wantIDs))
			for _, off := range offsets {
				for i, e := range m.Page(off, size) {
					got[off+i] = e.p.ProductID
				}
			}
			if !slices.Equal(got, wantIDs) {
				t.Fatalf("ranking %v\nwant    %v\nbrief %q curate %v", got, wantIDs, text, curate)
			}
			if len(m.Page(len(wantIDs), size)) != 0 || len(m.Page(-1, size)) != 0 {
				t.Fatal("a page past the end or before the start is not empty")
			}
			// The next brief's sets and scores are carved from these
			// words again, as a served request's are.
			m.Release()
		}
	})
}

func pageOffsets(total, size int) []int {
	var out []int
	for o := 0; o < total; o += size {
		out = append(out, o)
	}
	if out == nil {
		out = []int{}
	}
	return out
}

// TestWeightsAreTheRankingTerms: the postings, where a product's ranking
// weights are kept, give every product exactly the weights rankingTerms
// gives its public text, and nothing for a term it lacks.
func TestWeightsAreTheRankingTerms(t *testing.T) {
	ps := testCatalogue()
	screen := sanitize.New(nil)
	c := newCatalogue(ps, screen, nil)
	shown := make([]Product, len(ps))
	for i, e := range c.entries {
		shown[i] = screenedText(e.p, e.fields, screen)
	}
	ranked := newKeywordPolicy(nil, shown)
	checked := 0
	for i, e := range c.entries {
		for term, w := range rankingTerms(shown[i], ranked.ranks) {
			if got := c.weight(e.pos, term); got != int32(w) {
				t.Errorf("%s: weight of %q = %d, want %d", e.p.ProductID, term, got, w)
			}
			checked++
		}
		if got := c.weight(e.pos, "zzqxjv"); got != 0 {
			t.Errorf("%s: an absent term weighs %d", e.p.ProductID, got)
		}
	}
	if checked < len(ps) {
		t.Fatalf("only %d weights checked over %d products", checked, len(ps))
	}
}

// TestScoringAtSizeMatchesDefinition ranks briefs over catalogues of
// thousands of products, whose words range from rare (kept as postings) to
// common (kept as planes), and budgets over many marks, against the
// definition: the whole ranking, read a page at a time from random
// offsets.
func TestScoringAtSizeMatchesDefinition(t *testing.T) {
	vocabulary := make([]string, 300)
	for i := range vocabulary {
		vocabulary[i] = fmt.Sprintf("w%03dx", i)
	}
	rapid.Check(t, func(t *rapid.T) {
		seed := rapid.Uint64().Draw(t, "seed")
		n := rapid.IntRange(1, 1500).Draw(t, "products")
		r := rand.New(rand.NewPCG(seed, 1))
		// A word's rank sets how often it is drawn, so the catalogue has
		// words in nearly every product and words in one or two.
		word := func() string { return vocabulary[int(float64(len(vocabulary))*r.Float64()*r.Float64()*r.Float64())] }
		base := testCatalogue()
		ps := make([]Product, n)
		for i := range ps {
			p := base[r.IntN(len(base))]
			p.ProductID = fmt.Sprintf("p%05d", i)
			p.Name = word() + " " + word()
			p.Description = "Reaches " + word() + " and " + word() + " audiences."
			p.Keywords = []string{word(), word()}
			m := float64(r.IntN(50) * 500)
			p.PricingOptions = []PricingOption{{PricingOptionID: "po", PricingModel: "cpm", Currency: "USD", FixedPrice: num(5), MinSpendPerPackage: &m}}
			ps[i] = p
		}
		screen := sanitize.New(nil)
		c := newCatalogue(ps, screen, nil)
		if n >= 1000 {
			kept := map[bool]int{}
			for _, x := range c.index.terms {
				kept[x.planes != nil]++
			}
			if kept[true] == 0 || kept[false] == 0 {
				t.Fatalf("%d terms as planes and %d as postings: the test should have both", kept[true], kept[false])
			}
		}
		weights := refWeights(c, screen)
		for range 3 {
			var brief []string
			for range rapid.IntRange(0, 12).Draw(t, "terms") {
				brief = append(brief, word())
			}
			text := strings.Join(brief, " ")
			var f Filters
			if rapid.Bool().Draw(t, "budget") {
				f.Budget = &BudgetRange{Currency: "USD", Max: num(float64(rapid.IntRange(0, 26000).Draw(t, "max")))}
			}
			curate := rapid.Bool().Draw(t, "curate")
			omit := map[string]bool{}
			for range rapid.IntRange(0, 3).Draw(t, "omits") {
				omit[fmt.Sprintf("p%05d", rapid.IntRange(0, n).Draw(t, "omit"))] = true
			}
			want, _ := refFind(c, weights, f, nil, text, curate, omit)
			m := c.Find(f, nil, text, curate, omit)
			if m.Total != len(want) {
				t.Fatalf("total %d, want %d", m.Total, len(want))
			}
			size := rapid.IntRange(1, 400).Draw(t, "page")
			for range 4 {
				off := rapid.IntRange(0, max(0, len(want)-1)).Draw(t, "offset")
				var got []string
				for _, e := range m.Page(off, size) {
					got = append(got, e.p.ProductID)
				}
				if w := want[min(off, len(want)):min(off+size, len(want))]; !slices.Equal(got, w) {
					t.Fatalf("page at %d of %d: %v\nwant %v\nbrief %q curate %v", off, size, got, w, text, curate)
				}
			}
			// brief_relevance: the first eight matched terms in order.
			for _, e := range m.Page(0, 20) {
				var matched []string
				for t := range briefTerms(text) {
					if weights[e.pos][t] > 0 {
						matched = append(matched, t)
					}
				}
				sort.Strings(matched)
				matched = matched[:min(len(matched), 8)]
				if got := m.relevance(e); !slices.Equal(got, matched) {
					t.Fatalf("%s: relevance %v, want %v", e.p.ProductID, got, matched)
				}
			}
			m.Release()
		}
	})
}
