package merch

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"unicode"

	"github.com/storefront/storefront/adcp"
	"github.com/storefront/storefront/vocab"
)

// ErrNoRulebook is returned when there is no rulebook to evaluate. The
// storefront answers with the error arm: it never serves products without
// a rulebook.
var ErrNoRulebook = errors.New("merch: no rulebook")

// Decision is the outcome of evaluating a rulebook against a brief.
type Decision struct {
	reasons []Reason
}

// Declined reports whether any rule fired.
func (d Decision) Declined() bool { return len(d.reasons) > 0 }

// Reasons returns the fired rules in rulebook order. The internal parts are
// for the ledger, logs and the publisher's preview only.
func (d Decision) Reasons() []Reason { return append([]Reason(nil), d.reasons...) }

// Grounds returns the public projection of the fired rules, in order.
func (d Decision) Grounds() []vocab.Grounds {
	out := make([]vocab.Grounds, len(d.reasons))
	for i, r := range d.reasons {
		out[i] = r.grounds
	}
	return out
}

// RuleIDs returns the internal ids of the fired rules, in order.
func (d Decision) RuleIDs() []string {
	out := make([]string, len(d.reasons))
	for i, r := range d.reasons {
		out[i] = r.RuleID
	}
	return out
}

// Reason is one fired rule.
type Reason struct {
	// Index is the rule's position in the rulebook.
	Index    int
	RuleID   string // confidential
	RuleName string // confidential
	Slug     vocab.Slug
	Level    vocab.Level
	grounds  vocab.Grounds
}

// Grounds returns the reason's public projection.
func (r Reason) Grounds() vocab.Grounds { return r.grounds }

// Evaluate runs every enabled rule against the brief, in rulebook order.
// It is the reference evaluation: Index.Evaluate, which serving uses,
// visits only the rules that can fire and must answer exactly as it does.
// It is pure: the same rulebook, brief and market always give the same
// decision. It never panics; an internal fault is returned as an error,
// which the caller must treat as a failure, not as an allow.
func Evaluate(rb *Rulebook, b Brief, m Market) (d Decision, err error) {
	if rb == nil {
		return Decision{}, ErrNoRulebook
	}
	defer recoverFault(&d, &err)
	if b.Today.IsZero() {
		return Decision{}, errNoDate
	}
	// The brief's words are normalised once, not once per keyword rule.
	hay := haystack(b.Text)
	for i := range rb.Rules {
		if !rb.Rules[i].Disabled {
			d.consider(rb, i, &b, &m, hay)
		}
	}
	return d, nil
}

var errNoDate = errors.New("merch: brief has no evaluation date")

// recoverFault turns a panic in evaluation into an error: the caller fails
// the request rather than serve products no rule was checked against.
func recoverFault(d *Decision, err *error) {
	if p := recover(); p != nil {
		*d, *err = Decision{}, fmt.Errorf("merch: evaluation fault: %v", p)
	}
}

// consider evaluates rule i and records it when it fires.
func (d *Decision) consider(rb *Rulebook, i int, b *Brief, m *Market, hay string) {
	// By pointer: a rule is large, and most do not fire.
	r := &rb.Rules[i]
	facts, fired := r.When.holds(b, m, hay)
	if !fired {
		return
	}
	d.reasons = append(d.reasons, Reason{
		Index:    i,
		RuleID:   r.ID,
		RuleName: r.Name,
		Slug:     r.Decline.Slug,
		Level:    r.Decline.Disclosure,
		grounds: vocab.Grounds{
			Slug:    r.Decline.Slug,
			Level:   r.Decline.Disclosure,
			Allowed: allowed(r.Decline),
			Facts:   facts,
		},
	})
}

func allowed(a Action) []vocab.SuggestionKind {
	e, ok := vocab.Lookup(a.Slug)
	if !ok {
		return nil
	}
	var out []vocab.SuggestionKind
	for _, k := range a.Suggest {
		if e.Allows(k) {
			out = append(out, k)
		}
	}
	return out
}

// holds evaluates every predicate; all present ones must hold. It returns
// the public facts the predicates established.
func (c *Condition) holds(b *Brief, m *Market, hay string) (vocab.Facts, bool) {
	var f vocab.Facts
	if len(c.Channels) > 0 {
		if len(b.Channels) == 0 || !allIn(b.Channels, c.Channels) {
			return f, false
		}
	}
	n := 0
	// check runs a predicate only when it is present: predicates record
	// facts as they go, and an absent one must not overwrite what a
	// present one found (an absent channels_offered would otherwise clear
	// the budget rule's alternative channels).
	check := func(present bool, ok func() bool) bool {
		if !present {
			return true
		}
		n++
		return ok()
	}
	if !check(c.BudgetBelow != nil, func() bool { return c.BudgetBelow.holds(b, m, &f) }) {
		return f, false
	}
	if !check(c.ChannelsOffered != nil, func() bool {
		return noneOffered(b.Channels, c.ChannelsOffered, m.Channels, &f.Channels, &f.AlternativeChannels)
	}) {
		return f, false
	}
	if !check(c.SoldOut != nil, func() bool { return soldOut(c.SoldOut, b, &f) }) {
		return f, false
	}
	if !check(c.LeadTimeDays != nil, func() bool { return leadTime(*c.LeadTimeDays, b, &f) }) {
		return f, false
	}
	if !check(c.CountriesServed != nil, func() bool {
		return noneOffered(b.Countries, c.CountriesServed, m.Countries, &f.Countries, &f.ServedCountries)
	}) {
		return f, false
	}
	if !check(c.FormatKindsOffered != nil, func() bool {
		return noneOffered(b.FormatKinds, c.FormatKindsOffered, m.FormatKinds, &f.FormatKinds, &f.OfferedFormatKinds)
	}) {
		return f, false
	}
	if !check(c.Industries != nil, func() bool { return industryMatch(b.Industries, c.Industries) }) {
		return f, false
	}
	if !check(c.Keywords != nil, func() bool { return keywordMatch(hay, c.Keywords) }) {
		return f, false
	}
	if !check(c.BrandDomains != nil, func() bool { return domainMatch(b.BrandDomain, c.BrandDomains) }) {
		return f, false
	}
	if !check(c.CurrenciesAccepted != nil, func() bool { return currencyRefused(b, c.CurrenciesAccepted) }) {
		return f, false
	}
	if !check(c.DeliveryTypesOffered != nil, func() bool {
		return b.DeliveryType != "" && !containsFold(c.DeliveryTypesOffered, b.DeliveryType)
	}) {
		return f, false
	}
	return f, n > 0
}

// holds is the budget predicate: the buyer's budget is below the minimum
// of the cheapest channel it could be served on.
func (bf *BudgetFloor) holds(b *Brief, m *Market, f *vocab.Facts) bool {
	amount, ok := b.Budget.Amount()
	if !ok || !strings.EqualFold(b.Budget.Currency, bf.Currency) {
		return false
	}
	min := func(ch string) float64 {
		if v, ok := bf.PerChannel[ch]; ok {
			return v
		}
		return bf.Minimum
	}
	// The minimum that applies is the cheapest among the channels asked
	// that the seller carries: a channel it does not carry cannot be
	// served at any budget, so its minimum would be a figure that serves
	// nothing.
	candidates := intersect(b.Channels, m.Channels)
	if len(candidates) == 0 {
		candidates = b.Channels
	}
	if len(candidates) == 0 {
		candidates = m.Channels
	}
	applicable := math.Inf(1)
	for _, ch := range candidates {
		applicable = math.Min(applicable, min(ch))
	}
	if math.IsInf(applicable, 1) {
		applicable = bf.Minimum
	}
	if amount >= applicable {
		return false
	}
	f.Currency = bf.Currency
	f.Budget = amount
	f.Minimum = applicable
	f.Channels = append([]string(nil), b.Channels...)
	var alts []string
	for _, ch := range m.Channels {
		if !containsFold(b.Channels, ch) && min(ch) <= amount {
			alts = append(alts, ch)
		}
	}
	sort.SliceStable(alts, func(i, j int) bool { return min(alts[i]) < min(alts[j]) })
	f.AlternativeChannels = alts
	return true
}

// noneOffered holds when the buyer asked for values and none is offered. It
// records what was asked and what could be asked instead (offered values the
// catalogue actually carries, when the market says).
func noneOffered(asked, offered, market []string, gotAsked, gotAlt *[]string) bool {
	if len(asked) == 0 || len(intersect(asked, offered)) > 0 {
		return false
	}
	*gotAsked = append([]string(nil), asked...)
	alts := offered
	if len(market) > 0 {
		alts = intersect(offered, market)
	}
	*gotAlt = append([]string(nil), alts...)
	return true
}

func windowApplies(w Window, channels []string) bool {
	if len(w.Channels) == 0 {
		return true
	}
	return len(channels) > 0 && len(minus(channels, w.Channels)) == 0
}

// soldOut holds when the flight overlaps a window that applies to the
// channels asked for. It looks for the first open flight of the same length
// after the clash, within a year.
func soldOut(ws []Window, b *Brief, f *vocab.Facts) bool {
	if !b.HasFlight() {
		return false
	}
	clash := func(r adcp.DateRange) bool {
		for _, w := range ws {
			if windowApplies(w, b.Channels) && r.Overlaps(adcp.DateRange{Start: w.Start, End: w.End}) {
				return true
			}
		}
		return false
	}
	if !clash(b.Flight) {
		return false
	}
	f.Flight = b.Flight
	length := b.Flight.Days()
	start := b.Flight.Start
	limit := b.Flight.Start.AddDays(366)
	for start.Before(limit) {
		r := adcp.DateRange{Start: start, End: start.AddDays(length - 1)}
		if !clash(r) && !start.Before(b.Today) {
			f.OpenFlight = &r
			break
		}
		start = start.AddDays(1)
	}
	return true
}

func leadTime(days int, b *Brief, f *vocab.Facts) bool {
	if b.Flight.Start.IsZero() {
		return false
	}
	earliest := b.Today.AddDays(days)
	if !b.Flight.Start.Before(earliest) {
		return false
	}
	f.Flight = b.Flight
	f.EarliestStart = earliest
	f.LeadDays = days
	return true
}

func industryMatch(have, listed []string) bool {
	for _, h := range have {
		h = strings.ToLower(strings.TrimSpace(h))
		for _, l := range listed {
			l = strings.ToLower(strings.TrimSpace(l))
			if h == l || strings.HasPrefix(h, l+".") {
				return true
			}
		}
	}
	return false
}

// keywordMatch looks for each keyword as a whole word or phrase in the
// brief, comparing case-folded letter-and-digit runs so punctuation and
// spacing cannot hide it.
func keywordMatch(hay string, keywords []string) bool {
	if hay == "" {
		return false
	}
	for _, k := range keywords {
		if needle := normalised(k); needle != "" && containsWord(hay, needle) {
			return true
		}
	}
	return false
}

// containsWord finds needle in hay as whole words: hay is a haystack, with
// a space at each end, so a match always has a byte on each side.
func containsWord(hay, needle string) bool {
	for i := 0; i < len(hay); {
		j := strings.Index(hay[i:], needle)
		if j < 0 {
			return false
		}
		j += i
		if j > 0 && hay[j-1] == ' ' && j+len(needle) < len(hay) && hay[j+len(needle)] == ' ' {
			return true
		}
		i = j + 1
	}
	return false
}

// haystack is text as lower-case words separated by single spaces, with a
// space at each end, so that " word " finds whole words and phrases.
func haystack(text string) string {
	if text == "" {
		return ""
	}
	return joinWords(tokens(text))
}

// joinWords is the haystack of a text's tokens.
func joinWords(words []string) string { return " " + strings.Join(words, " ") + " " }

// normalised is a keyword as lower-case words separated by single spaces.
// Keywords usually already are, and then cost no allocation.
func normalised(k string) string {
	plain := k != "" && k[0] != ' ' && k[len(k)-1] != ' '
	for i := 0; plain && i < len(k); i++ {
		c := k[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		case c == ' ' && k[i-1] != ' ':
		default:
			plain = false
		}
	}
	if plain {
		return k
	}
	return strings.Join(tokens(k), " ")
}

func tokens(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}

func domainMatch(domain string, listed []string) bool {
	domain = strings.ToLower(strings.TrimSuffix(domain, "."))
	if domain == "" {
		return false
	}
	for _, l := range listed {
		if domain == l || strings.HasSuffix(domain, "."+l) {
			return true
		}
	}
	return false
}

func currencyRefused(b *Brief, accepted []string) bool {
	asked := append([]string(nil), b.Currencies...)
	if b.Budget != nil && b.Budget.Currency != "" {
		asked = append(asked, b.Budget.Currency)
	}
	return len(asked) > 0 && len(intersect(asked, accepted)) == 0
}
