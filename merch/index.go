package merch

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Index is a rulebook's decline rules keyed by the facts of a brief that
// can make them fire, so that evaluating a brief visits only the rules that
// can fire for it instead of every rule. It is built once per rulebook
// version, with the snapshot, and is read concurrently; neither it nor its
// rulebook may change after NewIndex.
//
// Each rule is filed under one of its predicates, by a fact that predicate
// cannot hold without: the brand's domain or a parent of it
// (brand_domains), a word of the brief (a keyword's first word), the
// brand's industry or a parent of it (industries), the first channel asked
// for (the channel scope), the budget's currency and an amount below the
// rule's highest floor (budget_below), a first channel, market, format
// kind, currency or delivery type that the rule's list lacks (the
// "offered" predicates), flight dates (sold_out) or a start date
// (lead_time_days). A rule that fires for a brief is therefore always
// among the rules filed under the brief's facts, and Evaluate runs each of
// those whole, in rulebook order, exactly as the linear Evaluate does: the
// answer is the same, reason for reason. Rules that can never fire
// (disabled, no predicate, only empty keywords) are filed nowhere.
type Index struct {
	rb *Rulebook
	// always lists rules evaluated for every brief: every enabled rule
	// when the index could not be built.
	always []int32

	domains    map[string][]int32 // brand_domains, as written
	words      map[string][]int32 // keywords, by their first word
	industries map[string][]int32 // industries, trimmed and lower-cased
	scopes     map[string][]int32 // channel scope, case-folded
	budgets    map[string][]floor // budget_below, by case-folded currency

	channels   negation // channels_offered
	countries  negation // countries_served
	formats    negation // format_kinds_offered
	currencies negation // currencies_accepted
	delivery   negation // delivery_types_offered

	flights []int32 // sold_out
	starts  []int32 // lead_time_days
}

// floor is a budget rule filed under its currency, with the highest of its
// minimums: a budget at or above it is below none of them.
type floor struct {
	rule int32
	// top is NaN when a minimum is NaN, which no budget is at or above.
	top float64
}

// negation files the rules of one "offered" predicate, which holds only
// when the brief's values (its first one among them) are all outside the
// rule's list.
type negation struct {
	rules []int32
	// without maps a value some rule lists, case-folded, to the rules
	// whose lists lack it; a value no rule lists is lacked by every rule.
	without map[string][]int32
}

// Evaluate runs the rulebook against the brief as Evaluate does, visiting
// only the rules filed under the brief's facts. A nil index has no
// rulebook.
func (ix *Index) Evaluate(b Brief, m Market) (d Decision, err error) {
	if ix == nil || ix.rb == nil {
		return Decision{}, ErrNoRulebook
	}
	defer recoverFault(&d, &err)
	if b.Today.IsZero() {
		return Decision{}, errNoDate
	}
	var words []string
	if len(ix.words) > 0 && b.Text != "" {
		words = tokens(b.Text)
	}
	var stack [32]int32
	hay := ""
	for _, i := range ix.candidates(&b, words, stack[:0]) {
		// The haystack is made only when a keyword rule is visited.
		if hay == "" && b.Text != "" && ix.rb.Rules[i].When.Keywords != nil {
			if words == nil {
				words = tokens(b.Text)
			}
			hay = joinWords(words)
		}
		d.consider(ix.rb, int(i), &b, &m, hay)
	}
	return d, nil
}

// candidates returns, in rulebook order and once each, the rules filed
// under the brief's facts. words are the brief's words when rules are
// filed by keyword.
func (ix *Index) candidates(b *Brief, words []string, out []int32) []int32 {
	out = append(out, ix.always...)
	var buf [64]byte
	if len(ix.domains) > 0 {
		// As domainMatch: the domain itself and every parent of it.
		if d := strings.ToLower(strings.TrimSuffix(b.BrandDomain, ".")); d != "" {
			out = append(out, ix.domains[d]...)
			for i := 0; i < len(d); i++ {
				if d[i] == '.' {
					out = append(out, ix.domains[d[i+1:]]...)
				}
			}
		}
	}
	for _, w := range words {
		out = append(out, ix.words[w]...)
	}
	if len(ix.industries) > 0 {
		// As industryMatch: the industry itself and every parent of it.
		for _, h := range b.Industries {
			h = strings.ToLower(strings.TrimSpace(h))
			out = append(out, ix.industries[h]...)
			for i := 0; i < len(h); i++ {
				if h[i] == '.' {
					out = append(out, ix.industries[h[:i]]...)
				}
			}
		}
	}
	if len(ix.scopes) > 0 && len(b.Channels) > 0 {
		out = append(out, ix.scopes[string(appendFold(buf[:0], b.Channels[0]))]...)
	}
	if len(ix.budgets) > 0 {
		if amount, ok := b.Budget.Amount(); ok {
			// Highest floor first: the first a budget is not below ends
			// the run.
			for _, f := range ix.budgets[string(appendFold(buf[:0], b.Budget.Currency))] {
				if amount >= f.top {
					break
				}
				out = append(out, f.rule)
			}
		}
	}
	if len(b.Channels) > 0 {
		out = ix.channels.lacking(out, b.Channels[0], &buf)
	}
	if len(b.Countries) > 0 {
		out = ix.countries.lacking(out, b.Countries[0], &buf)
	}
	if len(b.FormatKinds) > 0 {
		out = ix.formats.lacking(out, b.FormatKinds[0], &buf)
	}
	// As currencyRefused: the currencies named, then the budget's.
	switch {
	case len(b.Currencies) > 0:
		out = ix.currencies.lacking(out, b.Currencies[0], &buf)
	case b.Budget != nil && b.Budget.Currency != "":
		out = ix.currencies.lacking(out, b.Budget.Currency, &buf)
	}
	if b.DeliveryType != "" {
		out = ix.delivery.lacking(out, b.DeliveryType, &buf)
	}
	if b.HasFlight() {
		out = append(out, ix.flights...)
	}
	if !b.Flight.Start.IsZero() {
		out = append(out, ix.starts...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// lacking adds the rules whose lists lack v.
func (n *negation) lacking(out []int32, v string, buf *[64]byte) []int32 {
	if len(n.rules) == 0 {
		return out
	}
	if rules, ok := n.without[string(appendFold(buf[:0], v))]; ok {
		return append(out, rules...)
	}
	return append(out, n.rules...)
}

// NewIndex files the rulebook's rules. A nil rulebook gives a nil index,
// which evaluates to ErrNoRulebook as Evaluate(nil) does.
func NewIndex(rb *Rulebook) (ix *Index) {
	if rb == nil {
		return nil
	}
	defer func() {
		if recover() != nil {
			// Building cannot fail on any rulebook; were it to, every
			// rule is visited, which answers the same, only slower.
			ix = &Index{rb: rb}
			for i := range rb.Rules {
				if !rb.Rules[i].Disabled {
					ix.always = append(ix.always, int32(i))
				}
			}
		}
	}()
	return build(rb)
}

// filing is one way a rule can be filed: under which predicate, and the
// keys that predicate cannot hold without one of. For an "offered"
// predicate the keys are the rule's list, which the brief's value must
// lack; flights and starts have none.
type filing struct {
	by   by
	keys []string
}

// by names what a rule is filed by, most selective first: a brief rarely
// has a given domain, word or industry, often has a given channel or
// currency, and usually lacks some value of an "offered" list.
type by int

const (
	byDomain by = iota
	byWord
	byIndustry
	byScope
	byBudget
	byChannel
	byCountry
	byFormat
	byCurrency
	byDelivery
	byFlight
	byStart
	byCount
)

// tier groups the kinds of filing that are about as selective.
func (k by) tier() int {
	switch {
	case k <= byIndustry:
		return 0
	case k <= byBudget:
		return 1
	case k <= byDelivery:
		return 2
	}
	return 3
}

// indexedPredicates are the Condition fields filings knows. A predicate
// added to Condition must be filed too, or a rule holding only by it would
// be missed; a test compares this list with the type.
var indexedPredicates = []string{
	"Channels", "BudgetBelow", "ChannelsOffered", "SoldOut", "LeadTimeDays", "CountriesServed",
	"FormatKindsOffered", "Industries", "Keywords", "BrandDomains", "CurrenciesAccepted", "DeliveryTypesOffered",
}

// filings lists the ways a rule with condition c can be filed, or false
// when the rule can never fire: it has no predicate besides the scope, or
// a predicate that no brief satisfies (an empty list of domains,
// industries or windows; keywords that are all punctuation).
func filings(c *Condition) ([]filing, bool) {
	var out []filing
	n := 0
	add := func(present bool, k by, keys []string) {
		if present {
			n++
			out = append(out, filing{k, keys})
		}
	}
	if len(c.Channels) > 0 {
		out = append(out, filing{byScope, foldAll(c.Channels)})
	}
	if c.BudgetBelow != nil {
		add(true, byBudget, []string{fold(c.BudgetBelow.Currency)})
	}
	add(c.ChannelsOffered != nil, byChannel, foldAll(c.ChannelsOffered))
	add(c.SoldOut != nil, byFlight, nil)
	add(c.LeadTimeDays != nil, byStart, nil)
	add(c.CountriesServed != nil, byCountry, foldAll(c.CountriesServed))
	add(c.FormatKindsOffered != nil, byFormat, foldAll(c.FormatKindsOffered))
	add(c.CurrenciesAccepted != nil, byCurrency, foldAll(c.CurrenciesAccepted))
	add(c.DeliveryTypesOffered != nil, byDelivery, foldAll(c.DeliveryTypesOffered))
	if c.SoldOut != nil && len(c.SoldOut) == 0 {
		return nil, false
	}
	if c.Industries != nil {
		var keys []string
		for _, l := range c.Industries {
			keys = append(keys, strings.ToLower(strings.TrimSpace(l)))
		}
		add(true, byIndustry, distinct(keys))
	}
	if c.Keywords != nil {
		var keys []string
		for _, k := range c.Keywords {
			if w, _, _ := strings.Cut(normalised(k), " "); w != "" {
				keys = append(keys, w)
			}
		}
		add(true, byWord, distinct(keys))
	}
	if c.BrandDomains != nil {
		add(true, byDomain, distinct(slices.Clone(c.BrandDomains)))
	}
	for _, f := range out {
		if f.by <= byIndustry && len(f.keys) == 0 {
			return nil, false
		}
	}
	return out, n > 0
}

func build(rb *Rulebook) *Index {
	ix := &Index{rb: rb,
		domains: map[string][]int32{}, words: map[string][]int32{}, industries: map[string][]int32{},
		scopes: map[string][]int32{}, budgets: map[string][]floor{}}
	// How many rules each key could be filed under, to file each rule
	// where it is met least often.
	var counts [byCount]map[string]int
	for k := range counts {
		counts[k] = map[string]int{}
	}
	all := make([][]filing, len(rb.Rules))
	for i := range rb.Rules {
		if rb.Rules[i].Disabled {
			continue
		}
		fs, fires := filings(&rb.Rules[i].When)
		if !fires {
			continue
		}
		all[i] = fs
		for _, f := range fs {
			for _, key := range f.shared() {
				counts[f.by][key]++
			}
		}
	}
	negations := map[by]*negation{byChannel: &ix.channels, byCountry: &ix.countries, byFormat: &ix.formats, byCurrency: &ix.currencies, byDelivery: &ix.delivery}
	lists := map[by][][]string{}
	for i, fs := range all {
		if len(fs) == 0 {
			continue
		}
		cost := func(f filing) int {
			n := 0
			for _, key := range f.shared() {
				n += counts[f.by][key]
			}
			return n
		}
		best := slices.MinFunc(fs, func(a, b filing) int {
			return cmp.Or(cmp.Compare(a.by.tier(), b.by.tier()), cmp.Compare(cost(a), cost(b)), cmp.Compare(a.by, b.by))
		})
		rule := int32(i)
		switch best.by {
		case byDomain, byWord, byIndustry, byScope:
			m := ix.keyed(best.by)
			for _, key := range best.keys {
				m[key] = append(m[key], rule)
			}
		case byBudget:
			key := best.keys[0]
			ix.budgets[key] = append(ix.budgets[key], floor{rule, topFloor(rb.Rules[i].When.BudgetBelow)})
		case byFlight:
			ix.flights = append(ix.flights, rule)
		case byStart:
			ix.starts = append(ix.starts, rule)
		default:
			n := negations[best.by]
			n.rules = append(n.rules, rule)
			lists[best.by] = append(lists[best.by], best.keys)
		}
	}
	for _, fs := range ix.budgets {
		slices.SortStableFunc(fs, func(a, b floor) int { return -compareTop(a.top, b.top) })
	}
	for k, n := range negations {
		n.file(lists[k])
	}
	return ix
}

// keyed is the map of the rules filed by k, one of the kinds filed by key.
func (ix *Index) keyed(k by) map[string][]int32 {
	switch k {
	case byDomain:
		return ix.domains
	case byWord:
		return ix.words
	case byIndustry:
		return ix.industries
	}
	return ix.scopes
}

// shared are the keys a filing's count is kept under: its keys for the
// kinds filed by key, one for the kinds every brief with the dimension
// meets.
func (f filing) shared() []string {
	if f.by <= byBudget {
		return f.keys
	}
	return []string{""}
}

// file works out, for every value some rule lists, the rules whose lists
// lack it. lists[j] is the list of rule n.rules[j].
func (n *negation) file(lists [][]string) {
	n.without = map[string][]int32{}
	for _, l := range lists {
		for _, v := range l {
			n.without[v] = nil
		}
	}
	for v := range n.without {
		lacking := []int32{}
		for j, l := range lists {
			if !slices.Contains(l, v) {
				lacking = append(lacking, n.rules[j])
			}
		}
		n.without[v] = lacking
	}
}

// topFloor is the highest minimum of a budget rule: the applicable
// minimum is always one of its minimums, so a budget at or above the
// highest is below none. A NaN minimum makes it NaN, which no budget is at
// or above, as no budget is at or above a NaN minimum.
func topFloor(bf *BudgetFloor) float64 {
	top := bf.Minimum
	for _, v := range bf.PerChannel {
		if math.IsNaN(v) || math.IsNaN(top) {
			top = math.NaN()
		} else {
			top = math.Max(top, v)
		}
	}
	return top
}

// compareTop orders floors with NaN highest.
func compareTop(a, b float64) int {
	switch an, bn := math.IsNaN(a), math.IsNaN(b); {
	case an && bn:
		return 0
	case an:
		return 1
	case bn:
		return -1
	}
	return cmp.Compare(a, b)
}

func distinct(keys []string) []string {
	slices.Sort(keys)
	return slices.Compact(keys)
}

func foldAll(list []string) []string {
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = fold(s)
	}
	return distinct(out)
}

// fold is s case-folded as strings.EqualFold compares: two strings are
// EqualFold exactly when their folds are equal.
func fold(s string) string { return string(appendFold(nil, s)) }

// appendFold appends each rune of s, as range reads it (an invalid byte is
// utf8.RuneError, as EqualFold reads it too), replaced by the least rune of
// its simple case-folding orbit, lower-cased when that is an ASCII letter
// so that lower-case ASCII folds to itself.
func appendFold(dst []byte, s string) []byte {
	for _, r := range s {
		dst = utf8.AppendRune(dst, foldRune(r))
	}
	return dst
}

func foldRune(r rune) rune {
	if r < utf8.RuneSelf {
		if 'A' <= r && r <= 'Z' {
			r += 'a' - 'A'
		}
		return r
	}
	least := r
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		least = min(least, f)
	}
	if 'A' <= least && least <= 'Z' {
		least += 'a' - 'A'
	}
	return least
}
