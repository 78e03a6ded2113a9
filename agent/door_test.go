package agent_test

import (
	"strings"
	"testing"

	"github.com/storefront/storefront/internal/kittest"
	"github.com/storefront/storefront/internal/spectest"
	"github.com/storefront/storefront/internal/testenv"
)

// TestDoorRefusesInvalid: every tool's arguments are checked against its
// task's official request schema before the tool runs, over MCP and A2A
// alike: a request the schema refuses is the error arm, INVALID_REQUEST
// naming the field in field and issues[], that validates against the
// task's response schema, echoes a context only when it is an object, and
// has no effect (nothing reserved under its idempotency key, nothing
// ledgered). These requests used to be answered completed: a budget below
// zero, a list filter of the wrong type, a string context echoed into an
// answer its schema then refused.
func TestDoorRefusesInvalid(t *testing.T) {
	onBothStores(t, func(t *testing.T, env *testenv.Env) {
		account := `"account":{"brand":{"domain":"acme.example"},"operator":"pinnacle-agency.example"}`
		for _, test := range []struct {
			tool, args, pointer, field string
		}{
			{"get_products", `{"buying_mode":"brief","brief":"coffee","filters":{"budget_range":{"min":-5,"currency":"USD"}}}`, "/filters/budget_range/min", "filters.budget_range.min"},
			{"get_products", `{"buying_mode":"brief","brief":"coffee","pagination":{"max_results":0}}`, "/pagination/max_results", "pagination.max_results"},
			{"get_adcp_capabilities", `{"protocols":"media_buy"}`, "/protocols", "protocols"},
			{"list_accounts", `{` + account + `,"context":"wrong"}`, "/context", "context"},
			{"sync_accounts", `{"idempotency_key":"door-sync-000000000001","accounts":[{"brand":{"domain":"acme.example"},"operator":"pinnacle-agency.example","billing":"operator","payment_terms":"whenever"}]}`, "/accounts/0/payment_terms", "accounts[0].payment_terms"},
			{"get_media_buys", `{` + account + `,"media_buy_ids":"mb_1"}`, "/media_buy_ids", "media_buy_ids"},
			{"get_media_buy_delivery", `{` + account + `,"start_date":20260230}`, "/start_date", "start_date"},
			{"list_tasks", `{` + account + `,"pagination":{"max_results":"ten"}}`, "/pagination/max_results", "pagination.max_results"},
			{"tasks/list", `{` + account + `,"filters":{"statuses":["sideways"]}}`, "/filters/statuses/0", "filters.statuses[0]"},
			{"get_task_status", `{"task_id":7}`, "/task_id", "task_id"},
		} {
			t.Run(test.tool+" "+test.field, func(t *testing.T) {
				m, isErr := rpcResult(t, kittest.ProbeMCP(t, env.BaseURL+"/mcp", env.BuyerToken, test.tool, test.args))
				answers := map[string]map[string]any{"mcp": m}
				if !isErr {
					t.Errorf("isError = false")
				}
				if !strings.Contains(test.tool, "/") {
					state, data := a2aTask(t, env, test.tool, test.args)
					if state != "TASK_STATE_FAILED" {
						t.Errorf("A2A task state = %s", state)
					}
					answers["a2a"] = kittest.Decode(t, data)
				}
				for transport, m := range answers {
					wantError(t, transport, m, "INVALID_REQUEST", test.field)
					e := m["adcp_error"].(map[string]any)
					issues, _ := e["issues"].([]any)
					if len(issues) == 0 || issues[0].(map[string]any)["pointer"] != test.pointer || e["recovery"] != "correctable" {
						t.Errorf("%s adcp_error = %v, want recovery correctable and issues[0].pointer %s", transport, e, test.pointer)
					}
					if c, ok := m["context"]; ok {
						if _, isObject := c.(map[string]any); !isObject {
							t.Errorf("%s echoed a context that is not an object: %v", transport, c)
						}
					}
					if _, err := spectest.Answer(t, test.tool, []byte(kittest.JSONOf(t, m))); err != nil {
						t.Errorf("%s answer: %v", transport, err)
					}
				}
			})
		}

		// A refused request reserves nothing: the same key then serves
		// the corrected request, and nothing was ledgered for the refusal.
		before := len(kittest.Decisions(t, env))
		key := `"idempotency_key":"door-retry-0000000001",`
		m, _ := rpcResult(t, kittest.ProbeMCP(t, env.BaseURL+"/mcp", env.BuyerToken, "get_products", `{`+key+`"buying_mode":"brief","brief":5}`))
		wantError(t, "the refused call", m, "INVALID_REQUEST", "brief")
		if n := len(kittest.Decisions(t, env)); n != before {
			t.Errorf("a refused request appended %d ledger entries", n-before)
		}
		m, _ = rpcResult(t, kittest.ProbeMCP(t, env.BaseURL+"/mcp", env.BuyerToken, "get_products", `{`+key+`"buying_mode":"brief","brief":"coffee"}`))
		if m["status"] != "completed" || m["replayed"] != nil {
			t.Errorf("the corrected request under the refused one's key = %v, want completed and not replayed", m)
		}
	})
}

// TestDoorVersions: a request is checked at the release it negotiates: a
// shape 3.0 defines that 3.2 dropped is admitted from a 3.0 or unpinned
// (3.1) buyer and refused from one pinned to a 3.2 pre-release; an
// unservable pin is the tool's VERSION_UNSUPPORTED, not a schema refusal.
func TestDoorVersions(t *testing.T) {
	env := testenv.Start(t)
	args := func(pin string) string {
		return `{` + pin + `"account":{"brand":{"domain":"acme.example"},"operator":"pinnacle-agency.example"},"brand":{"domain":"acme.example"},` +
			`"idempotency_key":"door-version-` + strings.NewReplacer(`"`, "", ":", "", ",", "", ".", "").Replace(pin) + `-000000001",` +
			`"start_time":"asap","end_time":"` + testenv.Day(40) + `T00:00:00Z",` +
			`"packages":[{"product_id":"nw_display_ros_mrec","pricing_option_id":"cpm_usd_floor_ros","budget":5000}],` +
			`"reporting_webhook":{"url":"https://buyer.example/reports","authentication":{"schemes":["Bearer"],"credentials":"` + strings.Repeat("c", 40) + `"},"reporting_frequency":"daily","requested_metrics":["video_completions"]}}`
	}
	for _, pin := range []string{`"adcp_version":"3.0",`, ``} {
		m, _ := rpcResult(t, kittest.ProbeMCP(t, env.BaseURL+"/mcp", env.BuyerToken, "create_media_buy", args(pin)))
		if errs, _ := m["errors"].([]any); m["status"] == "failed" && strings.Contains(kittest.JSONOf(t, errs), "requested_metrics") {
			t.Errorf("create_media_buy %s with a 3.0 metric = %v, want it admitted", pin, m)
		}
	}
	m, _ := rpcResult(t, kittest.ProbeMCP(t, env.BaseURL+"/mcp", env.BuyerToken, "create_media_buy", args(`"adcp_version":"3.2-beta.5",`)))
	wantError(t, "create_media_buy pinned 3.2-beta.5", m, "INVALID_REQUEST", "reporting_webhook.requested_metrics[0]")
	m, _ = rpcResult(t, kittest.ProbeMCP(t, env.BaseURL+"/mcp", env.BuyerToken, "get_products", `{"adcp_version":"9.0","buying_mode":"brief","brief":5}`))
	wantError(t, "get_products pinned 9.0", m, "VERSION_UNSUPPORTED", "adcp_version")
}
