package compliance_test

import (
	"strconv"
	"testing"

	"github.com/storefront/storefront/internal/kittest"
	"github.com/storefront/storefront/internal/spectest"
	"github.com/storefront/storefront/internal/testenv"
)

const acmeSandbox = `{"brand":{"domain":"acmeoutdoor.example"},"operator":"acmeoutdoor.example","sandbox":true}`

// TestSeedAndSimulateDelivery seeds the read_filter_behavior fixtures,
// simulates dated delivery and reads it over a half-open range; a fixture
// whose facts contradict its status, and figures the seller does not keep,
// are refused.
func TestSeedAndSimulateDelivery(t *testing.T) {
	env := testenv.Start(t, "--sandbox")
	cs := kittest.Connect(t, env.BaseURL, kittest.Kit)
	kittest.MustSucceed(t, kittest.Control(t, cs, "seed_product", `{"product_id":"rf_product","fixture":{"channels":["display"],"format_options":[{"format_option_id":"display_300x250","format_kind":"image","params":{"width":300,"height":250}}]}}`))
	kittest.MustSucceed(t, kittest.Control(t, cs, "seed_pricing_option", `{"product_id":"rf_product","pricing_option_id":"rf_pricing","fixture":{"pricing_model":"cpm","currency":"USD","fixed_price":10}}`))
	kittest.MustSucceed(t, kittest.Control(t, cs, "seed_creative", `{"creative_id":"rf_creative","fixture":{"status":"approved","format_kind":"image"}}`))
	if m := kittest.Control(t, cs, "seed_creative", `{"creative_id":"rf_rejected","fixture":{"status":"rejected"}}`); m["error"] != "INVALID_PARAMS" {
		t.Errorf("seeding a rejected creative = %v, want INVALID_PARAMS: creative review is not modelled", m)
	}
	fixture := func(id, status string, assigned bool) string {
		creatives := `[]`
		if assigned {
			creatives = `["rf_creative"]`
		}
		return `{"media_buy_id":"` + id + `","fixture":{"account":` + acmeSandbox + `,"status":"` + status + `","currency":"USD","start_time":"2026-01-01T00:00:00Z","end_time":"2099-12-31T00:00:00Z",` +
			`"packages":[{"package_id":"` + id + `_pkg","product_id":"rf_product","pricing_option_id":"rf_pricing","budget":1000,"creative_assignments":` + creatives + `}]}}`
	}
	kittest.MustSucceed(t, kittest.Control(t, cs, "seed_media_buy", fixture("rf_active", "active", true)))
	kittest.MustSucceed(t, kittest.Control(t, cs, "seed_media_buy", fixture("rf_paused", "paused", true)))
	if m := kittest.Control(t, cs, "seed_media_buy", fixture("rf_wrong", "active", false)); m["error"] != "INVALID_PARAMS" {
		t.Errorf("an active fixture without creatives = %v, want INVALID_PARAMS (its facts make it pending_creatives)", m)
	}
	_, read := kittest.Call(t, cs, "get_media_buys", `{"account":`+acmeSandbox+`,"media_buy_ids":["rf_active","rf_paused"],"status_filter":["paused"]}`)
	spectest.Validate(t, "media-buy/get-media-buys-response.json", read)
	if buys := kittest.Decode(t, read)["media_buys"].([]any); len(buys) != 1 || buys[0].(map[string]any)["media_buy_id"] != "rf_paused" {
		t.Errorf("get_media_buys(ids, paused) = %s, want rf_paused only", read)
	}
	for day, imps := range map[string]int{"2026-04-01": 100, "2026-04-15": 200, "2026-04-16": 400} {
		kittest.MustSucceed(t, kittest.ControlRaw(t, cs, `{"adcp_version":"3.2-beta.5","scenario":"simulate_delivery","account":`+acmeSandbox+
			`,"params":{"media_buy_id":"rf_active","delivery_date":"`+day+`","impressions":`+strconv.Itoa(imps)+`,"reported_spend":{"amount":1,"currency":"USD"}}}`))
	}
	_, got := kittest.Call(t, cs, "get_media_buy_delivery", `{"account":`+acmeSandbox+`,"media_buy_ids":["rf_active"],"start_date":"2026-04-15","end_date":"2026-04-16"}`)
	spectest.Validate(t, "media-buy/get-media-buy-delivery-response.json", got)
	m := kittest.Decode(t, got)
	if p := m["reporting_period"].(map[string]any); p["start"] != "2026-04-15T00:00:00.000Z" || p["end"] != "2026-04-16T00:00:00.000Z" {
		t.Errorf("reporting_period = %v", p)
	}
	if totals := m["media_buy_deliveries"].([]any)[0].(map[string]any)["totals"].(map[string]any); totals["impressions"] != 200.0 || totals["spend"] != 1.0 {
		t.Errorf("totals over [04-15, 04-16) = %v, want the 15th's 200 impressions and 1 spent", totals)
	}
	for _, params := range []string{
		`{"media_buy_id":"rf_active","reach":10}`,
		`{"media_buy_id":"rf_active","reported_spend":{"amount":1,"currency":"EUR"}}`,
		`{"media_buy_id":"no_such_buy","impressions":1}`,
	} {
		if m := kittest.ControlRaw(t, cs, `{"adcp_version":"3.2-beta.5","scenario":"simulate_delivery","account":`+acmeSandbox+`,"params":`+params+`}`); m["success"] != false {
			t.Errorf("simulate_delivery %s = %v, want refused", params, m)
		}
	}
	// Another kit key cannot drive this kit's buys.
	other := kittest.Connect(t, env.BaseURL, kittest.OtherKit)
	if m := kittest.ControlRaw(t, other, `{"adcp_version":"3.2-beta.5","scenario":"simulate_delivery","account":{"sandbox":true},"params":{"media_buy_id":"rf_active","impressions":1}}`); m["error"] != "NOT_FOUND" {
		t.Errorf("another principal's simulate_delivery = %v, want NOT_FOUND", m)
	}
}

// TestForceAccountStatus suspends a sandbox account: it cannot buy until
// it is active again, and list_accounts says so.
func TestForceAccountStatus(t *testing.T) {
	env := testenv.Start(t, "--sandbox")
	cs := kittest.Connect(t, env.BaseURL, kittest.Kit)
	_, synced := kittest.Call(t, cs, "sync_accounts", `{"idempotency_key":"force-account-0000001","accounts":[{"brand":{"domain":"acmeoutdoor.example"},"operator":"pinnacle-agency.example","billing":"operator","sandbox":true}]}`)
	id := kittest.Decode(t, synced)["accounts"].([]any)[0].(map[string]any)["account_id"].(string)
	m := kittest.Control(t, cs, "force_account_status", `{"account_id":"`+id+`","status":"suspended"}`)
	kittest.MustSucceed(t, m)
	if m["previous_state"] != "active" || m["current_state"] != "suspended" {
		t.Errorf("force_account_status = %v", m)
	}
	buy := `{"idempotency_key":"force-account-buy-0001","account":{"account_id":"` + id + `"},"brand":{"domain":"acmeoutdoor.example"},"start_time":"asap","end_time":"` + testenv.Day(92) + `T00:00:00Z",` +
		`"packages":[{"product_id":"nw_display_ros_mrec","pricing_option_id":"cpm_usd_floor_ros","budget":5000}]}`
	_, refused := kittest.Call(t, cs, "create_media_buy", buy)
	if e := kittest.Decode(t, refused)["adcp_error"].(map[string]any); e["code"] != "ACCOUNT_SUSPENDED" {
		t.Errorf("buying on a suspended account = %s", refused)
	}
	_, listed := kittest.Call(t, cs, "list_accounts", `{"account":{"account_id":"`+id+`"}}`)
	spectest.Validate(t, "account/list-accounts-response.json", listed)
	if a := kittest.Decode(t, listed)["accounts"].([]any)[0].(map[string]any); a["status"] != "suspended" {
		t.Errorf("list_accounts = %s", listed)
	}
	kittest.MustSucceed(t, kittest.Control(t, cs, "force_account_status", `{"account_id":"`+id+`","status":"active"}`))
	_, ok := kittest.Call(t, cs, "create_media_buy", `{"idempotency_key":"force-account-buy-0002","account":{"account_id":"`+id+`"},"brand":{"domain":"acmeoutdoor.example"},"start_time":"asap","end_time":"`+testenv.Day(92)+`T00:00:00Z",`+
		`"packages":[{"product_id":"nw_display_ros_mrec","pricing_option_id":"cpm_usd_floor_ros","budget":5000}]}`)
	if kittest.Decode(t, ok)["media_buy_id"] == nil {
		t.Errorf("buying once active again = %s", ok)
	}
	kittest.MustSucceed(t, kittest.Control(t, cs, "force_account_status", `{"account_id":"`+id+`","status":"closed"}`))
	if m := kittest.Control(t, cs, "force_account_status", `{"account_id":"`+id+`","status":"active"}`); m["error"] != "INVALID_TRANSITION" {
		t.Errorf("reopening a closed account = %v, want INVALID_TRANSITION", m)
	}
}

// TestSeedAccountsAndPage seeds sandbox accounts under ids the fixture
// names and pages through them with list_accounts; seeding the same fixture
// again changes nothing, another fixture under the same id is refused.
func TestSeedAccountsAndPage(t *testing.T) {
	env := testenv.Start(t, "--sandbox")
	cs := kittest.Connect(t, env.BaseURL, kittest.Kit)
	seed := func(n, status string) map[string]any {
		return kittest.Control(t, cs, "seed_account", `{"account_id":"acct_seeded_`+n+`","fixture":{"brand":{"domain":"seeded-`+n+`.example"},`+
			`"operator":"seeded-agency.example","billing":"operator","sandbox":true,"status":"`+status+`"}}`)
	}
	for _, n := range []string{"1", "2", "3"} {
		kittest.MustSucceed(t, seed(n, "active"))
	}
	kittest.MustSucceed(t, seed("1", "active"))
	if m := seed("1", "suspended"); m["error"] != "INVALID_STATE" {
		t.Errorf("reseeding with another status = %v, want INVALID_STATE", m)
	}
	if m := kittest.Control(t, cs, "seed_account", `{"account_id":"acct_seeded_1","fixture":{"brand":{"domain":"other.example"},"operator":"seeded-agency.example"}}`); m["error"] != "INVALID_STATE" {
		t.Errorf("reseeding an id with another identity = %v, want INVALID_STATE", m)
	}
	if m := kittest.Control(t, cs, "seed_account", `{"account_id":"acct_seeded_4","fixture":{"brand":{"domain":"seeded-4.example"},"operator":"seeded-agency.example","billing":"advertiser"}}`); m["error"] != "INVALID_PARAMS" {
		t.Errorf("seeding a billing model the seller lacks = %v, want INVALID_PARAMS", m)
	}
	seen := map[string]bool{}
	cursor := ""
	for page := 0; ; page++ {
		args := `{"sandbox":true,"pagination":{"max_results":2}}`
		if cursor != "" {
			args = `{"sandbox":true,"pagination":{"max_results":2,"cursor":"` + cursor + `"}}`
		}
		_, got := kittest.Call(t, cs, "list_accounts", args)
		spectest.Validate(t, "account/list-accounts-response.json", got)
		m := kittest.Decode(t, got)
		accts := m["accounts"].([]any)
		if len(accts) > 2 {
			t.Fatalf("page %d has %d accounts, max_results is 2", page, len(accts))
		}
		for _, a := range accts {
			seen[a.(map[string]any)["account_id"].(string)] = true
		}
		p := m["pagination"].(map[string]any)
		if p["has_more"] != true {
			if _, ok := p["cursor"]; ok {
				t.Errorf("the last page carries a cursor: %v", p)
			}
			break
		}
		cursor, _ = p["cursor"].(string)
		if cursor == "" || page > 10 {
			t.Fatalf("has_more without a cursor: %v", p)
		}
	}
	for _, n := range []string{"1", "2", "3"} {
		if !seen["acct_seeded_"+n] {
			t.Errorf("acct_seeded_%s was not listed: %v", n, seen)
		}
	}
	if _, got := kittest.Call(t, cs, "list_accounts", `{"pagination":{"cursor":"bm90LW91cnM"}}`); kittest.Decode(t, got)["adcp_error"] == nil {
		t.Errorf("a cursor this seller did not issue = %s, want an error", got)
	}
	// A fixture that names only a status, as get_media_buys_pagination_integrity seeds.
	kittest.MustSucceed(t, kittest.Control(t, cs, "seed_media_buy", `{"media_buy_id":"mb_minimal","fixture":{"status":"active","currency":"USD"}}`))
	_, read := kittest.Call(t, cs, "get_media_buys", `{"media_buy_ids":["mb_minimal"]}`)
	spectest.Validate(t, "media-buy/get-media-buys-response.json", read)
	if buys := kittest.Decode(t, read)["media_buys"].([]any); len(buys) != 1 || buys[0].(map[string]any)["status"] != "active" {
		t.Errorf("the minimal fixture reads back as %s", read)
	}
}

// TestForceMediaBuyStatusAndBudgetSpend drives a sandbox buy through the
// lifecycle with force_media_buy_status, as deterministic_testing does,
// and spends its budget with simulate_budget_spend; get_media_buys and
// get_media_buy_delivery report what the controller did.
func TestForceMediaBuyStatusAndBudgetSpend(t *testing.T) {
	env := testenv.Start(t, "--sandbox")
	cs := kittest.Connect(t, env.BaseURL, kittest.Kit)
	kittest.MustSucceed(t, kittest.Control(t, cs, "seed_product", `{"product_id":"fs_product","fixture":{"channels":["display"],"format_options":[{"format_option_id":"display_300x250","format_kind":"image","params":{"width":300,"height":250}}]}}`))
	kittest.MustSucceed(t, kittest.Control(t, cs, "seed_pricing_option", `{"product_id":"fs_product","pricing_option_id":"fs_pricing","fixture":{"pricing_model":"cpm","currency":"USD","fixed_price":10}}`))
	_, created := kittest.Call(t, cs, "create_media_buy", `{"adcp_version":"3.2-beta.5","idempotency_key":"force-status-buy-0001","account":`+acmeSandbox+`,"brand":{"domain":"acmeoutdoor.example"},`+
		`"start_time":"asap","end_time":"2099-06-30T23:59:59Z","packages":[{"product_id":"fs_product","pricing_option_id":"fs_pricing","budget":10000}]}`)
	id, _ := kittest.Decode(t, created)["media_buy_id"].(string)
	if id == "" {
		t.Fatalf("create_media_buy = %s", created)
	}
	status := func() string {
		t.Helper()
		_, got := kittest.Call(t, cs, "get_media_buys", `{"adcp_version":"3.2-beta.5","account":`+acmeSandbox+`,"media_buy_ids":["`+id+`"]}`)
		return kittest.Decode(t, got)["media_buys"].([]any)[0].(map[string]any)["status"].(string)
	}
	force := func(to string) map[string]any {
		return kittest.Control(t, cs, "force_media_buy_status", `{"media_buy_id":"`+id+`","status":"`+to+`"}`)
	}
	if s := status(); s != "pending_creatives" {
		t.Fatalf("the new buy is %s, want pending_creatives (no creative assigned)", s)
	}
	if m := force("active"); m["success"] != true || m["previous_state"] != "pending_creatives" || m["current_state"] != "active" {
		t.Errorf("force active = %v", m)
	}
	if s := status(); s != "active" {
		t.Errorf("after forcing active the buy reads %s", s)
	}

	// The budget spent to 95%, then to 100%; asking for less spends nothing.
	spend := func(pct string) map[string]any {
		return kittest.Control(t, cs, "simulate_budget_spend", `{"media_buy_id":"`+id+`","spend_percentage":`+pct+`}`)
	}
	for _, step := range []struct {
		pct         string
		added, kept float64
	}{{"95", 9500, 9500}, {"100", 500, 10000}, {"50", 0, 10000}} {
		m := spend(step.pct)
		kittest.MustSucceed(t, m)
		added := m["simulated"].(map[string]any)["reported_spend"].(map[string]any)["amount"]
		total := m["cumulative"].(map[string]any)["reported_spend"].(map[string]any)["amount"]
		if added != step.added || total != step.kept {
			t.Errorf("simulate_budget_spend %s%% = %v", step.pct, m)
		}
	}
	_, got := kittest.Call(t, cs, "get_media_buy_delivery", `{"adcp_version":"3.2-beta.5","account":`+acmeSandbox+`,"media_buy_ids":["`+id+`"]}`)
	spectest.Validate(t, "media-buy/get-media-buy-delivery-response.json", got)
	if totals := kittest.Decode(t, got)["media_buy_deliveries"].([]any)[0].(map[string]any)["totals"].(map[string]any); totals["spend"] != 10000.0 || totals["impressions"] != 1e6 {
		t.Errorf("delivery totals = %v, want the whole 10000 spent on a million impressions at 10 CPM", totals)
	}
	for _, params := range []string{
		`{"media_buy_id":"` + id + `","spend_percentage":120}`,
		`{"media_buy_id":"` + id + `"}`,
		`{"account_id":"acct_1","spend_percentage":50}`,
	} {
		if m := kittest.Control(t, cs, "simulate_budget_spend", params); m["error"] != "INVALID_PARAMS" {
			t.Errorf("simulate_budget_spend %s = %v, want INVALID_PARAMS", params, m)
		}
	}

	if m := force("completed"); m["success"] != true || m["previous_state"] != "active" {
		t.Errorf("force completed = %v", m)
	}
	if s := status(); s != "completed" {
		t.Errorf("after forcing completed the buy reads %s", s)
	}
	m := force("active")
	if m["error"] != "INVALID_TRANSITION" || m["current_state"] != "completed" {
		t.Errorf("forcing a completed buy active = %v, want INVALID_TRANSITION from completed", m)
	}
	if m := force("sold"); m["error"] != "INVALID_PARAMS" {
		t.Errorf("an unknown status = %v, want INVALID_PARAMS", m)
	}
	other := kittest.Connect(t, env.BaseURL, kittest.OtherKit)
	if m := kittest.Control(t, other, "force_media_buy_status", `{"media_buy_id":"`+id+`","status":"paused"}`); m["error"] != "NOT_FOUND" {
		t.Errorf("another principal forcing this buy = %v, want NOT_FOUND", m)
	}
}
