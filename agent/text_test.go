package agent_test

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
	"unicode/utf8"

	"github.com/storefront/storefront/agent"
	"github.com/storefront/storefront/demo"
	"github.com/storefront/storefront/internal/kittest"
	"github.com/storefront/storefront/internal/spectest"
	"github.com/storefront/storefront/internal/testenv"
	"github.com/storefront/storefront/store/pgstore/pgtest"
)

// onBothStores runs fn against the real program on each store, with the
// demo seeded.
func onBothStores(t *testing.T, fn func(t *testing.T, env *testenv.Env)) {
	for _, tc := range []struct {
		name string
		args func(t *testing.T) []string
	}{
		{"memstore", func(*testing.T) []string { return nil }},
		{"postgres", func(t *testing.T) []string { return []string{"--database-url", pgtest.NewDatabase(t), "--seed-demo"} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fn(t, testenv.Start(t, tc.args(t)...))
		})
	}
}

// rpcResult is the AdCP object of a raw MCP tools/call answer.
func rpcResult(t *testing.T, p kittest.Probe) (map[string]any, bool) {
	t.Helper()
	res, _ := p.Body["result"].(map[string]any)
	if res == nil {
		t.Fatalf("no result: %d %v", p.Status, p.Body)
	}
	sc, _ := res["structuredContent"].(map[string]any)
	isErr, _ := res["isError"].(bool)
	return sc, isErr
}

// wantError fails unless m is the failed arm with an error of code at
// field.
func wantError(t *testing.T, what string, m map[string]any, code, field string) {
	t.Helper()
	if m["status"] != "failed" {
		t.Fatalf("%s: status = %v, want failed: %v", what, m["status"], m)
	}
	errs, _ := m["errors"].([]any)
	for _, e := range errs {
		if e := e.(map[string]any); e["code"] == code && e["field"] == field {
			return
		}
	}
	t.Errorf("%s: errors = %v, want %s at %s", what, errs, code, field)
}

// TestBuyerTextRefused: text a buyer sends that is not text (invalid
// UTF-8, which encoding/json would silently read as U+FFFD; a lone
// surrogate; a NUL; a control character) or a null in an array is refused,
// on every task and on both stores. It used to be served: a brief with
// invalid UTF-8 was answered "completed", brand.industries:[null] was read
// as an empty industry. Over the real MCP and A2A transports a body with
// bytes that are not UTF-8, an escaped NUL or a lone surrogate is no
// request (rpc: a JSON-RPC parse error or invalid request, and no tool
// runs); every tool still refuses such text itself, naming the field, as
// an in-process dispatch shows, and the rest is refused by the tool over
// the wire.
func TestBuyerTextRefused(t *testing.T) {
	const (
		parse   = -32700
		invalid = -32600
	)
	account := `"account":{"brand":{"domain":"acme.example"},"operator":"pinnacle-agency.example"}`
	buy := `"start_time":"asap","end_time":"` + testenv.Day(40) + `T00:00:00Z","brand":{"domain":"acme.example"},` + account
	pkg := `"product_id":"nw_display_ros_mrec","pricing_option_id":"cpm_usd_floor_ros","budget":5000`
	onBothStores(t, func(t *testing.T, env *testenv.Env) {
		url := env.BaseURL + "/mcp"
		for _, test := range []struct {
			name, tool, args, code, field string
			rpc                           int
		}{
			{"invalid UTF-8 in a brief", "get_products", "{\"buying_mode\":\"brief\",\"brief\":\"caf\xe9 culture\"}", "VALIDATION_ERROR", "brief", parse},
			{"a lone surrogate in a brief", "get_products", `{"buying_mode":"brief","brief":"a \ud800 b"}`, "VALIDATION_ERROR", "brief", invalid},
			{"a NUL in a brief", "get_products", `{"buying_mode":"brief","brief":"a\u0000b"}`, "VALIDATION_ERROR", "brief", invalid},
			{"an escape sequence in a brief", "get_products", `{"buying_mode":"brief","brief":"\u001b[31mred"}`, "VALIDATION_ERROR", "brief", 0},
			{"invalid UTF-8 in a brand industry", "get_products", "{\"buying_mode\":\"brief\",\"brief\":\"x\",\"brand\":{\"domain\":\"acme.example\",\"industries\":[\"re\xfftail\"]}}", "VALIDATION_ERROR", "brand.industries[0]", parse},
			{"a null brand industry", "get_products", `{"buying_mode":"brief","brief":"x","brand":{"domain":"acme.example","industries":[null]}}`, "INVALID_REQUEST", "brand.industries[0]", 0},
			{"a null channel", "get_products", `{"buying_mode":"brief","brief":"x","filters":{"channels":[null]}}`, "INVALID_REQUEST", "filters.channels[0]", 0},
			{"invalid UTF-8 in an account id", "get_products", "{\"buying_mode\":\"brief\",\"brief\":\"x\",\"account\":{\"account_id\":\"acct\xff\"}}", "VALIDATION_ERROR", "account.account_id", parse},
			{"invalid UTF-8 in the context", "get_products", "{\"buying_mode\":\"brief\",\"brief\":\"x\",\"context\":{\"trace\":\"\xff\"}}", "VALIDATION_ERROR", "context.trace", parse},
			{"invalid UTF-8 in a po number", "create_media_buy", "{\"idempotency_key\":\"text-create-0000000001\",\"po_number\":\"PO\xff\"," + buy + ",\"packages\":[{" + pkg + "}]}", "VALIDATION_ERROR", "po_number", parse},
			{"invalid UTF-8 in a package name", "create_media_buy", "{\"idempotency_key\":\"text-create-0000000002\"," + buy + ",\"packages\":[{" + pkg + ",\"name\":\"pk\xff\"}]}", "VALIDATION_ERROR", "packages[0].name", parse},
			{"a null package", "create_media_buy", `{"idempotency_key":"text-create-0000000003",` + buy + `,"packages":[null]}`, "INVALID_REQUEST", "packages[0]", 0},
			{"invalid UTF-8 in a media buy id", "get_media_buys", "{\"media_buy_ids\":[\"mb\xff\"]}", "VALIDATION_ERROR", "media_buy_ids[0]", parse},
			{"invalid UTF-8 in a billing", "sync_accounts", "{\"idempotency_key\":\"text-sync-00000000001\",\"accounts\":[{\"brand\":{\"domain\":\"acme.example\"},\"operator\":\"pinnacle-agency.example\",\"billing\":\"oper\xffator\"}]}", "INVALID_REQUEST", "accounts[0].billing", parse},
			{"invalid UTF-8 in a task id", "get_task_status", "{\"task_id\":\"task\xff\"}", "VALIDATION_ERROR", "task_id", parse},
			{"a NUL in a task filter", "list_tasks", `{"filters":{"statuses":["completed\u0000"]}}`, "INVALID_REQUEST", "filters.statuses[0]", invalid},
		} {
			t.Run(test.name, func(t *testing.T) {
				if test.rpc != 0 {
					// Over A2A, whose library reads the message before any
					// tool could see the bytes, the text is refused as
					// JSON-RPC; over MCP the tool refuses it (below).
					for _, p := range []kittest.Probe{
						kittest.ProbeA2A(t, env.BaseURL+"/a2a", env.BuyerToken, test.tool, test.args),
					} {
						e, _ := p.Body["error"].(map[string]any)
						if code, _ := e["code"].(float64); int(code) != test.rpc || p.Body["result"] != nil {
							t.Errorf("the body = %d %v, want the JSON-RPC error %d", p.Status, p.Body, test.rpc)
						}
					}
					// The tool refuses the same text itself, naming the
					// field, whoever dispatches it.
					r, err := env.Main.Server.Agent().Dispatch(context.Background(), test.tool, agent.Call{
						Publisher: demo.PublisherID, Authorization: "Bearer " + env.BuyerToken, Args: []byte(test.args), Transport: "dispatch"})
					if err != nil || !r.Failed {
						t.Fatalf("Dispatch = %v, %s, want the failed arm", err, r.Payload)
					}
					wantError(t, test.tool+" dispatched", kittest.Decode(t, r.Payload), test.code, test.field)
					if !utf8.Valid(r.Payload) {
						t.Errorf("the answer is not valid UTF-8: %q", r.Payload)
					}
					if bytes.Contains(r.Payload, []byte(`"context"`)) && test.field == "context.trace" {
						t.Errorf("a context that is not valid Unicode was echoed: %s", r.Payload)
					}
				}
				p := kittest.ProbeMCP(t, url, env.BuyerToken, test.tool, test.args)
				m, isErr := rpcResult(t, p)
				if !isErr {
					t.Errorf("isError = false for %s", test.name)
				}
				wantError(t, test.tool, m, test.code, test.field)
				raw, _ := json.Marshal(m)
				if test.tool == "get_products" {
					spectest.GetProducts(t, raw)
				}
				if test.rpc == 0 {
					_, data := a2aTask(t, env, test.tool, test.args)
					wantError(t, test.tool+" over A2A", kittest.Decode(t, data), test.code, test.field)
				}
			})
		}
		// The buyer's own objects keep their text as sent: a control
		// character in the context or an ext is theirs to echo.
		p := kittest.ProbeMCP(t, url, "", "get_products", `{"buying_mode":"brief","brief":"coffee\nvideo","context":{"note":"tab\there \u0007"},"ext":{"x":"\u0001"}}`)
		if m, isErr := rpcResult(t, p); isErr || m["status"] != "completed" || m["context"].(map[string]any)["note"] != "tab\there \a" {
			t.Errorf("a brief with line breaks and a context with control characters = %v, want completed with the context echoed", m)
		}
	})
}

// TestTaskOfAnotherAccount: get_task_status and list_tasks naming an
// account the caller may not use answer as for a task that does not
// exist: REFERENCE_NOT_FOUND, and an empty list. On PostgreSQL they used
// to send the store a "\x00unknown" account it refused, answered as a
// transient SERVICE_UNAVAILABLE.
func TestTaskOfAnotherAccount(t *testing.T) {
	onBothStores(t, func(t *testing.T, env *testenv.Env) {
		url := env.BaseURL + "/mcp"
		status := func(args string) map[string]any {
			m, _ := rpcResult(t, kittest.ProbeMCP(t, url, env.BuyerToken, "get_task_status", args))
			return m
		}
		missing := status(`{"task_id":"task_nope"}`)
		wantError(t, "get_task_status(no such task)", missing, "REFERENCE_NOT_FOUND", "task_id")
		for _, account := range []string{
			`{"account_id":"acct_of_someone_else"}`,
			`{"brand":{"domain":"otherbrand.example"},"operator":"other-operator.example"}`,
		} {
			got := status(`{"task_id":"task_nope","account":` + account + `}`)
			wantError(t, "get_task_status(account "+account+")", got, "REFERENCE_NOT_FOUND", "task_id")
			if a, b := kittest.JSONOf(t, got), kittest.JSONOf(t, missing); a != b {
				t.Errorf("another account's task = %s\nwant the answer for a task that does not exist: %s", a, b)
			}
			m, isErr := rpcResult(t, kittest.ProbeMCP(t, url, env.BuyerToken, "list_tasks", `{"account":`+account+`}`))
			if isErr || m["status"] != "completed" || len(m["tasks"].([]any)) != 0 {
				t.Errorf("list_tasks(account %s) = %v, want completed with no tasks", account, m)
			}
		}
	})
}

// TestTestKitKeyIsAnIdentifier: in sandbox mode a demo- key is the
// principal's id, kept with each decision; one that is not an identifier
// (here with a byte that is not UTF-8, which PostgreSQL cannot keep) is an
// unknown token, refused before any call runs.
func TestTestKitKeyIsAnIdentifier(t *testing.T) {
	env := testenv.Start(t, "--sandbox")
	url := env.BaseURL + "/mcp"
	args := `{"buying_mode":"brief","brief":"coffee video"}`
	if p := kittest.ProbeMCP(t, url, kittest.Kit, "get_products", args); p.Status != 200 {
		t.Fatalf("the kit key = %d %v, want it accepted", p.Status, p.Body)
	}
	for _, key := range []string{"demo-acme\xff-v1", "demo-acme outdoor", "demo-<script>"} {
		if p := kittest.ProbeMCP(t, url, key, "get_products", args); p.Status != 401 {
			t.Errorf("key %q = %d %v, want 401", key, p.Status, p.Body)
		}
	}
	// What a compliance scenario seeds is stored and served: its text is
	// checked as a task's (dispatched in-process: over MCP a body that is
	// not UTF-8 is refused before any tool).
	r, err := env.Main.Server.Agent().Dispatch(context.Background(), "comply_test_controller", agent.Call{Publisher: demo.PublisherID,
		Authorization: "Bearer " + kittest.Kit, Transport: "dispatch",
		Args: []byte("{\"adcp_version\":\"3.2-rc.7\",\"scenario\":\"force_get_products_arm\",\"params\":{\"arm\":\"rejected\",\"reason\":\"caf\xe9\"},\"account\":" + acmeAccount + "}")})
	if m := kittest.Decode(t, r.Payload); err != nil || m["success"] != false || m["error"] != "INVALID_PARAMS" {
		t.Errorf("a scenario with invalid UTF-8 = %v, %v, want INVALID_PARAMS", m, err)
	}
}
