package e2e

import (
	"encoding/json"
	"github.com/storefront/storefront/internal/required"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/storefront/storefront/store/pgstore/pgtest"
)

// TestBenchSmoke runs `storefront bench` for a few seconds on a small
// publisher, with every comparison it makes (the ceiling, the MCP floor,
// the Node peer, PostgreSQL with the ledger), so the harness cannot rot.
// It checks that the harness works, never how fast anything is.
func TestBenchSmoke(t *testing.T) {
	dbURL := pgtest.ServerURL(t)
	peer := filepath.Join("..", "bench", "peer-node")
	if _, err := os.Stat(filepath.Join(peer, "node_modules", "@adcp", "sdk")); err != nil {
		required.Missing(t, "the Node peer's packages are not installed (%v); scripts/test.sh runs npm ci --prefix bench/peer-node", err)
	}
	out := t.TempDir()
	cmd := exec.Command(binary, "bench",
		"--fixture", "products=200,rules=20,deny=300",
		"--concurrency", "2,4", "--headline", "4",
		"--duration", "1s", "--warmup", "200ms", "--rounds", "2",
		"--stores", "memory,postgres", "--database-url", dbURL,
		"--screen-terms", "10,1000", "--peer", "bench/peer-node", "--out", out)
	cmd.Dir = ".."
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("storefront bench: %v\n%s", err, b)
	}
	var r struct {
		Curve []struct {
			Target      string           `json:"target"`
			Concurrency int              `json:"concurrency"`
			Requests    int64            `json:"requests"`
			Errors      int64            `json:"errors"`
			Arms        map[string]int64 `json:"arms"`
			P99         float64          `json:"p99_ms"`
		} `json:"curve"`
		Postgres *struct {
			Stats struct {
				Requests int64 `json:"requests"`
				Errors   int64 `json:"errors"`
			} `json:"stats"`
			Appends       float64 `json:"appends_per_second"`
			LedgerEntries int64   `json:"ledger_entries"`
			Verified      bool    `json:"verified"`
		} `json:"postgres"`
		Screen []struct {
			Terms int     `json:"terms"`
			Ns    float64 `json:"ns_per_response"`
		} `json:"screen"`
		Targets []struct {
			Name     string `json:"name"`
			Measured bool   `json:"measured"`
		} `json:"targets"`
		Rounds []map[string]struct {
			Requests int64 `json:"requests"`
			Errors   int64 `json:"errors"`
		} `json:"rounds"`
	}
	raw, err := os.ReadFile(filepath.Join(out, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, s := range r.Curve {
		seen[s.Target]++
		if s.Requests == 0 || s.Errors != 0 || s.P99 <= 0 {
			t.Errorf("%s at c=%d: %d calls, %d errors, p99 %.2f ms", s.Target, s.Concurrency, s.Requests, s.Errors, s.P99)
		}
		if s.Target == "storefront" || s.Target == "ceiling" || s.Target == "mcp-floor" {
			// The mix is seven briefs served to three declined.
			if s.Arms["completed"] == 0 || s.Arms["rejected"] == 0 || s.Arms["completed"] < s.Arms["rejected"] {
				t.Errorf("%s at c=%d answered %v: not the 70/30 mix", s.Target, s.Concurrency, s.Arms)
			}
		}
	}
	if len(r.Rounds) != 2 {
		t.Errorf("%d back-to-back rounds, want 2", len(r.Rounds))
	}
	for i, rd := range r.Rounds {
		for _, target := range []string{"ceiling", "storefront", "storefront_a2a"} {
			if s := rd[target]; s.Requests == 0 || s.Errors != 0 {
				t.Errorf("round %d, %s: %d calls, %d errors", i+1, target, s.Requests, s.Errors)
			}
		}
	}
	for _, target := range []string{"ceiling", "mcp-floor", "storefront", "peer"} {
		if seen[target] != 2 {
			t.Errorf("%s was measured at %d load points, want 2", target, seen[target])
		}
	}
	if pg := r.Postgres; pg == nil || pg.Stats.Requests == 0 || pg.Stats.Errors != 0 || !pg.Verified || pg.LedgerEntries < pg.Stats.Requests || pg.Appends <= 0 {
		t.Errorf("postgres run: %+v", pg)
	}
	if len(r.Screen) != 2 || r.Screen[0].Ns <= 0 || r.Screen[1].Terms != 1000 {
		t.Errorf("screen costs: %+v", r.Screen)
	}
	for _, tr := range r.Targets {
		if !tr.Measured && tr.Name != "memory over a soak" {
			t.Errorf("target %q was not measured", tr.Name)
		}
	}
	svg, err := os.ReadFile(filepath.Join(out, "latency.svg"))
	if err != nil || !strings.HasPrefix(string(svg), "<svg") || !strings.Contains(string(svg), "storefront") {
		t.Errorf("latency.svg: %v %.80s", err, svg)
	}
	if md, err := os.ReadFile(filepath.Join(out, "tables.md")); err != nil || !strings.Contains(string(md), "### Targets") {
		t.Errorf("tables.md: %v", err)
	}
}
