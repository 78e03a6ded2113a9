package agent_test

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/storefront/storefront/internal/kittest"
	"github.com/storefront/storefront/internal/spectest"
	"github.com/storefront/storefront/internal/testenv"
)

// The storyboard's accounts (media_buy_seller/get_products_async): the
// buyer's sandbox account and another one.
const (
	acmeAccount  = `{"brand":{"domain":"acmeoutdoor.example"},"operator":"pinnacle-agency.example","sandbox":true}`
	otherAccount = `{"brand":{"domain":"otherbrand.example"},"operator":"other-operator.example","sandbox":true}`
)

// terminalResult is the storyboard's completion payload, compact. Its
// description names "Acme Outdoor"; the demo rulebook's notes name "Acme
// Retail Group", which stays confidential as a whole name without making
// "Acme" alone one.
const terminalResult = `{"status":"completed","products":[{"product_id":"async_curated_trail_display","name":"Async curated trail display","description":"Curated display inventory for the Acme Outdoor fall trail campaign.","publisher_properties":[{"publisher_domain":"outdoormagazine.example","selection_type":"all"}],"channels":["display"],"delivery_type":"guaranteed","format_options":[{"format_option_id":"display_300x250","format_kind":"image","params":{"width":300,"height":250}}],"pricing_options":[{"pricing_option_id":"async_curated_trail_cpm","pricing_model":"cpm","currency":"USD","fixed_price":14}],"reporting_capabilities":{"available_reporting_frequencies":["daily"],"expected_delay_minutes":60,"timezone":"UTC","supports_webhooks":false,"available_metrics":["impressions","clicks","spend"],"date_range_support":"date_range"}}],"cache_scope":"public","context":{"correlation_id":"get_products_async--terminal_result"}}`

// hookReceiver is a loopback webhook endpoint: it answers the scripted
// statuses in turn (then 200) and passes every request on.
type hookReceiver struct {
	*httptest.Server
	mu       sync.Mutex
	statuses []int
	got      chan hook
}

type hook struct {
	path   string
	header http.Header
	body   []byte
}

func newHookReceiver(t *testing.T, statuses ...int) *hookReceiver {
	t.Helper()
	r := &hookReceiver{statuses: statuses, got: make(chan hook, 64)}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		status := http.StatusOK
		if len(r.statuses) > 0 {
			status, r.statuses = r.statuses[0], r.statuses[1:]
		}
		r.mu.Unlock()
		r.got <- hook{path: req.URL.Path, header: req.Header.Clone(), body: b}
		w.WriteHeader(status)
	}))
	t.Cleanup(r.Close)
	return r
}

// next waits for the next webhook. The bound is generous: it only stops
// a broken run from hanging, and nothing is asserted about timing.
func (r *hookReceiver) next(t *testing.T) hook {
	t.Helper()
	select {
	case h := <-r.got:
		return h
	case <-time.After(60 * time.Second):
		t.Fatal("no webhook arrived")
		return hook{}
	}
}

// members splits a JSON object into its raw members.
func members(t *testing.T, b []byte) map[string]json.RawMessage {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("not a JSON object: %v\n%s", err, b)
	}
	return m
}

// submit forces the caller's next brief into the submitted arm and sends
// one with push, returning the submitted answer.
func submit(t *testing.T, cs *mcp.ClientSession, taskID, push string) map[string]any {
	t.Helper()
	kittest.MustSucceed(t, kittest.ControlRaw(t, cs, `{"adcp_version":"3.2-beta.5","scenario":"force_get_products_arm","params":{"arm":"submitted","task_id":"`+taskID+`"},"account":`+acmeAccount+`}`))
	args := `{"adcp_version":"3.2-beta.5","buying_mode":"brief","brief":"Curate display and video inventory for an Acme Outdoor fall trail campaign.","pagination":{"max_results":5},"account":` + acmeAccount
	if push != "" {
		args += `,"push_notification_config":` + push
	}
	return kittest.GetProducts(t, cs, args+`}`)
}

// complete runs force_task_completion and returns the controller answer.
func complete(t *testing.T, cs *mcp.ClientSession, taskID, result string) map[string]any {
	t.Helper()
	return kittest.ControlRaw(t, cs, `{"adcp_version":"3.2-beta.5","scenario":"force_task_completion","params":{"task_id":"`+taskID+`","result":`+result+`},"account":`+acmeAccount+`,"context":{"correlation_id":"complete"}}`)
}

// TestAsyncGetProducts walks the media_buy_seller/get_products_async
// storyboard with a real MCP client and a loopback webhook receiver.
func TestAsyncGetProducts(t *testing.T) {
	env := testenv.Start(t, "--sandbox")
	cs := kittest.Connect(t, env.BaseURL, kittest.Kit)
	hooks := newHookReceiver(t)
	const taskID = "task_async_products_acme_q3"

	m := kittest.ControlRaw(t, cs, `{"adcp_version":"3.2-beta.5","scenario":"force_get_products_arm","params":{"arm":"submitted","task_id":"`+taskID+`","message":"Custom product curation queued; typical turnaround 10 minutes"},"account":`+acmeAccount+`,"context":{"correlation_id":"get_products_async--force_submitted"}}`)
	kittest.MustSucceed(t, m)
	if diff := cmp.Diff(map[string]any{"arm": "submitted", "task_id": taskID}, m["forced"]); diff != "" {
		t.Errorf("forced (-want +got):\n%s", diff)
	}

	sub := kittest.GetProducts(t, cs, `{"adcp_version":"3.2-beta.5","idempotency_key":"5f0b7c1e-3d2a-4c57-9a44-2f1e0c9b8d71","buying_mode":"brief",`+
		`"brief":"Curate display and video inventory for an Acme Outdoor fall trail campaign.","pagination":{"max_results":5},"account":`+acmeAccount+`,`+
		`"push_notification_config":{"url":"`+hooks.URL+`/hooks/get_products","operation_id":"op_get_products_async_terminal"},"context":{"correlation_id":"get_products_async--get_products_submitted"}}`)

	kittest.WantStatus(t, sub, "submitted")
	if sub["task_id"] != taskID {
		t.Errorf("task_id = %v, want %s", sub["task_id"], taskID)
	}
	for _, k := range []string{"products", "proposals", "result"} {
		if _, ok := sub[k]; ok {
			t.Errorf("the submitted envelope carries %s", k)
		}
	}

	status := func(t *testing.T, tool, args string) (bool, []byte) {
		t.Helper()
		res, payload := kittest.Call(t, cs, tool, args)
		spectest.Validate(t, "protocol/get-task-status-response.json", payload)
		return res.IsError, payload
	}

	t.Run("get_task_status while submitted", func(t *testing.T) {
		isError, payload := status(t, "get_task_status", `{"task_id":"`+taskID+`","include_result":true,"account":`+acmeAccount+`,"context":{"correlation_id":"poll-1"}}`)
		m := kittest.Decode(t, payload)
		if isError || m["status"] != "submitted" || m["task_id"] != taskID || m["task_type"] != "get_products" || m["protocol"] != "media-buy" {
			t.Errorf("get_task_status = %s, want the submitted get_products task", payload)
		}
		if m["has_webhook"] != true {
			t.Errorf("has_webhook = %v, want true", m["has_webhook"])
		}
		if m["message"] != "Custom product curation queued; typical turnaround 10 minutes" {
			t.Errorf("message = %v", m["message"])
		}
		if _, ok := m["result"]; ok {
			t.Errorf("an unfinished task has a result: %s", payload)
		}
		// The SDK's polling name answers the same.
		_, alias := status(t, "tasks/get", `{"task_id":"`+taskID+`","include_result":true,"account":`+acmeAccount+`,"context":{"correlation_id":"poll-1"}}`)
		if !bytes.Equal(alias, payload) {
			t.Errorf("tasks/get differs from get_task_status:\n%s\n%s", alias, payload)
		}
	})

	t.Run("list_tasks", func(t *testing.T) {
		for _, test := range []struct {
			name, token, args string
			want              int
			applied           []any
		}{
			{"by id, type and webhook", kittest.Kit, `{"account":` + acmeAccount + `,"filters":{"task_ids":["` + taskID + `"],"task_type":"get_products","has_webhook":true},"pagination":{"max_results":1}}`, 1, []any{"task_ids", "task_type", "has_webhook"}},
			{"without a webhook", kittest.Kit, `{"account":` + acmeAccount + `,"filters":{"has_webhook":false}}`, 0, []any{"has_webhook"}},
			{"by status", kittest.Kit, `{"account":` + acmeAccount + `,"filters":{"statuses":["submitted"]}}`, 1, []any{"statuses"}},
			{"another account", kittest.Kit, `{"account":` + otherAccount + `,"filters":{"task_ids":["` + taskID + `"],"task_type":"get_products"},"pagination":{"max_results":1}}`, 0, []any{"task_ids", "task_type"}},
			{"no account", kittest.Kit, `{"filters":{"task_ids":["` + taskID + `"]}}`, 0, []any{"task_ids"}},
			{"another principal", kittest.OtherKit, `{"account":` + acmeAccount + `,"filters":{"task_ids":["` + taskID + `"]}}`, 0, []any{"task_ids"}},
		} {
			t.Run(test.name, func(t *testing.T) {
				caller := cs
				if test.token != kittest.Kit {
					caller = kittest.Connect(t, env.BaseURL, test.token)
				}
				for _, tool := range []string{"list_tasks", "tasks/list"} {
					res, payload := kittest.Call(t, caller, tool, test.args)
					spectest.Validate(t, "protocol/list-tasks-response.json", payload)
					m := kittest.Decode(t, payload)
					q := m["query_summary"].(map[string]any)
					tasks := m["tasks"].([]any)
					if res.IsError || q["total_matching"] != float64(test.want) || q["returned"] != float64(test.want) || len(tasks) != test.want {
						t.Errorf("%s(%s) = %s, want %d tasks", tool, test.args, payload, test.want)
						continue
					}
					if diff := cmp.Diff(test.applied, q["filters_applied"]); diff != "" {
						t.Errorf("%s filters_applied (-want +got):\n%s", tool, diff)
					}
					if test.want == 1 {
						task := tasks[0].(map[string]any)
						if task["task_id"] != taskID || task["task_type"] != "get_products" || task["domain"] != "media-buy" || task["status"] != "submitted" || task["has_webhook"] != true {
							t.Errorf("%s tasks[0] = %v", tool, task)
						}
					}
				}
			})
		}
	})

	// Another account, another principal and no task at all get the same
	// answer: nothing says the task exists elsewhere.
	t.Run("get_task_status is owner-scoped", func(t *testing.T) {
		var answers []map[string]any
		for _, test := range []struct{ token, args string }{
			{kittest.Kit, `{"task_id":"` + taskID + `","include_result":true,"account":` + otherAccount + `}`},
			{kittest.Kit, `{"task_id":"` + taskID + `","include_result":true}`},
			{kittest.OtherKit, `{"task_id":"` + taskID + `","include_result":true,"account":` + acmeAccount + `}`},
			{env.BuyerToken, `{"task_id":"` + taskID + `","include_result":true,"account":` + acmeAccount + `}`},
			{kittest.Kit, `{"task_id":"no_such_task","include_result":true,"account":` + acmeAccount + `}`},
		} {
			res, payload := kittest.Call(t, kittest.Connect(t, env.BaseURL, test.token), "get_task_status", test.args)
			m := kittest.Decode(t, payload)
			e, _ := m["adcp_error"].(map[string]any)
			if !res.IsError || m["status"] != "failed" || e["code"] != "REFERENCE_NOT_FOUND" {
				t.Errorf("get_task_status(%s) = %s, want REFERENCE_NOT_FOUND", test.args, payload)
			}
			// get-task-status-response.json describes a task; a lookup
			// that finds none is the error arm, whose error is core/error.json.
			spectest.Validate(t, "core/error.json", []byte(kittest.JSONOf(t, e)))
			answers = append(answers, e)
		}
		for _, a := range answers[1:] {
			if diff := cmp.Diff(answers[0], a); diff != "" {
				t.Errorf("REFERENCE_NOT_FOUND answers differ (-first +other):\n%s", diff)
			}
		}
	})

	t.Run("completion", func(t *testing.T) {
		m := complete(t, cs, taskID, terminalResult)
		kittest.MustSucceed(t, m)
		if m["previous_state"] != "submitted" || m["current_state"] != "completed" {
			t.Errorf("transition = %v -> %v, want submitted -> completed", m["previous_state"], m["current_state"])
		}
		if _, ok := m["forced"]; ok {
			t.Errorf("a StateTransitionSuccess carries forced: %v", m)
		}

		isError, payload := status(t, "get_task_status", `{"task_id":"`+taskID+`","include_result":true,"account":`+acmeAccount+`,"context":{"correlation_id":"poll-2"}}`)
		got := members(t, payload)
		if isError || string(got["status"]) != `"completed"` || got["completed_at"] == nil || string(got["has_webhook"]) != "true" {
			t.Errorf("get_task_status after completion = %s", payload)
		}
		if !bytes.Equal(got["result"], []byte(terminalResult)) {
			t.Errorf("result is not what the task was completed with:\n got %s\nwant %s", got["result"], terminalResult)
		}
		spectest.GetProducts(t, got["result"])
		_, payload = status(t, "get_task_status", `{"task_id":"`+taskID+`","account":`+acmeAccount+`}`)
		if _, ok := members(t, payload)["result"]; ok {
			t.Errorf("a poll without include_result has the result: %s", payload)
		}

		again := complete(t, cs, taskID, terminalResult)
		if again["success"] != false || again["error"] != "INVALID_TRANSITION" {
			t.Errorf("a second completion = %v, want INVALID_TRANSITION", again)
		}
	})

	t.Run("terminal webhook", func(t *testing.T) {
		h := hooks.next(t)
		if h.path != "/hooks/get_products" {
			t.Errorf("webhook path = %s", h.path)
		}
		spectest.Validate(t, "core/mcp-webhook-payload.json", h.body)
		p := members(t, h.body)
		for k, want := range map[string]string{
			"operation_id": `"op_get_products_async_terminal"`, "task_id": `"` + taskID + `"`,
			"task_type": `"get_products"`, "protocol": `"media-buy"`, "status": `"completed"`,
		} {
			if string(p[k]) != want {
				t.Errorf("webhook %s = %s, want %s", k, p[k], want)
			}
		}
		if !regexp.MustCompile(`^"[A-Za-z0-9_.:-]{16,255}"$`).Match(p["idempotency_key"]) {
			t.Errorf("webhook idempotency_key = %s", p["idempotency_key"])
		}
		if !bytes.Equal(p["result"], []byte(terminalResult)) {
			t.Errorf("webhook result is not verbatim:\n got %s\nwant %s", p["result"], terminalResult)
		}
	})
}

// TestAsyncWebhookDelivery: the terminal webhook is retried through
// receiver failures with one idempotency key and timestamp, carries the
// buyer's authentication, and reports a rejected ending too.
func TestAsyncWebhookDelivery(t *testing.T) {
	env := testenv.Start(t, "--sandbox")
	cs := kittest.Connect(t, env.BaseURL, kittest.Kit)
	const secret = "whsec-0123456789abcdef0123456789abcdef"
	const rejected = `{"status":"rejected","reason":"The fall trail package is sold out.","suggestions":["Move the flight to November."],"context":{"correlation_id":"terminal-rejected"}}`
	for _, test := range []struct {
		name     string
		statuses []int
		auth     string
		result   string
		check    func(t *testing.T, h hook)
	}{
		{name: "503 twice then 200", statuses: []int{503, 503}, result: terminalResult},
		{name: "bearer", auth: `,"authentication":{"schemes":["Bearer"],"credentials":"` + secret + `"}`, result: terminalResult,
			check: func(t *testing.T, h hook) {
				if got := h.header.Get("Authorization"); got != "Bearer "+secret {
					t.Errorf("Authorization = %q", got)
				}
			}},
		{name: "HMAC-SHA256", auth: `,"authentication":{"schemes":["HMAC-SHA256"],"credentials":"` + secret + `"}`, result: terminalResult,
			check: func(t *testing.T, h hook) {
				ts := h.header.Get("X-ADCP-Timestamp")
				if want := "sha256=" + hmacHex(secret, ts+"."+string(h.body)); h.header.Get("X-ADCP-Signature") != want || ts == "" {
					t.Errorf("X-ADCP-Timestamp %q, X-ADCP-Signature %q; want the signature %s", ts, h.header.Get("X-ADCP-Signature"), want)
				}
				if h.header.Get("Authorization") != "" {
					t.Error("a signed webhook also carries Authorization")
				}
			}},
		{name: "rejected ending", result: rejected,
			check: func(t *testing.T, h hook) {
				var p struct {
					Status string `json:"status"`
					Result struct {
						Status string `json:"status"`
						Reason string `json:"reason"`
					} `json:"result"`
				}
				_ = json.Unmarshal(h.body, &p)
				if p.Status != "rejected" || p.Result.Status != "rejected" || p.Result.Reason != "The fall trail package is sold out." {
					t.Errorf("webhook = %s, want the rejected ending", h.body)
				}
			}},
	} {
		t.Run(test.name, func(t *testing.T) {
			hooks := newHookReceiver(t, test.statuses...)
			taskID := "task_" + strings.NewReplacer(" ", "_", "-", "_").Replace(test.name)
			sub := submit(t, cs, taskID, `{"url":"`+hooks.URL+`/hook","operation_id":"op_`+taskID+`"`+test.auth+`}`)
			kittest.WantStatus(t, sub, "submitted")
			m := complete(t, cs, taskID, test.result)
			kittest.MustSucceed(t, m)
			var want struct{ Status string }
			_ = json.Unmarshal([]byte(test.result), &want)
			if m["current_state"] != want.Status {
				t.Errorf("current_state = %v, want %s", m["current_state"], want.Status)
			}

			var got []hook
			for range len(test.statuses) + 1 {
				got = append(got, hooks.next(t))
			}
			for i, h := range got {
				spectest.Validate(t, "core/mcp-webhook-payload.json", h.body)
				if !bytes.Equal(h.body, got[0].body) {
					t.Errorf("attempt %d body differs from the first:\n%s\n%s", i+1, h.body, got[0].body)
				}
				if test.check != nil {
					test.check(t, h)
				}
			}
			p := members(t, got[0].body)
			if !bytes.Equal(p["result"], []byte(test.result)) {
				t.Errorf("webhook result is not verbatim:\n got %s\nwant %s", p["result"], test.result)
			}

			_, payload := kittest.Call(t, cs, "get_task_status", `{"task_id":"`+taskID+`","include_result":true,"account":`+acmeAccount+`}`)
			spectest.Validate(t, "protocol/get-task-status-response.json", payload)
			if s := members(t, payload); string(s["status"]) != `"`+want.Status+`"` || !bytes.Equal(s["result"], []byte(test.result)) {
				t.Errorf("get_task_status = %s, want %s with the result", payload, want.Status)
			}
		})
	}
}

func hmacHex(secret, msg string) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(msg))
	return hex.EncodeToString(mac.Sum(nil))
}

// TestAsyncRefusals: a submitted call whose webhook the storefront cannot
// honour is refused, and no task is created.
func TestAsyncRefusals(t *testing.T) {
	env := testenv.Start(t, "--sandbox")
	cs := kittest.Connect(t, env.BaseURL, kittest.Kit)
	hooks := newHookReceiver(t)
	for _, test := range []struct {
		name, push, field string
	}{
		{"no operation_id", `{"url":"` + hooks.URL + `/hook"}`, "push_notification_config.operation_id"},
		{"public http", `{"url":"http://buyer.example/hook","operation_id":"op-1"}`, "push_notification_config.url"},
		{"private address", `{"url":"https://10.1.2.3/hook","operation_id":"op-1"}`, "push_notification_config.url"},
		{"link-local metadata address", `{"url":"http://169.254.169.254/latest","operation_id":"op-1"}`, "push_notification_config.url"},
	} {
		t.Run(test.name, func(t *testing.T) {
			taskID := "task_refused_" + strings.ReplaceAll(test.name, " ", "_")
			got := submit(t, cs, taskID, test.push)
			kittest.WantStatus(t, got, "failed")
			found := false
			for _, e := range got["errors"].([]any) {
				e := e.(map[string]any)
				found = found || (e["code"] == "INVALID_REQUEST" && e["field"] == test.field)
			}
			if !found {
				t.Errorf("errors = %v, want INVALID_REQUEST at %s", got["errors"], test.field)
			}
			_, payload := kittest.Call(t, cs, "list_tasks", `{"account":`+acmeAccount+`,"filters":{"task_ids":["`+taskID+`"]}}`)
			if n := len(kittest.Decode(t, payload)["tasks"].([]any)); n != 0 {
				t.Errorf("a refused call created %d tasks", n)
			}
		})
	}
}

// rawCall sends one MCP tools/call as the exact bytes given, as a client
// that does not re-encode JSON would (the Go SDK escapes &, < and >), and
// returns the AdCP object.
func rawCall(t *testing.T, base, token, tool, args string) (bool, []byte) {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + tool + `","arguments":` + args + `}}`
	req, err := http.NewRequest(http.MethodPost, base+"/mcp", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var rpc struct {
		Result struct {
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
			IsError bool `json:"isError"`
		} `json:"result"`
	}
	if err := json.Unmarshal(b, &rpc); err != nil || len(rpc.Result.Content) == 0 {
		t.Fatalf("tools/call %s: %d %s", tool, resp.StatusCode, b)
	}
	return rpc.Result.IsError, []byte(rpc.Result.Content[0].Text)
}

// TestAsyncResultVerbatim: a result is handed back exactly as the task
// was completed with it, by get_task_status and by the webhook, even with
// characters a JSON encoder would escape and spacing it would remove.
func TestAsyncResultVerbatim(t *testing.T) {
	env := testenv.Start(t, "--sandbox")
	cs := kittest.Connect(t, env.BaseURL, kittest.Kit)
	hooks := newHookReceiver(t)
	const taskID = "task_verbatim"
	const result = "{\"status\": \"rejected\",\n  \"reason\": \"Q4 & Q1 are sold out for <premium> video.\",\n  \"suggestions\": [\"Move the flight to February.\"]}"
	kittest.WantStatus(t, submit(t, cs, taskID, `{"url":"`+hooks.URL+`/hook","operation_id":"op_verbatim"}`), "submitted")

	isError, payload := rawCall(t, env.BaseURL, kittest.Kit, "comply_test_controller",
		`{"adcp_version":"3.2-beta.5","scenario":"force_task_completion","params":{"task_id":"`+taskID+`","result":`+result+`},"account":`+acmeAccount+`}`)
	if isError {
		t.Fatalf("completion failed: %s", payload)
	}

	_, payload = kittest.Call(t, cs, "get_task_status", `{"task_id":"`+taskID+`","include_result":true,"account":`+acmeAccount+`}`)
	spectest.Validate(t, "protocol/get-task-status-response.json", payload)
	if got := members(t, payload)["result"]; !bytes.Equal(got, []byte(result)) {
		t.Errorf("get_task_status result is not verbatim:\n got %s\nwant %s", got, result)
	}
	h := hooks.next(t)
	spectest.Validate(t, "core/mcp-webhook-payload.json", h.body)
	if got := members(t, h.body)["result"]; !bytes.Equal(got, []byte(result)) {
		t.Errorf("webhook result is not verbatim:\n got %s\nwant %s", got, result)
	}
}
