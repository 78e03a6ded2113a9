package products

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/storefront/storefront/adcp"
	"github.com/storefront/storefront/merch"
	"github.com/storefront/storefront/sanitize"
)

func num(v float64) *float64 { return &v }

// testProduct returns a valid product; edit adjusts it.
func testProduct(id, name, channel, kind, delivery string, countries []string, pricing []PricingOption) Product {
	return Product{
		ProductID: id, Name: name, Description: name + " inventory.",
		PublisherProperties: []PublisherProperty{{PublisherDomain: "pub.example", SelectionType: "all"}},
		Channels:            []string{channel},
		FormatOptions:       []FormatOption{{FormatKind: kind, Params: json.RawMessage(`{}`)}},
		DeliveryType:        delivery,
		PricingOptions:      pricing,
		ReportingCapabilities: ReportingCapabilities{
			AvailableReportingFrequencies: []string{"daily"}, Timezone: "UTC",
			AvailableMetrics: []string{"impressions"}, DateRangeSupport: "date_range",
		},
		Countries: countries,
	}
}

// testCatalogue has four products that differ on every filter.
func testCatalogue() []Product {
	display := testProduct("p_display", "Homepage Banners", "display", "image", "non_guaranteed", []string{"US", "CA"},
		[]PricingOption{{PricingOptionID: "d_usd", PricingModel: "cpm", Currency: "USD", FloorPrice: num(2)}})
	display.Keywords = []string{"news"}
	olv := testProduct("p_olv", "Sports Pre-roll", "olv", "video_hosted", "guaranteed", []string{"GB"},
		[]PricingOption{
			{PricingOptionID: "o_usd", PricingModel: "cpm", Currency: "USD", FixedPrice: num(20), MinSpendPerPackage: num(5000)},
			{PricingOptionID: "o_eur", PricingModel: "cpm", Currency: "EUR", FixedPrice: num(18), MinSpendPerPackage: num(4000)},
		})
	olv.VideoPlacementTypes = []string{"instream"}
	olv.Exclusivity = "category"
	olv.ReportingCapabilities.AvailableMetrics = []string{"impressions", "completed_views"}
	ctv := testProduct("p_ctv", "Holiday Movies", "ctv", "video_vast", "guaranteed", []string{"US"},
		[]PricingOption{{PricingOptionID: "c_usd", PricingModel: "cpm", Currency: "USD", FixedPrice: num(40), MinSpendPerPackage: num(25000)}})
	ctv.Keywords = []string{"news"}
	ctv.Availability = []adcp.DateRange{{Start: adcp.MustDate("2026-11-15"), End: adcp.MustDate("2027-01-10")}}
	audio := testProduct("p_audio", "Music Streams", "streaming_audio", "audio_hosted", "non_guaranteed", []string{"US", "CA", "GB"},
		[]PricingOption{{PricingOptionID: "a_usd", PricingModel: "cpm", Currency: "USD", FloorPrice: num(8), MinSpendPerPackage: num(2000)}})
	audio.AudioDistributionTypes = []string{"music_streaming_service"}
	audio.Description = "Sports talk and music for commuters."
	return []Product{display, olv, ctv, audio}
}

func TestTestCatalogueValid(t *testing.T) {
	for _, p := range testCatalogue() {
		if err := p.Validate(); err != nil {
			t.Errorf("%s: %v", p.ProductID, err)
		}
	}
}

func find(f Filters, geo []string, text string, curate bool) *Match {
	c := newCatalogue(testCatalogue(), sanitize.New(nil), nil)
	return c.Find(f, geo, text, curate, nil)
}

func rankedIDs(m *Match) []string {
	var out []string
	for _, e := range m.Page(0, m.Total) {
		out = append(out, e.p.ProductID)
	}
	return out
}

func TestFindFilters(t *testing.T) {
	yes, no := true, false
	all := []string{"p_display", "p_olv", "p_ctv", "p_audio"}
	for _, test := range []struct {
		name         string
		f            Filters
		geo          []string
		want         []string
		wantExcluded map[string]int
	}{
		{"no filters", Filters{}, nil, all, map[string]int{}},
		{"channels", Filters{Channels: []string{"olv", "ctv"}}, nil, []string{"p_olv", "p_ctv"}, map[string]int{"channels": 2}},
		{"format kinds", Filters{FormatKinds: []string{"image"}}, nil, []string{"p_display"}, map[string]int{"format_kinds": 3}},
		{"delivery type", Filters{DeliveryType: "guaranteed"}, nil, []string{"p_olv", "p_ctv"}, map[string]int{"delivery_type": 2}},
		{"budget max against min spend", Filters{Budget: &BudgetRange{Max: num(3000), Currency: "USD"}}, nil, []string{"p_display", "p_audio"}, map[string]int{"budget_range": 2}},
		{"budget max at the min spend", Filters{Budget: &BudgetRange{Max: num(5000), Currency: "USD"}}, nil, []string{"p_display", "p_olv", "p_audio"}, map[string]int{"budget_range": 1}},
		{"budget in another currency", Filters{Budget: &BudgetRange{Max: num(100000), Currency: "EUR"}}, nil, []string{"p_olv"}, map[string]int{"budget_range": 3}},
		{"budget min only: currency must be offered", Filters{Budget: &BudgetRange{Min: num(1), Currency: "EUR"}}, nil, []string{"p_olv"}, map[string]int{"budget_range": 3}},
		{"flight inside the availability window", Filters{StartDate: adcp.MustDate("2026-12-01"), EndDate: adcp.MustDate("2026-12-31")}, nil, all, map[string]int{}},
		{"flight past the availability window", Filters{StartDate: adcp.MustDate("2027-01-05"), EndDate: adcp.MustDate("2027-01-20")}, nil, []string{"p_display", "p_olv", "p_audio"}, map[string]int{"start_date": 1}},
		{"start date only", Filters{StartDate: adcp.MustDate("2027-02-01")}, nil, []string{"p_display", "p_olv", "p_audio"}, map[string]int{"start_date": 1}},
		{"end date only", Filters{EndDate: adcp.MustDate("2026-11-01")}, nil, []string{"p_display", "p_olv", "p_audio"}, map[string]int{"end_date": 1}},
		{"end date only, inside", Filters{EndDate: adcp.MustDate("2026-12-01")}, nil, all, map[string]int{}},
		{"pricing currencies", Filters{PricingCurrencies: []string{"EUR"}}, nil, []string{"p_olv"}, map[string]int{"pricing_currencies": 3}},
		{"countries", Filters{Countries: []string{"GB"}}, nil, []string{"p_olv", "p_audio"}, map[string]int{"countries": 2}},
		{"geo countries", Filters{}, []string{"CA"}, []string{"p_display", "p_audio"}, map[string]int{"targeting_overlay.geo_countries": 2}},
		{"geo countries win over countries", Filters{Countries: []string{"GB"}}, []string{"CA"}, []string{"p_display", "p_audio"}, map[string]int{"targeting_overlay.geo_countries": 2}},
		{"fixed price", Filters{IsFixedPrice: &yes}, nil, []string{"p_olv", "p_ctv"}, map[string]int{"is_fixed_price": 2}},
		{"auction price", Filters{IsFixedPrice: &no}, nil, []string{"p_display", "p_audio"}, map[string]int{"is_fixed_price": 2}},
		{"pricing structures", Filters{PricingStructures: []string{"auction"}}, nil, []string{"p_display", "p_audio"}, map[string]int{"pricing_structures": 2}},
		{"exclusivity none", Filters{Exclusivity: "none"}, nil, []string{"p_display", "p_ctv", "p_audio"}, map[string]int{"exclusivity": 1}},
		{"video placement", Filters{VideoPlacementTypes: []string{"instream"}}, nil, []string{"p_olv"}, map[string]int{"video_placement_types": 3}},
		{"audio distribution", Filters{AudioDistributionTypes: []string{"music_streaming_service"}}, nil, []string{"p_audio"}, map[string]int{"audio_distribution_types": 3}},
		{"required metrics", Filters{RequiredMetrics: []string{"impressions", "completed_views"}}, nil, []string{"p_olv"}, map[string]int{"required_metrics": 3}},
		{"standard formats only", Filters{StandardFormatsOnly: true}, nil, all, map[string]int{}},
		{"unmodelled filters exclude everything", Filters{Unmodelled: []string{"keywords"}}, nil, nil, map[string]int{"keywords": 4}},
		// A product failing two filters is counted under neither.
		{"excluded counts only sole failures", Filters{Channels: []string{"display"}, Countries: []string{"GB"}}, nil, nil, map[string]int{"channels": 2, "countries": 1}},
	} {
		t.Run(test.name, func(t *testing.T) {
			m := find(test.f, test.geo, "", false)
			if got := rankedIDs(m); !slices.Equal(got, test.want) {
				t.Errorf("Find(%+v) = %v, want %v", test.f, got, test.want)
			}
			if diff := cmp.Diff(test.wantExcluded, m.Excluded); diff != "" {
				t.Errorf("Excluded (-want +got):\n%s", diff)
			}
			if m.Considered != 4 {
				t.Errorf("Considered = %d, want 4", m.Considered)
			}
		})
	}
}

func TestFindRanking(t *testing.T) {
	for _, test := range []struct {
		name   string
		text   string
		curate bool
		want   []string
	}{
		{"no text: catalogue order", "", true, []string{"p_display", "p_olv", "p_ctv", "p_audio"}},
		{"no known term: catalogue order", "zebra quokka", true, []string{"p_display", "p_olv", "p_ctv", "p_audio"}},
		// olv has "video" as a channel word (3), ctv only through its
		// video_vast format kind (1).
		{"channel word ranks first", "video", false, []string{"p_olv", "p_ctv", "p_display", "p_audio"}},
		{"curated: only relevant products", "video", true, []string{"p_olv", "p_ctv"}},
		{"name beats description", "sports", true, []string{"p_olv", "p_audio"}},
		{"ties keep catalogue order", "news", true, []string{"p_display", "p_ctv"}},
		{"name (3) beats keyword (2)", "news music", true, []string{"p_audio", "p_display", "p_ctv"}},
		{"stopwords are ignored", "the and campaign brand inventory", true, []string{"p_display", "p_olv", "p_ctv", "p_audio"}},
		{"case and punctuation", "SPORTS!!! (music)", true, []string{"p_audio", "p_olv"}},
	} {
		t.Run(test.name, func(t *testing.T) {
			got := rankedIDs(find(Filters{}, nil, test.text, test.curate))
			if !slices.Equal(got, test.want) {
				t.Errorf("Find(%q, curate %v) = %v, want %v", test.text, test.curate, got, test.want)
			}
			again := rankedIDs(find(Filters{}, nil, test.text, test.curate))
			if !slices.Equal(got, again) {
				t.Errorf("Find(%q) is not deterministic: %v then %v", test.text, got, again)
			}
		})
	}
}

func TestCursor(t *testing.T) {
	fp := fingerprint([]byte("snapshot"), []byte("query"))
	s := cursor{offset: 42, fingerprint: fp}.encode()
	if got, err := decodeCursor(s, fp); err != nil || got != 42 {
		t.Errorf("decodeCursor(encode(42)) = %d, %v", got, err)
	}
	other := fingerprint([]byte("snapshot"), []byte("other query"))
	for _, bad := range []string{"", "!!!!", s + "A", s[:len(s)-2]} {
		if _, err := decodeCursor(bad, fp); err == nil {
			t.Errorf("decodeCursor(%q) succeeded", bad)
		}
	}
	if _, err := decodeCursor(s, other); err == nil {
		t.Error("a cursor decoded against another query's fingerprint")
	}
	// Length-prefixing keeps part boundaries: ("ab","c") is not ("a","bc").
	if fingerprint([]byte("ab"), []byte("c")) == fingerprint([]byte("a"), []byte("bc")) {
		t.Error("fingerprint ignores part boundaries")
	}
}

func TestMarket(t *testing.T) {
	c := newCatalogue(testCatalogue(), sanitize.New(nil), nil)
	want := merch.Market{
		Channels:    []string{"ctv", "display", "olv", "streaming_audio"},
		FormatKinds: []string{"audio_hosted", "image", "video_hosted", "video_vast"},
		Countries:   []string{"CA", "GB", "US"},
		Currencies:  []string{"EUR", "USD"},
	}
	if diff := cmp.Diff(want, c.Market()); diff != "" {
		t.Errorf("Market() (-want +got):\n%s", diff)
	}
	if c.Len() != 4 || len(c.Products()) != 4 {
		t.Errorf("Len() = %d", c.Len())
	}
}

// TestWireScreensFreeText: a product whose name or description names a
// confidential term is shown with a neutral name and without the
// offending sentence; internal_ref never leaves.
func TestWireScreensFreeText(t *testing.T) {
	ps := testCatalogue()
	ps[1].Name = "Sports Pre-roll (LI-88213)"
	ps[1].Description = "Great reach. Booked via L I - 8 8 2 1 3 only. Weekend peaks."
	ps[1].InternalRef = "LI-88213"
	ps[2].Description = "LI-88213"
	snap := NewSnapshot(Publisher{ID: "p"}, ps, 1, nil, 0)
	fields := map[string]map[string]string{}
	for _, e := range snap.Catalogue.entries {
		fields[e.p.ProductID] = map[string]string{}
		for _, f := range e.fields {
			if f.name == "internal_ref" {
				t.Errorf("%s: internal_ref is on the wire", e.p.ProductID)
			}
			var s string
			if json.Unmarshal(f.raw, &s) == nil {
				fields[e.p.ProductID][f.name] = s
			}
		}
	}
	if got := fields["p_olv"]["name"]; got != "Guaranteed online video inventory" {
		t.Errorf("screened name = %q", got)
	}
	if got := fields["p_olv"]["description"]; got != "Great reach. Weekend peaks." {
		t.Errorf("screened description = %q", got)
	}
	if got := fields["p_ctv"]["description"]; got != "Guaranteed connected TV inventory." {
		t.Errorf("fully screened description = %q", got)
	}
	if got := fields["p_display"]["name"]; got != "Homepage Banners" {
		t.Errorf("clean name = %q", got)
	}
}

func TestDenyTerms(t *testing.T) {
	rb := &merch.Rulebook{Rules: []merch.Rule{{
		ID: "MR-1", Name: "Secret Floor Rule", Notes: "Agreed with Dana Whitfield.", ConfidentialTerms: []string{"Osprey"},
	}}}
	ps := testCatalogue()
	ps[0].InternalRef = "GAM-LI-1"
	terms := DenyTerms(rb, ps)
	has := func(v string, k sanitize.Kind) bool {
		for _, t := range terms {
			if t.Value == v && t.Kind == k {
				return true
			}
		}
		return false
	}
	for _, want := range []struct {
		v string
		k sanitize.Kind
	}{
		{"MR-1", sanitize.KindRuleID}, {"Secret Floor Rule", sanitize.KindRuleName}, {"Osprey", sanitize.KindCustom},
		{"Dana Whitfield", sanitize.KindNoteTerm}, {"GAM-LI-1", sanitize.KindCatalogID}, {"FreeWheel", sanitize.KindVendor},
	} {
		if !has(want.v, want.k) {
			t.Errorf("DenyTerms lacks %q (%s)", want.v, want.k)
		}
	}
	// The storefront's own words are public: the lexicon keeps a rule
	// named after a channel from silencing every channel decline.
	d := sanitize.NewDenyList([]sanitize.Term{{Value: "connected TV", Kind: sanitize.KindRuleName}}, PublicLexicon())
	if d.Len() != 0 {
		t.Errorf("a public phrase is on the deny-list")
	}
}

// Omitting every product the brief is relevant to leaves nothing: the
// answer does not fall back to products the brief has nothing to do with.
func TestFindOmitRelevant(t *testing.T) {
	c := newCatalogue(testCatalogue(), sanitize.New(nil), nil)
	all := c.Find(Filters{}, nil, "sports", true, nil)
	relevant := map[string]bool{}
	for _, e := range all.Page(0, all.Total) {
		relevant[e.p.ProductID] = true
	}
	if len(relevant) == 0 || len(relevant) == len(testCatalogue()) {
		t.Fatalf("the brief should match some products, not all: %v", relevant)
	}
	m := c.Find(Filters{}, nil, "sports", true, relevant)
	if m.Total != 0 || len(m.Page(0, 10)) != 0 {
		t.Errorf("with every relevant product omitted, got %d products", m.Total)
	}
	// Without curation the rest still come, in catalogue order.
	m = c.Find(Filters{}, nil, "sports", false, relevant)
	if m.Total != len(testCatalogue())-len(relevant) {
		t.Errorf("uncurated: %d products, want %d", m.Total, len(testCatalogue())-len(relevant))
	}
}

// TestRelevanceLines: a line is screened once and its encoding kept, a
// line the vendor screen changes is kept screened, and past the bound new
// lines are still answered but no longer kept.
func TestRelevanceLines(t *testing.T) {
	var l relevanceLines
	got := l.encoded([]byte("Matches brief terms: video, sports."))
	if string(got) != `"Matches brief terms: video, sports."` {
		t.Fatalf("encoded = %s", got)
	}
	if again := l.encoded([]byte("Matches brief terms: video, sports.")); &again[0] != &got[0] {
		t.Errorf("the second answer with the same line encoded it again")
	}
	if raw := string(l.encoded([]byte("Matches brief terms: <b>video</b>."))); strings.Contains(raw, "<b>") {
		t.Errorf("markup kept in a relevance line: %s", raw)
	}
	// The line is the caller's to reuse: what is kept is a copy.
	buf := []byte("Matches brief terms: reused.")
	l.encoded(buf)
	copy(buf, "XXXXXXX")
	if raw, kept := l.m["Matches brief terms: reused."]; !kept || string(raw) != `"Matches brief terms: reused."` {
		t.Errorf("a reused line changed what was kept: %s", raw)
	}
	for i := 0; len(l.m) < maxRelevanceLines; i++ {
		l.encoded(fmt.Appendf(nil, "Matches brief terms: w%d.", i))
	}
	line := "Matches brief terms: one past the bound."
	if raw := string(l.encoded([]byte(line))); raw != `"`+line+`"` {
		t.Errorf("past the bound: %s", raw)
	}
	if _, kept := l.m[line]; kept || len(l.m) != maxRelevanceLines {
		t.Errorf("a line past the bound was kept (%d kept)", len(l.m))
	}
}
