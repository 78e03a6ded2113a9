package agent_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/storefront/storefront/adcp"
	"github.com/storefront/storefront/internal/kittest"
	"github.com/storefront/storefront/internal/schemagen"
	"github.com/storefront/storefront/internal/spectest"
	"github.com/storefront/storefront/internal/testenv"
)

// fuzzRequests names the official request schema of every tool the
// sandbox storefront serves. A tool missing here fails the fuzz target's
// set-up, so a new tool cannot go unfuzzed.
var fuzzRequests = map[string]string{
	"get_adcp_capabilities":  "protocol/get-adcp-capabilities-request.json",
	"get_products":           "media-buy/get-products-request.json",
	"get_task_status":        "protocol/get-task-status-request.json",
	"list_tasks":             "protocol/list-tasks-request.json",
	"tasks/get":              "core/tasks-get-request.json",
	"tasks/list":             "core/tasks-list-request.json",
	"comply_test_controller": "compliance/comply-test-controller-request.json",
	"sync_accounts":          "account/sync-accounts-request.json",
	"list_accounts":          "account/list-accounts-request.json",
	"sync_governance":        "account/sync-governance-request.json",
	"create_media_buy":       "media-buy/create-media-buy-request.json",
	"get_media_buys":         "media-buy/get-media-buys-request.json",
	"update_media_buy":       "media-buy/update-media-buy-request.json",
	"get_media_buy_delivery": "media-buy/get-media-buy-delivery-request.json",
}

// fuzzTarget is the storefront a fuzzing process drives: the real program
// in sandbox mode (every tool), called in-process through its HTTP
// handler, so a request goes through the real MCP and A2A transports.
type fuzzTarget struct {
	env      *testenv.Env
	gen      *schemagen.Generator
	tools    []string
	versions []string
	logged   int
	mu       sync.Mutex
}

var (
	fuzzOnce sync.Once
	fuzzEnv  *fuzzTarget
)

func newFuzzTarget(f *testing.F) *fuzzTarget {
	fuzzOnce.Do(func() {
		// The program outlives the first fuzz target that starts it: the
		// fuzzing engine runs the target many times in one process.
		env := testenv.Start(f, append([]string{"--sandbox"}, kittest.FuzzStoreArgs(f)...)...)
		gen, err := schemagen.Load(filepath.Join(spectest.Dir(f), "schemas"))
		if err != nil {
			f.Fatal(err)
		}
		ft := &fuzzTarget{env: env, gen: gen, versions: adcp.SupportedStrings()}
		for _, tool := range listTools(f, env) {
			rel, ok := fuzzRequests[tool]
			if !ok || !gen.Has(rel) {
				f.Fatalf("tool %s has no request schema to fuzz it with (add it to fuzzRequests)", tool)
			}
			ft.tools = append(ft.tools, tool)
		}
		slices.Sort(ft.tools)
		fuzzEnv = ft
	})
	if fuzzEnv == nil {
		f.Fatal("the fuzz target could not start")
	}
	return fuzzEnv
}

// FuzzDispatch drives every tool, at every served version (and unserved
// ones), over MCP and A2A, with documents generated from the tool's
// official request schema and then broken, or with the fuzzer's raw bytes.
// Whatever arrives, the answer is one of the tool's defined arms, valid
// against the official schema for that arm, or a JSON-RPC error that is
// not an internal one; the process never panics, not even into a recover
// boundary.
//
// The inputs: tool, version and credentials pick what is called and by
// whom; mode picks generated (even) or raw (odd) arguments and, for
// generated ones, how many mutations; data is the generator's entropy, or
// the raw arguments.
func FuzzDispatch(f *testing.F) {
	ft := newFuzzTarget(f)
	for i := range ft.tools {
		for _, mode := range []uint8{0, 2, 4} {
			f.Add(uint8(i), uint8(0), uint8(0), mode, []byte{})
			f.Add(uint8(i), uint8(len(ft.versions)-1), uint8(1), mode, []byte("\x01\x07\x03\x05\x02\x06\x04\x07"))
		}
	}
	for _, raw := range []string{
		`{"account":{"account_id":""}}`,
		`{"account":{"account_id":5}}`,
		`{"account":{"brand":null,"operator":"x"}}`,
		`{"buying_mode":"brief","brief":"caf` + "\xff" + `"}`,
		`{"brand":{"domain":"a.example","industries":[null]}}`,
		`{"filters":{"budget_range":{"max":1e400,"currency":"USD"}}}`,
		`{"adcp_version":"3.2-rc.8"}`,
		`{"pagination":{"max_results":-1,"cursor":{}}}`,
		`[]`, `null`, `{`, `{"a":` + strings.Repeat("[", 5000) + strings.Repeat("]", 5000) + `}`,
	} {
		f.Add(uint8(0), uint8(0), uint8(0), uint8(1), []byte(raw))
	}
	f.Fuzz(func(t *testing.T, tool, version, creds, mode uint8, data []byte) {
		ft.run(t, tool, version, creds, mode, data)
	})
}

func (ft *fuzzTarget) run(t *testing.T, toolByte, version, creds, mode uint8, data []byte) {
	tool := ft.tools[int(toolByte)%len(ft.tools)]
	var args []byte
	if mode&1 == 1 {
		args = data
	} else {
		src := schemagen.NewSource(data)
		doc := ft.gen.Generate(fuzzRequests[tool], src)
		if m, ok := doc.(map[string]any); ok {
			// The version pin: every served label, none, and unserved ones.
			switch v := int(version) % (len(ft.versions) + 3); {
			case v < len(ft.versions):
				m["adcp_version"] = ft.versions[v]
				delete(m, "adcp_major_version")
			case v == len(ft.versions):
				delete(m, "adcp_version")
			case v == len(ft.versions)+1:
				m["adcp_version"] = "3.2-rc.8"
			default:
				m["adcp_version"] = "2.5"
			}
		}
		doc = schemagen.Mutate(doc, src, int(mode>>1)%6)
		args = schemagen.Encode(doc)
	}
	token := []string{ft.env.BuyerToken, kittest.Kit, "", "sf_buyer_not_a_real_token", kittest.LiveKit}[int(creds)%5]
	overA2A := creds&0x80 != 0

	var body string
	path := "/mcp"
	if overA2A {
		path = "/a2a"
		body = `{"jsonrpc":"2.0","id":7,"method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"data":{"skill":` +
			kittest.JSONString(tool) + `,"input":` + string(args) + `}}]}}}`
	} else {
		body = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":` + kittest.JSONString(tool) + `,"arguments":` + string(args) + `}}`
	}
	req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if overA2A {
		req.Header.Set("A2A-Extensions", "https://adcontextprotocol.org/extensions/adcp/v3")
	} else {
		req.Header.Set("MCP-Protocol-Version", "2025-06-18")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	rec := httptest.NewRecorder()
	ft.env.Main.Server.Echo.ServeHTTP(rec, req)

	ft.mu.Lock()
	out := ft.env.Output()
	fresh := out[min(ft.logged, len(out)):]
	ft.logged = len(out)
	ft.mu.Unlock()
	if strings.Contains(fresh, "panic") {
		t.Fatalf("%s %s with %q: a panic reached a recover boundary:\n%s", path, tool, args, fresh)
	}
	if rec.Code >= 500 {
		t.Fatalf("%s %s with %q: HTTP %d\n%s", path, tool, args, rec.Code, rec.Body.Bytes())
	}
	if rec.Code == http.StatusUnauthorized || rec.Code == http.StatusForbidden {
		return // refused credentials, at the HTTP layer as security_baseline asks
	}
	payload, err := answerOf(rec.Body.Bytes(), overA2A)
	if err != nil {
		t.Fatalf("%s %s with %q: %v\nHTTP %d %s", path, tool, args, err, rec.Code, rec.Body.Bytes())
	}
	if payload == nil {
		return // a JSON-RPC error of a defined, non-internal kind
	}
	if err := checkArm(t, tool, payload.adcp, payload.failed); err != nil {
		t.Fatalf("%s %s with %q: %v\nanswer: %s", path, tool, args, err, payload.adcp)
	}
}

type answer struct {
	adcp   []byte
	failed bool // the transport's failure marker
}

// answerOf reads the AdCP object out of a transport's answer. A JSON-RPC
// error is a defined answer (nil, nil) unless it is an internal error,
// which no input should cause.
func answerOf(body []byte, overA2A bool) (*answer, error) {
	var rpc struct {
		Error *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
		Result json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal(body, &rpc); err != nil {
		return nil, fmt.Errorf("the answer is not JSON-RPC: %v", err)
	}
	if rpc.Error != nil {
		if rpc.Error.Code == -32603 {
			return nil, fmt.Errorf("JSON-RPC internal error %q", rpc.Error.Message)
		}
		return nil, nil
	}
	if len(rpc.Result) == 0 {
		return nil, fmt.Errorf("JSON-RPC answer with neither result nor error")
	}
	if !overA2A {
		var res struct {
			Content []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
			Structured json.RawMessage `json:"structuredContent"`
			IsError    bool            `json:"isError"`
		}
		if err := json.Unmarshal(rpc.Result, &res); err != nil {
			return nil, fmt.Errorf("tools/call result: %v", err)
		}
		if len(res.Structured) == 0 || len(res.Content) == 0 || res.Content[0].Type != "text" {
			return nil, fmt.Errorf("tools/call result lacks structuredContent or its text mirror")
		}
		if !jsonEqual([]byte(res.Content[0].Text), res.Structured) {
			return nil, fmt.Errorf("content[0].text is not structuredContent")
		}
		return &answer{adcp: res.Structured, failed: res.IsError}, nil
	}
	var res struct {
		Task *struct {
			Status struct {
				State string `json:"state"`
			} `json:"status"`
			Artifacts []struct {
				Parts []struct {
					Data json.RawMessage `json:"data"`
				} `json:"parts"`
			} `json:"artifacts"`
		} `json:"task"`
	}
	if err := json.Unmarshal(rpc.Result, &res); err != nil || res.Task == nil {
		return nil, fmt.Errorf("SendMessage result is not a task")
	}
	for _, a := range res.Task.Artifacts {
		for _, p := range a.Parts {
			if len(p.Data) > 0 {
				return &answer{adcp: p.Data, failed: res.Task.Status.State == "TASK_STATE_FAILED"}, nil
			}
		}
	}
	return nil, fmt.Errorf("task in state %s has no data part", res.Task.Status.State)
}

func jsonEqual(a, b []byte) bool {
	var x, y bytes.Buffer
	if json.Compact(&x, a) != nil || json.Compact(&y, b) != nil {
		return false
	}
	return bytes.Equal(x.Bytes(), y.Bytes())
}

// checkArm requires an answer of one of tool's defined arms, valid against
// the official schema for it, with the transport's failure marker set for
// the failed arm and nothing else.
func checkArm(t *testing.T, tool string, payload []byte, failed bool) error {
	var head struct {
		Status    string            `json:"status"`
		Errors    []json.RawMessage `json:"errors"`
		AdcpError json.RawMessage   `json:"adcp_error"`
		Products  json.RawMessage   `json:"products"`
		Reason    string            `json:"reason"`
	}
	if err := json.Unmarshal(payload, &head); err != nil {
		return fmt.Errorf("the AdCP answer is not an object: %v", err)
	}
	if failed != (head.Status == "failed") {
		return fmt.Errorf("status %q with the failure marker %v", head.Status, failed)
	}
	if tool == "comply_test_controller" {
		// The controller's failures have their own shape (success: false,
		// error, error_detail), which its schema defines.
		return spectest.Check(t, "compliance/comply-test-controller-response.json", payload)
	}
	switch head.Status {
	case "failed":
		if len(head.Errors) == 0 || len(head.AdcpError) == 0 {
			return fmt.Errorf("a failed answer without errors[] and adcp_error")
		}
		for _, e := range append(head.Errors, head.AdcpError) {
			if err := spectest.Check(t, "core/error.json", e); err != nil {
				return fmt.Errorf("error %s: %v", e, err)
			}
			var code struct {
				Code string `json:"code"`
			}
			_ = json.Unmarshal(e, &code)
			if !slices.Contains(adcp.Codes(), code.Code) {
				return fmt.Errorf("error code %q is not in the error table", code.Code)
			}
		}
		return nil
	case "rejected":
		if tool != "get_products" {
			return fmt.Errorf("a rejected arm from %s, which has none", tool)
		}
		if head.Reason == "" || len(head.Products) > 0 || len(head.Errors) > 0 {
			return fmt.Errorf("a rejected arm without a reason, or with products or errors")
		}
	case "completed", "submitted", "working", "input-required":
		if len(head.Errors) > 0 && tool == "get_products" {
			return fmt.Errorf("errors presented as success")
		}
	case "":
		// Protocol tools without an arm (capabilities, task reads) are
		// checked against their schema below.
	default:
		return fmt.Errorf("status %q is no arm", head.Status)
	}
	rel := map[string]string{
		"get_adcp_capabilities":  "protocol/get-adcp-capabilities-response.json",
		"get_task_status":        "protocol/get-task-status-response.json",
		"tasks/get":              "protocol/get-task-status-response.json",
		"list_tasks":             "protocol/list-tasks-response.json",
		"tasks/list":             "protocol/list-tasks-response.json",
		"comply_test_controller": "compliance/comply-test-controller-response.json",
	}[tool]
	switch {
	case tool == "get_products":
		return checkGetProducts(t, head.Status, payload)
	case rel != "":
		return spectest.Check(t, rel, payload)
	}
	return checkMediaBuy(t, tool, payload)
}

func checkGetProducts(t *testing.T, status string, payload []byte) error {
	switch status {
	case "submitted":
		return spectest.Check(t, "media-buy/get-products-async-response-submitted.json", payload)
	case "rejected":
		if err := spectest.Check(t, "media-buy/get-products-rejected.json", payload); err != nil {
			return err
		}
	}
	return spectest.Check(t, "media-buy/get-products-response.json", payload)
}

func checkMediaBuy(t *testing.T, tool string, payload []byte) error {
	_, err := spectest.CheckMediaBuy(t, tool, payload)
	return err
}

// listTools asks the running program's MCP endpoint which tools it serves.
func listTools(t testing.TB, env *testenv.Env) []string {
	req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+kittest.Kit)
	rec := httptest.NewRecorder()
	env.Main.Server.Echo.ServeHTTP(rec, req)
	var list struct {
		Result struct {
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
		} `json:"result"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &list); err != nil || len(list.Result.Tools) == 0 {
		t.Fatalf("tools/list = HTTP %d %s", rec.Code, rec.Body.Bytes())
	}
	var names []string
	for _, tool := range list.Result.Tools {
		names = append(names, tool.Name)
	}
	return names
}
