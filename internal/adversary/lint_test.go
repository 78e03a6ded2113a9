package adversary

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/storefront/storefront/products"
)

// TestLintAgreesWithServe: what the admin API would store is what is
// served. For every product of generated worlds, the save-time lint
// (products.LintProduct with the serving screen) finds nothing exactly
// when the product is served with every string it was stored with.
func TestLintAgreesWithServe(t *testing.T) {
	svc := &products.Service{Now: func() time.Time { return Clock }}
	refused, kept := 0, 0
	for s := uint64(0); s < 150; s++ {
		w := NewWorld(s, "lint")
		snap := products.NewSnapshot(w.Publisher, w.Catalogue, 1, &w.Rulebook, 1)
		res := svc.Preview(context.Background(), products.Call{Publisher: w.Publisher.ID,
			Args: []byte(`{"adcp_version":"3.2-rc.7","buying_mode":"wholesale","pagination":{"max_results":100}}`)}, snap)
		var answer struct {
			Products []map[string]any `json:"products"`
		}
		if err := json.Unmarshal(res.Payload, &answer); err != nil {
			t.Fatalf("world %d: %v", s, err)
		}
		served := map[string]map[string]any{}
		for _, p := range answer.Products {
			served[p["product_id"].(string)] = p
		}
		for _, p := range w.Catalogue {
			problems := products.LintProduct(p, snap.Screen)
			var stored map[string]any
			b, _ := json.Marshal(p)
			_ = json.Unmarshal(b, &stored)
			same := served[p.ProductID] != nil && sameStrings(stored, served[p.ProductID])
			if (len(problems) == 0) != same {
				t.Errorf("world %d product %s: lint found %v, but served as stored = %v", s, p.ProductID, problems, same)
			}
			if len(problems) > 0 {
				refused++
			} else {
				kept++
			}
		}
	}
	if refused == 0 || kept == 0 {
		t.Errorf("%d products refused and %d kept: the worlds do not exercise both sides", refused, kept)
	}
}

// sameStrings reports whether every string of served that stored also has
// at the same place is the same, spacing aside. Members served from no
// stored field (brief_relevance, the derived format_ids) are not compared.
func sameStrings(stored, served any) bool {
	switch x := served.(type) {
	case string:
		s, ok := stored.(string)
		return !ok || strings.Join(strings.Fields(s), " ") == strings.Join(strings.Fields(x), " ")
	case []any:
		l, ok := stored.([]any)
		if !ok || len(l) != len(x) {
			return !ok
		}
		for i := range x {
			if !sameStrings(l[i], x[i]) {
				return false
			}
		}
	case map[string]any:
		m, ok := stored.(map[string]any)
		if !ok {
			return true
		}
		for k, v := range x {
			if sv, has := m[k]; has && !sameStrings(sv, v) {
				return false
			}
		}
		for _, k := range []string{"name", "description"} {
			_, had := m[k]
			if _, has := x[k]; had && !has {
				return false
			}
		}
	}
	return true
}
