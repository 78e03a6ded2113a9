package agent_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/storefront/storefront/adcp"
	"github.com/storefront/storefront/internal/kittest"
	"github.com/storefront/storefront/internal/spectest"
	"github.com/storefront/storefront/internal/testenv"
)

// validateTool checks an answer against its tool's official schema.
func validateTool(t *testing.T, tool string, payload []byte) map[string]any {
	t.Helper()
	return spectest.MediaBuy(t, tool, payload)
}

// TestMediaBuyToolsAtEveryVersion runs every media-buy tool over MCP at
// every release the storefront serves, and validates each answer.
func TestMediaBuyToolsAtEveryVersion(t *testing.T) {
	env := testenv.Start(t)
	cs := kittest.Connect(t, env.BaseURL, env.BuyerToken)
	const account = `{"brand":{"domain":"acme.example"},"operator":"pinnacle-agency.example"}`
	for i, v := range adcp.Supported() {
		t.Run(v.String(), func(t *testing.T) {
			pin := `"adcp_version":"` + v.String() + `","context":{"correlation_id":"v-` + v.String() + `"}`
			call := func(tool, args string) map[string]any {
				t.Helper()
				res, payload := kittest.Call(t, cs, tool, args)
				m := validateTool(t, tool, payload)
				if m["adcp_version"] != v.String() {
					t.Errorf("%s served %v, want %s", tool, m["adcp_version"], v)
				}
				if c, _ := m["context"].(map[string]any); c["correlation_id"] != "v-"+v.String() {
					t.Errorf("%s did not echo the context: %s", tool, payload)
				}
				if res.IsError != (m["errors"] != nil && m["media_buy_id"] == nil && m["accounts"] == nil) {
					t.Errorf("%s: isError %v for %s", tool, res.IsError, payload)
				}
				return m
			}
			key := func(s string) string { return fmt.Sprintf(`"idempotency_key":"agent-test-%d-%s-000000"`, i, s) }
			synced := call("sync_accounts", `{`+pin+`,`+key("sync")+`,"accounts":[{"brand":{"domain":"acme.example"},"operator":"pinnacle-agency.example","billing":"operator"}]}`)
			if a := synced["accounts"].([]any)[0].(map[string]any); a["status"] != "active" || a["timezone"] != "UTC" {
				t.Errorf("sync_accounts = %v", a)
			}
			refused := call("sync_accounts", `{`+pin+`,`+key("agent")+`,"accounts":[{"brand":{"domain":"acme.example"},"operator":"pinnacle-agency.example","billing":"agent"}]}`)
			if e := refused["accounts"].([]any)[0].(map[string]any)["errors"].([]any)[0].(map[string]any); e["code"] != "BILLING_NOT_SUPPORTED" || e["details"].(map[string]any)["scope"] != "capability" {
				t.Errorf("sync_accounts with agent billing = %v, want BILLING_NOT_SUPPORTED at the capability gate", e)
			}
			call("list_accounts", `{`+pin+`}`)
			created := call("create_media_buy", `{`+pin+`,`+key("create")+`,"account":`+account+`,"brand":{"domain":"acme.example"},`+
				`"start_time":"asap","end_time":"`+testenv.Day(92)+`T00:00:00Z","packages":[{"product_id":"nw_display_ros_mrec","pricing_option_id":"cpm_usd_floor_ros","budget":5000,`+
				`"creative_assignments":[{"creative_id":"cr_`+v.String()+`"}]}]}`)
			id, _ := created["media_buy_id"].(string)
			if id == "" {
				t.Fatalf("create_media_buy = %v", created)
			}
			call("get_media_buys", `{`+pin+`,"account":`+account+`,"media_buy_ids":["`+id+`"],"include_history":3}`)
			paused := call("update_media_buy", `{`+pin+`,`+key("pause")+`,"account":`+account+`,"media_buy_id":"`+id+`","paused":true}`)
			if paused["revision"] != 2.0 {
				t.Errorf("update_media_buy = %v, want revision 2", paused)
			}
			call("get_media_buy_delivery", `{`+pin+`,"account":`+account+`,"media_buy_ids":["`+id+`"],"include_package_daily_breakdown":true}`)
			// The error arms validate too.
			call("update_media_buy", `{`+pin+`,`+key("missing")+`,"account":`+account+`,"media_buy_id":"mb_nope","paused":true}`)
			call("get_media_buy_delivery", `{`+pin+`,"account":`+account+`,"start_date":"2026-04-15","end_date":"2026-04-15"}`)
			call("create_media_buy", `{`+pin+`,`+key("low")+`,"account":`+account+`,"brand":{"domain":"acme.example"},`+
				`"start_time":"asap","end_time":"`+testenv.Day(92)+`T00:00:00Z","packages":[{"product_id":"nw_display_ros_mrec","pricing_option_id":"cpm_usd_floor_ros","budget":10}]}`)
		})
	}
}

// TestMediaBuyIdempotency: a retried create or update with the same key
// replays the first answer and changes nothing; the same key on another
// payload is IDEMPOTENCY_CONFLICT.
func TestMediaBuyIdempotency(t *testing.T) {
	env := testenv.Start(t)
	cs := kittest.Connect(t, env.BaseURL, env.BuyerToken)
	const account = `{"brand":{"domain":"acme.example"},"operator":"pinnacle-agency.example"}`
	create := func(budget int) string {
		return `{"adcp_version":"3.2-beta.5","idempotency_key":"idem-create-0000000001","account":` + account + `,"brand":{"domain":"acme.example"},` +
			`"start_time":"asap","end_time":"` + testenv.Day(92) + `T00:00:00Z","packages":[{"product_id":"nw_display_ros_mrec","pricing_option_id":"cpm_usd_floor_ros","budget":` + fmt.Sprint(budget) + `}]}`
	}
	_, first := kittest.Call(t, cs, "create_media_buy", create(5000))
	_, again := kittest.Call(t, cs, "create_media_buy", create(5000))
	if want := append(bytes.Clone(bytes.TrimSuffix(first, []byte("}"))), `,"replayed":true}`...); !bytes.Equal(again, want) {
		t.Errorf("the retry =\n%s\nwant the first answer replayed:\n%s", again, want)
	}
	_, conflict := kittest.Call(t, cs, "create_media_buy", create(6000))
	if m := kittest.Decode(t, conflict); m["adcp_error"].(map[string]any)["code"] != "IDEMPOTENCY_CONFLICT" {
		t.Errorf("the same key on another payload = %s", conflict)
	}
	_, list := kittest.Call(t, cs, "get_media_buys", `{"account":`+account+`,"status_filter":["pending_creatives","pending_start","active"]}`)
	if n := len(kittest.Decode(t, list)["media_buys"].([]any)); n != 1 {
		t.Fatalf("after a create, its retry and a conflict there are %d buys, want 1: %s", n, list)
	}
	id := kittest.Decode(t, first)["media_buy_id"].(string)
	update := `{"adcp_version":"3.2-beta.5","idempotency_key":"idem-update-0000000001","account":` + account + `,"media_buy_id":"` + id + `","packages":[{"package_id":"` +
		kittest.Decode(t, first)["packages"].([]any)[0].(map[string]any)["package_id"].(string) + `","budget":7000}]}`
	_, u1 := kittest.Call(t, cs, "update_media_buy", update)
	_, u2 := kittest.Call(t, cs, "update_media_buy", update)
	if m := kittest.Decode(t, u2); m["replayed"] != true || m["revision"] != 2.0 {
		t.Errorf("the update's retry = %s (first %s), want revision 2 replayed", u2, u1)
	}
}

// TestCreateMediaBuyAsyncLifecycle is media_buy_seller/
// create_media_buy_async_lifecycle with one account throughout (the 6.11.0
// runner swaps the account on create_media_buy, so it cannot run the
// reconciliation steps): a forced submitted arm, the task read and listed,
// completed by the controller, and read again with its result.
func TestCreateMediaBuyAsyncLifecycle(t *testing.T) {
	env := testenv.Start(t, "--sandbox")
	cs := kittest.Connect(t, env.BaseURL, kittest.Kit)
	const (
		account = `{"brand":{"domain":"acmeoutdoor.example"},"operator":"pinnacle-agency.example","sandbox":true}`
		task    = "task_async_media_buy_lifecycle_q3"
	)
	kittest.MustSucceed(t, kittest.ControlRaw(t, cs, `{"adcp_version":"3.2-beta.5","scenario":"force_create_media_buy_arm","params":{"arm":"submitted","task_id":"`+task+`","message":"Awaiting insertion-order approval"},"account":`+account+`}`))
	_, sub := kittest.Call(t, cs, "create_media_buy", `{"adcp_version":"3.2-beta.5","idempotency_key":"async-lifecycle-000001","account":`+account+`,"brand":{"domain":"acmeoutdoor.example"},`+
		`"start_time":"asap","end_time":"2099-09-30T23:59:59Z","packages":[{"product_id":"nw_olv_news_preroll","budget":30000,"pricing_option_id":"cpm_usd_floor_news_preroll"}]}`)
	m := validateTool(t, "create_media_buy", sub)
	if m["status"] != "submitted" || m["task_id"] != task || m["media_buy_id"] != nil {
		t.Fatalf("create_media_buy after the directive = %s", sub)
	}
	// The directive was one-shot: the next buy is synchronous.
	_, next := kittest.Call(t, cs, "create_media_buy", `{"adcp_version":"3.2-beta.5","idempotency_key":"async-lifecycle-000002","account":`+account+`,"brand":{"domain":"acmeoutdoor.example"},`+
		`"start_time":"asap","end_time":"2099-09-30T23:59:59Z","packages":[{"product_id":"nw_olv_news_preroll","budget":30000,"pricing_option_id":"cpm_usd_floor_news_preroll"}]}`)
	if m := kittest.Decode(t, next); m["media_buy_id"] == nil {
		t.Errorf("the buy after the forced one = %s, want a synchronous success", next)
	}
	_, got := kittest.Call(t, cs, "get_task_status", `{"task_id":"`+task+`","account":`+account+`}`)
	spectest.Validate(t, "protocol/get-task-status-response.json", got)
	if m := kittest.Decode(t, got); m["status"] != "submitted" || m["task_type"] != "create_media_buy" || m["protocol"] != "media-buy" {
		t.Errorf("get_task_status = %s", got)
	}
	_, listed := kittest.Call(t, cs, "list_tasks", `{"account":`+account+`,"filters":{"task_ids":["`+task+`"],"task_type":"create_media_buy"},"pagination":{"max_results":1}}`)
	spectest.Validate(t, "protocol/list-tasks-response.json", listed)
	if !strings.Contains(string(listed), `"total_matching":1`) {
		t.Errorf("list_tasks = %s", listed)
	}
	result := `{"media_buy_id":"mb_async_media_buy_lifecycle_q3","media_buy_status":"pending_creatives","confirmed_at":"2026-08-15T12:00:00Z","revision":1,"currency":"USD",` +
		`"packages":[{"package_id":"pkg_async_media_buy_lifecycle_q3","product_id":"nw_olv_news_preroll","budget":30000,"pricing_option_id":"cpm_usd_floor_news_preroll","paused":false}],` +
		`"context":{"correlation_id":"create_media_buy_async_lifecycle--terminal_result"}}`
	done := kittest.ControlRaw(t, cs, `{"adcp_version":"3.2-beta.5","scenario":"force_task_completion","params":{"task_id":"`+task+`","result":`+result+`},"account":`+account+`}`)
	kittest.MustSucceed(t, done)
	if done["current_state"] != "completed" {
		t.Errorf("force_task_completion = %v", done)
	}
	_, got = kittest.Call(t, cs, "get_task_status", `{"task_id":"`+task+`","include_result":true,"account":`+account+`}`)
	spectest.Validate(t, "protocol/get-task-status-response.json", got)
	var status struct {
		Status string `json:"status"`
		Result struct {
			MediaBuyID string `json:"media_buy_id"`
			Context    struct {
				CorrelationID string `json:"correlation_id"`
			} `json:"context"`
		} `json:"result"`
	}
	_ = json.Unmarshal(got, &status)
	if status.Status != "completed" || status.Result.MediaBuyID != "mb_async_media_buy_lifecycle_q3" || status.Result.Context.CorrelationID != "create_media_buy_async_lifecycle--terminal_result" {
		t.Errorf("get_task_status after completion = %s", got)
	}
	bad := kittest.ControlRaw(t, cs, `{"adcp_version":"3.2-beta.5","scenario":"force_task_completion","params":{"task_id":"`+task+`","result":`+result+`},"account":`+account+`}`)
	if bad["error"] != "INVALID_TRANSITION" {
		t.Errorf("completing the task again = %v, want INVALID_TRANSITION", bad)
	}
}

// TestMediaBuyOverA2A buys over A2A and reads the buy back over MCP: one
// agent, two transports.
func TestMediaBuyOverA2A(t *testing.T) {
	env := testenv.Start(t)
	const account = `{"brand":{"domain":"acme.example"},"operator":"pinnacle-agency.example"}`
	state, payload := a2aTask(t, env, "create_media_buy", `{"adcp_version":"3.2-beta.5","idempotency_key":"a2a-create-00000001","account":`+account+
		`,"brand":{"domain":"acme.example"},"start_time":"asap","end_time":"`+testenv.Day(92)+`T00:00:00Z",`+
		`"packages":[{"product_id":"nw_display_ros_mrec","pricing_option_id":"cpm_usd_floor_ros","budget":5000}]}`)
	m := validateTool(t, "create_media_buy", payload)
	if state != "TASK_STATE_COMPLETED" || m["media_buy_id"] == nil {
		t.Fatalf("A2A create_media_buy: task %s, payload %s", state, payload)
	}
	cs := kittest.Connect(t, env.BaseURL, env.BuyerToken)
	_, read := kittest.Call(t, cs, "get_media_buys", `{"account":`+account+`,"media_buy_ids":["`+m["media_buy_id"].(string)+`"]}`)
	if n := len(kittest.Decode(t, read)["media_buys"].([]any)); n != 1 {
		t.Errorf("the buy made over A2A is not read back over MCP: %s", read)
	}
	// Every release in the one version table, each arm: the A2A task
	// state follows the arm, the payload echoes the pin and validates.
	for i, r := range adcp.Releases() {
		v := r.Version.String()
		for _, arm := range []struct {
			name, budget, state, status string
		}{
			{"completed", "5000", "TASK_STATE_COMPLETED", ""},
			{"refused", "10", "TASK_STATE_FAILED", "failed"},
			{"submitted", "120000", "TASK_STATE_COMPLETED", "submitted"},
		} {
			state, payload := a2aTask(t, env, "create_media_buy", fmt.Sprintf(`{"adcp_version":%q,"idempotency_key":"a2a-%02d-%s-000000","account":%s,`+
				`"brand":{"domain":"acme.example"},"start_time":"%sT00:00:00Z","end_time":"%sT00:00:00Z",`+
				`"packages":[{"product_id":"nw_display_ros_mrec","pricing_option_id":"cpm_usd_floor_ros","budget":%s}]}`,
				v, i, arm.name, account, testenv.Day(8), testenv.Day(63), arm.budget))
			m := validateTool(t, "create_media_buy", payload)
			if m["adcp_version"] != v || state != arm.state || (arm.status != "" && m["status"] != arm.status) {
				t.Errorf("A2A create_media_buy at %s, %s: task %s, payload %s; want %s echoing %s", v, arm.name, state, payload, arm.state, v)
			}
		}
	}
}

// TestFailedMediaBuyTaskStatus declines an order at the desk and polls its
// task, on each store: the failed task's error summary is the typed error
// its result carries (code and message, agreeing with the result's fatal
// error, as get-task-status-response.json requires), with or without
// include_result, so a poll alone says why the buy failed.
func TestFailedMediaBuyTaskStatus(t *testing.T) {
	testenv.OnEachStore(t, func(t *testing.T, env *testenv.Env) {
		const account = `{"brand":{"domain":"acme.example"},"operator":"pinnacle-agency.example"}`
		sub, _ := testenv.CallTool(t, env.BaseURL, env.BuyerToken, "create_media_buy", `{"adcp_version":"3.2-beta.5","idempotency_key":"failed-task-status-0001","account":`+account+
			`,"brand":{"domain":"acme.example"},"start_time":"`+testenv.Day(8)+`T00:00:00Z","end_time":"`+testenv.Day(63)+`T00:00:00Z",`+
			`"packages":[{"product_id":"nw_display_ros_mrec","pricing_option_id":"cpm_usd_floor_ros","budget":120000}]}`)
		taskID, _ := sub["task_id"].(string)
		if sub["status"] != "submitted" || taskID == "" {
			t.Fatalf("a 120,000 USD order = %v, want submitted for the desk", sub)
		}
		res, err := testenv.BearerClient(env.AdminToken).Post(env.BaseURL+"/admin/v1/publishers/northwind/orders/"+taskID+"/decline",
			"application/json", strings.NewReader(`{"slug":"commercially_declined","reason":"We are fully booked for large orders this quarter."}`))
		if err != nil || res.StatusCode != 200 {
			t.Fatalf("declining the order: %v %v", res, err)
		}
		res.Body.Close()
		for _, include := range []bool{false, true} {
			got, _ := testenv.CallTool(t, env.BaseURL, env.BuyerToken, "get_task_status",
				fmt.Sprintf(`{"adcp_version":"3.2-beta.5","task_id":%q,"include_result":%t,"account":%s}`, taskID, include, account))
			raw, _ := json.Marshal(got)
			spectest.Validate(t, "protocol/get-task-status-response.json", raw)
			var status struct {
				Status string `json:"status"`
				Error  *struct {
					Code    string `json:"code"`
					Message string `json:"message"`
				} `json:"error"`
				Result *struct {
					AdcpError struct {
						Code    string `json:"code"`
						Message string `json:"message"`
					} `json:"adcp_error"`
				} `json:"result"`
			}
			_ = json.Unmarshal(raw, &status)
			if status.Status != "failed" || status.Error == nil || status.Error.Code != "POLICY_VIOLATION" ||
				!strings.Contains(status.Error.Message, "We are fully booked for large orders this quarter.") {
				t.Fatalf("get_task_status (include_result %t) = %s, want the failed task's typed error", include, raw)
			}
			if include && (status.Result == nil || status.Result.AdcpError.Code != status.Error.Code || status.Result.AdcpError.Message != status.Error.Message) {
				t.Errorf("the error summary does not agree with the result's fatal error: %s", raw)
			}
		}
	})
}

// TestOrderDeskAtEveryVersion takes the order desk's whole path at every
// release in adcp.Releases(), the one version table: the submitted arm, the
// task polled while it waits, an approval and a decline, each task's
// status and stored result. Every answer echoes the pinned release exactly
// and validates against the official schemas, and so does each stored
// result, written in the release the buyer was served when it ordered.
func TestOrderDeskAtEveryVersion(t *testing.T) {
	env := testenv.Start(t)
	cs := kittest.Connect(t, env.BaseURL, env.BuyerToken)
	admin := testenv.BearerClient(env.AdminToken)
	const account = `{"brand":{"domain":"acme.example"},"operator":"pinnacle-agency.example"}`
	for i, r := range adcp.Releases() {
		v := r.Version.String()
		t.Run(v, func(t *testing.T) {
			pin := `"adcp_version":"` + v + `","context":{"correlation_id":"desk-` + v + `"}`
			echoes := func(what string, m map[string]any, payload []byte) {
				t.Helper()
				if m["adcp_version"] != v {
					t.Errorf("%s served %v, want exactly %s: %s", what, m["adcp_version"], v, payload)
				}
			}
			order := func(n int) string {
				t.Helper()
				_, payload := kittest.Call(t, cs, "create_media_buy", fmt.Sprintf(`{%s,"idempotency_key":"desk-version-%02d-%d-000000","account":%s,"brand":{"domain":"acme.example"},`+
					`"start_time":"%sT00:00:00Z","end_time":"%sT00:00:00Z","packages":[{"product_id":"nw_display_ros_mrec","pricing_option_id":"cpm_usd_floor_ros","budget":120000}]}`,
					pin, i, n, account, testenv.Day(8), testenv.Day(63)))
				m := validateTool(t, "create_media_buy", payload)
				echoes("create_media_buy (submitted)", m, payload)
				if c, _ := m["context"].(map[string]any); c["correlation_id"] != "desk-"+v {
					t.Errorf("the submitted arm did not echo the context: %s", payload)
				}
				id, _ := m["task_id"].(string)
				if m["status"] != "submitted" || id == "" {
					t.Fatalf("a 120,000 USD order = %s, want the submitted arm", payload)
				}
				return id
			}
			poll := func(task, want string) map[string]any {
				t.Helper()
				_, payload := kittest.Call(t, cs, "get_task_status", `{`+pin+`,"task_id":"`+task+`","include_result":true,"account":`+account+`}`)
				spectest.Validate(t, "protocol/get-task-status-response.json", payload)
				m := kittest.Decode(t, payload)
				echoes("get_task_status", m, payload)
				if m["status"] != want {
					t.Fatalf("get_task_status = %s, want %s", payload, want)
				}
				if res, ok := m["result"]; ok {
					raw, _ := json.Marshal(res)
					validateTool(t, "create_media_buy", raw)
					echoes("the stored result", res.(map[string]any), raw)
				}
				return m
			}
			decide := func(task, how, body string) {
				t.Helper()
				res, err := admin.Post(env.BaseURL+"/admin/v1/publishers/northwind/orders/"+task+"/"+how, "application/json", strings.NewReader(body))
				if err != nil || res.StatusCode != 200 {
					t.Fatalf("%s the order: %v %v", how, res, err)
				}
				res.Body.Close()
			}
			approved, declined := order(1), order(2)
			poll(approved, "submitted")
			decide(approved, "approve", `{}`)
			if r := poll(approved, "completed")["result"].(map[string]any); r["media_buy_id"] == nil {
				t.Errorf("the approved task's result = %v, want the buy", r)
			}
			decide(declined, "decline", `{"slug":"commercially_declined","reason":"Not this quarter."}`)
			if e, _ := poll(declined, "failed")["error"].(map[string]any); e["code"] != "POLICY_VIOLATION" {
				t.Errorf("the declined task's error = %v, want POLICY_VIOLATION", e)
			}
		})
	}
}
