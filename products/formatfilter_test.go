package products

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/storefront/storefront/sanitize"
)

// formatCatalogue has products whose format options carry ids and project
// onto legacy format ids.
func formatCatalogue() []Product {
	usd := []PricingOption{{PricingOptionID: "usd", PricingModel: "cpm", Currency: "USD", FloorPrice: num(1)}}
	mrec := testProduct("p_mrec", "Medium Rectangles", "display", "image", "non_guaranteed", []string{"US"}, usd)
	mrec.FormatOptions = []FormatOption{
		{FormatOptionID: "mrec", FormatKind: "image", Params: json.RawMessage(`{"width":300,"height":250}`)},
		{FormatOptionID: "leader", FormatKind: "image", Params: json.RawMessage(`{"width":728,"height":90}`)},
	}
	video := testProduct("p_video", "Pre-roll", "olv", "video_hosted", "non_guaranteed", []string{"US"}, usd)
	video.FormatOptions = []FormatOption{{FormatOptionID: "story_15", FormatKind: "video_hosted", Params: json.RawMessage(`{"duration_ms_range":[6000,15000]}`)}}
	plain := testProduct("p_plain", "Plain Banners", "display", "image", "non_guaranteed", []string{"US"}, usd)
	plain.FormatOptions = []FormatOption{{FormatKind: "image", Params: json.RawMessage(`{"width":300,"height":250}`)}}
	return []Product{mrec, video, plain}
}

func TestFindFormatFilters(t *testing.T) {
	c := newCatalogue(formatCatalogue(), sanitize.New(nil), nil)
	for _, p := range formatCatalogue() {
		if err := p.Validate(); err != nil {
			t.Fatalf("%s: %v", p.ProductID, err)
		}
	}
	for _, test := range []struct {
		name         string
		f            Filters
		want         []string
		wantExcluded map[string]int
	}{
		{"product-scoped option by id", Filters{FormatOptionRefs: []FormatOptionRef{{Scope: "product", FormatOptionID: "story_15"}}},
			[]string{"p_video"}, map[string]int{"format_option_refs": 2}},
		{"any of several option ids", Filters{FormatOptionRefs: []FormatOptionRef{{Scope: "product", FormatOptionID: "leader"}, {Scope: "product", FormatOptionID: "story_15"}}},
			[]string{"p_mrec", "p_video"}, map[string]int{"format_option_refs": 1}},
		{"an id no product declares", Filters{FormatOptionRefs: []FormatOptionRef{{Scope: "product", FormatOptionID: "skyscraper"}}},
			nil, map[string]int{"format_option_refs": 3}},
		// The catalogue's options are all product-local.
		{"publisher catalogue option", Filters{FormatOptionRefs: []FormatOptionRef{{Scope: "publisher", PublisherDomain: "pub.example", FormatOptionID: "mrec"}}},
			nil, map[string]int{"format_option_refs": 3}},
		{"legacy format id", Filters{FormatIDs: []FormatRef{{AgentURL: "https://creative.adcontextprotocol.org/", ID: "display_300x250_image"}}},
			[]string{"p_mrec", "p_plain"}, map[string]int{"format_ids": 1}},
		{"legacy video id projected from the range's upper bound", Filters{FormatIDs: []FormatRef{{AgentURL: "https://creative.adcontextprotocol.org/", ID: "video_standard_15s"}}},
			[]string{"p_video"}, map[string]int{"format_ids": 2}},
		{"legacy id of another agent", Filters{FormatIDs: []FormatRef{{AgentURL: "https://formats.example/", ID: "display_300x250_image"}}},
			nil, map[string]int{"format_ids": 3}},
		{"parameterised legacy id, matching size", Filters{FormatIDs: []FormatRef{{AgentURL: "https://creative.adcontextprotocol.org/", ID: "display_728x90_image", Width: 728, Height: 90}}},
			[]string{"p_mrec"}, map[string]int{"format_ids": 2}},
		{"parameterised legacy id, contradicting size", Filters{FormatIDs: []FormatRef{{AgentURL: "https://creative.adcontextprotocol.org/", ID: "display_300x250_image", Width: 728, Height: 90}}},
			nil, map[string]int{"format_ids": 3}},
		{"parameterised legacy id, matching duration", Filters{FormatIDs: []FormatRef{{AgentURL: "https://creative.adcontextprotocol.org/", ID: "video_standard_15s", DurationMS: 15000}}},
			[]string{"p_video"}, map[string]int{"format_ids": 2}},
	} {
		t.Run(test.name, func(t *testing.T) {
			m := c.Find(test.f, nil, "", false, nil)
			if got := rankedIDs(m); !slices.Equal(got, test.want) {
				t.Errorf("Find(%+v) = %v, want %v", test.f, got, test.want)
			}
			if diff := cmp.Diff(test.wantExcluded, m.Excluded); diff != "" {
				t.Errorf("Excluded (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecodeFormatFilters(t *testing.T) {
	req, err := DecodeRequest([]byte(`{"buying_mode":"wholesale","filters":{
		"format_option_refs":[{"scope":"product","format_option_id":"story_15"},{"scope":"publisher","publisher_domain":"pub.example","format_option_id":"mrec","ext":{}}],
		"format_ids":[{"agent_url":"HTTPS://Creative.AdContextProtocol.org:443","id":"display_300x250_image","width":300,"height":250},{"agent_url":"https://formats.example/v1?x=1#frag","id":"video_30s","duration_ms":30000}]}}`))
	if err != nil {
		t.Fatal(err)
	}
	wantRefs := []FormatOptionRef{{Scope: "product", FormatOptionID: "story_15"}, {Scope: "publisher", PublisherDomain: "pub.example", FormatOptionID: "mrec"}}
	if diff := cmp.Diff(wantRefs, req.Filters.FormatOptionRefs); diff != "" {
		t.Errorf("format_option_refs (-want +got):\n%s", diff)
	}
	wantIDs := []FormatRef{
		{AgentURL: "https://creative.adcontextprotocol.org/", ID: "display_300x250_image", Width: 300, Height: 250},
		{AgentURL: "https://formats.example/v1?x=1", ID: "video_30s", DurationMS: 30000},
	}
	if diff := cmp.Diff(wantIDs, req.Filters.FormatIDs); diff != "" {
		t.Errorf("format_ids (-want +got):\n%s", diff)
	}

	for _, test := range []struct {
		name, filters string
		want          []fieldProblem
	}{
		{"empty refs", `{"format_option_refs":[]}`, []fieldProblem{inv("filters.format_option_refs")}},
		{"ref not an object", `{"format_option_refs":["story_15"]}`, []fieldProblem{inv("filters.format_option_refs[0]")}},
		{"no scope", `{"format_option_refs":[{"format_option_id":"a"}]}`, []fieldProblem{inv("filters.format_option_refs[0].scope")}},
		{"unknown scope", `{"format_option_refs":[{"scope":"seller","format_option_id":"a"}]}`, []fieldProblem{inv("filters.format_option_refs[0].scope")}},
		{"no id", `{"format_option_refs":[{"scope":"product"}]}`, []fieldProblem{inv("filters.format_option_refs[0].format_option_id")}},
		{"product scope with a domain", `{"format_option_refs":[{"scope":"product","publisher_domain":"pub.example","format_option_id":"a"}]}`, []fieldProblem{inv("filters.format_option_refs[0].publisher_domain")}},
		{"publisher scope without a domain", `{"format_option_refs":[{"scope":"publisher","format_option_id":"a"}]}`, []fieldProblem{inv("filters.format_option_refs[0].publisher_domain")}},
		{"publisher scope, bad domain", `{"format_option_refs":[{"scope":"publisher","publisher_domain":"Pub Example","format_option_id":"a"}]}`, []fieldProblem{inv("filters.format_option_refs[0].publisher_domain")}},
		{"empty format ids", `{"format_ids":[]}`, []fieldProblem{inv("filters.format_ids")}},
		{"no agent url", `{"format_ids":[{"id":"a"}]}`, []fieldProblem{inv("filters.format_ids[0].agent_url")}},
		{"relative agent url", `{"format_ids":[{"agent_url":"/formats","id":"a"}]}`, []fieldProblem{inv("filters.format_ids[0].agent_url")}},
		{"bad id", `{"format_ids":[{"agent_url":"https://f.example","id":"a b"}]}`, []fieldProblem{inv("filters.format_ids[0].id")}},
		{"width without height", `{"format_ids":[{"agent_url":"https://f.example","id":"a","width":300}]}`, []fieldProblem{inv("filters.format_ids[0]")}},
		{"zero duration", `{"format_ids":[{"agent_url":"https://f.example","id":"a","duration_ms":0}]}`, []fieldProblem{inv("filters.format_ids[0].duration_ms")}},
		{"pixel ratio without size", `{"format_ids":[{"agent_url":"https://f.example","id":"a","pixel_ratio":2}]}`, []fieldProblem{inv("filters.format_ids[0].pixel_ratio")}},
	} {
		t.Run(test.name, func(t *testing.T) {
			_, err := DecodeRequest([]byte(`{"buying_mode":"wholesale","filters":` + test.filters + `}`))
			got, ok := problems(err)
			if !ok {
				t.Fatalf("DecodeRequest = %v, want a RequestError", err)
			}
			if diff := cmp.Diff(test.want, got, cmp.AllowUnexported(fieldProblem{})); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}

// A 2x variant is not the 1x format the catalogue projects, so it matches
// nothing rather than everything.
func TestDecodeFormatIDPixelRatio(t *testing.T) {
	req, err := DecodeRequest([]byte(`{"buying_mode":"wholesale","filters":{"format_ids":[{"agent_url":"https://creative.adcontextprotocol.org","id":"display_300x250_image","width":300,"height":250,"pixel_ratio":2}]}}`))
	if err != nil {
		t.Fatal(err)
	}
	c := newCatalogue(formatCatalogue(), sanitize.New(nil), nil)
	if m := c.Find(req.Filters, nil, "", false, nil); m.Total != 0 {
		t.Errorf("a 2x variant matched %d products, want none", m.Total)
	}
}
