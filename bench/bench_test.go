package bench

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"io"
	"strings"
	"testing"
)

func TestParseFixture(t *testing.T) {
	f, err := ParseFixture("products=100k, rules=10, deny=1m")
	if err != nil || f != (Fixture{Products: 100_000, Rules: 10, Deny: 1_000_000}) {
		t.Fatalf("ParseFixture = %+v, %v", f, err)
	}
	if f, err := ParseFixture(""); err != nil || f != DefaultFixture() {
		t.Fatalf("empty fixture = %+v, %v", f, err)
	}
	for _, bad := range []string{"products", "products=0", "rules=3", "deny=-1", "colour=blue", "products=ten", "products=20m"} {
		if _, err := ParseFixture(bad); err == nil {
			t.Errorf("ParseFixture(%q) accepted", bad)
		}
	}
}

func TestFixtureSizes(t *testing.T) {
	f := Fixture{Products: 300, Rules: 40, Deny: 2_000}
	cat := f.Catalogue()
	if len(cat) != 300 {
		t.Fatalf("catalogue has %d products", len(cat))
	}
	ids := map[string]bool{}
	for _, p := range cat {
		if err := p.Validate(); err != nil {
			t.Fatalf("%s: %v", p.ProductID, err)
		}
		if ids[p.ProductID] {
			t.Fatalf("product id %s twice", p.ProductID)
		}
		ids[p.ProductID] = true
	}
	rb := f.Rulebook(cat)
	if err := rb.Validate(); err != nil {
		t.Fatal(err)
	}
	if len(rb.Rules) != 40 {
		t.Fatalf("rulebook has %d rules", len(rb.Rules))
	}
	if n := f.DenyTerms(); n != 2_000 {
		t.Fatalf("deny-list has %d terms, want 2000", n)
	}
	// The same sizes always give the same publisher.
	again := f.Catalogue()
	if again[123].Name != cat[123].Name || again[299].InternalRef != cat[299].InternalRef {
		t.Fatal("the fixture is not deterministic")
	}
}

func TestMix(t *testing.T) {
	reqs := Mix("3.2-beta.5")
	if len(reqs) != 10 || share(reqs, "completed") != 70 || share(reqs, "rejected") != 30 {
		t.Fatalf("mix: %d requests, %d%% completed", len(reqs), share(reqs, "completed"))
	}
	for i, r := range reqs {
		var msg struct {
			ID     int `json:"id"`
			Params struct {
				Arguments map[string]any `json:"arguments"`
			} `json:"params"`
		}
		if err := json.Unmarshal(r.Body, &msg); err != nil {
			t.Fatalf("%s: %v", r.Name, err)
		}
		if msg.ID != i+1 || msg.Params.Arguments["adcp_version"] != "3.2-beta.5" {
			t.Errorf("%s: id %d, arguments %v", r.Name, msg.ID, msg.Params.Arguments)
		}
	}
}

func TestArmAndCheck(t *testing.T) {
	for _, c := range []struct{ raw, arm string }{
		{`{"jsonrpc":"2.0","id":1,"result":{"structuredContent":{"status":"completed","products":[]}}}`, "completed"},
		{`{"jsonrpc":"2.0","id":1,"result":{"structuredContent":{"status":"rejected","reason":"x"}}}`, "rejected"},
		{`{"jsonrpc":"2.0","id":1,"result":{"structuredContent":{"products":[{"product_id":"a"}]}}}`, "completed"},
		{`{"jsonrpc":"2.0","id":1,"result":{"structuredContent":{"adcp_error":{"code":"BUDGET_TOO_LOW"}},"isError":true}}`, "failed"},
	} {
		if got := Arm([]byte(c.raw)); got != c.arm {
			t.Errorf("Arm(%s) = %s, want %s", c.raw, got, c.arm)
		}
		if got, err := Check([]byte(c.raw)); err != nil || got != c.arm {
			t.Errorf("Check(%s) = %s, %v, want %s", c.raw, got, err, c.arm)
		}
	}
	for _, bad := range []string{`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"unknown tool"}}`, `not json`, `{"result":{"structuredContent":{"products":[]},"isError":true}}`} {
		if got := Arm([]byte(bad)); got != "error" {
			t.Errorf("Arm(%s) = %s, want error", bad, got)
		}
		if _, err := Check([]byte(bad)); err == nil {
			t.Errorf("Check(%s) accepted", bad)
		}
	}
}

func TestLastEvent(t *testing.T) {
	stream := "event: message\r\ndata: {\"a\":1}\r\n\r\nevent: message\ndata:{\"b\":2}\n\n"
	if got := string(lastEvent([]byte(stream))); got != `{"b":2}` {
		t.Fatalf("lastEvent = %q", got)
	}
	if lastEvent([]byte("event: ping\n\n")) != nil {
		t.Fatal("a stream without data gave data")
	}
}

func TestTargets(t *testing.T) {
	r := &Report{Headline: 64, Fixture: "products=10000,rules=1000,deny=10000", Curve: []Stats{
		{Target: "ceiling", Concurrency: 64, RPS: 20000, P99: 10},
		{Target: "storefront", Concurrency: 64, RPS: 12000, P99: 25},
		{Target: "peer", Concurrency: 64, RPS: 1000, P99: 200},
	}, Screen: []ScreenCost{{Terms: 10, NsPerResponse: 1000}, {Terms: 100000, NsPerResponse: 2500, BuildSeconds: 1.2, BuildCPUSeconds: 0.9, BuildHeapMiB: 40}},
		Soak: &Soak{Heap: []HeapSample{{0, 100}, {60, 120}, {70, 121}, {80, 119}, {90, 160}, {100, 170}}}}
	got := map[string]bool{}
	measured := map[string]bool{}
	for _, tr := range Evaluate(r) {
		got[tr.Name], measured[tr.Name] = tr.Met, tr.Measured
	}
	want := map[string]bool{"throughput vs ceiling": true, "p99 vs ceiling": true, "throughput vs Node peer": true,
		"screen cost vs deny-list size": false, "memory over a soak": false, "PostgreSQL decisions": false,
		"deny-list build": false}
	for name, met := range want {
		if got[name] != met {
			t.Errorf("%s: met = %v, want %v", name, got[name], met)
		}
	}
	if measured["PostgreSQL decisions"] {
		t.Error("PostgreSQL counted as measured without a run")
	}
	// The build is judged by its wall time and its heap, each alone.
	for _, c := range []struct {
		seconds, heap float64
		met           bool
	}{{0.8, 40, true}, {0.8, 120, false}, {1.2, 40, false}} {
		r.Screen[1].BuildSeconds, r.Screen[1].BuildHeapMiB = c.seconds, c.heap
		for _, tr := range Evaluate(r) {
			if tr.Name == "deny-list build" && tr.Met != c.met {
				t.Errorf("deny-list build of %.1f s and %.0f MiB: met = %v, want %v", c.seconds, c.heap, tr.Met, c.met)
			}
		}
	}
}

// TestTargetsReadTheRounds: with back-to-back rounds, the ceiling
// targets are met by the median of the rounds' ratios, whatever the
// curve's one point says; a round with an error fails them; without
// rounds the curve's point decides.
func TestTargetsReadTheRounds(t *testing.T) {
	round := func(ceil, mcp, a2a, ceilP99, mcpP99 float64) Round {
		return Round{Ceiling: Stats{Target: "ceiling", RPS: ceil, P99: ceilP99}, Storefront: Stats{Target: "storefront", RPS: mcp, P99: mcpP99},
			A2A: Stats{Target: "storefront-a2a", RPS: a2a, P99: mcpP99}}
	}
	curve := func(sf float64) []Stats {
		return []Stats{{Target: "ceiling", Concurrency: 64, RPS: 20000, P99: 10}, {Target: "storefront", Concurrency: 64, RPS: sf, P99: 25},
			{Target: "storefront-a2a", Concurrency: 64, RPS: sf, P99: 25}}
	}
	met := func(r *Report) map[string]bool {
		out := map[string]bool{}
		for _, tr := range Evaluate(r) {
			out[tr.Name] = tr.Met
		}
		return out
	}
	for _, c := range []struct {
		name        string
		curve       float64
		rounds      []Round
		mcp, p99, a bool
	}{
		{"rounds meet it where the curve's point misses", 9000, []Round{round(20000, 10400, 7000, 10, 20), round(22000, 10500, 7000, 10, 35), round(18000, 9900, 5000, 10, 25)}, true, true, true},
		{"rounds miss it where the curve's point meets it", 12000, []Round{round(20000, 9000, 5000, 10, 31), round(22000, 11500, 5000, 10, 40), round(21000, 10200, 7000, 10, 20)}, false, false, false},
		{"one slow round does not decide it", 9000, []Round{round(20000, 10200, 7000, 10, 20), round(20000, 10200, 7000, 10, 20), round(20000, 4000, 2000, 10, 90)}, true, true, true},
		{"an even count takes the middle two", 9000, []Round{round(20000, 9800, 7000, 10, 20), round(20000, 10400, 7000, 10, 20)}, true, true, true},
		{"no rounds: the curve's point", 12000, nil, true, true, true},
	} {
		r := &Report{Headline: 64, Curve: curve(c.curve), Rounds: c.rounds}
		got := met(r)
		if got["throughput vs ceiling"] != c.mcp || got["p99 vs ceiling"] != c.p99 || got["A2A throughput vs ceiling"] != c.a {
			t.Errorf("%s: met %v, want throughput %v, p99 %v, A2A %v", c.name, got, c.mcp, c.p99, c.a)
		}
		if len(c.rounds) > 0 {
			c.rounds[0].Storefront.Errors = 1
			if met(r)["throughput vs ceiling"] {
				t.Errorf("%s: met with an error in a round", c.name)
			}
			c.rounds[0].Storefront.Errors = 0
		}
	}
}

func TestPlotIsSVG(t *testing.T) {
	r := &Report{Fixture: "a<b", Curve: []Stats{
		{Target: "ceiling", Concurrency: 1, RPS: 3000, P50: 0.2, P99: 0.9},
		{Target: "ceiling", Concurrency: 64, RPS: 25000, P50: 2, P99: 9},
		{Target: "storefront", Concurrency: 1, RPS: 500, P50: 1.5, P99: 4},
		{Target: "storefront", Concurrency: 64, RPS: 2000, P50: 30, P99: 90},
	}}
	svg := Plot(r)
	d := xml.NewDecoder(bytes.NewReader([]byte(svg)))
	for {
		_, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v\n%s", err, svg)
		}
	}
	if !strings.Contains(svg, "a&lt;b") || strings.Count(svg, "<polyline") != 4 {
		t.Fatalf("plot: %s", svg)
	}
}
