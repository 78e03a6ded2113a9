package merch_test

import (
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"pgregory.net/rapid"

	"github.com/storefront/storefront/adcp"
	"github.com/storefront/storefront/bench"
	"github.com/storefront/storefront/demo"
	"github.com/storefront/storefront/merch"
	"github.com/storefront/storefront/products"
	"github.com/storefront/storefront/vocab"
)

// Value pools for generated rules and briefs. Each mixes values that
// strings.EqualFold takes as equal but differ in case or script (ſ folds
// with s, the Kelvin sign with k, two invalid bytes with each other),
// values that differ only in spacing or punctuation, parents and children
// (domains, industries), and values no rule or brief shares, so that rules
// and briefs meet often and in every odd way.
var (
	channelPool  = []string{"display", "olv", "ctv", "streaming_audio", "dooh", "DISPLAY", "Olv", "ſtreaming_audio", "", "\xff", "\xfe"}
	countryPool  = []string{"US", "us", "CA", "GB", "FR", "KR", "\u212aR", ""}
	formatPool   = []string{"image", "video_hosted", "video_vast", "audio_hosted", "html5", "IMAGE", "Video_Vast"}
	currencyPool = []string{"USD", "usd", "Uſd", "GBP", "EUR", ""}
	deliveryPool = []string{"guaranteed", "non_guaranteed", "Guaranteed", "NON_GUARANTEED", ""}
	industryPool = []string{"gambling_betting", "gambling_betting.casino", "Gambling_Betting.Casino ", " cannabis", "cannabis", "tobacco", "tobacco.vape", "", ".", "gambling", "gambling_betting."}
	ruleDomains  = []string{"acme.example", "bet.example", "example", "", "Acme.example", "shop.acme.example", "example."}
	briefDomains = []string{"acme.example", "SHOP.Acme.Example.", "x.bet.example", "example", "", ".", "acme.example..", "notacme.example", "bet.example", "sub.example."}
	keywordPool  = []string{"casino", "payday loan", "Payday  Loan!", "vape", "", "  ", "loan", "café", "CAFÉ", "loan payday", "ca fe", "x"}
	textPool     = []string{"Casino", "payday", "loan", "vape", "café", "CAFE", "x", "fe", "ca", "sports", "-", ",", "!", "  ", "Payday-Loan"}
	floorPool    = []float64{0, 500, 1000, 2000, 2500, 25000, 60000, math.Inf(1), math.NaN()}
)

var indexDay = adcp.MustDate("2026-11-29")

// values draws a predicate's list: absent (nil), present but empty, or
// some values of the pool.
func values(t *rapid.T, pool []string, label string) []string {
	switch rapid.IntRange(0, 7).Draw(t, label) {
	case 0:
		return nil
	case 1:
		return []string{}
	}
	return rapid.SliceOfN(rapid.SampledFrom(pool), 1, 4).Draw(t, label+" values")
}

func someOf(t *rapid.T, pool []string, label string) []string {
	if rapid.Bool().Draw(t, label+" given") {
		return nil
	}
	return rapid.SliceOfN(rapid.SampledFrom(pool), 1, 3).Draw(t, label)
}

func day(t *rapid.T, label string, from, to int) adcp.Date {
	return indexDay.AddDays(rapid.IntRange(from, to).Draw(t, label))
}

// genCondition draws up to three predicates (none: a rule that cannot
// fire), and a channel scope one time in three.
func genCondition(t *rapid.T) merch.Condition {
	var c merch.Condition
	// Mostly one or two predicates: a rule of three rarely fires.
	n := rapid.SampledFrom([]int{0, 1, 1, 1, 1, 2, 2, 2, 3}).Draw(t, "predicate count")
	for _, k := range rapid.SliceOfN(rapid.IntRange(0, 11), n, n).Draw(t, "predicates") {
		switch k {
		case 0:
			per := map[string]float64{}
			for _, ch := range someOf(t, channelPool, "per channel") {
				per[ch] = rapid.SampledFrom(floorPool).Draw(t, "channel floor")
			}
			c.BudgetBelow = &merch.BudgetFloor{Currency: rapid.SampledFrom(currencyPool).Draw(t, "floor currency"),
				Minimum: rapid.SampledFrom(floorPool).Draw(t, "minimum"), PerChannel: per}
		case 1:
			c.ChannelsOffered = values(t, channelPool, "channels_offered")
		case 2:
			c.SoldOut = []merch.Window{}
			for range rapid.IntRange(0, 2).Draw(t, "windows") {
				w := merch.Window{Start: day(t, "window start", -10, 60), Channels: someOf(t, channelPool, "window channels")}
				w.End = w.Start.AddDays(rapid.IntRange(-2, 20).Draw(t, "window length"))
				c.SoldOut = append(c.SoldOut, w)
			}
		case 3:
			lead := rapid.IntRange(-2, 40).Draw(t, "lead time")
			c.LeadTimeDays = &lead
		case 4:
			c.CountriesServed = values(t, countryPool, "countries_served")
		case 5:
			c.FormatKindsOffered = values(t, formatPool, "format_kinds_offered")
		case 6:
			c.Industries = values(t, industryPool, "industries")
		case 7:
			c.Keywords = values(t, keywordPool, "keywords")
		case 8:
			c.BrandDomains = values(t, ruleDomains, "brand_domains")
		case 9:
			c.CurrenciesAccepted = values(t, currencyPool, "currencies_accepted")
		case 10:
			c.DeliveryTypesOffered = values(t, deliveryPool, "delivery_types_offered")
		case 11:
			c.Channels = values(t, channelPool, "scope")
		}
	}
	if rapid.IntRange(0, 2).Draw(t, "scoped") == 0 {
		c.Channels = rapid.SliceOfN(rapid.SampledFrom(channelPool), 1, 3).Draw(t, "scope channels")
	}
	return c
}

var slugs = []vocab.Slug{vocab.BudgetBelowMinimum, vocab.ChannelNotOffered, vocab.FlightUnavailable, vocab.GeoNotServed, vocab.CategoryNotAccepted}

func genRule(t *rapid.T, i int) merch.Rule {
	return merch.Rule{
		ID: fmt.Sprintf("R-%d", i), Name: fmt.Sprintf("rule %d", i),
		Disabled: rapid.IntRange(0, 9).Draw(t, "disabled") == 0,
		When:     genCondition(t),
		Decline: merch.Action{Slug: rapid.SampledFrom(slugs).Draw(t, "slug"), Disclosure: vocab.Level(rapid.IntRange(0, 3).Draw(t, "disclosure")),
			Suggest: []vocab.SuggestionKind{vocab.RaiseBudget, vocab.SwitchChannel, vocab.MoveFlight}},
	}
}

// genRulebook draws a rulebook of 1 to most rules: mostly small,
// sometimes up to a thousand, now and then up to most.
func genRulebook(t *rapid.T, most int) *merch.Rulebook {
	n := rapid.IntRange(1, min(30, most)).Draw(t, "small size")
	switch k := rapid.IntRange(0, 9).Draw(t, "size class"); {
	case k == 9 && most > 1000:
		n = rapid.IntRange(1001, most).Draw(t, "large size")
	case k >= 7 && most > 30:
		n = rapid.IntRange(31, min(1000, most)).Draw(t, "medium size")
	}
	rb := &merch.Rulebook{Format: merch.Format}
	for i := range n {
		rb.Rules = append(rb.Rules, genRule(t, i))
	}
	return rb
}

// amount draws a budget at, just below or just above a floor of the pool,
// or a negative one.
func amount(t *rapid.T, label string) float64 {
	if rapid.IntRange(0, 9).Draw(t, label+" negative") == 0 {
		return -1
	}
	return rapid.SampledFrom(floorPool).Draw(t, label) + rapid.SampledFrom([]float64{0, -0.01, 0.01, -300}).Draw(t, label+" offset")
}

func genBudget(t *rapid.T) *merch.Budget {
	if rapid.IntRange(0, 3).Draw(t, "budget given") == 0 {
		return nil
	}
	b := &merch.Budget{Currency: rapid.SampledFrom(currencyPool).Draw(t, "budget currency")}
	if rapid.IntRange(0, 3).Draw(t, "min given") == 0 {
		v := amount(t, "budget min")
		b.Min = &v
	}
	if rapid.IntRange(0, 3).Draw(t, "max given") > 0 {
		v := amount(t, "budget max")
		b.Max = &v
	}
	return b
}

// genBrief draws a brief; words are extra words its text may use.
func genBrief(t *rapid.T, words []string) merch.Brief {
	b := merch.Brief{
		Today:        indexDay,
		Channels:     someOf(t, channelPool, "channels"),
		FormatKinds:  someOf(t, formatPool, "format kinds"),
		Currencies:   someOf(t, currencyPool, "currencies"),
		Countries:    someOf(t, countryPool, "countries"),
		Industries:   someOf(t, industryPool, "brand industries"),
		DeliveryType: rapid.SampledFrom(deliveryPool).Draw(t, "delivery type"),
		BrandDomain:  rapid.SampledFrom(briefDomains).Draw(t, "brand domain"),
		Budget:       genBudget(t),
	}
	if rapid.IntRange(0, 19).Draw(t, "undated") == 0 {
		b.Today = adcp.Date{}
	}
	if rapid.Bool().Draw(t, "flight start given") {
		b.Flight.Start = day(t, "flight start", -5, 70)
	}
	if rapid.Bool().Draw(t, "flight end given") {
		b.Flight.End = day(t, "flight end", -5, 90)
	}
	pool := append(slices.Clone(textPool), words...)
	var text strings.Builder
	for _, w := range rapid.SliceOfN(rapid.SampledFrom(pool), 0, 8).Draw(t, "text") {
		text.WriteString(w)
		text.WriteString(rapid.SampledFrom([]string{" ", "", ". "}).Draw(t, "separator"))
	}
	b.Text = text.String()
	return b
}

func genMarket(t *rapid.T) merch.Market {
	return merch.Market{
		Channels:    someOf(t, channelPool, "market channels"),
		FormatKinds: someOf(t, formatPool, "market format kinds"),
		Countries:   someOf(t, countryPool, "market countries"),
		Currencies:  someOf(t, currencyPool, "market currencies"),
	}
}

// decisionOpts compares decisions exactly: every field of every reason,
// facts included, NaN budgets equal to themselves.
var decisionOpts = cmp.Options{cmp.AllowUnexported(merch.Reason{}), cmpopts.EquateNaNs(),
	cmp.Comparer(func(a, b adcp.Date) bool { return a == b })}

// differs evaluates b both ways and describes any difference. It also
// returns the reference decision.
func differs(ix *merch.Index, rb *merch.Rulebook, b merch.Brief, m merch.Market) (string, merch.Decision) {
	want, werr := merch.Evaluate(rb, b, m)
	got, gerr := ix.Evaluate(b, m)
	if fmt.Sprint(werr) != fmt.Sprint(gerr) {
		return fmt.Sprintf("error %v, want %v", gerr, werr), want
	}
	// DeepEqual first, as it is quick; it takes a NaN budget as unequal
	// to itself, which cmp, that says how they differ, does not.
	if w, g := want.Reasons(), got.Reasons(); !reflect.DeepEqual(w, g) {
		if diff := cmp.Diff(w, g, decisionOpts); diff != "" {
			return fmt.Sprintf("reasons differ (-linear +indexed):\n%s", diff), want
		}
	}
	return "", want
}

// followUps are the briefs the composer's suggestions would make of b
// after decision d, as the verifier re-evaluates them: the budget raised
// to the floor, another channel, the open flight, the earliest start,
// a served market, an offered format kind. The composer suggests from the
// leading reasons, so only the first three are followed.
func followUps(b merch.Brief, d merch.Decision) []merch.Brief {
	var out []merch.Brief
	edit := func(change func(*merch.Brief)) {
		c := b.Clone()
		change(&c)
		out = append(out, c)
	}
	grounds := d.Grounds()
	for _, g := range grounds[:min(3, len(grounds))] {
		f := g.Facts
		if f.Minimum != 0 {
			edit(func(c *merch.Brief) { v := f.Minimum; c.Budget = &merch.Budget{Max: &v, Currency: f.Currency} })
		}
		for _, ch := range f.AlternativeChannels {
			edit(func(c *merch.Brief) { c.Channels = []string{ch} })
		}
		if f.OpenFlight != nil {
			edit(func(c *merch.Brief) { c.Flight = *f.OpenFlight })
		}
		if !f.EarliestStart.IsZero() {
			edit(func(c *merch.Brief) {
				c.Flight = adcp.DateRange{Start: f.EarliestStart, End: f.EarliestStart.AddDays(b.Flight.Days() - 1)}
			})
		}
		for _, cc := range f.ServedCountries {
			edit(func(c *merch.Brief) { c.Countries = []string{cc} })
		}
		for _, k := range f.OfferedFormatKinds {
			edit(func(c *merch.Brief) { c.FormatKinds = []string{k} })
		}
	}
	return out
}

// sameOn requires the index to answer as the linear evaluation on every
// brief and on the briefs its suggestions would lead to. It returns how
// many briefs were declined.
func sameOn(t *rapid.T, ix *merch.Index, rb *merch.Rulebook, briefs []merch.Brief, m merch.Market) int {
	diff, declined := firstDifference(ix, rb, briefs, m)
	if diff != "" {
		t.Fatal(diff)
	}
	return declined
}

// firstDifference evaluates the briefs both ways, and the briefs their
// suggestions would lead to (at most 50 of them, as a follow-up can be
// declined too), until the answers differ. It describes the difference
// and counts the briefs declined.
func firstDifference(ix *merch.Index, rb *merch.Rulebook, briefs []merch.Brief, m merch.Market) (string, int) {
	declined, more := 0, 50
	for len(briefs) > 0 {
		b := briefs[0]
		briefs = briefs[1:]
		diff, want := differs(ix, rb, b, m)
		if diff != "" {
			return fmt.Sprintf("brief %+v:\n%s", b, diff), declined
		}
		if want.Declined() {
			declined++
			next := followUps(b, want)
			next = next[:min(more, len(next))]
			more -= len(next)
			briefs = append(briefs, next...)
		}
	}
	return "", declined
}

// drawBriefs draws briefs, half of them aimed at a rule of rb.
func drawBriefs(t *rapid.T, rb *merch.Rulebook, words []string) []merch.Brief {
	var out []merch.Brief
	for range rapid.IntRange(1, 10).Draw(t, "briefs") {
		b := genBrief(t, words)
		if rapid.Bool().Draw(t, "aimed") {
			aim(t, &b, &rb.Rules[rapid.IntRange(0, len(rb.Rules)-1).Draw(t, "aimed at")].When)
		}
		out = append(out, b)
	}
	return out
}

// aim changes b so that most of c's predicates hold, or nearly hold: a
// budget at, just under or just over the floor of a channel it asks for,
// the rule's domain or a subdomain, one of its keywords, its industry or a
// sub-industry, a flight over one of its windows or at its lead time, a
// channel of its scope.
func aim(t *rapid.T, b *merch.Brief, c *merch.Condition) {
	if f := c.BudgetBelow; f != nil {
		floor := f.Minimum
		if len(f.PerChannel) > 0 {
			chans := slices.Sorted(maps.Keys(f.PerChannel))
			ch := rapid.SampledFrom(chans).Draw(t, "aimed channel")
			b.Channels, floor = []string{ch}, f.PerChannel[ch]
		}
		v := floor + rapid.SampledFrom([]float64{0, -0.01, 0.01, -300}).Draw(t, "aimed offset")
		b.Budget = &merch.Budget{Max: &v, Currency: f.Currency}
	}
	if len(c.Channels) > 0 {
		b.Channels = []string{rapid.SampledFrom(c.Channels).Draw(t, "aimed scope")}
	}
	if len(c.BrandDomains) > 0 {
		b.BrandDomain = rapid.SampledFrom([]string{"", "www.", "a.b."}).Draw(t, "aimed subdomain") + rapid.SampledFrom(c.BrandDomains).Draw(t, "aimed domain")
	}
	if len(c.Keywords) > 0 {
		b.Text += " " + rapid.SampledFrom(c.Keywords).Draw(t, "aimed keyword") + rapid.SampledFrom([]string{"", "!", "s"}).Draw(t, "aimed suffix")
	}
	if len(c.Industries) > 0 {
		b.Industries = []string{rapid.SampledFrom(c.Industries).Draw(t, "aimed industry") + rapid.SampledFrom([]string{"", ".sub", "sub"}).Draw(t, "aimed sub-industry")}
	}
	if len(c.SoldOut) > 0 {
		w := rapid.SampledFrom(c.SoldOut).Draw(t, "aimed window")
		b.Flight = adcp.DateRange{Start: w.End, End: w.End.AddDays(rapid.IntRange(0, 5).Draw(t, "aimed length"))}
	}
	if c.LeadTimeDays != nil {
		b.Flight.Start = b.Today.AddDays(*c.LeadTimeDays + rapid.IntRange(-1, 0).Draw(t, "aimed lead"))
	}
}

// TestIndexAgreesWithEvaluate is the index's guarantee: for generated
// rulebooks of 1 to 10,000 rules and generated briefs, and for the briefs
// the suggestions would lead to, Index.Evaluate gives exactly the
// decision Evaluate gives.
func TestIndexAgreesWithEvaluate(t *testing.T) {
	declined, largest := 0, 0
	rapid.Check(t, func(t *rapid.T) {
		rb := genRulebook(t, 10_000)
		largest = max(largest, len(rb.Rules))
		declined += sameOn(t, merch.NewIndex(rb), rb, drawBriefs(t, rb, nil), genMarket(t))
	})
	if declined == 0 {
		t.Error("no generated brief was declined: the property compared nothing but allows")
	}
	if largest <= 1000 {
		t.Errorf("the largest rulebook drawn had %d rules; the property is meant for up to 10,000", largest)
	}
	t.Logf("%d briefs declined; largest rulebook %d rules", declined, largest)
}

// TestIndexBrokenIsCaught is the control: with any one part of the index
// damaged, the same property, on rulebooks of up to 30 rules (ten a case),
// finds a brief it answers differently.
func TestIndexBrokenIsCaught(t *testing.T) {
	for _, part := range merch.IndexParts {
		t.Run(part, func(t *testing.T) {
			caught := false
			rapid.Check(t, func(t *rapid.T) {
				if caught {
					return
				}
				for range 10 {
					rb := genRulebook(t, 30)
					ix := merch.NewIndex(rb)
					merch.BreakIndex(ix, part)
					if diff, _ := firstDifference(ix, rb, drawBriefs(t, rb, nil), genMarket(t)); diff != "" {
						caught = true
						return
					}
				}
			})
			if !caught {
				t.Errorf("with %s broken the index still answered as Evaluate: the property does not reach it", part)
			}
		})
	}
}

// keywordWords are the words of a rulebook's keywords, for briefs that hit
// them.
func keywordWords(rb *merch.Rulebook) []string {
	var out []string
	for _, r := range rb.Rules {
		for _, k := range r.When.Keywords {
			out = append(out, k)
		}
	}
	return out
}

// TestIndexAgreesOnFixtures checks the rulebooks the storefront ships and
// benchmarks: the demo rulebook, and the bench fixture's at 1k and 10k
// rules, against generated briefs whose words, domains and industries hit
// the fixture's rules, and against the bench mix.
func TestIndexAgreesOnFixtures(t *testing.T) {
	demoRB := demo.Rulebook()
	books := map[string]*merch.Rulebook{"demo": &demoRB}
	for _, n := range []int{1_000, 10_000} {
		f := bench.Fixture{Products: 100, Rules: n}
		rb := f.Rulebook(f.Catalogue())
		books[fmt.Sprintf("fixture %d", n)] = &rb
	}
	for name, rb := range books {
		t.Run(name, func(t *testing.T) {
			ix := merch.NewIndex(rb)
			words := keywordWords(rb)
			var domains []string
			for _, r := range rb.Rules {
				domains = append(domains, r.When.BrandDomains...)
			}
			m := demoMarket()
			for _, b := range mixBriefs(t) {
				if diff, _ := differs(ix, rb, b, m); diff != "" {
					t.Fatalf("mix brief %+v:\n%s", b, diff)
				}
			}
			declined := 0
			rapid.Check(t, func(t *rapid.T) {
				briefs := drawBriefs(t, rb, words)
				for i := range briefs {
					if len(domains) > 0 && rapid.Bool().Draw(t, "fixture domain") {
						briefs[i].BrandDomain = "www." + rapid.SampledFrom(domains).Draw(t, "domain")
					}
				}
				declined += sameOn(t, ix, rb, briefs, m)
			})
			if declined == 0 {
				t.Error("no brief was declined")
			}
		})
	}
}

func demoMarket() merch.Market {
	rb := demo.Rulebook()
	return products.NewSnapshot(demo.Publisher(), demo.Products(), 1, &rb, 1).Catalogue.Market()
}

// mixBriefs are the bench mix's briefs.
func mixBriefs(t *testing.T) []merch.Brief {
	t.Helper()
	briefs, err := bench.Briefs(indexDay.Time())
	if err != nil {
		t.Fatal(err)
	}
	return briefs
}

// TestIndexVisitsFewRules is what the index is for: on the bench fixture
// at 10,000 rules a brief of the mix visits no more rules than the demo
// rulebook has, of which the mix's declines come; the fillers are never
// visited. It counts rules, not time.
func TestIndexVisitsFewRules(t *testing.T) {
	f := bench.Fixture{Products: 100, Rules: 10_000}
	rb := f.Rulebook(f.Catalogue())
	ix := merch.NewIndex(&rb)
	limit := len(demo.Rulebook().Rules)
	for _, b := range mixBriefs(t) {
		if n := ix.Visited(b); n > limit {
			t.Errorf("brief %q visits %d rules, want at most %d", b.Text, n, limit)
		}
	}
}

// TestIndexFilesEveryPredicate fails when Condition gains a predicate the
// index does not know: a rule holding by it alone would never be visited.
func TestIndexFilesEveryPredicate(t *testing.T) {
	var fields []string
	ct := reflect.TypeFor[merch.Condition]()
	for i := range ct.NumField() {
		fields = append(fields, ct.Field(i).Name)
	}
	if !slices.Equal(fields, merch.IndexedPredicates) {
		t.Errorf("Condition has the predicates %v; the index files %v", fields, merch.IndexedPredicates)
	}
}

// TestFoldIsEqualFold checks the index's case folding against
// strings.EqualFold for every rune and each rune of its folding orbit:
// two strings fold alike exactly when EqualFold takes them as equal.
func TestFoldIsEqualFold(t *testing.T) {
	for r := rune(0); r <= unicode.MaxRune; r++ {
		s := string(r)
		k := merch.Fold(s)
		if !strings.EqualFold(s, k) || merch.Fold(k) != k {
			t.Fatalf("Fold(%q) = %q", s, k)
		}
		for o := unicode.SimpleFold(r); o != r; o = unicode.SimpleFold(o) {
			if merch.Fold(string(o)) != k {
				t.Fatalf("Fold(%q) = %q but Fold(%q) = %q", s, k, string(o), merch.Fold(string(o)))
			}
		}
	}
	if merch.Fold("\xff") != merch.Fold("\xfe") || !strings.EqualFold("\xff", "\xfe") {
		t.Error("invalid bytes fold apart, but EqualFold takes them as equal")
	}
	rapid.Check(t, func(t *rapid.T) {
		a := rapid.StringOf(rapid.SampledFrom([]rune("sSſkK\u212aaAéÉ\ufffd"))).Draw(t, "a")
		b := rapid.StringOf(rapid.SampledFrom([]rune("sSſkK\u212aaAéÉ\ufffd"))).Draw(t, "b")
		if (merch.Fold(a) == merch.Fold(b)) != strings.EqualFold(a, b) {
			t.Fatalf("Fold(%q) = %q, Fold(%q) = %q, EqualFold = %v", a, merch.Fold(a), b, merch.Fold(b), strings.EqualFold(a, b))
		}
	})
}
