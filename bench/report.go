package bench

import (
	"encoding/json"
	"fmt"
	"html"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// TargetResult is one target checked against the figures of a run.
type TargetResult struct {
	Name     string `json:"name"`
	Want     string `json:"want"`
	Got      string `json:"got"`
	Met      bool   `json:"met"`
	Measured bool   `json:"measured"`
}

// The targets, as ratios measured in one run.
const (
	minCeilingShare = 0.5
	// minA2ACeilingShare is the A2A transport's share of the ceiling.
	minA2ACeilingShare = 0.3
	minPeerMultiple    = 10.0
	maxP99Multiple     = 3.0
	maxScreenGrowth    = 2.0
	// The deny-list of denyBuildTerms terms or more builds within these.
	denyBuildTerms      = 100_000
	maxDenyBuildSeconds = 1.0
	maxDenyBuildHeapMiB = 100.0
	minPGDecisions      = 2000.0
	// maxSoakGrowth is the heap growth over a soak still called flat: a
	// tenth, or 8 MiB for small heaps.
	maxSoakGrowth = 0.10
	soakSlackMiB  = 8.0
)

func (r *Report) at(target string, c int) (Stats, bool) {
	for _, s := range r.Curve {
		if s.Target == target && s.Concurrency == c {
			return s, true
		}
	}
	return Stats{}, false
}

// Evaluate checks the targets against the report's figures.
func Evaluate(r *Report) []TargetResult {
	var out []TargetResult
	add := func(name, want string, measured bool, got string, met bool) {
		out = append(out, TargetResult{Name: name, Want: want, Got: got, Met: measured && met, Measured: measured})
	}
	sf, okS := r.at("storefront", r.Headline)
	ceil, okC := r.at("ceiling", r.Headline)
	peer, okP := r.at("peer", r.Headline)
	if okS && okC && ceil.RPS > 0 {
		ratio, got := ceilingRatio(r, sf.RPS/ceil.RPS, func(rd Round) float64 { return rd.Storefront.RPS / rd.Ceiling.RPS },
			fmt.Sprintf("%.0f vs %.0f req/s", sf.RPS, ceil.RPS))
		add("throughput vs ceiling", fmt.Sprintf("≥ %.1f× the ceiling at c=%d", minCeilingShare, r.Headline), true,
			got, ratio >= minCeilingShare && clean(sf, ceil) && cleanRounds(r, false))
		p99, got := ceilingRatio(r, sf.P99/ceil.P99, func(rd Round) float64 { return rd.Storefront.P99 / rd.Ceiling.P99 },
			fmt.Sprintf("%.1f vs %.1f ms", sf.P99, ceil.P99))
		add("p99 vs ceiling", fmt.Sprintf("≤ %.0f× the ceiling's p99 at c=%d (%s)", maxP99Multiple, r.Headline, r.Fixture), true,
			got, p99 <= maxP99Multiple && clean(sf, ceil) && cleanRounds(r, false))
	} else {
		add("throughput vs ceiling", fmt.Sprintf("≥ %.1f× the ceiling", minCeilingShare), false, "not measured", false)
		add("p99 vs ceiling", fmt.Sprintf("≤ %.0f× the ceiling's p99", maxP99Multiple), false, "not measured", false)
	}
	if a2a, okA := r.at("storefront-a2a", r.Headline); okA && okC && ceil.RPS > 0 {
		ratio, got := ceilingRatio(r, a2a.RPS/ceil.RPS, func(rd Round) float64 { return rd.A2A.RPS / rd.Ceiling.RPS },
			fmt.Sprintf("%.0f vs %.0f req/s", a2a.RPS, ceil.RPS))
		add("A2A throughput vs ceiling", fmt.Sprintf("≥ %.1f× the ceiling at c=%d", minA2ACeilingShare, r.Headline), true,
			got, ratio >= minA2ACeilingShare && clean(a2a, ceil) && cleanRounds(r, true))
	} else {
		add("A2A throughput vs ceiling", fmt.Sprintf("≥ %.1f× the ceiling", minA2ACeilingShare), false, "not measured", false)
	}
	if okS && okP && peer.RPS > 0 {
		ratio := sf.RPS / peer.RPS
		add("throughput vs Node peer", fmt.Sprintf("≥ %.0f× the peer at c=%d", minPeerMultiple, r.Headline), true,
			fmt.Sprintf("%.1f× (%.0f vs %.0f req/s)", ratio, sf.RPS, peer.RPS), ratio >= minPeerMultiple && clean(sf, peer))
	} else {
		add("throughput vs Node peer", fmt.Sprintf("≥ %.0f× the peer", minPeerMultiple), false, "not measured", false)
	}
	if len(r.Screen) >= 2 {
		lo, hi := r.Screen[0], r.Screen[len(r.Screen)-1]
		g := hi.NsPerResponse / lo.NsPerResponse
		add("screen cost vs deny-list size", fmt.Sprintf("≤ %.0f× at %d terms what it costs at %d", maxScreenGrowth, hi.Terms, lo.Terms), true,
			fmt.Sprintf("%.2f× (%.1f vs %.1f µs per response)", g, hi.NsPerResponse/1e3, lo.NsPerResponse/1e3), g <= maxScreenGrowth)
	}
	if len(r.Screen) > 0 {
		big := r.Screen[len(r.Screen)-1]
		if big.Terms >= denyBuildTerms {
			add("deny-list build", fmt.Sprintf("≤ %.0f s and ≤ %.0f MiB live heap at %d terms", maxDenyBuildSeconds, maxDenyBuildHeapMiB, big.Terms), true,
				fmt.Sprintf("%.2f s (%.2f s CPU), %.1f MiB", big.BuildSeconds, big.BuildCPUSeconds, big.BuildHeapMiB),
				big.BuildSeconds <= maxDenyBuildSeconds && big.BuildHeapMiB <= maxDenyBuildHeapMiB)
		}
	}
	if pg := r.Postgres; pg != nil {
		chain := map[bool]string{true: "verified", false: "NOT verified"}[pg.Verified]
		add("PostgreSQL decisions over MCP", fmt.Sprintf("≥ %.0f decisions/s with the ledger verified", minPGDecisions), true,
			fmt.Sprintf("%.0f/s, %d entries, chain %s", pg.Stats.RPS, pg.LedgerEntries, chain),
			pg.Stats.RPS >= minPGDecisions && pg.Verified && clean(pg.Stats))
		add("PostgreSQL ledger appends", fmt.Sprintf("≥ %.0f appends/s, chain verified", minPGDecisions), true,
			fmt.Sprintf("%.0f/s, chain %s", pg.Appends, chain), pg.Appends >= minPGDecisions && pg.Verified)
	} else {
		add("PostgreSQL decisions", fmt.Sprintf("≥ %.0f decisions/s", minPGDecisions), false, "not measured", false)
	}
	if s := r.Soak; s != nil && len(s.Heap) >= 4 {
		early, late := soakHalves(s.Heap)
		limit := math.Max(early*(1+maxSoakGrowth), early+soakSlackMiB)
		first, last := s.Heap[0].HeapMiB, s.Heap[len(s.Heap)-1].HeapMiB
		add("memory over a soak", fmt.Sprintf("live heap flat: the later half's mean ≤ %.0f%% (or %.0f MiB) above the earlier half's, after the first minute", maxSoakGrowth*100, soakSlackMiB), true,
			fmt.Sprintf("%.1f MiB at the start, %.1f at the end; halves %.1f → %.1f MiB over %.0f s at c=%d", first, last, early, late, s.Seconds, s.Stats.Concurrency), late <= limit && clean(s.Stats))
	} else {
		add("memory over a soak", "flat live heap", false, "not measured", false)
	}
	return out
}

// ceilingRatio is a ratio to the ceiling as the targets read it: the
// median of the back-to-back rounds' when the run has rounds, each round's
// listed with the curve's point (curve, of the figures point) beside them;
// the curve's point alone otherwise.
func ceilingRatio(r *Report, curve float64, of func(Round) float64, point string) (float64, string) {
	if len(r.Rounds) == 0 {
		return curve, fmt.Sprintf("%.2f× (%s)", curve, point)
	}
	ratios := make([]float64, len(r.Rounds))
	each := make([]string, len(r.Rounds))
	for i, rd := range r.Rounds {
		ratios[i] = of(rd)
		each[i] = fmt.Sprintf("%.2f×", ratios[i])
	}
	m := median(ratios)
	return m, fmt.Sprintf("%.2f×, the median of %d back-to-back rounds: %s; the curve's point %.2f× (%s)", m, len(r.Rounds), strings.Join(each, ", "), curve, point)
}

// clean reports whether every one of s answered without errors or wrong
// arms.
func clean(s ...Stats) bool {
	for _, x := range s {
		if x.Errors > 0 || x.Wrong > 0 {
			return false
		}
	}
	return true
}

// cleanRounds reports whether every round's ceiling and storefront
// answered without errors or wrong arms (over A2A when a2a is set).
func cleanRounds(r *Report, a2a bool) bool {
	for _, rd := range r.Rounds {
		sf := rd.Storefront
		if a2a {
			sf = rd.A2A
		}
		if !clean(rd.Ceiling, sf) {
			return false
		}
	}
	return true
}

// median is the middle of xs, the mean of the two middle ones for an even
// count; xs is not changed.
func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// soakHalves averages the heap samples of the earlier and later halves of
// a soak, leaving out its first minute (while bounded buffers such as the
// in-memory ledger window fill) when the soak is long enough to spare it.
func soakHalves(hs []HeapSample) (early, late float64) {
	settled := hs
	for i, h := range hs {
		if h.At >= 60 && len(hs)-i >= 4 {
			settled = hs[i:]
			break
		}
	}
	mid := len(settled) / 2
	mean := func(xs []HeapSample) float64 {
		t := 0.0
		for _, x := range xs {
			t += x.HeapMiB
		}
		return t / float64(len(xs))
	}
	return mean(settled[:mid]), mean(settled[mid:])
}

func writeReport(r *Report, dir string, stdout io.Writer) error {
	tables := Tables(r)
	fmt.Fprint(stdout, tables)
	if dir == "" {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "results.json"), append(b, '\n'), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "tables.md"), []byte(tables), 0o644); err != nil {
		return err
	}
	if len(r.Curve) > 0 {
		if err := os.WriteFile(filepath.Join(dir, "latency.svg"), []byte(Plot(r)), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// Tables renders the report as Markdown tables.
func Tables(r *Report) string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p("Run of %s on %d CPUs (%s), %d GiB, %s%s. Fixture: %s. Requests pin adcp_version %s; %s per point after warm-up.\n\n",
		r.Started.Format("2006-01-02 15:04 MST"), r.Machine.CPUs, r.Machine.CPUModel, r.Machine.MemoryGiB, r.Machine.GoVersion,
		map[bool]string{true: ", Node " + r.Machine.Node, false: ""}[r.Machine.Node != ""], r.Fixture, r.Version, r.Duration)
	p("### Targets\n\n| Target | Wanted | Measured | Met |\n|---|---|---|---|\n")
	for _, t := range r.Targets {
		met := "no"
		switch {
		case !t.Measured:
			met = "not run"
		case t.Met:
			met = "yes"
		}
		p("| %s | %s | %s | %s |\n", t.Name, t.Want, t.Got, met)
	}
	sf, okS := r.at("storefront", r.Headline)
	fl, okF := r.at("mcp-floor", r.Headline)
	ce, okC := r.at("ceiling", r.Headline)
	if okS && okF && okC && fl.RPS > 0 && ce.RPS > 0 {
		p("\nThe MCP floor is the same MCP SDK server and handler serving the storefront's recorded answers with no pipeline behind it. At c=%d it reached %.0f req/s (%.2f× the ceiling) with a p99 of %.1f ms (%.1f× the ceiling's); the storefront reached %.2f× the floor's throughput and %.2f× its p99.\n",
			r.Headline, fl.RPS, fl.RPS/ce.RPS, fl.P99, fl.P99/ce.P99, sf.RPS/fl.RPS, sf.P99/fl.P99)
	}
	if len(r.Rounds) > 0 {
		p("\n### Back-to-back rounds at c=%d (in-memory store)\n\nEach round runs the ceiling, the storefront over MCP and over A2A one straight after another, in turn first and last; the ceiling targets read the median of the rounds' ratios.\n\n| Round | Ceiling req/s | MCP req/s | MCP / ceiling | A2A req/s | A2A / ceiling | Ceiling p99 ms | MCP p99 ms | p99 / ceiling's |\n|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n", r.Headline)
		for i, rd := range r.Rounds {
			c, m, a := rd.Ceiling, rd.Storefront, rd.A2A
			p("| %d | %.0f | %.0f | %.2f× | %.0f | %.2f× | %.2f | %.2f | %.2f× |\n", i+1, c.RPS, m.RPS, m.RPS/c.RPS, a.RPS, a.RPS/c.RPS, c.P99, m.P99, m.P99/c.P99)
		}
	}
	if len(r.Curve) > 0 {
		p("\n### Latency against load (in-memory store)\n\n| Target | Concurrency | req/s | p50 ms | p90 ms | p99 ms | max ms | Calls | Errors | Wrong arm |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
		for _, s := range r.Curve {
			wrong := "n/a"
			if s.Target != "peer" {
				wrong = strconv.FormatInt(s.Wrong, 10)
			}
			p("| %s | %d | %.0f | %.2f | %.2f | %.2f | %.2f | %d | %d | %s |\n", s.Target, s.Concurrency, s.RPS, s.P50, s.P90, s.P99, s.Max, s.Requests, s.Errors, wrong)
		}
		for _, name := range []string{"storefront", "peer"} {
			if s, ok := r.at(name, r.Headline); ok {
				p("\nAnswers from the %s at c=%d: %s.\n", name, r.Headline, armList(s.Arms))
			}
		}
	}
	if len(r.Screen) > 0 {
		p("\n### The screen's cost per response\n\n| Deny-list terms | µs per response | Deny-list build s | Build CPU s | Build live heap MiB |\n|---:|---:|---:|---:|---:|\n")
		for _, s := range r.Screen {
			p("| %d | %.1f | %.2f | %.2f | %.1f |\n", s.Terms, s.NsPerResponse/1e3, s.BuildSeconds, s.BuildCPUSeconds, s.BuildHeapMiB)
		}
		p("\nThe build is timed alone, in this process, after the garbage of generating the publisher is collected: the wall time and the CPU time of every thread (the collector's share of the build included), and the live heap the built screen keeps.\n")
	}
	if pg := r.Postgres; pg != nil {
		s := pg.Stats
		p("\n### PostgreSQL, ledger on (c=%d)\n\n| Decisions/s over MCP | p50 ms | p99 ms | Ledger appends/s, store only | Ledger entries | `ledger verify` |\n|---:|---:|---:|---:|---:|---|\n", s.Concurrency)
		p("| %.0f | %.2f | %.2f | %.0f | %d | %s |\n", s.RPS, s.P50, s.P99, pg.Appends, pg.LedgerEntries, oneLine(pg.Verify))
	}
	if len(r.Scaling) > 0 {
		p("\n### Scaling (c=%d)\n\n| Store | Varied | Fixture | Deny-list terms | req/s | p50 ms | p99 ms | Live heap MiB | Start-up s |\n|---|---|---|---:|---:|---:|---:|---:|---:|\n", r.Headline)
		for _, s := range r.Scaling {
			p("| %s | %s | %s | %d | %.0f | %.2f | %.2f | %.1f | %.1f |\n", s.Store, s.Vary, s.Fixture, s.DenyTerms, s.Stats.RPS, s.Stats.P50, s.Stats.P99, s.HeapMiB, s.Startup)
		}
	}
	if s := r.Soak; s != nil {
		p("\n### Soak (%s store, c=%d, %.0f s, %.0f req/s)\n\n| Seconds in | Live heap MiB |\n|---:|---:|\n", s.Store, s.Stats.Concurrency, s.Seconds, s.Stats.RPS)
		for _, h := range s.Heap {
			p("| %.0f | %.1f |\n", h.At, h.HeapMiB)
		}
	}
	for _, n := range r.Notes {
		p("\nNote: %s\n", n)
	}
	return b.String()
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	return strings.ReplaceAll(s, "|", "/")
}

// Plot draws p50 and p99 latency against achieved throughput for each
// target, one point per concurrency, on log-log axes.
func Plot(r *Report) string {
	const (
		w, h                   = 760.0, 460.0
		left, right, top, bott = 70.0, 150.0, 40.0, 55.0
	)
	series := map[string][]Stats{}
	var order []string
	minX, maxX, minY, maxY := math.Inf(1), 0.0, math.Inf(1), 0.0
	for _, s := range r.Curve {
		if _, ok := series[s.Target]; !ok {
			order = append(order, s.Target)
		}
		series[s.Target] = append(series[s.Target], s)
		if s.RPS > 0 {
			minX, maxX = math.Min(minX, s.RPS), math.Max(maxX, s.RPS)
		}
		if s.P50 > 0 {
			minY = math.Min(minY, s.P50)
		}
		maxY = math.Max(maxY, s.P99)
	}
	lx0, lx1 := math.Floor(math.Log10(minX)), math.Ceil(math.Log10(maxX))
	ly0, ly1 := math.Floor(math.Log10(minY)), math.Ceil(math.Log10(maxY))
	if lx1 == lx0 {
		lx1++
	}
	if ly1 == ly0 {
		ly1++
	}
	x := func(v float64) float64 { return left + (math.Log10(v)-lx0)/(lx1-lx0)*(w-left-right) }
	y := func(v float64) float64 { return h - bott - (math.Log10(v)-ly0)/(ly1-ly0)*(h-top-bott) }
	colours := map[string]string{"ceiling": "#6b7280", "storefront": "#1d4ed8", "storefront-a2a": "#15803d", "peer": "#c2410c"}
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p(`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %.0f %.0f" width="%.0f" height="%.0f" font-family="sans-serif" font-size="12">`+"\n", w, h, w, h)
	p(`<rect width="100%%" height="100%%" fill="#ffffff"/>` + "\n")
	p(`<text x="%.0f" y="22" font-size="15" font-weight="bold">get_products latency against load (%s)</text>`+"\n", left, html.EscapeString(r.Fixture))
	for e := lx0; e <= lx1; e++ {
		for _, m := range []float64{1, 2, 5} {
			v := m * math.Pow(10, e)
			if math.Log10(v) > lx1+1e-9 {
				continue
			}
			p(`<line x1="%.1f" y1="%.0f" x2="%.1f" y2="%.0f" stroke="#e5e7eb"/>`+"\n", x(v), top, x(v), h-bott)
			p(`<text x="%.1f" y="%.0f" text-anchor="middle">%s</text>`+"\n", x(v), h-bott+16, human(v))
		}
	}
	for e := ly0; e <= ly1; e++ {
		for _, m := range []float64{1, 2, 5} {
			v := m * math.Pow(10, e)
			if math.Log10(v) > ly1+1e-9 {
				continue
			}
			p(`<line x1="%.0f" y1="%.1f" x2="%.0f" y2="%.1f" stroke="#e5e7eb"/>`+"\n", left, y(v), w-right, y(v))
			p(`<text x="%.0f" y="%.1f" text-anchor="end">%s</text>`+"\n", left-6, y(v)+4, human(v))
		}
	}
	p(`<rect x="%.0f" y="%.0f" width="%.0f" height="%.0f" fill="none" stroke="#374151"/>`+"\n", left, top, w-left-right, h-top-bott)
	p(`<text x="%.0f" y="%.0f" text-anchor="middle">throughput, requests/s (log)</text>`+"\n", left+(w-left-right)/2, h-12)
	p(`<text transform="translate(18 %.0f) rotate(-90)" text-anchor="middle">latency, ms (log)</text>`+"\n", top+(h-top-bott)/2)
	ly := top + 10
	for _, name := range order {
		pts := series[name]
		col := colours[name]
		if col == "" {
			col = "#111827"
		}
		for _, q := range []struct {
			label string
			dash  string
			get   func(Stats) float64
		}{{"p99", "", func(s Stats) float64 { return s.P99 }}, {"p50", ` stroke-dasharray="5 4"`, func(s Stats) float64 { return s.P50 }}} {
			var path []string
			for _, s := range pts {
				if s.RPS > 0 && q.get(s) > 0 {
					path = append(path, fmt.Sprintf("%.1f,%.1f", x(s.RPS), y(q.get(s))))
				}
			}
			p(`<polyline points="%s" fill="none" stroke="%s" stroke-width="2"%s/>`+"\n", strings.Join(path, " "), col, q.dash)
			for _, s := range pts {
				if s.RPS > 0 && q.get(s) > 0 {
					p(`<circle cx="%.1f" cy="%.1f" r="3" fill="%s"><title>%s %s c=%d: %.0f req/s, %.2f ms</title></circle>`+"\n",
						x(s.RPS), y(q.get(s)), col, html.EscapeString(name), q.label, s.Concurrency, s.RPS, q.get(s))
				}
			}
			if q.label == "p99" {
				for _, s := range pts {
					p(`<text x="%.1f" y="%.1f" font-size="10" fill="%s">c=%d</text>`+"\n", x(s.RPS)+5, y(s.P99)-5, col, s.Concurrency)
				}
			}
		}
		p(`<line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="%s" stroke-width="2"/><text x="%.0f" y="%.0f">%s</text>`+"\n",
			w-right+12, ly, w-right+36, ly, col, w-right+42, ly+4, html.EscapeString(name))
		ly += 20
	}
	p(`<text x="%.0f" y="%.0f" font-size="11">solid: p99</text>`+"\n", w-right+12, ly+6)
	p(`<text x="%.0f" y="%.0f" font-size="11">dashed: p50</text>`+"\n", w-right+12, ly+22)
	p("</svg>\n")
	return b.String()
}

func human(v float64) string {
	switch {
	case v >= 1000:
		return fmt.Sprintf("%gk", v/1000)
	case v >= 1:
		return fmt.Sprintf("%g", v)
	}
	return fmt.Sprintf("%.2g", v)
}
