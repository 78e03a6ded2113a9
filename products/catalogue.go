package products

import (
	"encoding/json"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode"

	"github.com/storefront/storefront/adcp"
	"github.com/storefront/storefront/decline"
	"github.com/storefront/storefront/merch"
	"github.com/storefront/storefront/sanitize"
	"github.com/storefront/storefront/vocab"
)

// Publisher is the public identity of a publisher the storefront serves.
type Publisher struct {
	ID     string `json:"id"`
	Name   string `json:"name"`
	Domain string `json:"domain"`
	// AnonymousDiscovery allows get_products without credentials for
	// public (account-less) requests.
	AnonymousDiscovery bool `json:"anonymous_discovery"`
}

// Snapshot is one consistent view of a publisher: catalogue, rulebook and
// the screen built from both. A request is served from exactly one
// snapshot, so it never sees half of an edit. Snapshots are immutable.
type Snapshot struct {
	Publisher        Publisher
	CatalogueVersion int64
	RulebookVersion  int64
	// Rulebook is nil when the publisher has none; such a snapshot
	// answers every get_products with the error arm.
	Rulebook *merch.Rulebook
	// Rules is the rulebook's index, which every evaluation goes
	// through; nil with the rulebook.
	Rules     *merch.Index
	Catalogue *Catalogue
	// Screen guards every buyer-visible string made from this snapshot.
	Screen *sanitize.Screen
	// BuiltAt is when the snapshot cache built the snapshot, on the
	// program's clock; zero for one built for a single preview.
	BuiltAt time.Time
	// declines are the declines composed from this snapshot; nil keeps
	// none.
	declines *declines
}

// NewSnapshot builds a snapshot: the rulebook's index; the deny-list from
// the rulebook's confidential parts, the catalogue's internal references
// and the known vendors; the screen over it; and the catalogue's
// pre-screened wire form.
func NewSnapshot(pub Publisher, catalogue []Product, catalogueVersion int64, rb *merch.Rulebook, rulebookVersion int64) *Snapshot {
	screen := ServingScreen(pub, rb, catalogue)
	s := &Snapshot{
		Publisher:        pub,
		CatalogueVersion: catalogueVersion,
		RulebookVersion:  rulebookVersion,
		Rulebook:         rb,
		Rules:            merch.NewIndex(rb),
		Catalogue:        newCatalogue(catalogue, screen, confidentialText(rb, catalogue)),
		Screen:           screen,
	}
	s.declines = newDeclines(sourcesOf(s))
	return s
}

// ServingScreen is the screen a snapshot of pub, rb and catalogue serves
// with. The admin API lints what it saves with the same screen, so that
// what is stored is what is served.
func ServingScreen(pub Publisher, rb *merch.Rulebook, catalogue []Product) *sanitize.Screen {
	return sanitize.New(sanitize.Compile(DenyTerms(rb, catalogue), ServingPublic(pub, rb, catalogue)))
}

// publicIdentity is who the publisher says it is to every buyer: its name
// and domain and the domains its products are sold on. A confidential term
// that is one of them keeps no secret, and blocking it would withhold every
// product sold on the domain.
func publicIdentity(pub Publisher, catalogue []Product) []string {
	out := []string{pub.Name, pub.Domain}
	seen := map[string]bool{}
	for _, p := range catalogue {
		for _, pp := range p.PublisherProperties {
			if !seen[pp.PublisherDomain] {
				seen[pp.PublisherDomain] = true
				out = append(out, pp.PublisherDomain)
			}
		}
	}
	return out
}

// NewSeededSnapshot serves a sandbox principal its own seeded products
// under base's rulebook. The products are the buyer's own words: they are
// cleaned of markup and vendor names but never matched against the
// publisher's deny-list, which would tell the buyer which of the words it
// seeded are the publisher's secrets. Declines are composed from the
// publisher's text, so they keep base's screen. The caller stamps BuiltAt
// from the program's clock, as for every snapshot.
func NewSeededSnapshot(base *Snapshot, seeds []Product, version int64) *Snapshot {
	s := &Snapshot{
		Publisher:        base.Publisher,
		CatalogueVersion: version,
		RulebookVersion:  base.RulebookVersion,
		Rulebook:         base.Rulebook,
		Rules:            base.Rules,
		Catalogue:        newCatalogue(seeds, sanitize.Vendor(), nil),
		Screen:           base.Screen,
	}
	s.declines = newDeclines(sourcesOf(s))
	return s
}

// confidentialText is every confidential field of rb and catalogue as
// written.
func confidentialText(rb *merch.Rulebook, catalogue []Product) []string {
	out := rb.ConfidentialText()
	for _, p := range catalogue {
		if p.InternalRef != "" {
			out = append(out, p.InternalRef)
		}
	}
	return out
}

// DenyTerms lists everything confidential in a rulebook and catalogue.
func DenyTerms(rb *merch.Rulebook, catalogue []Product) []sanitize.Term {
	terms := rb.ConfidentialTerms()
	for _, p := range catalogue {
		if p.InternalRef != "" {
			terms = append(terms, sanitize.Term{Value: p.InternalRef, Kind: sanitize.KindCatalogID})
		}
	}
	return append(terms, sanitize.VendorTerms()...)
}

// PublicText is what a publisher already shows every buyer, whose words
// no confidential field can make secret: its name and domain, the
// structured public facts of its products (a reporting timezone such
// as America/New_York, properties, channels, markets, the figures of its
// prices), and the figures its rules disclose. Free text and identifiers
// (names, descriptions, format params, signal names, product and pricing
// ids) and the voice (seller name, templates) are left out: they are where a careless insider pastes a secret,
// and a word pasted there must not make itself public.
func PublicText(pub Publisher, catalogue []Product, rb *merch.Rulebook) []string {
	out := append([]string{pub.Name, pub.Domain}, rb.DisclosedFigures()...)
	for _, p := range catalogue {
		var prices []string
		for _, po := range p.PricingOptions {
			walkJSON(po, nil, func(n string) { prices = append(prices, n) })
		}
		// Of a product's publisher properties only the domains are public
		// facts: ids and tags are publisher-written, and a secret written
		// into one must not make itself public.
		var domains []string
		for _, pp := range p.PublisherProperties {
			domains = append(domains, pp.PublisherDomain)
		}
		facts := struct {
			Domains   []string
			Channels  []string
			Delivery  string
			Reporting ReportingCapabilities
			Video     []string
			Audio     []string
			Excl      string
			Countries []string
		}{domains, p.Channels, p.DeliveryType, p.ReportingCapabilities, p.VideoPlacementTypes, p.AudioDistributionTypes, p.Exclusivity, p.Countries}
		add := func(s string) { out = append(out, s) }
		walkJSON(facts, add, add)
		out = append(out, prices...)
	}
	return out
}

// walkJSON calls str for every string and num for every number of v as
// JSON; a nil func skips its kind.
func walkJSON(v any, str, num func(string)) {
	b, err := json.Marshal(v)
	if err != nil {
		return
	}
	var tree any
	if json.Unmarshal(b, &tree) != nil {
		return
	}
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			if str != nil {
				str(x)
			}
		case float64:
			if num != nil {
				num(strconv.FormatFloat(x, 'f', -1, 64))
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(tree)
}

// PublicLexicon is the storefront's own buyer-facing wording. A
// confidential term that is just one of these words or phrases carries no
// secret, and blocking it would silence the canned lines themselves.
func PublicLexicon() []string {
	entries := vocab.Vocabulary()
	out := make([]string, 0, len(entries)+len(adcp.Channels())*2+len(adcp.FormatKinds())*2+4)
	for _, e := range entries {
		out = append(out, e.Reason)
	}
	for _, ch := range adcp.Channels() {
		out = append(out, ch, decline.ChannelLabel(ch))
	}
	for _, k := range adcp.FormatKinds() {
		out = append(out, k, decline.FormatLabel(k))
	}
	return append(out,
		sanitize.Declined.String(), sanitize.Internal.String(), sanitize.Unavailable.String(),
		"would fit this brief budget flight inventory channel market format creative")
}

// Catalogue is a snapshot's indexed, screened catalogue.
type Catalogue struct {
	entries []*entry
	market  merch.Market
	index   *index
	lines   relevanceLines
	// texts is the room left for the entries' escaped encodings (text).
	texts textRoom
}

type entry struct {
	p      Product
	kinds  []string
	fields []wireField // AdCP product fields in schema order, screened
	// withheld marks a product with a buyer-visible string the screen
	// would change and that has no neutral fallback (exposure.go): it is
	// never served nor bought.
	withheld bool
	// pos is the entry's place in the catalogue.
	pos int32
	// text is the entry's encoding with every field and no
	// brief_relevance, up to but not including its closing brace,
	// escaped as a JSON string's contents; nil until an answer has
	// carried it (pageWriter.Append).
	text atomic.Pointer[[]byte]
}

type wireField struct {
	name string
	raw  json.RawMessage
}

// interner shares equal values among a catalogue's products: a catalogue
// repeats the same formats, pricing options, properties and words across
// many products, and each copy held once is heap not held per product.
type interner struct {
	raw    map[string][]byte
	words  map[string]string
	values map[string]any
}

func newInterner() *interner {
	return &interner{raw: map[string][]byte{}, words: map[string]string{}, values: map[string]any{}}
}

// Interner shares equal parts among the products it is given, as a
// snapshot does among its own: a store that keeps a catalogue in memory
// keeps each repeated list once. The products it returns share memory
// with each other, so nothing may write into their lists afterwards; it
// is not safe for concurrent use.
type Interner struct{ in *interner }

// NewInterner returns an empty interner.
func NewInterner() *Interner { return &Interner{in: newInterner()} }

// Product is p with each of its lists, and its delivery type and
// exclusivity, shared with equal ones met before: equal by their JSON,
// so p encodes exactly as it did.
func (n *Interner) Product(p Product) Product { return n.in.product(p) }

// shared is v, or an equal value met before: equal by their JSON, which
// for a product's parts is all they hold (every field is a JSON field).
// Snapshot products are read, never written, so sharing is safe.
func shared[T any](in *interner, name string, v T) T {
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	key := name + "\x00" + string(b)
	if kept, ok := in.values[key]; ok {
		return kept.(T)
	}
	in.values[key] = v
	return v
}

// product is p with each of its lists shared with equal ones.
func (in *interner) product(p Product) Product {
	p.PublisherProperties = shared(in, "pp", p.PublisherProperties)
	p.Channels = shared(in, "ch", p.Channels)
	p.FormatOptions = shared(in, "fo", p.FormatOptions)
	p.PricingOptions = shared(in, "po", p.PricingOptions)
	p.ReportingCapabilities = shared(in, "rc", p.ReportingCapabilities)
	p.VideoPlacementTypes = shared(in, "vp", p.VideoPlacementTypes)
	p.AudioDistributionTypes = shared(in, "ad", p.AudioDistributionTypes)
	p.SignalTargetingOptions = shared(in, "so", p.SignalTargetingOptions)
	p.SignalTargetingRules = shared(in, "sr", p.SignalTargetingRules)
	p.MetricOptimization = shared(in, "mo", p.MetricOptimization)
	p.Countries = shared(in, "co", p.Countries)
	p.Availability = shared(in, "av", p.Availability)
	p.Keywords = shared(in, "kw", p.Keywords)
	p.DeliveryType = in.word(p.DeliveryType)
	p.Exclusivity = in.word(p.Exclusivity)
	return p
}

func (in *interner) bytes(b []byte) []byte {
	if kept, ok := in.raw[string(b)]; ok {
		return kept
	}
	in.raw[string(b)] = b
	return b
}

func (in *interner) word(s string) string {
	if kept, ok := in.words[s]; ok {
		return kept
	}
	in.words[s] = s
	return s
}

// fields is a product's wire fields held compactly: in a slice of their
// exact number, each value shared with every equal one of the catalogue.
func (in *interner) fields(fs []wireField) []wireField {
	out := make([]wireField, len(fs))
	for i, f := range fs {
		out[i] = wireField{name: f.name, raw: in.bytes(f.raw)}
	}
	return out
}

func newCatalogue(ps []Product, screen *sanitize.Screen, confidential []string) *Catalogue {
	return newCatalogueLaidOut(ps, screen, confidential, smallest)
}

// newCatalogueLaidOut is newCatalogue with the ranking terms kept as l
// says.
func newCatalogueLaidOut(ps []Product, screen *sanitize.Screen, confidential []string, l layout) *Catalogue {
	c := &Catalogue{}
	seen := map[string]map[string]bool{"ch": {}, "fk": {}, "co": {}, "cu": {}}
	add := func(kind string, list []string, dst *[]string) {
		for _, x := range list {
			if !seen[kind][x] {
				seen[kind][x] = true
				*dst = append(*dst, x)
			}
		}
	}
	in := newInterner()
	shown := make([]Product, len(ps))
	c.entries = make([]*entry, 0, len(ps))
	for i, p := range ps {
		p = in.product(p)
		e := &entry{p: p, kinds: shared(in, "fk", p.FormatKinds()), pos: int32(i)}
		e.fields = in.fields(wire(p, screen))
		e.withheld = exposes(e.fields, screen)
		shown[i] = screenedText(p, e.fields, screen)
		c.entries = append(c.entries, e)
		if e.withheld {
			continue
		}
		add("ch", p.Channels, &c.market.Channels)
		add("fk", e.kinds, &c.market.FormatKinds)
		add("co", p.Countries, &c.market.Countries)
		var curr []string
		for _, po := range p.PricingOptions {
			curr = append(curr, po.Currency)
		}
		add("cu", curr, &c.market.Currencies)
	}
	for _, l := range [][]string{c.market.Channels, c.market.FormatKinds, c.market.Countries, c.market.Currencies} {
		sort.Strings(l)
	}
	ranked := newKeywordPolicy(confidential, shown)
	terms := make([]map[string]int, len(c.entries))
	for i := range c.entries {
		terms[i] = rankingTerms(shown[i], ranked.ranks)
	}
	c.index = buildIndex(c.entries, terms, in, l)
	return c
}

// weight is the ranking weight of term t for the product at pos, 0 when
// it lacks the term.
func (c *Catalogue) weight(pos int32, t string) int32 {
	if x, ok := c.index.terms[t]; ok {
		return x.weight(pos)
	}
	return 0
}

// Market summarises what the catalogue carries.
func (c *Catalogue) Market() merch.Market { return c.market }

// Len is the number of products.
func (c *Catalogue) Len() int { return len(c.entries) }

// Products returns the catalogue's products in catalogue order.
func (c *Catalogue) Products() []Product {
	out := make([]Product, len(c.entries))
	for i, e := range c.entries {
		out[i] = e.p
	}
	return out
}

// wire renders the AdCP fields of p, with its free text screened: a name
// or description that names a confidential term is replaced by a neutral
// one built from public facts. A nil screen renders the fields as stored,
// for the lint to compare.
func wire(p Product, screen *sanitize.Screen) []wireField {
	var out []wireField
	put := func(name string, v any) {
		b, err := json.Marshal(v)
		if err != nil {
			return
		}
		out = append(out, wireField{name, b})
	}
	var name, desc any = p.Name, p.Description
	if screen != nil {
		label := neutralName(p)
		n, ok := screen.Line(p.Name, 200)
		if !ok {
			n, _ = screen.Line(label, 200)
		}
		d := screen.Prose(p.Description, 2000, sanitize.Declined, label+".")
		if d == sanitize.Declined {
			// The description itself was screened out and so was the
			// fallback: say nothing rather than the decline line.
			d, _ = screen.Line(label+".", 2000)
		}
		name, desc = n, d
	}
	put("product_id", p.ProductID)
	put("name", name)
	put("description", desc)
	put("publisher_properties", p.PublisherProperties)
	put("channels", p.Channels)
	if len(p.VideoPlacementTypes) > 0 {
		put("video_placement_types", p.VideoPlacementTypes)
	}
	if len(p.AudioDistributionTypes) > 0 {
		put("audio_distribution_types", p.AudioDistributionTypes)
	}
	if ids := p.LegacyFormatIDs(); len(ids) > 0 {
		// Deprecated in 3.2 but still read by 3.0 and 3.1 buyers; the
		// spec lets sellers emit both during the 3.x migration.
		put("format_ids", ids)
	}
	put("format_options", p.FormatOptions)
	put("delivery_type", p.DeliveryType)
	if p.Exclusivity != "" {
		put("exclusivity", p.Exclusivity)
	}
	put("pricing_options", p.PricingOptions)
	put("reporting_capabilities", p.ReportingCapabilities)
	if len(p.SignalTargetingOptions) > 0 {
		if screen == nil {
			put("signal_targeting_options", p.SignalTargetingOptions)
		} else {
			put("signal_targeting_options", wireSignals(p, screen))
		}
	}
	if p.SignalTargetingRules != nil {
		put("signal_targeting_rules", p.SignalTargetingRules)
	}
	if p.SignalTargetingAllowed {
		put("signal_targeting_allowed", true)
	}
	return out
}

func neutralName(p Product) string {
	var parts []string
	for _, ch := range p.Channels {
		parts = append(parts, decline.ChannelLabel(ch))
	}
	kind := "non-guaranteed"
	if p.DeliveryType == "guaranteed" {
		kind = "guaranteed"
	}
	return capitalise(kind + " " + strings.Join(parts, " and ") + " inventory")
}

func capitalise(s string) string {
	if s == "" {
		return s
	}
	r := []rune(s)
	r[0] = unicode.ToUpper(r[0])
	return string(r)
}

// channelSynonyms are the brief words that point at a channel.
var channelSynonyms = map[string][]string{
	"display":         {"display", "banner", "banners", "web", "site", "mrec", "leaderboard"},
	"olv":             {"video", "olv", "preroll", "pre-roll", "instream"},
	"ctv":             {"ctv", "tv", "television", "streaming", "ott", "connected"},
	"streaming_audio": {"audio", "music", "radio", "listeners", "streaming"},
	"podcast":         {"podcast", "podcasts"},
}

// ChannelWords lists the brief words that point at a channel: words of
// the storefront's own, which ranking answers whoever types them.
func ChannelWords() []string {
	var out []string
	for _, ws := range channelSynonyms {
		out = append(out, ws...)
	}
	sort.Strings(out)
	return out
}

// rankingTerms weighs the words that make a product relevant: its channel
// words, name, keywords and description.
// screenedText is p with its free text as buyers see it: the screened name
// and description from its wire form, and only the keywords that pass the
// screen. Ranking works from this, so brief_relevance can only ever echo
// words that are already public, and whether it appears tells a probing
// buyer nothing about the deny-list.
func screenedText(p Product, fields []wireField, screen *sanitize.Screen) Product {
	for _, f := range fields {
		switch f.name {
		case "name":
			_ = json.Unmarshal(f.raw, &p.Name)
		case "description":
			_ = json.Unmarshal(f.raw, &p.Description)
		}
	}
	var kept []string
	for _, k := range p.Keywords {
		if !screen.Names(k) {
			kept = append(kept, k)
		}
	}
	p.Keywords = kept
	return p
}

func rankingTerms(p Product, rankKeyword func(string) bool) map[string]int {
	t := map[string]int{}
	bump := func(words []string, w int) {
		for _, x := range words {
			if len(x) < 3 || stopwords[x] {
				continue
			}
			if t[x] < w {
				t[x] = w
			}
		}
	}
	for _, ch := range p.Channels {
		bump(channelSynonyms[ch], 3)
		bump([]string{ch}, 3)
	}
	bump(words(p.Name), 3)
	for _, k := range p.Keywords {
		var kept []string
		for _, w := range words(k) {
			if rankKeyword(w) {
				kept = append(kept, w)
			}
		}
		bump(kept, 2)
	}
	bump(words(p.Description), 1)
	for _, k := range p.FormatKinds() {
		bump(words(strings.ReplaceAll(k, "_", " ")), 1)
	}
	return t
}

func words(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}

var stopwords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`the and for with our their from this that into your you are was were
	will would can could should have has had not but all any per via who whom what when where which how
	campaign campaigns brand brands advertiser ads advertising looking need needs want wants inventory
	product products buy buying budget launch new`) {
		m[w] = true
	}
	return m
}()
