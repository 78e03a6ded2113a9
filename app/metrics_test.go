package app_test

import (
	"net/http"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/storefront/storefront/internal/testenv"
	"github.com/storefront/storefront/store/pgstore/pgtest"
)

// scrape reads /metrics with the token.
func scrape(t *testing.T, base, token string) map[string]*dto.MetricFamily {
	t.Helper()
	req, _ := http.NewRequest("GET", base+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("GET /metrics = %d", resp.StatusCode)
	}
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("/metrics is not the Prometheus text format: %v", err)
	}
	return fams
}

// value sums the samples of a family whose labels include want: counter
// and gauge values, histogram sample counts.
func value(fams map[string]*dto.MetricFamily, name string, want map[string]string) float64 {
	f := fams[name]
	if f == nil {
		return 0
	}
	sum := 0.0
outer:
	for _, m := range f.GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		for k, v := range want {
			if labels[k] != v {
				continue outer
			}
		}
		switch {
		case m.Counter != nil:
			sum += m.GetCounter().GetValue()
		case m.Gauge != nil:
			sum += m.GetGauge().GetValue()
		case m.Histogram != nil:
			sum += float64(m.GetHistogram().GetSampleCount())
		}
	}
	return sum
}

// moved is how much a family's samples with some labels should move.
type moved struct {
	name   string
	labels map[string]string
	want   float64
}

// wantMoved checks that each figure moved between two scrapes by exactly
// what it should.
func wantMoved(t *testing.T, before, after map[string]*dto.MetricFamily, figures []moved) {
	t.Helper()
	for _, f := range figures {
		if got := value(after, f.name, f.labels) - value(before, f.name, f.labels); got != f.want {
			t.Errorf("%s%v moved by %v, want %v", f.name, f.labels, got, f.want)
		}
	}
}

// call runs one tool over MCP with an optional bearer.
func call(t *testing.T, base, token, tool, args string) map[string]any {
	t.Helper()
	m, _ := testenv.CallTool(t, base, token, tool, args)
	return m
}

// TestMetricsMoveWithTraffic scrapes /metrics before and after a known
// run of calls and checks that each documented figure moved by exactly
// what the calls did (docs/metrics.md).
func TestMetricsMoveWithTraffic(t *testing.T) {
	const token = "metrics-secret"
	env := testenv.Start(t, "--sandbox", "--metrics-token", token)
	if resp, err := http.Get(env.BaseURL + "/metrics"); err != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("GET /metrics without the token = %v %v, want 401", resp.Status, err)
	}
	before := scrape(t, env.BaseURL, token)

	const kit = "demo-metrics-kit-key"
	const sandbox = `{"brand":{"domain":"acme-outdoor.example"},"operator":"acme-outdoor.example","sandbox":true}`
	completed := `{"adcp_version":"3.2-beta.5","buying_mode":"brief","brief":"Display campaign for a coffee brand launch","filters":{"budget_range":{"max":3000,"currency":"USD"},"channels":["display"]}}`
	rejected := `{"adcp_version":"3.2-beta.5","buying_mode":"brief","brief":"Video for a coffee brand launch","filters":{"budget_range":{"max":100,"currency":"USD"}}}`
	legacy := strings.Replace(rejected, `"3.2-beta.5"`, `"3.1"`, 1)
	keyed := `{"adcp_version":"3.2-beta.5","buying_mode":"brief","brief":"Display for a bakery","idempotency_key":"metrics-test-key-0001"}`
	other := strings.Replace(keyed, "bakery", "florist", 1)
	for _, c := range []struct{ args, status string }{
		{completed, "completed"}, {completed, "completed"}, {rejected, "rejected"}, {legacy, "failed"},
		{keyed, "completed"}, {keyed, "completed"}, {other, "failed"},
	} {
		if got := call(t, env.BaseURL, "", "get_products", c.args); got["status"] != c.status {
			t.Fatalf("get_products %s = %v, want %s", c.args, got, c.status)
		}
	}
	// A forced decline whose reason names an ad-tech vendor: the screen
	// withholds that sentence, and the directive is set, then taken.
	if got := call(t, env.BaseURL, kit, "comply_test_controller",
		`{"adcp_version":"3.2-beta.5","scenario":"force_get_products_arm","params":{"arm":"rejected","reason":"Declined on the sandbox account. Our FreeWheel deal blocks this."},"account":`+sandbox+`}`); got["success"] != true {
		t.Fatalf("force_get_products_arm = %v", got)
	}
	forced := strings.Replace(completed, `"buying_mode"`, `"account":`+sandbox+`,"buying_mode"`, 1)
	if got := call(t, env.BaseURL, kit, "get_products", forced); got["status"] != "rejected" || strings.Contains(got["reason"].(string), "FreeWheel") {
		t.Fatalf("the forced decline = %v", got)
	}
	after := scrape(t, env.BaseURL, token)

	wantMoved(t, before, after, []moved{
		{"storefront_requests_total", map[string]string{"publisher": "northwind", "transport": "mcp", "tool": "get_products", "arm": "completed", "slug": "none", "version": "3.2-beta.5"}, 4},
		{"storefront_requests_total", map[string]string{"tool": "get_products", "arm": "failed", "slug": "none"}, 1},
		{"storefront_requests_total", map[string]string{"tool": "get_products", "arm": "rejected", "slug": "budget_below_minimum", "version": "3.2-beta.5"}, 1},
		{"storefront_requests_total", map[string]string{"tool": "get_products", "arm": "rejected"}, 2},
		{"storefront_requests_total", map[string]string{"tool": "get_products", "arm": "failed", "slug": "budget_below_minimum", "version": "3.1"}, 1},
		{"storefront_requests_total", map[string]string{"tool": "comply_test_controller"}, 1},
		{"storefront_request_duration_seconds", map[string]string{"transport": "mcp", "tool": "get_products"}, 8},
		{"storefront_failed_answers_total", map[string]string{"tool": "get_products", "code": "BUDGET_TOO_LOW"}, 1},
		{"storefront_failed_answers_total", map[string]string{"tool": "get_products", "code": "IDEMPOTENCY_CONFLICT"}, 1},
		{"storefront_idempotency_total", map[string]string{"publisher": "northwind", "result": "replayed"}, 1},
		{"storefront_idempotency_total", map[string]string{"publisher": "northwind", "result": "conflict"}, 1},
		// Every get_products but the replay and the conflict is on the
		// ledger: 3 completed (one is the first keyed call), 2 rejected
		// (one forced), 1 legacy decline.
		{"storefront_ledger_append_duration_seconds", nil, 6},
		{"storefront_directives_total", map[string]string{"event": "set"}, 1},
		{"storefront_directives_total", map[string]string{"event": "taken"}, 1},
		// The vendor's sentence is withheld twice: when the controller
		// echoes the forced reason, and when the decline is composed.
		{"storefront_screen_replacements_total", map[string]string{"kind": "sentence"}, 2},
	})
	// Every label is from its closed set: no brief, reason or key text.
	for _, f := range after {
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if v := l.GetValue(); strings.Contains(v, "bakery") || strings.Contains(v, "FreeWheel") || strings.Contains(v, "metrics-test-key") {
					t.Errorf("%s carries caller text as a label value: %s=%q", f.GetName(), l.GetName(), v)
				}
			}
		}
	}
	if value(after, "go_goroutines", nil) == 0 || value(after, "process_resident_memory_bytes", nil) == 0 {
		t.Error("the Go runtime and process metrics are missing")
	}
}

// TestMetricsOfThePostgreSQLStore checks the figures only PostgreSQL has:
// the connection pool, the ledger's grouped transactions and the change
// listener's failed resyncs.
func TestMetricsOfThePostgreSQLStore(t *testing.T) {
	db := pgtest.NewDatabase(t)
	env := testenv.Start(t, "--database-url", db, "--seed-demo", "--metrics-token", "s")
	before := scrape(t, env.BaseURL, "s")
	for range 3 {
		call(t, env.BaseURL, "", "get_products", `{"adcp_version":"3.2-beta.5","buying_mode":"brief","brief":"Display"}`)
	}
	after := scrape(t, env.BaseURL, "s")
	if got := value(after, "storefront_ledger_batch_entries", nil) - value(before, "storefront_ledger_batch_entries", nil); got < 1 || got > 3 {
		t.Errorf("ledger batches moved by %v for 3 sequential decisions, want 1 to 3", got)
	}
	if value(after, "storefront_db_pool_max_connections", nil) < 1 {
		t.Error("storefront_db_pool_max_connections is missing")
	}
	if got := value(after, "storefront_db_pool_acquires_total", nil) - value(before, "storefront_db_pool_acquires_total", nil); got < 3 {
		t.Errorf("pool acquires moved by %v over 3 calls", got)
	}
	// No listener has reconnected, so no resync has failed; the count is
	// served all the same (pgstore's tests make it move).
	if f := after["storefront_db_resync_failures_total"]; f == nil || value(after, f.GetName(), nil) != 0 {
		t.Errorf("storefront_db_resync_failures_total = %v, want it served at 0", f)
	}
}

// TestMetricsOfMediaBuys: the media-buy tools are counted under their own
// names with the arm of their answers, a buy the rulebook refuses with its
// slug and code, and the order desk's orders and tasks as the buyer sends
// an order and the publisher approves it.
func TestMetricsOfMediaBuys(t *testing.T) {
	const token = "metrics-secret"
	env := testenv.Start(t, "--metrics-token", token)
	buy := func(key, budget string) string {
		return `{"adcp_version":"3.2-beta.5","idempotency_key":"` + key + `","account":{"brand":{"domain":"acme.example"},"operator":"pinnacle-agency.example"},` +
			`"brand":{"domain":"acme.example"},"start_time":"` + testenv.Day(8) + `T00:00:00Z","end_time":"` + testenv.Day(63) + `T00:00:00Z",` +
			`"packages":[{"product_id":"nw_display_ros_mrec","pricing_option_id":"cpm_usd_floor_ros","budget":` + budget + `}]}`
	}
	before := scrape(t, env.BaseURL, token)
	if got := call(t, env.BaseURL, env.BuyerToken, "create_media_buy", buy("metrics-buy-00000001", "5000")); got["media_buy_id"] == nil {
		t.Fatalf("create_media_buy of 5,000 USD = %v, want a buy", got)
	}
	if got := call(t, env.BaseURL, env.BuyerToken, "create_media_buy", buy("metrics-buy-00000002", "400")); got["status"] != "failed" {
		t.Fatalf("create_media_buy of 400 USD = %v, want the refusal", got)
	}
	order := call(t, env.BaseURL, env.BuyerToken, "create_media_buy", buy("metrics-buy-00000003", "120000"))
	task, _ := order["task_id"].(string)
	if order["status"] != "submitted" || task == "" {
		t.Fatalf("create_media_buy of 120,000 USD = %v, want an order for the desk", order)
	}
	if status, _, body := adminDo(t, env.BaseURL, env.AdminToken, "POST", "/admin/v1/publishers/northwind/orders/"+task+"/approve", "{}"); status != 200 {
		t.Fatalf("approving the order = %d %s", status, body)
	}
	call(t, env.BaseURL, env.BuyerToken, "get_media_buys", `{"account":{"brand":{"domain":"acme.example"},"operator":"pinnacle-agency.example"}}`)
	after := scrape(t, env.BaseURL, token)

	wantMoved(t, before, after, []moved{
		{"storefront_requests_total", map[string]string{"publisher": "northwind", "transport": "mcp", "tool": "create_media_buy", "arm": "completed", "slug": "none", "version": "3.2-beta.5"}, 1},
		{"storefront_requests_total", map[string]string{"tool": "create_media_buy", "arm": "failed", "slug": "budget_below_minimum"}, 1},
		{"storefront_requests_total", map[string]string{"tool": "create_media_buy", "arm": "submitted", "slug": "none"}, 1},
		{"storefront_requests_total", map[string]string{"tool": "get_media_buys", "arm": "none"}, 1},
		{"storefront_requests_total", map[string]string{"tool": "other"}, 0},
		{"storefront_failed_answers_total", map[string]string{"tool": "create_media_buy", "code": "BUDGET_TOO_LOW"}, 1},
		{"storefront_orders_total", map[string]string{"publisher": "northwind", "event": "submitted"}, 1},
		{"storefront_orders_total", map[string]string{"publisher": "northwind", "event": "approved"}, 1},
		{"storefront_tasks_total", map[string]string{"publisher": "northwind", "status": "submitted"}, 1},
		{"storefront_tasks_total", map[string]string{"publisher": "northwind", "status": "completed"}, 1},
		// The buy, the refusal, the order and its approval.
		{"storefront_ledger_append_duration_seconds", nil, 4},
	})
}
