package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// RunOptions configures the full comparison.
type RunOptions struct {
	Fixture Fixture
	// Concurrency lists the load points of the latency curve; Headline
	// is the one the targets are read at.
	Concurrency []int
	Headline    int
	Duration    time.Duration
	Warmup      time.Duration
	// Stores to measure: memory, postgres.
	Stores      []string
	DatabaseURL string
	// Peer is the Node peer's folder; empty skips it.
	Peer string
	// Scaling runs the catalogue, rulebook and deny-list sizes.
	Scaling bool
	// Soak, when non-zero, holds the headline load this long and reports
	// the heap at its start and end.
	Soak time.Duration
	// Out is a folder for results.json, latency.svg and tables.md.
	Out string
	// Version is the adcp_version every request of the mix pins.
	Version string
	// Binary is the storefront binary; the running one by default.
	Binary string
	// ScreenTerms are the deny-list sizes the screen is timed at.
	ScreenTerms []int
	// Rounds is how many back-to-back rounds of the ceiling and the
	// storefront (MCP and A2A) are run at Headline after the curve, in
	// alternating order; the ratios to the ceiling are read as the median
	// of the rounds' (Evaluate). 0 reads them from the curve's one point.
	Rounds int
}

func parseRun(fs *flag.FlagSet, args []string) (RunOptions, error) {
	var o RunOptions
	fixture := fs.String("fixture", DefaultFixture().String(), "size of the generated publisher for the comparison")
	conc := fs.String("concurrency", "1,8,32,64,128", "load points of the latency curve")
	fs.IntVar(&o.Headline, "headline", 64, "the concurrency the targets are read at")
	fs.DurationVar(&o.Duration, "duration", 10*time.Second, "measured time per point")
	fs.DurationVar(&o.Warmup, "warmup", 2*time.Second, "unmeasured load before each point")
	stores := fs.String("stores", "memory,postgres", "stores to measure: memory, postgres or both")
	fs.StringVar(&o.DatabaseURL, "database-url", firstEnv("STOREFRONT_TEST_DATABASE_URL", "DATABASE_URL"), "PostgreSQL server for the postgres runs; a fresh database is created on it and dropped after")
	fs.StringVar(&o.Peer, "peer", "bench/peer-node", "folder of the Node peer (npm ci there first); empty to skip it")
	fs.BoolVar(&o.Scaling, "scaling", false, "also run the scaling matrix: catalogue, rulebook and deny-list sizes on each store")
	fs.DurationVar(&o.Soak, "soak", 0, "hold the headline load this long on the in-memory store and report the heap (e.g. 5m)")
	fs.StringVar(&o.Out, "out", "", "folder to write results.json, latency.svg and tables.md into")
	fs.StringVar(&o.Version, "adcp-version", "3.2-beta.5", "adcp_version pinned in every request")
	fs.StringVar(&o.Binary, "binary", "", "storefront binary to run (default: this one)")
	terms := fs.String("screen-terms", "10,10000,100000", "deny-list sizes to time the screen at")
	fs.IntVar(&o.Rounds, "rounds", 3, "back-to-back rounds of the ceiling and the storefront at the headline concurrency, in alternating order, whose median ratios the ceiling targets are read from; 0 reads them from the curve")
	if err := parse(fs, args); err != nil {
		return o, err
	}
	var err error
	if o.Fixture, err = ParseFixture(*fixture); err != nil {
		return o, err
	}
	if o.Concurrency, err = intList(*conc); err != nil {
		return o, fmt.Errorf("-concurrency: %w", err)
	}
	if !slices.Contains(o.Concurrency, o.Headline) {
		o.Concurrency = append(o.Concurrency, o.Headline)
		slices.Sort(o.Concurrency)
	}
	if o.ScreenTerms, err = intList(*terms); err != nil {
		return o, fmt.Errorf("-screen-terms: %w", err)
	}
	slices.Sort(o.ScreenTerms)
	for _, s := range strings.Split(*stores, ",") {
		switch s = strings.TrimSpace(s); s {
		case "memory", "postgres":
			o.Stores = append(o.Stores, s)
		case "":
		default:
			return o, fmt.Errorf("-stores: unknown store %q (want memory or postgres)", s)
		}
	}
	if slices.Contains(o.Stores, "postgres") && o.DatabaseURL == "" {
		o.DatabaseURL = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"
	}
	if o.Duration <= 0 || o.Warmup < 0 || o.Headline < 1 {
		return o, errors.New("need a positive -duration and -headline")
	}
	if o.Rounds < 0 {
		return o, errors.New("-rounds: need 0 or more")
	}
	return o, nil
}

func firstEnv(keys ...string) string {
	for _, k := range keys {
		if v := os.Getenv(k); v != "" {
			return v
		}
	}
	return ""
}

func intList(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := parseSize(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%q is not a list of positive numbers", s)
		}
		out = append(out, n)
	}
	return out, nil
}

// Report is everything one comparison measured.
type Report struct {
	Started  time.Time      `json:"started"`
	Machine  Machine        `json:"machine"`
	Fixture  string         `json:"fixture"`
	Version  string         `json:"adcp_version"`
	Duration string         `json:"duration_per_point"`
	Headline int            `json:"headline_concurrency"`
	Curve    []Stats        `json:"curve"`
	Rounds   []Round        `json:"rounds,omitempty"`
	Screen   []ScreenCost   `json:"screen"`
	Postgres *PostgresRun   `json:"postgres,omitempty"`
	Scaling  []ScalingRow   `json:"scaling,omitempty"`
	Soak     *Soak          `json:"soak,omitempty"`
	Targets  []TargetResult `json:"targets"`
	Notes    []string       `json:"notes,omitempty"`
}

// Machine describes where the figures were taken.
type Machine struct {
	CPUs      int    `json:"cpus"`
	CPUModel  string `json:"cpu_model"`
	MemoryGiB int    `json:"memory_gib"`
	GoVersion string `json:"go_version"`
	Node      string `json:"node,omitempty"`
}

// Round is one back-to-back round at the headline concurrency: the
// ceiling, the storefront over MCP and over A2A, each for the point's
// duration, one straight after another.
type Round struct {
	Ceiling    Stats `json:"ceiling"`
	Storefront Stats `json:"storefront"`
	A2A        Stats `json:"storefront_a2a"`
}

// PostgresRun is the headline load on the PostgreSQL store, ledger on,
// and the ledger's own append rate with the MCP layer out of the way.
type PostgresRun struct {
	Stats Stats `json:"stats"`
	// Appends is concurrent ledger appends straight to the store, at the
	// headline concurrency: the decisions per second the store sustains.
	Appends       float64 `json:"appends_per_second"`
	LedgerEntries int64   `json:"ledger_entries"`
	Verified      bool    `json:"verified"`
	Verify        string  `json:"verify_output"`
}

// ScalingRow is the headline load at one size on one store.
type ScalingRow struct {
	Store   string `json:"store"`
	Vary    string `json:"vary"`
	Fixture string `json:"fixture"`
	// DenyTerms is the deny-list's real size: the rules and references
	// alone may hold more terms than the fixture asks for.
	DenyTerms int     `json:"deny_terms"`
	Stats     Stats   `json:"stats"`
	HeapMiB   float64 `json:"heap_mib"`
	Startup   float64 `json:"startup_seconds"`
}

// Soak is the heap over a long headline load.
type Soak struct {
	Store   string       `json:"store"`
	Seconds float64      `json:"seconds"`
	Stats   Stats        `json:"stats"`
	Heap    []HeapSample `json:"heap"`
}

// HeapSample is the live heap after a collection, at a moment of the soak.
type HeapSample struct {
	At      float64 `json:"at_seconds"`
	HeapMiB float64 `json:"heap_mib"`
}

// Run runs the comparison and writes the report.
func Run(ctx context.Context, o RunOptions, stdout, stderr io.Writer) error {
	bin := o.Binary
	if bin == "" {
		var err error
		if bin, err = os.Executable(); err != nil {
			return err
		}
	}
	tmp, err := os.MkdirTemp("", "storefront-bench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	r := &Report{Started: time.Now().UTC(), Machine: machine(), Fixture: o.Fixture.String(), Version: o.Version,
		Duration: o.Duration.String(), Headline: o.Headline}
	say := func(format string, args ...any) { fmt.Fprintf(stderr, format+"\n", args...) }
	reqs := Mix(o.Version)
	load := func(t Target, c int, d time.Duration) (Stats, error) {
		s, err := Load(ctx, t, LoadOptions{Concurrency: c, Duration: d, Warmup: o.Warmup, Requests: reqs, Progress: stderr})
		if err != nil {
			return s, err
		}
		say("%s", s.Line())
		if s.Errors > 0 || s.Wrong > 0 {
			r.Notes = append(r.Notes, fmt.Sprintf("%s at c=%d: %d errors and %d answers of the wrong arm; the first: %s", s.Target, c, s.Errors, s.Wrong, s.FirstError))
		}
		return s, nil
	}

	// The screen, timed in this process: it is a cost per response, not
	// a load figure.
	say("timing the screen at deny-list sizes %v", o.ScreenTerms)
	r.Screen = ScreenCosts(o.ScreenTerms)

	if slices.Contains(o.Stores, "memory") {
		say("starting the storefront (in-memory store, %s)", o.Fixture.Label())
		sf, err := startStorefront(ctx, bin, o.Fixture, "", true)
		if err != nil {
			return err
		}
		defer sf.stop()
		say("recording the storefront's answers for the ceiling")
		rec, err := Record(ctx, sf.mcp, reqs)
		if err != nil {
			return err
		}
		answers := filepath.Join(tmp, "answers.json")
		if err := WriteRecorded(answers, rec); err != nil {
			return err
		}
		ceil, ceilURL, err := start(ctx, "ceiling", "ceiling listening on", nil, bin, "bench", "ceiling", "--answers", answers)
		if err != nil {
			return err
		}
		defer ceil.stop()
		floor, floorURL, err := start(ctx, "mcp floor", "mcp floor listening on", nil, bin, "bench", "mcp-floor", "--answers", answers)
		if err != nil {
			return err
		}
		defer floor.stop()
		targets := []Target{{Name: "ceiling", URL: ceilURL, CheckArms: true}, {Name: "mcp-floor", URL: floorURL, CheckArms: true}, {Name: "storefront", URL: sf.mcp, CheckArms: true},
			{Name: "storefront-a2a", URL: sf.a2a, CheckArms: true, A2A: true}}
		if o.Peer != "" {
			peer, peerURL, err := startPeer(ctx, o.Peer, sf.mcp, o.Fixture, tmp, stderr)
			if err != nil {
				return err
			}
			defer peer.stop()
			r.Machine.Node = nodeVersion()
			targets = append(targets, Target{Name: "peer", URL: peerURL, Handshake: true})
		}
		for _, c := range o.Concurrency {
			say("load point c=%d", c)
			for _, t := range targets {
				s, err := load(t, c, o.Duration)
				if err != nil {
					return err
				}
				r.Curve = append(r.Curve, s)
			}
		}
		// The ceiling and the storefront measured back to back, in turn
		// first: on a shared machine whose speed drifts over minutes, a
		// ratio of two points taken a minute apart drifts with it.
		paired := []Target{targets[0], targets[2], targets[3]}
		for i := range o.Rounds {
			say("back-to-back round %d of %d at c=%d", i+1, o.Rounds, o.Headline)
			order := slices.Clone(paired)
			if i%2 == 1 {
				slices.Reverse(order)
			}
			var rd Round
			for _, t := range order {
				s, err := load(t, o.Headline, o.Duration)
				if err != nil {
					return err
				}
				switch t.Name {
				case "ceiling":
					rd.Ceiling = s
				case "storefront":
					rd.Storefront = s
				default:
					rd.A2A = s
				}
			}
			r.Rounds = append(r.Rounds, rd)
		}
		if o.Soak > 0 {
			say("soak: c=%d for %s on the in-memory store", o.Headline, o.Soak)
			soak, err := runSoak(ctx, sf, o.Headline, o.Soak, reqs, stderr)
			if err != nil {
				return err
			}
			r.Soak = soak
		}
		sf.stop()
		ceil.stop()
		floor.stop()
	}

	if slices.Contains(o.Stores, "postgres") {
		say("starting the storefront on PostgreSQL (ledger on, %s)", o.Fixture.Label())
		pg, err := runPostgres(ctx, bin, o, reqs, stderr)
		if err != nil {
			return err
		}
		r.Postgres = pg
	}

	if o.Scaling {
		rows, err := runScaling(ctx, bin, o, reqs, stderr)
		if err != nil {
			return err
		}
		r.Scaling = rows
	}

	r.Targets = Evaluate(r)
	return writeReport(r, o.Out, stdout)
}

// storefront is a running bench serve.
type storefront struct {
	*proc
	base, mcp, a2a, debug string
	startup               time.Duration
}

func startStorefront(ctx context.Context, bin string, f Fixture, databaseURL string, debug bool) (*storefront, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	args := []string{"bench", "serve", "--addr", addr, "--fixture", f.String(), "--log-level", "warn"}
	dbg := ""
	if debug {
		if dbg, err = freeAddr(); err != nil {
			return nil, err
		}
		args = append(args, "--debug-addr", dbg)
	}
	env := []string{"DATABASE_URL=" + databaseURL}
	began := time.Now()
	p, _, err := start(ctx, "storefront", "", env, bin, args...)
	if err != nil {
		return nil, err
	}
	s := &storefront{proc: p, base: "http://" + addr, mcp: "http://" + addr + "/mcp", a2a: "http://" + addr + "/a2a"}
	if dbg != "" {
		s.debug = "http://" + dbg
	}
	if err := waitHealthy(ctx, p, s.base); err != nil {
		p.stop()
		return nil, err
	}
	s.startup = time.Since(began)
	return s, nil
}

// heap collects garbage in the storefront and returns its live heap in
// MiB: what the collection marked, not what accumulated since.
func (s *storefront) heap(ctx context.Context) (float64, error) {
	if s.debug == "" {
		return 0, errors.New("the storefront has no debug endpoint")
	}
	b, err := post(ctx, s.debug+"/debug/gc", nil)
	if err != nil {
		return 0, err
	}
	var gc struct {
		Live uint64 `json:"live_heap_bytes"`
	}
	if err := json.Unmarshal(b, &gc); err != nil {
		return 0, fmt.Errorf("/debug/gc: %w", err)
	}
	return float64(gc.Live) / (1 << 20), nil
}

// soakEvery is how often the soak samples the heap.
const soakEvery = 10 * time.Second

func runSoak(ctx context.Context, sf *storefront, c int, d time.Duration, reqs []Request, progress io.Writer) (*Soak, error) {
	soak := &Soak{Store: "memory"}
	began := time.Now()
	sample := func() error {
		h, err := sf.heap(ctx)
		if err != nil {
			return err
		}
		soak.Heap = append(soak.Heap, HeapSample{At: time.Since(began).Seconds(), HeapMiB: h})
		return nil
	}
	if err := sample(); err != nil {
		return nil, err
	}
	stop := make(chan struct{})
	sampled := make(chan error, 1)
	go func() {
		t := time.NewTicker(soakEvery)
		defer t.Stop()
		for {
			select {
			case <-stop:
				sampled <- nil
				return
			case <-t.C:
				if err := sample(); err != nil {
					sampled <- err
					return
				}
			}
		}
	}()
	s, err := Load(ctx, Target{Name: "storefront", URL: sf.mcp, CheckArms: true}, LoadOptions{Concurrency: c, Duration: d, Requests: reqs, Progress: progress})
	close(stop)
	if e := <-sampled; err == nil {
		err = e
	}
	if err != nil {
		return nil, err
	}
	if err := sample(); err != nil {
		return nil, err
	}
	soak.Seconds, soak.Stats = s.Seconds, s
	return soak, nil
}

// startPeer exports the storefront's catalogue for the Node peer and
// starts it.
func startPeer(ctx context.Context, dir, storefrontMCP string, f Fixture, tmp string, progress io.Writer) (*proc, string, error) {
	script := filepath.Join(dir, "server.mjs")
	if _, err := os.Stat(script); err != nil {
		return nil, "", fmt.Errorf("the Node peer is not at %s (run from the repository root, or pass -peer \"\" to skip it): %w", dir, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@adcp", "sdk")); err != nil {
		// Install the peer's pinned packages, as its README says, so a
		// fresh clone runs the comparison in one command.
		fmt.Fprintf(progress, "installing the Node peer's packages (npm ci --prefix %s)\n", dir)
		npm := exec.CommandContext(ctx, "npm", "ci", "--prefix", dir, "--no-audit", "--no-fund", "--loglevel=error")
		if out, err := npm.CombinedOutput(); err != nil {
			return nil, "", fmt.Errorf("installing the Node peer's packages with npm ci --prefix %s: %v\n%s(pass -peer \"\" to run without the peer)", dir, err, out)
		}
	}
	cat := filepath.Join(tmp, "catalogue.json")
	if err := ExportCatalogue(ctx, storefrontMCP, f, cat); err != nil {
		return nil, "", fmt.Errorf("exporting the catalogue for the peer: %w", err)
	}
	addr, err := freeAddr()
	if err != nil {
		return nil, "", err
	}
	_, port, _ := strings.Cut(addr, ":")
	return start(ctx, "peer", "peer listening on", nil, "node", script, "--port", port, "--catalogue", cat)
}

func nodeVersion() string {
	out, err := exec.Command("node", "--version").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// runPostgres measures the headline load on a fresh PostgreSQL database and
// verifies the ledger chain afterwards with the real command.
func runPostgres(ctx context.Context, bin string, o RunOptions, reqs []Request, progress io.Writer) (*PostgresRun, error) {
	dbURL, drop, err := freshDatabase(ctx, o.DatabaseURL)
	if err != nil {
		return nil, err
	}
	defer drop()
	sf, err := startStorefront(ctx, bin, o.Fixture, dbURL, false)
	if err != nil {
		return nil, err
	}
	s, err := Load(ctx, Target{Name: "storefront", URL: sf.mcp, CheckArms: true}, LoadOptions{Concurrency: o.Headline, Duration: o.Duration, Warmup: o.Warmup, Requests: reqs, Progress: progress})
	sf.stop()
	if err != nil {
		return nil, err
	}
	s.Target = "storefront (postgres)"
	fmt.Fprintln(progress, s.Line())
	appends, err := LedgerLoad(ctx, dbURL, o.Headline, o.Duration)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(progress, "ledger appends straight to PostgreSQL, c=%d: %.0f/s\n", o.Headline, appends)
	out, verr := exec.CommandContext(ctx, bin, "ledger", "verify", "--database-url", dbURL).CombinedOutput()
	run := &PostgresRun{Stats: s, Appends: appends, Verified: verr == nil, Verify: lastLine(string(out))}
	conn, err := pgx.Connect(ctx, dbURL)
	if err == nil {
		_ = conn.QueryRow(ctx, `SELECT count(*) FROM ledger_entries`).Scan(&run.LedgerEntries)
		conn.Close(ctx)
	}
	return run, nil
}

// freshDatabase creates an empty database on the server at admin and
// returns its URL and a function that drops it.
func freshDatabase(ctx context.Context, admin string) (string, func(), error) {
	u, err := url.Parse(admin)
	if err != nil {
		return "", nil, fmt.Errorf("database URL: %w", err)
	}
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		return "", nil, fmt.Errorf("connecting to %s: %w", u.Redacted(), err)
	}
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	name := "storefront_bench_" + hex.EncodeToString(b)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		conn.Close(ctx)
		return "", nil, fmt.Errorf("creating a bench database: %w", err)
	}
	v := *u
	v.Path = "/" + name
	drop := func() {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		_, _ = conn.Exec(dctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
		conn.Close(dctx)
	}
	return v.String(), drop, nil
}

// scalingFixtures vary one size at a time around the default.
func scalingFixtures(base Fixture) []struct {
	vary string
	f    Fixture
} {
	var out []struct {
		vary string
		f    Fixture
	}
	add := func(vary string, f Fixture) {
		out = append(out, struct {
			vary string
			f    Fixture
		}{vary, f})
	}
	for _, n := range []int{100, 10_000, 100_000} {
		f := base
		f.Products = n
		add("catalogue", f)
	}
	for _, n := range []int{10, 1_000, 10_000} {
		f := base
		f.Rules = n
		add("rules", f)
	}
	for _, n := range []int{10, 10_000, 100_000} {
		f := base
		f.Deny = n
		add("deny-list", f)
	}
	return out
}

func runScaling(ctx context.Context, bin string, o RunOptions, reqs []Request, progress io.Writer) ([]ScalingRow, error) {
	var rows []ScalingRow
	for _, store := range o.Stores {
		for _, v := range scalingFixtures(o.Fixture) {
			fmt.Fprintf(progress, "scaling: %s store, %s\n", store, v.f.Label())
			dbURL, drop := "", func() {}
			if store == "postgres" {
				var err error
				if dbURL, drop, err = freshDatabase(ctx, o.DatabaseURL); err != nil {
					return nil, err
				}
			}
			sf, err := startStorefront(ctx, bin, v.f, dbURL, true)
			if err != nil {
				drop()
				return nil, err
			}
			s, err := Load(ctx, Target{Name: "storefront", URL: sf.mcp, CheckArms: true}, LoadOptions{Concurrency: o.Headline, Duration: o.Duration, Warmup: o.Warmup, Requests: reqs, Progress: progress})
			heap := 0.0
			if err == nil {
				heap, err = sf.heap(ctx)
			}
			sf.stop()
			drop()
			if err != nil {
				return nil, err
			}
			fmt.Fprintln(progress, s.Line())
			rows = append(rows, ScalingRow{Store: store, Vary: v.vary, Fixture: v.f.String(), DenyTerms: v.f.DenyTerms(), Stats: s, HeapMiB: heap, Startup: sf.startup.Seconds()})
		}
	}
	return rows, nil
}

func machine() Machine {
	m := Machine{CPUs: runtime.NumCPU(), GoVersion: runtime.Version()}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPUModel = strings.TrimSpace(v)
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if f := strings.Fields(l); len(f) >= 2 && f[0] == "MemTotal:" {
				kb, _ := strconv.Atoi(f[1])
				m.MemoryGiB = (kb + (1 << 19)) >> 20
			}
		}
	}
	return m
}

// lastLine is a command's final line of output, without the progress it
// redrew on the way.
func lastLine(out string) string {
	out = strings.ReplaceAll(out, "\r", "\n")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	l := lines[len(lines)-1]
	return strings.TrimPrefix(strings.TrimSpace(l), "\x1b[K")
}
