package products

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/storefront/storefront/internal/spectest"
	"github.com/storefront/storefront/jsonfield"
)

// TestMetricOptimizationEnums pins the enums Validate accepts to the
// official schemas they come from.
func TestMetricOptimizationEnums(t *testing.T) {
	dir := spectest.Dir(t)
	read := func(rel string) map[string]any {
		b, err := os.ReadFile(filepath.Join(dir, "schemas", rel))
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	strs := func(v any) []string {
		var out []string
		for _, x := range v.([]any) {
			out = append(out, x.(string))
		}
		return out
	}
	props := read("core/product.json")["properties"].(map[string]any)["metric_optimization"].(map[string]any)["properties"].(map[string]any)
	items := func(name string) map[string]any { return props[name].(map[string]any)["items"].(map[string]any) }
	for _, c := range []struct {
		name      string
		got, want []string
	}{
		{"supported_metrics", optimizationMetrics, strs(items("supported_metrics")["enum"])},
		{"supported_targets", optimizationTargets, strs(items("supported_targets")["enum"])},
		{"reach units", reachUnits, strs(read("enums/reach-unit.json")["enum"])},
	} {
		if !slices.Equal(slices.Sorted(slices.Values(c.got)), slices.Sorted(slices.Values(c.want))) {
			t.Errorf("%s: accepted %v, the schema says %v", c.name, c.got, c.want)
		}
	}
}

func TestMetricOptimizationValidate(t *testing.T) {
	for _, c := range []struct {
		name string
		mo   MetricOptimization
		want []string // pointers of the problems, none when valid
	}{
		{"valid", MetricOptimization{SupportedMetrics: []string{"viewed_seconds", "completed_views"}, SupportedViewDurations: []float64{2, 15}}, nil},
		{"empty", MetricOptimization{}, []string{"/metric_optimization/supported_metrics"}},
		{"unknown metric", MetricOptimization{SupportedMetrics: []string{"clicks", "vibes"}}, []string{"/metric_optimization/supported_metrics/1"}},
		{"reach without units", MetricOptimization{SupportedMetrics: []string{"reach"}}, []string{"/metric_optimization/supported_reach_units"}},
		{"bad unit, target and duration", MetricOptimization{SupportedMetrics: []string{"reach"}, SupportedReachUnits: []string{"people"},
			SupportedTargets: []string{"cpa"}, SupportedViewDurations: []float64{0}},
			[]string{"/metric_optimization/supported_reach_units/0", "/metric_optimization/supported_targets/0", "/metric_optimization/supported_view_durations/0"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var v jsonfield.Invalid
			c.mo.validate(&v)
			var got []string
			for _, f := range v {
				got = append(got, f.Pointer)
			}
			if strings.Join(got, " ") != strings.Join(c.want, " ") {
				t.Errorf("problems at %v, want %v", got, c.want)
			}
		})
	}
}
