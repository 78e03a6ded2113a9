// Package metrics holds the storefront's Prometheus metrics: their names,
// labels and help, the registry /metrics serves, and the small functions
// the rest of the storefront calls to move them. docs/metrics.md documents
// every metric.
//
// Label values are bounded: each label takes values from a closed set (a
// transport, a tool the agent has, an arm, a published decline slug, a
// served AdCP version, an AdCP error code, a retention kind) or is the
// publisher id, which the operator creates. Anything outside its set is
// counted as "other". No text a publisher or a buyer wrote is ever a label
// value, and the screen is counted by what it withheld, never by which
// term.
//
// The package imports nothing from the storefront, so that any package,
// down to the stores and the recover boundaries, can call it. Every method
// is safe on a nil *Metrics, which counts nothing: code under test need not
// set metrics up.
package metrics

import (
	"net/http"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
)

// Namespace prefixes every storefront metric.
const Namespace = "storefront"

// Other is the label value for anything outside a label's closed set.
const Other = "other"

// Metrics are one storefront's metrics and the registry that serves them.
type Metrics struct {
	reg *prometheus.Registry

	// Sets bound the label values of the request metrics.
	tools, versions, slugs, codes []string

	requests    *prometheus.CounterVec
	latency     *prometheus.HistogramVec
	failures    *prometheus.CounterVec
	idempotency *prometheus.CounterVec
	appends     prometheus.Histogram
	batchSize   prometheus.Histogram
	batchTime   prometheus.Histogram
	directives  *prometheus.CounterVec
	tasks       *prometheus.CounterVec
	purged      *prometheus.CounterVec
	imports     *prometheus.CounterVec
	backtests   *prometheus.CounterVec
	orders      *prometheus.CounterVec
}

// Labels are the closed sets the request metrics' labels are bounded by.
// The tool names are given later, by SetTools, since the agent is built
// with the metrics.
type Labels struct {
	// Versions are the AdCP versions the storefront serves.
	Versions []string
	// Slugs are the published decline slugs.
	Slugs []string
	// Codes are the AdCP error codes the storefront emits.
	Codes []string
}

// Transports are the buyer transports.
var transports = []string{"mcp", "a2a"}

// Arms are the answers' arms; "none" is a tool whose answer has no arm.
var arms = []string{"completed", "rejected", "failed", "submitted", "none"}

// Surfaces are where a panic can be recovered.
var surfaces = []string{"mcp", "a2a", "admin", "console", "http", "webhook", "background"}

// recoveredPanics is process-wide: a recover boundary may have no
// *Metrics at hand. Every registry New builds serves it.
var recoveredPanics = prometheus.NewCounterVec(prometheus.CounterOpts{
	Namespace: Namespace, Name: "recovered_panics_total",
	Help: "Panics a recover boundary caught and answered as an internal error, by surface. Each one is a bug to fix.",
}, []string{"surface"})

// RecoveredPanic counts a panic a recover boundary caught on surface: mcp,
// a2a, admin, console, http, webhook or background.
func RecoveredPanic(surface string) {
	recoveredPanics.WithLabelValues(bounded(surface, surfaces)).Inc()
}

// RecoveredPanics is how many panics have been recovered on surface so far
// in this process.
func RecoveredPanics(surface string) float64 {
	var m dto.Metric
	if err := recoveredPanics.WithLabelValues(bounded(surface, surfaces)).Write(&m); err != nil {
		return 0
	}
	return m.GetCounter().GetValue()
}

// latencyBuckets cover a cached answer (well under a millisecond) to a
// slow database (seconds).
var latencyBuckets = []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}

func counterVec(name, help string, labels ...string) *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: name, Help: help}, labels)
}

func histogram(name, help string, buckets []float64) prometheus.Histogram {
	return prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: Namespace, Name: name, Help: help, Buckets: buckets})
}

// New builds the metrics and their registry, with Go runtime and process
// metrics beside them.
func New(l Labels) *Metrics {
	m := &Metrics{
		reg:      prometheus.NewRegistry(),
		versions: l.Versions, slugs: l.Slugs, codes: l.Codes,
		requests: counterVec("requests_total",
			"Tool calls answered, by publisher, transport, tool, arm, decline slug (none unless declined) and served AdCP version.",
			"publisher", "transport", "tool", "arm", "slug", "version"),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: Namespace, Name: "request_duration_seconds",
			Help:    "Time to answer a tool call, from dispatch to the encoded answer, by transport, tool, arm, decline slug and served AdCP version.",
			Buckets: latencyBuckets,
		}, []string{"transport", "tool", "arm", "slug", "version"}),
		failures: counterVec("failed_answers_total",
			"Answers of the error arm, by publisher, tool and the first error's AdCP code.",
			"publisher", "tool", "code"),
		idempotency: counterVec("idempotency_total",
			"Calls whose idempotency_key met an earlier call: replayed (the cached answer), conflict (another request), in_flight, expired.",
			"publisher", "result"),
		appends: histogram("ledger_append_duration_seconds",
			"Time a decision waits for its ledger entry to be durable.",
			latencyBuckets),
		batchSize: histogram("ledger_batch_entries",
			"Entries per ledger transaction (PostgreSQL groups concurrent appends).",
			[]float64{1, 2, 4, 8, 16, 32, 64, 128, 256, 512}),
		batchTime: histogram("ledger_batch_duration_seconds",
			"Time one ledger transaction takes (PostgreSQL).",
			latencyBuckets),
		directives: counterVec("directives_total",
			"Compliance directives, by publisher and event: set by the controller, taken by a call.",
			"publisher", "event"),
		tasks: counterVec("tasks_total",
			"Asynchronous tasks, by publisher and the status they entered: submitted, completed, failed, rejected, canceled.",
			"publisher", "status"),
		purged: counterVec("retention_purged_total",
			"Rows retention dropped, by kind: tasks, seeded_catalogues, replays, ledger_requests.",
			"kind"),
		imports: counterVec("catalogue_imports_total",
			"Catalogue imports, by publisher and result: saved, refused (bad lines, nothing saved), failed.",
			"publisher", "result"),
		backtests: counterVec("backtests_total",
			"Backtests, by publisher and result: done, canceled, failed.",
			"publisher", "result"),
		orders: counterVec("orders_total",
			"Orders on the publisher's desk, by publisher and event: submitted (a buy the rulebook sent to review), approved, declined.",
			"publisher", "event"),
	}
	m.reg.MustRegister(m.requests, m.latency, m.failures, m.idempotency, m.appends, m.batchSize, m.batchTime,
		m.directives, m.tasks, m.purged, m.imports, m.backtests, m.orders, recoveredPanics,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Handler serves the registry in the Prometheus text format. A non-empty
// token is then required as a bearer.
func (m *Metrics) Handler(token string) http.Handler {
	h := promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
	if token == "" {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+token {
			w.Header().Set("WWW-Authenticate", `Bearer realm="storefront-metrics"`)
			http.Error(w, "send Authorization: Bearer <metrics token>", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// SetTools bounds the tool label by the agent's tool names. Call it before
// the first call is answered.
func (m *Metrics) SetTools(names []string) {
	if m != nil {
		m.tools = names
	}
}

// Registry is the registry, for tests and extra collectors.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

func bounded(v string, set []string) string {
	if slices.Contains(set, v) {
		return v
	}
	return Other
}

// Answer is one tool call as the request metrics see it.
type Answer struct {
	Publisher string
	Transport string
	Tool      string
	// Arm is completed, rejected, failed or submitted, or none.
	Arm string
	// Slug is the decline slug, "" when the answer is not a decline.
	Slug string
	// Version is the served AdCP version.
	Version string
	// Code is the first error's code on the error arm.
	Code string
	// Replay says how an idempotency key met an earlier call: "" (it did
	// not), replayed, conflict, in_flight or expired.
	Replay string
	Took   time.Duration
}

// Answered counts one tool call.
func (m *Metrics) Answered(a Answer) {
	if m == nil {
		return
	}
	transport, tool := bounded(a.Transport, transports), bounded(a.Tool, m.tools)
	arm, version := bounded(a.Arm, arms), bounded(a.Version, m.versions)
	slug := "none"
	if a.Slug != "" {
		slug = bounded(a.Slug, m.slugs)
	}
	m.requests.WithLabelValues(a.Publisher, transport, tool, arm, slug, version).Inc()
	m.latency.WithLabelValues(transport, tool, arm, slug, version).Observe(a.Took.Seconds())
	if arm == "failed" {
		m.failures.WithLabelValues(a.Publisher, tool, bounded(a.Code, m.codes)).Inc()
	}
	if a.Replay != "" {
		m.idempotency.WithLabelValues(a.Publisher, bounded(a.Replay, []string{"replayed", "conflict", "in_flight", "expired"})).Inc()
	}
}

// LedgerAppend records how long a decision waited for its entry.
func (m *Metrics) LedgerAppend(took time.Duration) {
	if m == nil {
		return
	}
	m.appends.Observe(took.Seconds())
}

// LedgerBatch records one ledger transaction's size and duration.
func (m *Metrics) LedgerBatch(entries int, took time.Duration) {
	if m == nil {
		return
	}
	m.batchSize.Observe(float64(entries))
	m.batchTime.Observe(took.Seconds())
}

// Directive counts a directive set or taken.
func (m *Metrics) Directive(publisher, event string) {
	if m == nil {
		return
	}
	m.directives.WithLabelValues(publisher, bounded(event, []string{"set", "taken"})).Inc()
}

// Task counts a task entering status.
func (m *Metrics) Task(publisher, status string) {
	if m == nil {
		return
	}
	m.tasks.WithLabelValues(publisher, bounded(status, []string{"submitted", "working", "completed", "failed", "rejected", "canceled"})).Inc()
}

// Purged counts rows retention dropped.
func (m *Metrics) Purged(kind string, n int64) {
	if m == nil || n <= 0 {
		return
	}
	m.purged.WithLabelValues(bounded(kind, []string{"tasks", "seeded_catalogues", "replays", "ledger_requests"})).Add(float64(n))
}

// Import counts a catalogue import by result: saved, refused or failed.
func (m *Metrics) Import(publisher, result string) {
	if m == nil {
		return
	}
	m.imports.WithLabelValues(publisher, bounded(result, []string{"saved", "refused", "failed"})).Inc()
}

// Backtest counts a backtest by result: done, canceled or failed.
func (m *Metrics) Backtest(publisher, result string) {
	if m == nil {
		return
	}
	m.backtests.WithLabelValues(publisher, bounded(result, []string{"done", "canceled", "failed"})).Inc()
}

// Order counts an order-desk event: submitted, approved or declined.
func (m *Metrics) Order(publisher, event string) {
	if m == nil {
		return
	}
	m.orders.WithLabelValues(publisher, bounded(event, []string{"submitted", "approved", "declined"})).Inc()
}

// ScreenCounts reads the screen's process-wide counts of what it withheld.
type ScreenCounts func() (lines, sentences, texts uint64)

// WatchScreen serves the screen's replacement counts as
// storefront_screen_replacements_total{kind}.
func (m *Metrics) WatchScreen(read ScreenCounts) {
	if m == nil {
		return
	}
	desc := prometheus.NewDesc(Namespace+"_screen_replacements_total",
		"What the screen withheld because it named a confidential term, by kind: line (a single line dropped), sentence (a sentence dropped from prose), text (a whole text replaced by its fallback). Counts only: never which term.",
		[]string{"kind"}, nil)
	m.reg.MustRegister(collectorFunc{desc: desc, collect: func(ch chan<- prometheus.Metric) {
		lines, sentences, texts := read()
		ch <- prometheus.MustNewConstMetric(desc, prometheus.CounterValue, float64(lines), "line")
		ch <- prometheus.MustNewConstMetric(desc, prometheus.CounterValue, float64(sentences), "sentence")
		ch <- prometheus.MustNewConstMetric(desc, prometheus.CounterValue, float64(texts), "text")
	}})
}

// PoolStats are a database pool's figures at one moment.
type PoolStats struct {
	Max, Total, Idle, Acquired int32
	Acquires, EmptyAcquires    int64
	CanceledAcquires           int64
	AcquireWait                time.Duration
}

// WatchPool serves the database pool's figures, read at each scrape.
func (m *Metrics) WatchPool(read func() PoolStats) {
	if m == nil {
		return
	}
	name := func(n string) string { return Namespace + "_db_pool_" + n }
	gauges := []struct {
		desc *prometheus.Desc
		get  func(PoolStats) float64
	}{
		{prometheus.NewDesc(name("max_connections"), "The pool's connection limit.", nil, nil), func(s PoolStats) float64 { return float64(s.Max) }},
		{prometheus.NewDesc(name("connections"), "Open connections.", nil, nil), func(s PoolStats) float64 { return float64(s.Total) }},
		{prometheus.NewDesc(name("idle_connections"), "Open connections not in use.", nil, nil), func(s PoolStats) float64 { return float64(s.Idle) }},
		{prometheus.NewDesc(name("acquired_connections"), "Connections in use.", nil, nil), func(s PoolStats) float64 { return float64(s.Acquired) }},
	}
	counters := []struct {
		desc *prometheus.Desc
		get  func(PoolStats) float64
	}{
		{prometheus.NewDesc(name("acquires_total"), "Connections acquired from the pool.", nil, nil), func(s PoolStats) float64 { return float64(s.Acquires) }},
		{prometheus.NewDesc(name("empty_acquires_total"), "Acquires that had to wait because no connection was idle.", nil, nil), func(s PoolStats) float64 { return float64(s.EmptyAcquires) }},
		{prometheus.NewDesc(name("canceled_acquires_total"), "Acquires given up before a connection came.", nil, nil), func(s PoolStats) float64 { return float64(s.CanceledAcquires) }},
		{prometheus.NewDesc(name("acquire_wait_seconds_total"), "Time spent waiting for connections.", nil, nil), func(s PoolStats) float64 { return s.AcquireWait.Seconds() }},
	}
	var descs []*prometheus.Desc
	for _, g := range gauges {
		descs = append(descs, g.desc)
	}
	for _, c := range counters {
		descs = append(descs, c.desc)
	}
	m.reg.MustRegister(collectorFunc{desc: descs[0], more: descs[1:], collect: func(ch chan<- prometheus.Metric) {
		s := read()
		for _, g := range gauges {
			ch <- prometheus.MustNewConstMetric(g.desc, prometheus.GaugeValue, g.get(s))
		}
		for _, c := range counters {
			ch <- prometheus.MustNewConstMetric(c.desc, prometheus.CounterValue, c.get(s))
		}
	}})
}

// WatchResyncs serves how many times a change listener, reconnected to
// the database, failed to list the publishers to resync, read at each
// scrape from the store's own count.
func (m *Metrics) WatchResyncs(read func() int64) {
	if m == nil {
		return
	}
	desc := prometheus.NewDesc(Namespace+"_db_resync_failures_total",
		"Failed attempts to list the publishers to resync after a change listener reconnected (each retried with backoff).", nil, nil)
	m.reg.MustRegister(collectorFunc{desc: desc, collect: func(ch chan<- prometheus.Metric) {
		ch <- prometheus.MustNewConstMetric(desc, prometheus.CounterValue, float64(read()))
	}})
}

// collectorFunc is a collector whose metrics are read at each scrape.
type collectorFunc struct {
	desc    *prometheus.Desc
	collect func(chan<- prometheus.Metric)
	more    []*prometheus.Desc
}

func (c collectorFunc) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.desc
	for _, d := range c.more {
		ch <- d
	}
}

func (c collectorFunc) Collect(ch chan<- prometheus.Metric) { c.collect(ch) }
