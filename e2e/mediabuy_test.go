package e2e

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/storefront/storefront/internal/spectest"
)

// TestMediaBuyJourney is a buyer and a publisher's sales desk around one
// order book, each with its real client: the @adcp/sdk CLI discovers and
// buys over MCP, is refused at buy time for exactly the reason get_products
// gives for the same terms, sends a large order that waits for the desk,
// and is told by webhook when the desk approves it in the browser (and,
// for a second order, declines it); the ad server's delivery comes in
// through the admin API and the console's CSV upload, and the buyer reads
// it back with get_media_buy_delivery.
func TestMediaBuyJourney(t *testing.T) {
	// Sandbox mode lets the storefront deliver webhooks to this test's
	// loopback receiver; the buyer is the demo's live buyer token.
	sf := Start(t, nil, "--sandbox")
	mcp := sf.BaseURL + "/mcp"
	token := adminToken(t, sf)
	api := adminAPI{t, sf.BaseURL, token}
	hooks := make(chan []byte, 8)
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		hooks <- b
	}))
	defer receiver.Close()

	buyer := func(tool, args string) (CLIResult, []byte) {
		t.Helper()
		res := ADCP(t, mcp, tool, args, "--protocol", "mcp", "--auth", sf.BuyerToken)
		raw, _ := res.Metadata["protocolMessage"].(string)
		if raw == "" {
			t.Fatalf("adcp %s: no protocolMessage in the CLI output (exit %d):\n%s%s", tool, res.Exit, res.Raw, res.Stderr)
		}
		return res, []byte(raw)
	}
	const account = `{"brand":{"domain":"acme.example"},"operator":"pinnacle-agency.example"}`
	now := time.Now().UTC()
	start := now.AddDate(0, 0, 2).Format("2006-01-02")
	end := now.AddDate(0, 0, 40).Format("2006-01-02")

	// Discover.
	disc, raw := buyer("get_products", `{"buying_mode":"brief","brief":"Display for a coffee brand launch","account":`+account+
		`,"filters":{"channels":["display"],"budget_range":{"max":5000,"currency":"USD"}}}`)
	spectest.GetProducts(t, raw)
	products, _ := disc.Data["products"].([]any)
	found := false
	for _, p := range products {
		if p.(map[string]any)["product_id"] == "nw_display_ros_mrec" {
			found = true
		}
	}
	if !found {
		t.Fatalf("get_products did not offer nw_display_ros_mrec: %s", raw)
	}

	// Buy what was offered.
	buy := func(budget int, extra string) string {
		return `{"adcp_version":"3.2-beta.5","idempotency_key":"e2e-` + strings.ReplaceAll(time.Now().Format("150405.000000000"), ".", "-") + `","account":` + account +
			`,"brand":{"domain":"acme.example"},"start_time":"` + start + `T00:00:00Z","end_time":"` + end + `T00:00:00Z",` +
			`"packages":[{"product_id":"nw_display_ros_mrec","pricing_option_id":"cpm_usd_floor_ros","budget":` + jsonInt(budget) + `}]` + extra + `}`
	}
	created, raw := buyer("create_media_buy", buy(5000, `,"context":{"correlation_id":"e2e-buy"}`))
	spectest.Validate(t, "media-buy/create-media-buy-response.json", raw)
	if created.Exit != 0 || created.Data["media_buy_id"] == nil || created.Data["media_buy_status"] != "pending_creatives" {
		t.Fatalf("create_media_buy = %s, want a pending_creatives buy", raw)
	}

	// Declined at buy time with the reason get_products gives for the
	// same terms. The client reports a failed task as "CODE: message".
	terms := `"filters":{"channels":["display"],"delivery_type":"non_guaranteed","budget_range":{"max":400,"currency":"USD"},"start_date":"` + start + `","end_date":"` + end + `"}`
	declined, raw := buyer("get_products", `{"adcp_version":"3.2-beta.5","buying_mode":"brief","brief":"display","brand":{"domain":"acme.example"},"account":`+account+`,`+terms+`}`)
	reason, _ := declined.Data["reason"].(string)
	if declined.Data["status"] != "rejected" || reason == "" {
		t.Fatalf("get_products on a 400 USD display budget = %s, want the rejected arm", raw)
	}
	refused := ADCP(t, mcp, "create_media_buy", buy(400, ""), "--protocol", "mcp", "--auth", sf.BuyerToken)
	if refused.Exit == 0 || !strings.Contains(refused.Stderr, "BUDGET_TOO_LOW: "+reason) {
		t.Fatalf("the buy on the same terms: exit %d, %s\nwant BUDGET_TOO_LOW with get_products' reason %q", refused.Exit, refused.Stderr, reason)
	}
	if strings.Contains(refused.Stderr, "MR-2291") || strings.Contains(refused.Stderr, "Premium floor") {
		t.Errorf("the refusal names a confidential rule: %s", refused.Stderr)
	}

	// A large order waits for the sales desk.
	push := func(op string) string {
		return `,"push_notification_config":{"url":"` + receiver.URL + `/hook","operation_id":"` + op + `"}`
	}
	big, raw := buyer("create_media_buy", buy(120000, push("op-approve")))
	spectest.Validate(t, "media-buy/create-media-buy-async-response-submitted.json", raw)
	approveTask, _ := big.Data["task_id"].(string)
	if big.Data["status"] != "submitted" || approveTask == "" || big.Data["media_buy_id"] != nil {
		t.Fatalf("a 120,000 USD order = %s, want submitted for the desk", raw)
	}
	other, raw := buyer("create_media_buy", buy(150000, push("op-decline")))
	declineTask, _ := other.Data["task_id"].(string)
	if other.Data["status"] != "submitted" || declineTask == "" {
		t.Fatalf("a 150,000 USD order = %s, want submitted", raw)
	}
	polled, raw := buyer("get_task_status", `{"task_id":"`+approveTask+`","account":`+account+`}`)
	if polled.Data["status"] != "submitted" || polled.Data["task_type"] != "create_media_buy" {
		t.Fatalf("get_task_status before the desk decides = %s", raw)
	}

	// The desk approves one in the browser and declines the other.
	b := openOrders(t, sf, token)
	b.waitFor("both orders in the queue", `document.querySelectorAll('#queue tr[data-task]').length === 2`)
	queue := b.text("#queue")
	if !strings.Contains(queue, "OD-8810-LARGE-ORDERS") || !strings.Contains(queue, "120,000 USD") {
		t.Errorf("the queue does not say which rule sent the order and for how much: %s", queue)
	}
	b.screenshot("orders.png", true)
	b.do(chromedp.Click(`#queue tr[data-task="` + approveTask + `"] button.primary`))
	b.waitFor("the approval", `document.getElementById("messages").textContent.includes("Approved order")`)
	// Words that name a confidential term are refused, not altered.
	declineRow := `#queue tr[data-task="` + declineTask + `"]`
	b.typeInto(declineRow+` textarea`, "Dana Whitcombe says no.")
	b.do(chromedp.Click(declineRow + ` button.danger`))
	b.waitFor("the refused reason", `document.querySelector(`+js(declineRow+` .field-error`)+`).textContent.includes("the buyer would read something else")`)
	b.typeInto(declineRow+` textarea`, "We are fully booked for large orders this quarter.")
	b.do(chromedp.Click(declineRow + ` button.danger`))
	b.waitFor("the decline", `document.getElementById("messages").textContent.includes("Declined order")`)
	b.waitFor("the decided table", `document.querySelectorAll('#decided tr[data-task]').length === 2`)
	b.assertInert()

	// The buyer hears of both decisions.
	got := map[string]map[string]any{}
	for len(got) < 2 {
		select {
		case body := <-hooks:
			var m map[string]any
			if err := json.Unmarshal(body, &m); err != nil {
				t.Fatalf("webhook body is not JSON: %s", body)
			}
			got[m["task_id"].(string)] = m
		case <-time.After(30 * time.Second):
			t.Fatalf("only %d of 2 webhooks arrived", len(got))
		}
	}
	approved := got[approveTask]
	result, _ := approved["result"].(map[string]any)
	mediaBuyID, _ := result["media_buy_id"].(string)
	if approved["status"] != "completed" || approved["task_type"] != "create_media_buy" || approved["operation_id"] != "op-approve" || mediaBuyID == "" {
		t.Fatalf("the approval webhook = %v", approved)
	}
	rejected := got[declineTask]
	if r, _ := rejected["result"].(map[string]any); rejected["status"] != "failed" ||
		!strings.Contains(jsonString(r), "We are fully booked for large orders this quarter.") || strings.Contains(jsonString(r), "Whitcombe") {
		t.Errorf("the decline webhook = %v", rejected)
	}
	polled, raw = buyer("get_task_status", `{"task_id":"`+approveTask+`","include_result":true,"account":`+account+`}`)
	spectest.Validate(t, "protocol/get-task-status-response.json", raw)
	if r, _ := polled.Data["result"].(map[string]any); polled.Data["status"] != "completed" || r["media_buy_id"] != mediaBuyID {
		t.Errorf("get_task_status after approval = %s", raw)
	}
	read, raw := buyer("get_media_buys", `{"account":`+account+`,"media_buy_ids":["`+mediaBuyID+`"]}`)
	spectest.Validate(t, "media-buy/get-media-buys-response.json", raw)
	mbs, _ := read.Data["media_buys"].([]any)
	if len(mbs) != 1 {
		t.Fatalf("get_media_buys = %s", raw)
	}
	pkg := mbs[0].(map[string]any)["packages"].([]any)[0].(map[string]any)["package_id"].(string)

	// The ad server reports delivery through the admin API; a corrected
	// report of the same day replaces it. The console uploads another day
	// as CSV.
	today := now.Format("2006-01-02")
	yesterday := now.AddDate(0, 0, -1).Format("2006-01-02")
	report := func(impressions, spend string) {
		status, _, body := api.do("POST", "/delivery", `{"rows":[{"media_buy_id":"`+mediaBuyID+`","package_id":"`+pkg+`","date":"`+yesterday+`","impressions":`+impressions+`,"clicks":40,"spend":`+spend+`}]}`)
		if status != http.StatusOK {
			t.Fatalf("POST /delivery = %d %s", status, body)
		}
	}
	report("9000", "27")
	report("10000", "30")
	csvPath := filepath.Join(t.TempDir(), "delivery.csv")
	if err := os.WriteFile(csvPath, []byte("media_buy_id,package_id,date,impressions,clicks,spend\n"+mediaBuyID+","+pkg+","+today+",5000,10,15.5\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	b.do(chromedp.Navigate(sf.BaseURL + "/console/orders.html"))
	b.waitFor("the orders page", `document.body.dataset.loaded !== undefined`)
	b.do(chromedp.SetUploadFiles(chromedp.ID("csv"), []string{csvPath}), chromedp.Click(chromedp.ID("upload-button")))
	b.waitFor("the upload", `document.getElementById("messages").textContent.includes("Stored 1 delivery rows")`)
	b.waitFor("the buy's delivery", `document.querySelector('#buys tr[data-buy="`+mediaBuyID+`"] .delivered')?.textContent.includes("15,000 impressions")`)
	b.do(chromedp.Click(`#buys tr[data-buy="` + mediaBuyID + `"] summary`))
	b.waitFor("the buy's history", `document.querySelector('#buys tr[data-buy="`+mediaBuyID+`"] ol.history')?.textContent.includes("approved by the sales desk")`)
	b.screenshot("orders-delivery.png", true)
	b.clean(token)

	delivery, raw := buyer("get_media_buy_delivery", `{"account":`+account+`,"media_buy_ids":["`+mediaBuyID+`"],"include_package_daily_breakdown":true}`)
	spectest.Validate(t, "media-buy/get-media-buy-delivery-response.json", raw)
	ds, _ := delivery.Data["media_buy_deliveries"].([]any)
	if len(ds) != 1 {
		t.Fatalf("get_media_buy_delivery = %s", raw)
	}
	totals := ds[0].(map[string]any)["totals"].(map[string]any)
	if totals["impressions"] != 15000.0 || totals["spend"] != 45.5 || totals["clicks"] != 50.0 {
		t.Errorf("delivery totals = %v, want the corrected report plus the upload: 15000 impressions, 45.5 spent, 50 clicks", totals)
	}
	_, raw = buyer("get_media_buy_delivery", `{"account":`+account+`,"media_buy_ids":["`+mediaBuyID+`"],"start_date":"`+yesterday+`","end_date":"`+today+`"}`)
	var ranged struct {
		Deliveries []struct {
			Totals struct{ Impressions float64 } `json:"totals"`
		} `json:"media_buy_deliveries"`
	}
	if err := json.Unmarshal(raw, &ranged); err != nil || len(ranged.Deliveries) != 1 || ranged.Deliveries[0].Totals.Impressions != 10000 {
		t.Errorf("delivery over [yesterday, today) = %s, want yesterday's 10000 impressions only", raw)
	}
}

// openOrders signs in to the console and opens the Orders page.
func openOrders(t *testing.T, sf *Storefront, token string) *browser {
	t.Helper()
	b := openBrowser(t)
	b.do(chromedp.Navigate(sf.BaseURL+"/console/"), chromedp.WaitVisible(chromedp.ID("token")))
	b.typeInto("#token", token)
	b.do(chromedp.Click(chromedp.ID("signin-button")))
	b.waitFor("the rulebook editor", `location.pathname === "/console/rulebook.html"`)
	b.do(chromedp.Navigate(sf.BaseURL + "/console/orders.html"))
	return b
}

func jsonInt(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

func jsonString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestOrderDeskRefresh decides orders while the page's refreshes are held
// back in the browser, as a slow network holds them: what the desk types
// into one order survives the refresh another's approval started, a
// refresh answered late never draws over a newer one, and a decision
// submitted twice is sent once.
func TestOrderDeskRefresh(t *testing.T) {
	sf := Start(t, nil, "--sandbox")
	token := adminToken(t, sf)
	start := time.Now().UTC().AddDate(0, 0, 2).Format("2006-01-02")
	end := time.Now().UTC().AddDate(0, 0, 40).Format("2006-01-02")
	order := func(n, budget int) string {
		t.Helper()
		res := ADCP(t, sf.BaseURL+"/mcp", "create_media_buy", `{"idempotency_key":"e2e-desk-refresh-`+jsonInt(n)+`-0000",`+
			`"account":{"brand":{"domain":"acme.example"},"operator":"pinnacle-agency.example"},"brand":{"domain":"acme.example"},`+
			`"start_time":"`+start+`T00:00:00Z","end_time":"`+end+`T00:00:00Z",`+
			`"packages":[{"product_id":"nw_display_ros_mrec","pricing_option_id":"cpm_usd_floor_ros","budget":`+jsonInt(budget)+`}]}`,
			"--protocol", "mcp", "--auth", sf.BuyerToken)
		id, _ := res.Data["task_id"].(string)
		if res.Data["status"] != "submitted" || id == "" {
			t.Fatalf("a %d USD order = %v %s, want submitted for the desk", budget, res.Data, res.Stderr)
		}
		return id
	}
	first, second, third := order(1, 120000), order(2, 130000), order(3, 140000)
	row := func(id string) string { return `#queue tr[data-task="` + id + `"]` }

	b := openOrders(t, sf, token)
	b.waitFor("three orders in the queue", `document.querySelectorAll('#queue tr[data-task]').length === 3`)
	// From here every GET the page sends waits until the test lets it go
	// (newest first, or oldest first), and each JSON body read is counted.
	b.do(chromedp.Evaluate[chromedp.Void](`(() => {
		const fetch = window.fetch, json = Response.prototype.json;
		window.__held = [];
		window.__read = 0;
		window.fetch = (url, opts) => (opts?.method || 'GET') !== 'GET' ? fetch(url, opts)
			: new Promise(go => window.__held.push(() => go(fetch(url, opts))));
		window.__release = (n, newest) => {
			for (const go of newest ? window.__held.splice(-n, n) : window.__held.splice(0, n)) go();
		};
		Response.prototype.json = function () { return json.call(this).then(v => { window.__read++; return v; }); };
	})()`))
	held := func(n int) { t.Helper(); b.waitFor("the refresh's requests", `window.__held.length === `+jsonInt(n)) }
	release := func(n int, newest bool) {
		t.Helper()
		before := evalJS[int](b, `window.__read`)
		b.do(chromedp.Evaluate[chromedp.Void](`window.__release(` + jsonInt(n) + `, ` + jsonString(newest) + `)`))
		// Every body read: the page has drawn what those answers give, if it draws them.
		b.waitFor("the released answers", `window.__read === `+jsonInt(before+n))
	}

	// Words typed while an approval's refresh is on its way are kept.
	b.do(chromedp.Click(row(first) + ` button.primary`))
	b.waitFor("the approval", `document.getElementById("messages").textContent.includes("Approved order `+first+`")`)
	held(3)
	const words = "We are fully booked for large orders this quarter."
	b.typeInto(row(second)+` textarea`, words)
	release(3, false)
	b.waitFor("the approved order out of the queue", `document.querySelectorAll('#queue tr[data-task]').length === 2 && !document.querySelector(`+js(row(first))+`)`)
	if got := evalJS[string](b, `document.querySelector(`+js(row(second)+` textarea`)+`)?.value ?? "(no such row)"`); got != words {
		t.Errorf("after the refresh the declining order's reason reads %q, want what the desk typed, %q", got, words)
	}

	// A decline submitted twice is sent once; its refresh, answered after
	// the next approval's, does not draw the queue as it was before.
	b.do(chromedp.Evaluate[chromedp.Void](`(f => { f.requestSubmit(); f.requestSubmit(); })(document.querySelector(` + js(row(second)+` form.decline`) + `))`))
	b.waitFor("the decline", `document.getElementById("messages").textContent.includes("Declined order `+second+`")`)
	held(3)
	b.do(chromedp.Click(row(third) + ` button.primary`))
	b.waitFor("the second approval", `document.getElementById("messages").textContent.includes("Approved order `+third+`")`)
	held(6)
	release(3, true)
	b.waitFor("the empty queue", `document.querySelector('#queue tbody').textContent.includes("No order is waiting.")`)
	release(3, false)
	if q := b.text("#queue tbody"); !strings.Contains(q, "No order is waiting.") {
		t.Errorf("after the late refresh the queue reads %q, want it empty: an older answer drew over a newer one", q)
	}
	if n := evalJS[int](b, `document.querySelectorAll('#decided tr[data-task]').length`); n != 3 {
		t.Errorf("the decided table has %d orders, want 3", n)
	}
	if m := b.text("#messages"); strings.Contains(m, "Not declined") || strings.Contains(m, "Not approved") {
		t.Errorf("a decision was sent twice: %s", m)
	}
	b.mu.Lock()
	declines := 0
	for _, u := range b.urls {
		if strings.HasSuffix(u, "/orders/"+second+"/decline") {
			declines++
		}
	}
	b.mu.Unlock()
	if declines != 1 {
		t.Errorf("the decline was sent %d times, want once", declines)
	}
	b.clean(token)
}
