package metrics_test

import (
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/storefront/storefront/metrics"
)

// served returns the names of every storefront metric a registry serves
// once each has been moved.
func served(t *testing.T) map[string]bool {
	t.Helper()
	m := metrics.New(metrics.Labels{Versions: []string{"3.1"}, Slugs: []string{"budget_below_minimum"}, Codes: []string{"BUDGET_TOO_LOW"}})
	m.SetTools([]string{"get_products"})
	m.Answered(metrics.Answer{Publisher: "p", Transport: "mcp", Tool: "get_products", Arm: "failed", Code: "BUDGET_TOO_LOW", Replay: "conflict", Took: time.Millisecond})
	m.LedgerAppend(time.Millisecond)
	m.LedgerBatch(3, time.Millisecond)
	m.Directive("p", "set")
	m.Task("p", "submitted")
	m.Purged("tasks", 1)
	m.Import("p", "saved")
	m.Backtest("p", "done")
	m.Order("p", "submitted")
	m.WatchScreen(func() (uint64, uint64, uint64) { return 0, 0, 0 })
	m.WatchPool(func() metrics.PoolStats { return metrics.PoolStats{} })
	m.WatchResyncs(func() int64 { return 0 })
	metrics.RecoveredPanic("http")
	fams, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, f := range fams {
		if strings.HasPrefix(f.GetName(), metrics.Namespace+"_") {
			out[f.GetName()] = true
		}
	}
	return out
}

// TestDocumented: docs/metrics.md lists every metric served, and the
// example alert rules name only metrics that are served.
func TestDocumented(t *testing.T) {
	names := served(t)
	if len(names) < 20 {
		t.Fatalf("only %d storefront metrics gathered: %v", len(names), names)
	}
	doc, err := os.ReadFile("../docs/metrics.md")
	if err != nil {
		t.Fatal(err)
	}
	for name := range names {
		if !strings.Contains(string(doc), "`"+name+"`") {
			t.Errorf("docs/metrics.md does not document %s", name)
		}
	}
	for _, m := range regexp.MustCompile("`(storefront_[a-z_]+)`").FindAllStringSubmatch(string(doc), -1) {
		if !names[m[1]] {
			t.Errorf("docs/metrics.md documents %s, which is not served", m[1])
		}
	}
	rules, err := os.ReadFile("../docs/alerts.yml")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile(`storefront_[a-z_]+`).FindAllString(string(rules), -1) {
		base := m
		for _, suffix := range []string{"_bucket", "_sum", "_count"} {
			base = strings.TrimSuffix(base, suffix)
		}
		if !names[base] {
			t.Errorf("docs/alerts.yml uses %s, which is not served", m)
		}
	}
}

// TestBoundedLabels: a value outside its label's set is counted as other,
// never as itself.
func TestBoundedLabels(t *testing.T) {
	m := metrics.New(metrics.Labels{Versions: []string{"3.1"}, Slugs: []string{"budget_below_minimum"}, Codes: []string{"BUDGET_TOO_LOW"}})
	m.SetTools([]string{"get_products"})
	m.Answered(metrics.Answer{Publisher: "p", Transport: "carrier-pigeon", Tool: "drop table", Arm: "maybe",
		Slug: "Whitfield's floor", Version: "9.9", Code: "SECRET", Replay: "weird"})
	metrics.RecoveredPanic("somewhere <b>")
	fams, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	allowed := map[string]bool{"p": true, metrics.Other: true, "http": true}
	for _, f := range fams {
		if !strings.HasPrefix(f.GetName(), metrics.Namespace+"_") {
			continue
		}
		for _, mt := range f.GetMetric() {
			for _, l := range mt.GetLabel() {
				if !allowed[l.GetValue()] {
					t.Errorf("%s{%s=%q}: a value outside the label's set reached the metric", f.GetName(), l.GetName(), l.GetValue())
				}
			}
		}
	}
}

// TestNilMetrics: code without metrics set up counts nothing and does not
// fail.
func TestNilMetrics(t *testing.T) {
	var m *metrics.Metrics
	m.Answered(metrics.Answer{})
	m.LedgerAppend(time.Second)
	m.Purged("tasks", 3)
	m.SetTools(nil)
}
