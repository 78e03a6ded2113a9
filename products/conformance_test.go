package products_test

import (
	"slices"
	"testing"

	"github.com/storefront/storefront/internal/spectest"
)

// These tests hold the fixes the fixed storyboard runner found; each names
// the storyboard that caught it (scripts/storyboards.sh runs them all).

// TestServiceFormatOptionRefs: a format_option_refs filter is evaluated
// against the products' format_options, not treated as a filter the
// catalogue cannot evaluate (get-products-pagination-integrity).
func TestServiceFormatOptionRefs(t *testing.T) {
	e := demoEnv(t)
	option := func(p map[string]any) bool { return has(p["format_options"], "format_option_id", "travel_story_15") }
	legacy := func(p map[string]any) bool { return has(p["format_ids"], "id", "video_standard_15s") }
	for _, test := range []struct {
		name, filters string
		// accepts says whether a product satisfies the filter; nil
		// means no product may.
		accepts func(map[string]any) bool
	}{
		{"a product-local option", `{"format_option_refs":[{"scope":"product","format_option_id":"travel_story_15"}]}`, option},
		// The catalogue's options are product-local.
		{"a publisher catalogue option", `{"format_option_refs":[{"scope":"publisher","publisher_domain":"northwind.example","format_option_id":"travel_story_15"}]}`, nil},
		{"a published legacy format id", `{"format_ids":[{"agent_url":"https://creative.adcontextprotocol.org","id":"video_standard_15s"}]}`, legacy},
	} {
		t.Run(test.name, func(t *testing.T) {
			r, m := e.get(t, nw, anonymous, `{"adcp_version":"3.2-beta.5","buying_mode":"wholesale","filters":`+test.filters+`}`)
			if got := spectest.GetProducts(t, r.Payload); got != "completed" {
				t.Fatalf("status = %q: %s", got, r.Payload)
			}
			got := ids(productsOf(t, m))
			if test.accepts == nil {
				if len(got) != 0 {
					t.Errorf("products = %v, want none", got)
				}
				return
			}
			if !slices.Contains(got, "nw_olv_travel_stories") {
				t.Errorf("products = %v, want nw_olv_travel_stories among them", got)
			}
			for _, p := range productsOf(t, m) {
				if !test.accepts(p) {
					t.Errorf("product %v does not satisfy the filter", p["product_id"])
				}
			}
		})
	}
}

// has reports whether list (a decoded JSON array of objects) has an
// object whose key is value.
func has(list any, key, value string) bool {
	l, _ := list.([]any)
	for _, x := range l {
		if m, _ := x.(map[string]any); m[key] == value {
			return true
		}
	}
	return false
}
