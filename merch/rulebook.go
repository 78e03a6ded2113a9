package merch

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/storefront/storefront/adcp"
	"github.com/storefront/storefront/jsonfield"
	"github.com/storefront/storefront/sanitize"
	"github.com/storefront/storefront/vocab"
)

// Format is the rulebook document format this package reads and writes.
const Format = "storefront.rulebook/v1"

// Rulebook is a publisher's merchandising rulebook: the document publishers
// edit. Rules are evaluated in order; every rule whose condition holds
// fires, and the first one leads the decline.
type Rulebook struct {
	// Format names the document format; it must be Format.
	Format string `json:"format" jsonschema:"enum=storefront.rulebook/v1"`
	// Voice is how declines read: the seller's public name, tone and
	// optional per-slug templates.
	Voice vocab.Voice `json:"voice,omitempty"`
	// Rules, in evaluation order.
	Rules []Rule `json:"rules"`
	// Orders says which media buys wait for the publisher's approval
	// (orders.go).
	Orders *Orders `json:"orders,omitempty"`
}

// Rule is one merchandising rule.
type Rule struct {
	// ID is the publisher's internal id for the rule. Confidential.
	ID string `json:"id" jsonschema:"minLength=1,maxLength=128"`
	// Name is the rule's internal name. Confidential.
	Name string `json:"name" jsonschema:"minLength=1,maxLength=200"`
	// Notes are internal notes. Confidential; their identifying words are
	// kept out of everything a buyer sees.
	Notes string `json:"notes,omitempty" jsonschema:"maxLength=4000"`
	// ConfidentialTerms are further strings that must never reach a
	// buyer: partner names, deal ids, codenames.
	ConfidentialTerms []string `json:"confidential_terms,omitempty"`
	// Disabled rules are kept in the document but never fire.
	Disabled bool `json:"disabled,omitempty"`
	// When is the condition. Every predicate given must hold.
	When Condition `json:"when"`
	// Decline is what the buyer is told when the rule fires.
	Decline Action `json:"decline"`
}

// Condition is a conjunction of predicates over the brief. A predicate that
// is absent does not constrain. At least one predicate besides the channel
// scope must be given.
type Condition struct {
	// Channels scopes the rule: it applies only to briefs that ask for
	// channels and ask only for channels in this list.
	Channels []string `json:"channels,omitempty"`
	// BudgetBelow holds when the buyer's budget is below the minimum for
	// the cheapest channel it asked for (or, when it asked for none, the
	// cheapest channel the catalogue carries).
	BudgetBelow *BudgetFloor `json:"budget_below,omitempty"`
	// ChannelsOffered holds when the buyer asks only for channels outside
	// this list.
	ChannelsOffered []string `json:"channels_offered,omitempty"`
	// SoldOut holds when the buyer's flight overlaps one of the windows.
	SoldOut []Window `json:"sold_out,omitempty"`
	// LeadTimeDays holds when the flight starts fewer than this many days
	// after the day of the request.
	LeadTimeDays *int `json:"lead_time_days,omitempty" jsonschema:"minimum=0,maximum=365"`
	// CountriesServed holds when the buyer asks only for markets outside
	// this list.
	CountriesServed []string `json:"countries_served,omitempty"`
	// FormatKindsOffered holds when the buyer asks only for format kinds
	// outside this list.
	FormatKindsOffered []string `json:"format_kinds_offered,omitempty"`
	// Industries holds when the brand declares one of these industries
	// or a sub-industry of one ("gambling_betting" covers
	// "gambling_betting.casino").
	Industries []string `json:"industries,omitempty"`
	// Keywords holds when the brief text contains one of these words or
	// phrases, ignoring case.
	Keywords []string `json:"keywords,omitempty"`
	// BrandDomains holds when the brand's domain is one of these or a
	// subdomain of one.
	BrandDomains []string `json:"brand_domains,omitempty"`
	// CurrenciesAccepted holds when the buyer names currencies and none
	// is in this list.
	CurrenciesAccepted []string `json:"currencies_accepted,omitempty"`
	// DeliveryTypesOffered holds when the buyer asks for a delivery type
	// outside this list.
	DeliveryTypesOffered []string `json:"delivery_types_offered,omitempty"`
}

// BudgetFloor is a minimum budget, with optional per-channel minimums, in
// one currency. A budget in another currency is not compared; pair the rule
// with a CurrenciesAccepted rule to decline those.
type BudgetFloor struct {
	Currency   string             `json:"currency" jsonschema:"pattern=^[A-Z]{3}$"`
	Minimum    float64            `json:"minimum" jsonschema:"minimum=0"`
	PerChannel map[string]float64 `json:"per_channel,omitempty"`
}

// Window is an inclusive range of sold-out dates, optionally for some
// channels only.
type Window struct {
	Start    adcp.Date `json:"start"`
	End      adcp.Date `json:"end"`
	Channels []string  `json:"channels,omitempty"`
}

// Action is what a firing rule tells the buyer.
type Action struct {
	// Slug is the public decline category.
	Slug vocab.Slug `json:"slug"`
	// Disclosure is how much the buyer may learn.
	Disclosure vocab.Level `json:"disclosure"`
	// Suggest lists the suggestion kinds the rule may offer. Only kinds
	// the slug can carry are allowed.
	Suggest []vocab.SuggestionKind `json:"suggest,omitempty"`
}

// Validate checks the whole document and returns every failure, each with
// a JSON pointer. A rulebook with any failure must be refused whole.
func (rb *Rulebook) Validate() error {
	var v jsonfield.Invalid
	if rb == nil {
		v.Add("", "rulebook is missing")
		return v
	}
	if rb.Format != Format {
		v.Add("/format", "format must be %q", Format)
	}
	validateVoice(&v, rb.Voice)
	ids := map[string]int{}
	for i, r := range rb.Rules {
		p := jsonfield.Pointer("rules", i)
		validateRule(&v, p, r)
		if r.ID != "" {
			if j, dup := ids[r.ID]; dup {
				v.Add(p+"/id", "rule id %q is already used by /rules/%d", r.ID, j)
			} else {
				ids[r.ID] = i
			}
		}
	}
	validateContradictions(&v, rb)
	validateOrders(&v, rb, ids)
	return v.Err()
}

func validateVoice(v *jsonfield.Invalid, vo vocab.Voice) {
	if n := len([]rune(vo.SellerName)); n > vocab.MaxSellerName {
		v.Add("/voice/seller_name", "seller name is %d characters; the limit is %d", n, vocab.MaxSellerName)
	}
	if _, err := vocab.ParseTone(string(vo.Tone)); err != nil {
		v.Add("/voice/tone", "%v", err)
	}
	slugs := make([]string, 0, len(vo.Templates))
	for s := range vo.Templates {
		slugs = append(slugs, string(s))
	}
	sort.Strings(slugs)
	for _, s := range slugs {
		p := jsonfield.Pointer("voice", "templates", s)
		if _, err := vocab.ParseSlug(s); err != nil {
			v.Add(p, "%v", err)
			continue
		}
		if err := vocab.CheckTemplate(vo.Templates[vocab.Slug(s)]); err != nil {
			v.Add(p, "%v", err)
		}
	}
}

func validateRule(v *jsonfield.Invalid, p string, r Rule) {
	checkText(v, p+"/id", "id", r.ID, 128, true)
	checkText(v, p+"/name", "name", r.Name, 200, true)
	checkText(v, p+"/notes", "notes", r.Notes, 4000, false)
	for i, t := range r.ConfidentialTerms {
		checkText(v, jsonfield.Join(p, "confidential_terms", i), "confidential term", t, 200, true)
	}
	if n := validateCondition(v, p+"/when", r.When); n == 0 {
		v.Add(p+"/when", "condition has no predicate; a rule must say when it fires")
	}
	validateAction(v, p+"/decline", r)
}

// validateCondition checks a condition at pointer wp and returns how many
// predicates it has besides the channel scope.
func validateCondition(v *jsonfield.Invalid, wp string, c Condition) int {
	checkEnum(v, wp+"/channels", c.Channels, adcp.IsChannel, "channel")
	n := 0
	if c.BudgetBelow != nil {
		n++
		bp := wp + "/budget_below"
		if !adcp.IsCurrency(c.BudgetBelow.Currency) {
			v.Add(bp+"/currency", "currency must be an ISO 4217 code such as USD")
		}
		if c.BudgetBelow.Minimum < 0 {
			v.Add(bp+"/minimum", "minimum must not be negative")
		}
		for _, ch := range sortedKeys(c.BudgetBelow.PerChannel) {
			if !adcp.IsChannel(ch) {
				v.Add(jsonfield.Join(bp, "per_channel", ch), "%q is not an AdCP channel", ch)
			}
			if c.BudgetBelow.PerChannel[ch] < 0 {
				v.Add(jsonfield.Join(bp, "per_channel", ch), "minimum must not be negative")
			}
		}
	}
	if c.ChannelsOffered != nil {
		n++
		checkNonEmpty(v, wp+"/channels_offered", c.ChannelsOffered)
		checkEnum(v, wp+"/channels_offered", c.ChannelsOffered, adcp.IsChannel, "channel")
	}
	if c.SoldOut != nil {
		n++
		checkNonEmpty(v, wp+"/sold_out", c.SoldOut)
		for i, w := range c.SoldOut {
			ip := jsonfield.Join(wp, "sold_out", i)
			if w.Start.IsZero() {
				v.Add(ip+"/start", "start date is required")
			}
			if w.End.IsZero() {
				v.Add(ip+"/end", "end date is required")
			}
			if !w.Start.IsZero() && !w.End.IsZero() && w.End.Before(w.Start) {
				v.Add(ip+"/end", "end date %s is before start date %s", w.End, w.Start)
			}
			checkEnum(v, ip+"/channels", w.Channels, adcp.IsChannel, "channel")
		}
	}
	if c.LeadTimeDays != nil {
		n++
		if *c.LeadTimeDays < 0 || *c.LeadTimeDays > 365 {
			v.Add(wp+"/lead_time_days", "lead time must be between 0 and 365 days")
		}
	}
	if c.CountriesServed != nil {
		n++
		checkNonEmpty(v, wp+"/countries_served", c.CountriesServed)
		checkEnum(v, wp+"/countries_served", c.CountriesServed, adcp.IsCountry, "ISO 3166-1 alpha-2 country code")
	}
	if c.FormatKindsOffered != nil {
		n++
		checkNonEmpty(v, wp+"/format_kinds_offered", c.FormatKindsOffered)
		checkEnum(v, wp+"/format_kinds_offered", c.FormatKindsOffered, adcp.IsFormatKind, "format kind")
	}
	if c.Industries != nil {
		n++
		checkNonEmpty(v, wp+"/industries", c.Industries)
		for i, s := range c.Industries {
			checkText(v, jsonfield.Join(wp, "industries", i), "industry", s, 100, true)
		}
	}
	if c.Keywords != nil {
		n++
		checkNonEmpty(v, wp+"/keywords", c.Keywords)
		for i, s := range c.Keywords {
			checkText(v, jsonfield.Join(wp, "keywords", i), "keyword", s, 100, true)
		}
	}
	if c.BrandDomains != nil {
		n++
		checkNonEmpty(v, wp+"/brand_domains", c.BrandDomains)
		checkEnum(v, wp+"/brand_domains", c.BrandDomains, adcp.IsDomain, "lower-case domain name")
	}
	if c.CurrenciesAccepted != nil {
		n++
		checkNonEmpty(v, wp+"/currencies_accepted", c.CurrenciesAccepted)
		checkEnum(v, wp+"/currencies_accepted", c.CurrenciesAccepted, adcp.IsCurrency, "ISO 4217 currency code")
	}
	if c.DeliveryTypesOffered != nil {
		n++
		checkNonEmpty(v, wp+"/delivery_types_offered", c.DeliveryTypesOffered)
		checkEnum(v, wp+"/delivery_types_offered", c.DeliveryTypesOffered, adcp.IsDeliveryType, "delivery type")
	}
	return n
}

func validateAction(v *jsonfield.Invalid, ap string, r Rule) {
	entry, ok := vocab.Lookup(r.Decline.Slug)
	if !ok {
		v.Add(ap+"/slug", "%q is not a published decline slug (want one of %s)", r.Decline.Slug, strings.Join(vocab.Slugs(), ", "))
	}
	if r.Decline.Disclosure < vocab.None || r.Decline.Disclosure > vocab.Exact {
		v.Add(ap+"/disclosure", "disclosure must be none, category, range or exact")
	}
	seen := map[vocab.SuggestionKind]bool{}
	for i, k := range r.Decline.Suggest {
		kp := jsonfield.Join(ap, "suggest", i)
		if _, err := vocab.ParseSuggestionKind(string(k)); err != nil {
			v.Add(kp, "%v", err)
			continue
		}
		if seen[k] {
			v.Add(kp, "suggestion kind %q is listed twice", k)
		}
		seen[k] = true
		if ok && !entry.Allows(k) {
			v.Add(kp, "slug %q cannot carry %q suggestions", entry.Slug, k)
		}
	}
}

func checkText(v *jsonfield.Invalid, p, what, s string, max int, required bool) {
	if required && strings.TrimSpace(s) == "" {
		v.Add(p, "%s is required", what)
		return
	}
	if n := len([]rune(s)); n > max {
		v.Add(p, "%s is %d characters; the limit is %d", what, n, max)
	}
}

func checkNonEmpty[T any](v *jsonfield.Invalid, p string, list []T) {
	if len(list) == 0 {
		v.Add(p, "list must not be empty; leave the predicate out instead")
	}
}

func checkEnum(v *jsonfield.Invalid, p string, list []string, ok func(string) bool, what string) {
	for i, s := range list {
		if !ok(s) {
			v.Add(jsonfield.Join(p, i), "%q is not a valid %s", s, what)
		}
	}
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// validateContradictions refuses rulebooks whose rules cannot all be meant
// together: two enabled, unscoped rules that each list what is offered for
// the same dimension but share nothing, so every value would be declined by
// one or the other; and two budget floors for the same channel and currency
// that disagree.
func validateContradictions(v *jsonfield.Invalid, rb *Rulebook) {
	type offer struct {
		idx  int
		list []string
	}
	dims := []struct {
		name string
		get  func(Condition) []string
	}{
		{"channels_offered", func(c Condition) []string { return c.ChannelsOffered }},
		{"countries_served", func(c Condition) []string { return c.CountriesServed }},
		{"format_kinds_offered", func(c Condition) []string { return c.FormatKindsOffered }},
		{"currencies_accepted", func(c Condition) []string { return c.CurrenciesAccepted }},
		{"delivery_types_offered", func(c Condition) []string { return c.DeliveryTypesOffered }},
	}
	for _, d := range dims {
		var offers []offer
		for i, r := range rb.Rules {
			if r.Disabled || len(r.When.Channels) > 0 || onlyPredicate(r.When) != d.name {
				continue
			}
			if l := d.get(r.When); len(l) > 0 {
				offers = append(offers, offer{i, l})
			}
		}
		for a := 0; a < len(offers); a++ {
			for b := a + 1; b < len(offers); b++ {
				if len(intersect(offers[a].list, offers[b].list)) == 0 {
					v.Add(jsonfield.Pointer("rules", offers[b].idx, "when", d.name),
						"contradicts /rules/%d/when/%s: the two lists share nothing, so every value would be declined by one of the rules",
						offers[a].idx, d.name)
				}
			}
		}
	}
	type floor struct {
		idx int
		min float64
	}
	floors := map[string]floor{}
	for i, r := range rb.Rules {
		b := r.When.BudgetBelow
		if r.Disabled || b == nil || onlyPredicate(r.When) != "budget_below" || len(r.When.Channels) > 0 {
			continue
		}
		for _, ch := range sortedKeys(b.PerChannel) {
			key := b.Currency + "/" + ch
			if f, ok := floors[key]; ok && f.min != b.PerChannel[ch] {
				v.Add(jsonfield.Pointer("rules", i, "when", "budget_below", "per_channel", ch),
					"contradicts /rules/%d: %s minimum for %s is %g there and %g here",
					f.idx, b.Currency, ch, f.min, b.PerChannel[ch])
			} else if !ok {
				floors[key] = floor{i, b.PerChannel[ch]}
			}
		}
	}
}

// onlyPredicate names the condition's single predicate, or "" when it has
// several; contradictions are only certain between single-predicate rules.
func onlyPredicate(c Condition) string {
	var names []string
	if c.BudgetBelow != nil {
		names = append(names, "budget_below")
	}
	add := func(name string, present bool) {
		if present {
			names = append(names, name)
		}
	}
	add("channels_offered", c.ChannelsOffered != nil)
	add("sold_out", c.SoldOut != nil)
	add("lead_time_days", c.LeadTimeDays != nil)
	add("countries_served", c.CountriesServed != nil)
	add("format_kinds_offered", c.FormatKindsOffered != nil)
	add("industries", c.Industries != nil)
	add("keywords", c.Keywords != nil)
	add("brand_domains", c.BrandDomains != nil)
	add("currencies_accepted", c.CurrenciesAccepted != nil)
	add("delivery_types_offered", c.DeliveryTypesOffered != nil)
	if len(names) != 1 {
		return ""
	}
	return names[0]
}

// Lint applies the authoring rules a rulebook must pass to be saved, on top
// of Validate: voice templates must be plain, public and inert (no
// internal placeholders, links, markdown, control or bidi characters, or
// instructions aimed at a model). Whether a template or the seller name
// names anything confidential is judged by the screen the saved rulebook
// would serve with, which needs the catalogue too (products.LintVoice).
func (rb *Rulebook) Lint() error {
	var v jsonfield.Invalid
	if rb == nil {
		return nil
	}
	slugs := make([]string, 0, len(rb.Voice.Templates))
	for s := range rb.Voice.Templates {
		slugs = append(slugs, string(s))
	}
	sort.Strings(slugs)
	for _, s := range slugs {
		if err := vocab.LintTemplate(rb.Voice.Templates[vocab.Slug(s)]); err != nil {
			v.Add(jsonfield.Pointer("voice", "templates", s), "%v", err)
		}
	}
	return v.Err()
}

// ConfidentialTerms lists everything confidential in the rulebook: rule
// ids and names, confidential terms, and the identifying words of names
// and notes. They form the screen's deny-list, with the catalogue's.
func (rb *Rulebook) ConfidentialTerms() []sanitize.Term {
	if rb == nil {
		return nil
	}
	var terms []sanitize.Term
	for _, r := range rb.Rules {
		terms = append(terms, ruleTerms(r.ID, r.Name, r.Notes, r.ConfidentialTerms)...)
	}
	return append(terms, rb.Orders.confidentialTerms()...)
}

// ruleTerms are one rule's confidential parts: its id and name, its
// confidential terms, and the identifying words of its name and notes.
func ruleTerms(id, name, notes string, confidential []string) []sanitize.Term {
	terms := []sanitize.Term{{Value: id, Kind: sanitize.KindRuleID}, {Value: name, Kind: sanitize.KindRuleName}}
	for _, t := range confidential {
		terms = append(terms, sanitize.Term{Value: t, Kind: sanitize.KindCustom})
	}
	terms = append(terms, sanitize.NoteTerms(notes, sanitize.KindNoteTerm)...)
	// Every distinctive word of the notes is a term too, capitalised or
	// not: informal notes name people in lower case.
	if notes != "" {
		terms = append(terms, sanitize.Term{Value: notes, Kind: sanitize.KindNoteTerm, Field: true})
	}
	return append(terms, sanitize.NoteTerms(name, sanitize.KindRuleName)...)
}

// DisclosedFigures lists the figures the rules may tell a buyer as they
// are: the budget minimums and lead times of rules that disclose at exact
// level, as plain numbers. A number of a confidential id that is one of
// them is not a term on its own: it is a figure the rule discloses.
func (rb *Rulebook) DisclosedFigures() []string {
	if rb == nil {
		return nil
	}
	var out []string
	num := func(v float64) {
		if v > 0 {
			out = append(out, strconv.FormatFloat(math.Ceil(v*100-1e-9)/100, 'f', -1, 64))
		}
	}
	for _, r := range rb.Rules {
		if r.Decline.Disclosure < vocab.Exact {
			continue
		}
		if b := r.When.BudgetBelow; b != nil {
			num(b.Minimum)
			for _, v := range b.PerChannel {
				num(v)
			}
		}
		if r.When.LeadTimeDays != nil {
			num(float64(*r.When.LeadTimeDays))
		}
	}
	sort.Strings(out)
	return out
}

// String is for logs: it names the rule by id only.
func (r Rule) String() string { return fmt.Sprintf("rule %s", r.ID) }
