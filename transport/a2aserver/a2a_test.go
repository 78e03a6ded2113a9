package a2aserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
	"github.com/a2aproject/a2a-go/v2/a2aext"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/storefront/storefront/internal/kittest"
	"github.com/storefront/storefront/internal/spectest"
	"github.com/storefront/storefront/internal/testenv"
	"github.com/storefront/storefront/products"
	"github.com/storefront/storefront/transport/a2aserver"
	"github.com/storefront/storefront/vocab"
)

// recorder is an HTTP transport that sends a bearer token and keeps the
// last response's headers: the a2a-go client cannot show response
// headers, and the activated extensions travel in one.
type recorder struct {
	token string
	mu    sync.Mutex
	last  http.Header
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	if r.token != "" {
		req.Header.Set("Authorization", "Bearer "+r.token)
	}
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err == nil {
		r.mu.Lock()
		r.last = resp.Header.Clone()
		r.mu.Unlock()
	}
	return resp, err
}

func (r *recorder) header() http.Header {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.last
}

// client is the a2a-go 1.0 client, built from the storefront's card at
// base, activating exts (those the card lists).
func client(t *testing.T, base, token string, exts ...string) (*a2aclient.Client, *recorder) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	card, err := agentcard.DefaultResolver.Resolve(ctx, base)
	if err != nil {
		t.Fatalf("resolving the agent card at %s: %v", base, err)
	}
	rec := &recorder{token: token}
	c, err := a2aclient.NewFromCard(ctx, card,
		a2aclient.WithJSONRPCTransport(&http.Client{Transport: rec, Timeout: 30 * time.Second}),
		a2aclient.WithCallInterceptors(a2aext.NewActivator(exts...)))
	if err != nil {
		t.Fatalf("a2a client from card: %v", err)
	}
	t.Cleanup(func() { _ = c.Destroy() })
	return c, rec
}

// invoke sends one profile invocation and returns the task.
func invoke(t *testing.T, c *a2aclient.Client, skill, input string) *a2a.Task {
	t.Helper()
	task, err := send(c, skill, input)
	if err != nil {
		t.Fatalf("SendMessage(%s, %s): %v", skill, input, err)
	}
	return task
}

func send(c *a2aclient.Client, skill, input string) (*a2a.Task, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var in map[string]any
	if err := json.Unmarshal([]byte(input), &in); err != nil {
		return nil, err
	}
	res, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser,
		a2a.NewDataPart(map[string]any{"skill": skill, "input": in}))})
	if err != nil {
		return nil, err
	}
	task, ok := res.(*a2a.Task)
	if !ok {
		return nil, errors.New("SendMessage did not return a task")
	}
	return task, nil
}

// payload checks the artifact shape every answer has (one artifact whose
// last part is the AdCP object, any part before it text) and returns the
// AdCP object as JSON.
func payload(t *testing.T, task *a2a.Task) []byte {
	t.Helper()
	if len(task.Artifacts) != 1 || len(task.Artifacts[0].Parts) == 0 {
		t.Fatalf("task has %d artifacts, want one with parts", len(task.Artifacts))
	}
	parts := task.Artifacts[0].Parts
	for _, p := range parts[:len(parts)-1] {
		if _, ok := p.Content.(a2a.Text); !ok {
			t.Errorf("artifacts[0] has a %T part before the AdCP object", p.Content)
		}
	}
	data, ok := parts[len(parts)-1].Content.(a2a.Data)
	if !ok {
		t.Fatalf("artifacts[0]'s last part is %T, want data", parts[len(parts)-1].Content)
	}
	if _, ok := data.Value.(map[string]any); !ok {
		t.Fatalf("the AdCP object is %T, want a JSON object", data.Value)
	}
	b, err := json.Marshal(data.Value)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func decode(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("not a JSON object: %v\n%s", err, b)
	}
	return m
}

// withoutReceipt is the AdCP object without its ledger receipt, which
// differs on every call.
func withoutReceipt(t *testing.T, b []byte) map[string]any {
	t.Helper()
	m := decode(t, b)
	if ext, ok := m["ext"].(map[string]any); ok {
		if ns, ok := ext["io.github.storefront"].(map[string]any); ok {
			delete(ns, "receipt")
		}
	}
	return m
}

// mcpCall makes the same call over MCP and returns the AdCP object.
func mcpCall(t *testing.T, base, token, tool, args string) (*mcp.CallToolResult, []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := mcp.NewClient(&mcp.Implementation{Name: "a2a-test", Version: "0"}, nil)
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: testenv.BearerClient(token), DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatalf("connecting the MCP client: %v", err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: json.RawMessage(args)})
	if err != nil {
		t.Fatalf("MCP CallTool(%s): %v", tool, err)
	}
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	return res, b
}

func mcpTools(t *testing.T, base string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := mcp.NewClient(&mcp.Implementation{Name: "a2a-test", Version: "0"}, nil)
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/mcp", DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	return names
}

func get(t *testing.T, url string) (int, []byte) {
	t.Helper()
	return kittest.Get(t, url)
}

// rpc posts a raw JSON-RPC body with extra headers and returns the status,
// the response headers and the decoded body.
func rpc(t *testing.T, url, body string, headers ...string) (int, http.Header, map[string]any) {
	t.Helper()
	resp, b := post(t, url, body, headers...)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	if m == nil && resp.StatusCode == http.StatusOK {
		t.Fatalf("POST %s: body is not a JSON object: %s", url, b)
	}
	return resp.StatusCode, resp.Header, m
}

// post posts a raw JSON-RPC body with extra headers and returns the
// response, its body read and closed.
func post(t *testing.T, url, body string, headers ...string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Add(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

var profileHeader = []string{"A2A-Extensions", a2aserver.ProfileURI}

func TestCard(t *testing.T) {
	env := testenv.Start(t)
	var cards [][]byte
	for _, path := range []string{"/.well-known/agent-card.json", "/a2a/.well-known/agent-card.json"} {
		status, b := get(t, env.BaseURL+path)
		if status != http.StatusOK {
			t.Fatalf("GET %s: %d %s", path, status, b)
		}
		cards = append(cards, b)
	}
	if !bytes.Equal(cards[0], cards[1]) {
		t.Error("the card under /a2a differs from the card at the origin")
	}
	raw := cards[0]
	var card struct {
		Name                string `json:"name"`
		URL                 string `json:"url"`
		ProtocolVersion     string `json:"protocolVersion"`
		SupportedInterfaces []struct {
			URL, ProtocolBinding, ProtocolVersion string
		} `json:"supportedInterfaces"`
		Capabilities struct {
			Extensions []map[string]json.RawMessage `json:"extensions"`
		} `json:"capabilities"`
		DefaultInputModes  []string `json:"defaultInputModes"`
		DefaultOutputModes []string `json:"defaultOutputModes"`
		Skills             []struct {
			ID, Name, Description string
		} `json:"skills"`
	}
	if err := json.Unmarshal(raw, &card); err != nil {
		t.Fatal(err)
	}
	if want := env.BaseURL + "/a2a"; card.URL != want {
		t.Errorf("card url = %q, want %q", card.URL, want)
	}
	if card.Name != "Northwind Media" {
		t.Errorf("card name = %q, want the publisher's", card.Name)
	}
	var versions []string
	for _, i := range card.SupportedInterfaces {
		if i.URL != card.URL || i.ProtocolBinding != "JSONRPC" {
			t.Errorf("interface %+v, want JSONRPC at %s", i, card.URL)
		}
		versions = append(versions, i.ProtocolVersion)
	}
	if diff := cmp.Diff([]string{"1.0", "0.3"}, versions); diff != "" {
		t.Errorf("supportedInterfaces versions (-want +got):\n%s", diff)
	}
	if !slices.Equal(card.DefaultInputModes, []string{"application/json"}) || !slices.Equal(card.DefaultOutputModes, []string{"application/json"}) {
		t.Errorf("default modes = %v / %v, want application/json", card.DefaultInputModes, card.DefaultOutputModes)
	}

	// Skills are the tool catalogue, ids equal to the task names: the
	// same list MCP's tools/list gives.
	var ids []string
	for _, s := range card.Skills {
		ids = append(ids, s.ID)
	}
	// The card lists skills in catalogue order, tools/list by name.
	if diff := cmp.Diff(mcpTools(t, env.BaseURL), ids, cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
		t.Errorf("skill ids differ from MCP tools/list (-mcp +card):\n%s", diff)
	}
	if !slices.Contains(ids, "get_adcp_capabilities") || !slices.Contains(ids, "get_products") {
		t.Errorf("skills %v lack get_adcp_capabilities or get_products", ids)
	}
	if slices.Contains(ids, "comply_test_controller") {
		t.Error("the card offers comply_test_controller outside sandbox mode")
	}

	exts := map[string]map[string]json.RawMessage{}
	for _, e := range card.Capabilities.Extensions {
		var uri string
		_ = json.Unmarshal(e["uri"], &uri)
		exts[uri] = e
	}
	profile := exts[a2aserver.ProfileURI]
	if profile == nil || string(profile["required"]) != "true" {
		t.Errorf("AdCP v3 profile extension = %v, want required: true", profile)
	}
	if _, ok := profile["params"]; ok {
		t.Error("the AdCP v3 profile extension carries params; the profile forbids them")
	}
	refusals := exts[a2aserver.RefusalURI]
	if refusals == nil {
		t.Fatalf("the card lacks the refusal extension: %s", raw)
	}
	// "required": false must be on the wire, not dropped as a zero value.
	if r, ok := refusals["required"]; !ok || string(r) != "false" {
		t.Errorf("refusal extension required = %s, want a literal false", r)
	}
	var params map[string]string
	if err := json.Unmarshal(refusals["params"], &params); err != nil {
		t.Fatal(err)
	}
	kebab := regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)
	for k, v := range params {
		if !kebab.MatchString(k) {
			t.Errorf("refusal rule %q is not kebab case", k)
		}
		if v == "" || strings.Contains(v, "\n") {
			t.Errorf("refusal rule %q has reason %q, want one line", k, v)
		}
	}
	want := map[string]string{}
	for _, e := range vocab.Vocabulary() {
		want[strings.ReplaceAll(string(e.Slug), "_", "-")] = e.Reason
	}
	if diff := cmp.Diff(want, params); diff != "" {
		t.Errorf("refusal params differ from the decline vocabulary (-want +got):\n%s", diff)
	}
	// Public slugs only: no internal rule id or rule name from the demo
	// rulebook reaches the card.
	for _, secret := range []string{"MR-", "Lighthouse", "FreeWheel", "Whitfield", "YLD-4471"} {
		if bytes.Contains(raw, []byte(secret)) {
			t.Errorf("the card contains the internal term %q", secret)
		}
	}

	// Both a2a-go card parsers read it.
	if _, err := agentcard.DefaultCardParser(raw); err != nil {
		t.Errorf("the A2A 1.0 parser rejects the card: %v", err)
	}
	if c, err := a2av0.NewAgentCardParser()(raw); err != nil {
		t.Errorf("the A2A 0.3 parser rejects the card: %v", err)
	} else if len(c.Skills) != len(ids) {
		t.Errorf("the 0.3 parser sees %d skills, want %d", len(c.Skills), len(ids))
	}

	if status, _ := get(t, env.BaseURL+"/p/nope/.well-known/agent-card.json"); status != http.StatusNotFound {
		t.Errorf("card of an unknown publisher: status %d, want 404", status)
	}
}

func TestCardSandbox(t *testing.T) {
	env := testenv.Start(t, "--sandbox")
	_, raw := get(t, env.BaseURL+"/.well-known/agent-card.json")
	var card struct {
		Skills []struct{ ID string } `json:"skills"`
	}
	if err := json.Unmarshal(raw, &card); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, s := range card.Skills {
		ids = append(ids, s.ID)
	}
	// The card lists skills in catalogue order, tools/list by name.
	if diff := cmp.Diff(mcpTools(t, env.BaseURL), ids, cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
		t.Errorf("sandbox skill ids differ from MCP tools/list (-mcp +card):\n%s", diff)
	}
	if !slices.Contains(ids, "comply_test_controller") {
		t.Errorf("sandbox card lacks comply_test_controller: %v", ids)
	}
}

// TestArmsMatchMCP sends the same requests over A2A 1.0 and MCP: the AdCP
// objects are the same apart from the ledger receipt, and the transport
// markers follow the arm.
func TestArmsMatchMCP(t *testing.T) {
	env := testenv.Start(t)
	c, _ := client(t, env.BaseURL, "", a2aserver.ProfileURI)
	for _, test := range []struct {
		name, args string
		wantArm    string
		wantState  a2a.TaskState
	}{
		{"completed", `{"adcp_version":"3.2-beta.5","buying_mode":"brief","brief":"Coffee brand launch video","filters":{"channels":["olv"]},"pagination":{"max_results":2},"context":{"correlation_id":"a2a-completed"}}`, "completed", a2a.TaskStateCompleted},
		{"completed_empty", `{"adcp_version":"3.2-beta.5","buying_mode":"wholesale","filters":{"channels":["olv"],"delivery_type":"guaranteed","format_kinds":["audio_hosted"]}}`, "completed", a2a.TaskStateCompleted},
		{"rejected_budget", `{"adcp_version":"3.2-beta.5","buying_mode":"brief","brief":"Coffee brand launch video","filters":{"budget_range":{"max":100,"currency":"USD"}},"context":{"correlation_id":"a2a-rejected"}}`, "rejected", a2a.TaskStateCompleted},
		{"rejected_final", `{"adcp_version":"3.2-beta.4","buying_mode":"brief","brief":"Online casino welcome bonus"}`, "rejected", a2a.TaskStateCompleted},
		{"failed_invalid", `{"adcp_version":"3.2-beta.5","buying_mode":"brief","brief":42}`, "failed", a2a.TaskStateFailed},
		{"legacy_decline", `{"adcp_version":"3.1","buying_mode":"brief","brief":"Coffee brand launch video","filters":{"budget_range":{"max":100,"currency":"USD"}}}`, "failed", a2a.TaskStateFailed},
	} {
		t.Run(test.name, func(t *testing.T) {
			task := invoke(t, c, "get_products", test.args)
			if task.Status.State != test.wantState {
				t.Errorf("task state = %s, want %s", task.Status.State, test.wantState)
			}
			got := payload(t, task)
			if arm := spectest.GetProducts(t, got); arm != test.wantArm {
				t.Errorf("status = %q, want %q\n%s", arm, test.wantArm, got)
			}
			res, viaMCP := mcpCall(t, env.BaseURL, "", "get_products", test.args)
			if res.IsError != (test.wantState == a2a.TaskStateFailed) {
				t.Errorf("MCP isError = %v while the A2A task is %s", res.IsError, task.Status.State)
			}
			if diff := cmp.Diff(withoutReceipt(t, viaMCP), withoutReceipt(t, got)); diff != "" {
				t.Errorf("A2A and MCP payloads differ (-mcp +a2a):\n%s", diff)
			}
			parts := task.Artifacts[0].Parts
			switch test.wantArm {
			case "completed":
				if len(parts) != 1 {
					t.Errorf("a completed answer has %d parts, want the data part alone", len(parts))
				}
			case "rejected":
				if len(parts) != 2 || parts[0].Text() != decode(t, got)["reason"] {
					t.Errorf("a rejection's artifact should lead with its reason as text, got %v", parts)
				}
			case "failed":
				if len(parts) != 2 || parts[0].Text() == "" {
					t.Errorf("a failure's artifact should carry a short text part, got %v", parts)
				}
				if _, ok := decode(t, got)["adcp_error"]; !ok {
					t.Errorf("failed task data lacks adcp_error: %s", got)
				}
			}
			msg := task.Status.Message
			if test.wantState != a2a.TaskStateFailed {
				if msg != nil {
					t.Errorf("a status message without the refusal extension: %v", msg)
				}
				return
			}
			// A failed task's status message carries the screened line
			// and the typed error, so a client that reads only the status
			// shows the reason.
			if msg == nil || len(msg.Parts) != 2 {
				t.Fatalf("failed task status message = %v, want a text part and the typed error", msg)
			}
			if msg.Role != a2a.MessageRoleAgent || msg.Parts[0].Text() != parts[0].Text() {
				t.Errorf("status message text = %q (role %s), want the artifact's %q", msg.Parts[0].Text(), msg.Role, parts[0].Text())
			}
			typed, _ := json.Marshal(msg.Parts[1].Data())
			want, _ := json.Marshal(map[string]any{"adcp_error": decode(t, got)["adcp_error"]})
			if !bytes.Equal(typed, want) {
				t.Errorf("status message data = %s, want the payload's typed error %s", typed, want)
			}
		})
	}
}

func TestCapabilities(t *testing.T) {
	env := testenv.Start(t)
	c, _ := client(t, env.BaseURL, "", a2aserver.ProfileURI)
	task := invoke(t, c, "get_adcp_capabilities", `{"adcp_version":"3.2-beta.5","context":{"correlation_id":"caps"}}`)
	if task.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("state = %s", task.Status.State)
	}
	got := payload(t, task)
	spectest.Validate(t, "protocol/get-adcp-capabilities-response.json", got)
	_, viaMCP := mcpCall(t, env.BaseURL, "", "get_adcp_capabilities", `{"adcp_version":"3.2-beta.5","context":{"correlation_id":"caps"}}`)
	if diff := cmp.Diff(decode(t, viaMCP), decode(t, got)); diff != "" {
		t.Errorf("capabilities differ between MCP and A2A (-mcp +a2a):\n%s", diff)
	}
	ext := decode(t, got)["ext"].(map[string]any)["io.github.storefront"].(map[string]any)
	if v, _ := ext["decline_vocabulary"].([]any); len(v) != len(vocab.Vocabulary()) {
		t.Errorf("capabilities publish %d vocabulary entries, want %d", len(v), len(vocab.Vocabulary()))
	}
}

// TestRawBytes checks that A2A 1.0 carries the agent's JSON as written,
// field order and all: the bytes MCP carries. (0.3 through a2a-go goes
// through its map-based converter, so there only the values are the same;
// on the fast path 0.3 carries the agent's bytes as well.)
func TestRawBytes(t *testing.T) {
	env := testenv.Start(t)
	req, err := http.NewRequest(http.MethodPost, env.BaseURL+"/a2a", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"data":{"skill":"get_adcp_capabilities","input":{}}}]}}}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("A2A-Extensions", a2aserver.ProfileURI)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	wire, _ := io.ReadAll(resp.Body)
	if !bytes.Contains(wire, []byte(`"parts":[{"data":{"status":"completed","adcp_version":"3.1","adcp":{`)) {
		t.Errorf("the AdCP object is not carried as the agent wrote it:\n%s", wire)
	}
}

// TestA2A03 speaks A2A 0.3 message/send as the @adcp/sdk client does:
// no extension header, arguments under "parameters".
func TestA2A03(t *testing.T) {
	env := testenv.Start(t)
	args := `{"adcp_version":"3.2-beta.5","buying_mode":"brief","brief":"Coffee brand launch video","filters":{"budget_range":{"max":100,"currency":"USD"}}}`
	_, viaMCP := mcpCall(t, env.BaseURL, "", "get_products", args)
	for _, key := range []string{"parameters", "input"} {
		t.Run(key, func(t *testing.T) {
			status, hdr, m := rpc(t, env.BaseURL+"/a2a", `{"jsonrpc":"2.0","id":7,"method":"message/send","params":{"message":{"messageId":"m1","role":"user","kind":"message","contextId":"ctx-1","parts":[{"kind":"data","data":{"skill":"get_products","`+key+`":`+args+`}}]}}}`)
			if status != http.StatusOK || m["error"] != nil {
				t.Fatalf("status %d, body %v", status, m)
			}
			if m["id"] != 7.0 {
				t.Errorf("JSON-RPC id = %v, want 7", m["id"])
			}
			res := m["result"].(map[string]any)
			if res["kind"] != "task" || res["status"].(map[string]any)["state"] != "completed" {
				t.Fatalf("result = %v, want a completed 0.3 task", res)
			}
			if res["contextId"] != "ctx-1" {
				t.Errorf("contextId = %v, want the caller's ctx-1", res["contextId"])
			}
			parts := res["artifacts"].([]any)[0].(map[string]any)["parts"].([]any)
			last := parts[len(parts)-1].(map[string]any)
			if last["kind"] != "data" {
				t.Fatalf("last part = %v, want kind data", last)
			}
			got, _ := json.Marshal(last["data"])
			spectest.GetProducts(t, got)
			if diff := cmp.Diff(withoutReceipt(t, viaMCP), withoutReceipt(t, got)); diff != "" {
				t.Errorf("A2A 0.3 and MCP payloads differ (-mcp +a2a):\n%s", diff)
			}
			if v := hdr.Get("X-A2A-Extensions") + hdr.Get("A2A-Extensions"); v != "" {
				t.Errorf("extensions echoed (%q) though none was requested", v)
			}
			if res["status"].(map[string]any)["message"] != nil {
				t.Error("a status message without the refusal extension")
			}
		})
	}

	// A 3.1 buyer's decline is the error arm in a failed 0.3 task; its
	// status message says why, as text and as the typed error.
	status, _, m := rpc(t, env.BaseURL+"/a2a", `{"jsonrpc":"2.0","id":8,"method":"message/send","params":{"message":{"messageId":"m2","role":"user","kind":"message","parts":[{"kind":"data","data":{"skill":"get_products","parameters":{"adcp_version":"3.1","buying_mode":"brief","brief":"Coffee brand launch video","filters":{"budget_range":{"max":100,"currency":"USD"}}}}}]}}}`)
	if status != http.StatusOK || m["error"] != nil {
		t.Fatalf("status %d, body %v", status, m)
	}
	st := m["result"].(map[string]any)["status"].(map[string]any)
	if st["state"] != "failed" {
		t.Fatalf("state = %v, want failed", st["state"])
	}
	msg, _ := st["message"].(map[string]any)
	parts, _ := msg["parts"].([]any)
	if msg["role"] != "agent" || len(parts) != 2 {
		t.Fatalf("status message = %v, want an agent message with two parts", msg)
	}
	text, _ := parts[0].(map[string]any)["text"].(string)
	typed, _ := parts[1].(map[string]any)["data"].(map[string]any)
	ae, _ := typed["adcp_error"].(map[string]any)
	if text == "" || ae["code"] != "BUDGET_TOO_LOW" || ae["message"] != text || ae["recovery"] != "correctable" {
		t.Errorf("status message parts = %v, want the reason and a BUDGET_TOO_LOW typed error carrying it", parts)
	}
}

// TestRefusalExtension activates the refusal extension on 1.0 and 0.3.
func TestRefusalExtension(t *testing.T) {
	env := testenv.Start(t)
	_, rawCard := get(t, env.BaseURL+"/.well-known/agent-card.json")
	rules := map[string]string{}
	var card struct {
		Capabilities struct {
			Extensions []struct {
				URI    string            `json:"uri"`
				Params map[string]string `json:"params"`
			} `json:"extensions"`
		} `json:"capabilities"`
	}
	_ = json.Unmarshal(rawCard, &card)
	for _, e := range card.Capabilities.Extensions {
		if e.URI == a2aserver.RefusalURI {
			rules = e.Params
		}
	}
	const declined = `{"adcp_version":"3.2-beta.5","buying_mode":"brief","brief":"Billboards for a coffee launch","filters":{"channels":["dooh"]}}`

	checkRefusal := func(t *testing.T, refusal map[string]any, reason string) {
		t.Helper()
		rule, _ := refusal["rule"].(string)
		if _, ok := rules[rule]; !ok {
			t.Errorf("refusal rule %q is not a key of the card's map", rule)
		}
		if rule != "channel-not-offered" {
			t.Errorf("rule = %q, want channel-not-offered", rule)
		}
		if refusal["reason"] != rules[rule] {
			t.Errorf("refusal reason %q is not the card's line %q", refusal["reason"], rules[rule])
		}
		if d, ok := refusal["detail"]; ok && d != reason {
			t.Errorf("refusal detail %q is not the screened reason %q", d, reason)
		}
	}

	t.Run("1.0", func(t *testing.T) {
		c, rec := client(t, env.BaseURL, "", a2aserver.ProfileURI, a2aserver.RefusalURI)
		task := invoke(t, c, "get_products", declined)
		got := payload(t, task)
		if arm := spectest.GetProducts(t, got); arm != "rejected" || task.Status.State != a2a.TaskStateCompleted {
			t.Fatalf("arm %s in a %s task, want rejected in a completed task", arm, task.Status.State)
		}
		echoed := rec.header().Get("A2A-Extensions")
		for _, uri := range []string{a2aserver.ProfileURI, a2aserver.RefusalURI} {
			if !strings.Contains(echoed, uri) {
				t.Errorf("A2A-Extensions response header %q lacks %s", echoed, uri)
			}
		}
		msg := task.Status.Message
		if msg == nil || len(msg.Parts) != 2 {
			t.Fatalf("status message = %v, want a text part and a refusal part", msg)
		}
		reason := decode(t, got)["reason"].(string)
		if msg.Parts[0].Text() != reason {
			t.Errorf("refusal text part = %q, want the reason %q", msg.Parts[0].Text(), reason)
		}
		if msg.Parts[1].MediaType != a2aserver.RefusalMediaType {
			t.Errorf("refusal part media type = %q", msg.Parts[1].MediaType)
		}
		refusal, _ := msg.Parts[1].Data().(map[string]any)
		checkRefusal(t, refusal, reason)

		// A completed answer carries no refusal, though the extension is
		// active.
		ok := invoke(t, c, "get_products", `{"buying_mode":"brief","brief":"coffee video"}`)
		if ok.Status.Message != nil {
			t.Errorf("a completed answer carries a status message: %v", ok.Status.Message)
		}
	})

	t.Run("1.0 not activated", func(t *testing.T) {
		c, rec := client(t, env.BaseURL, "", a2aserver.ProfileURI)
		task := invoke(t, c, "get_products", declined)
		if task.Status.Message != nil {
			t.Errorf("refusal parts without activation: %v", task.Status.Message)
		}
		if h := rec.header().Get("A2A-Extensions"); h != a2aserver.ProfileURI {
			t.Errorf("A2A-Extensions response header = %q, want the profile alone", h)
		}
	})

	t.Run("0.3", func(t *testing.T) {
		_, hdr, m := rpc(t, env.BaseURL+"/a2a", `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"messageId":"m1","role":"user","kind":"message","parts":[{"kind":"data","data":{"skill":"get_products","parameters":`+declined+`}}]}}}`,
			"X-A2A-Extensions", "https://example.com/other/v1, "+a2aserver.RefusalURI)
		if h := hdr.Get("X-A2A-Extensions"); h != a2aserver.RefusalURI {
			t.Errorf("X-A2A-Extensions response header = %q, want the refusal extension alone", h)
		}
		res := m["result"].(map[string]any)
		parts := res["artifacts"].([]any)[0].(map[string]any)["parts"].([]any)
		adcp := parts[len(parts)-1].(map[string]any)["data"].(map[string]any)
		if adcp["status"] != "rejected" {
			t.Fatalf("artifacts[0] holds %v, want the AdCP rejected arm", adcp)
		}
		msg, _ := res["status"].(map[string]any)["message"].(map[string]any)
		mparts, _ := msg["parts"].([]any)
		if len(mparts) != 2 {
			t.Fatalf("status message = %v, want two parts", msg)
		}
		if p := mparts[0].(map[string]any); p["kind"] != "text" || p["text"] != adcp["reason"] {
			t.Errorf("first part = %v, want the reason as text", p)
		}
		p := mparts[1].(map[string]any)
		if md, _ := p["metadata"].(map[string]any); md["mediaType"] != a2aserver.RefusalMediaType {
			t.Errorf("0.3 refusal part metadata = %v, want mediaType %s", p["metadata"], a2aserver.RefusalMediaType)
		}
		checkRefusal(t, p["data"].(map[string]any), adcp["reason"].(string))
	})
}

// TestIdempotentReplay: a replayed rejection is still a rejection on
// A2A, the reason text first and the refusal part intact, though the
// agent's replay carries no summary line.
func TestIdempotentReplay(t *testing.T) {
	env := testenv.Start(t)
	c, _ := client(t, env.BaseURL, "", a2aserver.ProfileURI, a2aserver.RefusalURI)
	const args = `{"adcp_version":"3.2-beta.5","idempotency_key":"a2a-replay-0001-abcdef","buying_mode":"brief","brief":"Billboards for a coffee launch","filters":{"channels":["dooh"]}}`
	first := invoke(t, c, "get_products", args)
	again := invoke(t, c, "get_products", args)
	m := decode(t, payload(t, again))
	if m["replayed"] != true || m["status"] != "rejected" || again.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("second call: replayed %v, status %v in a %s task; want a replayed rejection in a completed task", m["replayed"], m["status"], again.Status.State)
	}
	for _, task := range []*a2a.Task{first, again} {
		parts := task.Artifacts[0].Parts
		if len(parts) != 2 || parts[0].Text() == "" {
			t.Errorf("a rejection's artifact should lead with text, got %v", parts)
		}
		if msg := task.Status.Message; msg == nil || len(msg.Parts) != 2 {
			t.Errorf("refusal parts = %v, want text and refusal", msg)
		} else if r, _ := msg.Parts[1].Data().(map[string]any); r["rule"] != "channel-not-offered" {
			t.Errorf("refusal = %v, want rule channel-not-offered", r)
		}
	}
}

func errorMeta(m map[string]any) (code float64, reason, breach string) {
	e, _ := m["error"].(map[string]any)
	code, _ = e["code"].(float64)
	data, _ := e["data"].([]any)
	for _, d := range data {
		d, _ := d.(map[string]any)
		if r, ok := d["reason"].(string); ok {
			reason = r
			md, _ := d["metadata"].(map[string]any)
			breach, _ = md["adcp_profile_error"].(string)
		}
	}
	return code, reason, breach
}

// TestBadInput sends malformed calls over both versions. Each gets a
// JSON-RPC error naming what was wrong, or the AdCP error arm for a bad
// AdCP request, and the storefront keeps serving.
func TestBadInput(t *testing.T) {
	env := testenv.Start(t)
	url := env.BaseURL + "/a2a"
	v1 := func(parts string) string {
		return `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":` + parts + `}}}`
	}
	v0 := func(parts string) string {
		return `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"messageId":"m1","role":"user","kind":"message","parts":` + parts + `}}}`
	}
	const ok1 = `{"data":{"skill":"get_adcp_capabilities","input":{}}}`
	// Skills other than public discovery need credentials (without them
	// the call is a 401, TestAuthHTTP), so the unknown ones are asked for
	// with a buyer's.
	buyer := []string{"Authorization", "Bearer " + env.BuyerToken}
	buyerV1 := append(slices.Clone(profileHeader), buyer...)
	for _, test := range []struct {
		name       string
		body       string
		headers    []string
		wantCode   float64
		wantBreach string
	}{
		{"1.0 profile not activated", v1(`[` + ok1 + `]`), nil, -32008, "extension_not_activated"},
		{"1.0 no parts", v1(`[]`), profileHeader, -32602, "missing_invocation_datapart"},
		{"1.0 no data part", v1(`[{"text":"get me products"}]`), profileHeader, -32602, "missing_invocation_datapart"},
		{"1.0 several data parts", v1(`[` + ok1 + `,{"data":{"skill":"get_products","input":{}}}]`), profileHeader, -32602, "multiple_invocation_dataparts"},
		{"1.0 advisory text is fine", v1(`[{"text":"AdCP task"},` + ok1 + `]`), profileHeader, 0, ""},
		{"1.0 unknown skill", v1(`[{"data":{"skill":"acquire_rights","input":{}}}]`), buyerV1, -32602, "unknown_skill"},
		{"1.0 controller outside sandbox", v1(`[{"data":{"skill":"comply_test_controller","input":{"scenario":"list_scenarios"}}}]`), buyerV1, -32602, "unknown_skill"},
		{"1.0 input is an array", v1(`[{"data":{"skill":"get_products","input":["brief"]}}]`), profileHeader, -32602, "invalid_input"},
		{"1.0 input is a string", v1(`[{"data":{"skill":"get_products","input":"coffee"}}]`), profileHeader, -32602, "invalid_input"},
		{"1.0 input is null", v1(`[{"data":{"skill":"get_products","input":null}}]`), profileHeader, -32602, "invalid_input"},
		{"1.0 data is not an object", v1(`[{"data":["get_products"]}]`), profileHeader, -32602, "invalid_invocation_shape"},
		{"1.0 no skill", v1(`[{"data":{"input":{}}}]`), profileHeader, -32602, "invalid_invocation_shape"},
		{"1.0 skill not a string", v1(`[{"data":{"skill":7,"input":{}}}]`), profileHeader, -32602, "invalid_invocation_shape"},
		{"1.0 parameters", v1(`[{"data":{"skill":"get_products","parameters":{}}}]`), profileHeader, -32602, "invalid_invocation_shape"},
		{"1.0 file part", v1(`[` + ok1 + `,{"url":"https://cdn.example/creative.mp4","mediaType":"video/mp4"}]`), profileHeader, -32602, "unsupported_part_type"},
		{"1.0 no messageId", `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"role":"ROLE_USER","parts":[` + ok1 + `]}}}`, profileHeader, -32602, "invalid_a2a_message"},
		{"1.0 continuing a task", `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m","taskId":"t1","role":"ROLE_USER","parts":[` + ok1 + `]}}}`, profileHeader, -32001, ""},
		{"1.0 GetTask", `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"t1"}}`, profileHeader, -32001, ""},
		{"1.0 unknown method", `{"jsonrpc":"2.0","id":1,"method":"Frobnicate","params":{}}`, nil, -32601, ""},
		{"malformed JSON", `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":`, nil, -32700, ""},
		// A message that is not the user's, and text no request may
		// carry, used to be served as a call.
		{"1.0 an unknown role", `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_KING","parts":[` + ok1 + `]}}}`, profileHeader, -32602, "invalid_a2a_message"},
		{"1.0 the agent's role", `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_AGENT","parts":[` + ok1 + `]}}}`, profileHeader, -32602, "invalid_a2a_message"},
		{"0.3 the agent's role", `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"messageId":"m1","role":"agent","kind":"message","parts":[{"kind":"data","data":{"skill":"get_adcp_capabilities"}}]}}}`, nil, -32602, "invalid_a2a_message"},
		{"1.0 invalid UTF-8", v1("[{\"data\":{\"skill\":\"get_products\",\"input\":{\"buying_mode\":\"brief\",\"brief\":\"caf\xe9\"}}}]"), profileHeader, -32700, ""},
		{"1.0 an escaped NUL", v1(`[{"data":{"skill":"get_products","input":{"buying_mode":"brief","brief":"a\u0000b"}}}]`), profileHeader, -32600, ""},
		{"0.3 an escaped lone surrogate", v0(`[{"kind":"data","data":{"skill":"get_products","parameters":{"buying_mode":"brief","brief":"\udc00"}}}]`), nil, -32600, ""},
		{"0.3 no data part", v0(`[{"kind":"text","text":"products please"}]`), nil, -32602, "missing_invocation_datapart"},
		{"0.3 no parts", v0(`[]`), nil, -32602, "missing_invocation_datapart"},
		{"0.3 several data parts", v0(`[{"kind":"data","data":{"skill":"get_products","parameters":{}}},{"kind":"data","data":{"skill":"get_products","parameters":{}}}]`), nil, -32602, "multiple_invocation_dataparts"},
		{"0.3 unknown skill", v0(`[{"kind":"data","data":{"skill":"sync_creatives","parameters":{}}}]`), buyer, -32602, "unknown_skill"},
		{"0.3 input not an object", v0(`[{"kind":"data","data":{"skill":"get_products","parameters":[1,2]}}]`), nil, -32602, "invalid_input"},
		{"0.3 input and parameters", v0(`[{"kind":"data","data":{"skill":"get_products","parameters":{},"input":{}}}]`), nil, -32602, "invalid_invocation_shape"},
		{"0.3 file part", v0(`[{"kind":"data","data":{"skill":"get_products","parameters":{}}},{"kind":"file","file":{"uri":"https://cdn.example/x.mp4","mimeType":"video/mp4"}}]`), nil, -32602, "unsupported_part_type"},
		{"0.3 tasks/get", `{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"t1"}}`, nil, -32001, ""},
		{"0.3 extension not required", v0(`[{"kind":"data","data":{"skill":"get_adcp_capabilities"}}]`), nil, 0, ""},
	} {
		t.Run(test.name, func(t *testing.T) {
			status, _, m := rpc(t, url, test.body, test.headers...)
			if status != http.StatusOK {
				t.Fatalf("HTTP status %d, want 200 with a JSON-RPC answer", status)
			}
			if test.wantCode == 0 {
				if m["error"] != nil {
					t.Fatalf("error %v, want a result", m["error"])
				}
				return
			}
			code, reason, breach := errorMeta(m)
			if code != test.wantCode {
				t.Errorf("JSON-RPC error code = %v (%s), want %v: %v", code, reason, test.wantCode, m)
			}
			if breach != test.wantBreach {
				t.Errorf("adcp_profile_error = %q, want %q: %v", breach, test.wantBreach, m)
			}
			if m["result"] != nil {
				t.Errorf("an error answer also carries a result: %v", m)
			}
		})
	}

	t.Run("AdCP-level errors are the error arm", func(t *testing.T) {
		c, _ := client(t, env.BaseURL, "", a2aserver.ProfileURI)
		task := invoke(t, c, "get_products", `{"buying_mode":"auction","brief":"coffee"}`)
		if task.Status.State != a2a.TaskStateFailed {
			t.Fatalf("state = %s, want failed", task.Status.State)
		}
		e, _ := decode(t, payload(t, task))["adcp_error"].(map[string]any)
		if e["code"] != "INVALID_REQUEST" || e["field"] != "buying_mode" {
			t.Errorf("adcp_error = %v, want INVALID_REQUEST at buying_mode", e)
		}
	})

	t.Run("HTTP", func(t *testing.T) {
		if status, _, _ := rpc(t, env.BaseURL+"/p/nope/a2a", v1(`[`+ok1+`]`), profileHeader...); status != http.StatusNotFound {
			t.Errorf("unknown publisher: status %d, want 404", status)
		}
		big := v1(`[{"data":{"skill":"get_products","input":{"brief":"` + strings.Repeat("x", 2<<20) + `"}}}]`)
		if status, _, _ := rpc(t, url, big, profileHeader...); status != http.StatusRequestEntityTooLarge {
			t.Errorf("2 MiB body: status %d, want 413", status)
		}
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusMethodNotAllowed {
			t.Errorf("GET /a2a: status %d, want 405", resp.StatusCode)
		}
	})

	t.Run("streaming is declined, not crashed", func(t *testing.T) {
		// The card says streaming: false, so the a2a-go client would not
		// even try; a raw caller gets the unsupported-operation error as
		// the stream's one event.
		for _, body := range []string{
			strings.Replace(v1(`[`+ok1+`]`), `"SendMessage"`, `"SendStreamingMessage"`, 1),
			strings.Replace(v0(`[{"kind":"data","data":{"skill":"get_products","parameters":{}}}]`), `"message/send"`, `"message/stream"`, 1),
		} {
			req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
			req.Header.Set("A2A-Extensions", a2aserver.ProfileURI)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK || !bytes.Contains(b, []byte(`"code":-32004`)) {
				t.Errorf("streaming call: status %d, body %s; want the unsupported-operation error", resp.StatusCode, b)
			}
		}
	})

	// Still serving, and nothing panicked.
	c, _ := client(t, env.BaseURL, "", a2aserver.ProfileURI)
	if task := invoke(t, c, "get_adcp_capabilities", `{}`); task.Status.State != a2a.TaskStateCompleted {
		t.Errorf("after the bad inputs, capabilities state = %s", task.Status.State)
	}
	if out := env.Output(); strings.Contains(strings.ToLower(out), "panic") {
		t.Errorf("the storefront logged a panic:\n%s", out)
	}
}

// TestPublishers serves a second publisher under /p/:publisher: its own
// card, name and endpoint, and its own pipeline.
func TestPublishers(t *testing.T) {
	env := testenv.Start(t)
	ctx := context.Background()
	if err := env.Main.Store.PutPublisher(ctx, products.Publisher{ID: "harbor", Name: "Harbor Radio", Domain: "harbor.example", AnonymousDiscovery: true}); err != nil {
		t.Fatal(err)
	}
	base := env.BaseURL + "/p/harbor"
	status, raw := get(t, base+"/.well-known/agent-card.json")
	if status != http.StatusOK {
		t.Fatalf("card: %d %s", status, raw)
	}
	var card struct{ Name, URL string }
	_ = json.Unmarshal(raw, &card)
	if card.Name != "Harbor Radio" || card.URL != base+"/a2a" {
		t.Errorf("card name %q url %q, want Harbor Radio at %s/a2a", card.Name, card.URL, base)
	}
	if status, alias := get(t, base+"/a2a/.well-known/agent-card.json"); status != http.StatusOK || !bytes.Equal(alias, raw) {
		t.Errorf("card alias under /a2a: status %d", status)
	}
	c, _ := client(t, base, "", a2aserver.ProfileURI)
	got := payload(t, invoke(t, c, "get_adcp_capabilities", `{}`))
	domains := decode(t, got)["media_buy"].(map[string]any)["portfolio"].(map[string]any)["publisher_domains"].([]any)
	sort.Slice(domains, func(i, j int) bool { return domains[i].(string) < domains[j].(string) })
	if len(domains) == 0 || domains[0] != "harbor.example" {
		t.Errorf("capabilities at /p/harbor describe %v, want harbor.example", domains)
	}
}

// TestControllerFailureOverA2A: the compliance controller's failures have
// their own shape (success: false, error, error_detail) and no adcp_error;
// over A2A they are failed tasks whose status message says why in text,
// not an internal JSON-RPC error.
func TestControllerFailureOverA2A(t *testing.T) {
	env := testenv.Start(t, "--sandbox")
	p := kittest.ProbeA2A(t, env.BaseURL+"/a2a", kittest.Kit, "comply_test_controller",
		`{"account":{"sandbox":true},"adcp_version":"3.0","scenario":"no_such_scenario"}`)
	raw, _ := json.Marshal(p.Body)
	var rpc struct {
		Error  json.RawMessage `json:"error"`
		Result struct {
			Task struct {
				Status struct {
					State   string `json:"state"`
					Message struct {
						Parts []struct {
							Text string `json:"text"`
						} `json:"parts"`
					} `json:"message"`
				} `json:"status"`
				Artifacts []struct {
					Parts []struct {
						Data json.RawMessage `json:"data"`
					} `json:"parts"`
				} `json:"artifacts"`
			} `json:"task"`
		} `json:"result"`
	}
	if err := json.Unmarshal(raw, &rpc); err != nil || rpc.Error != nil {
		t.Fatalf("controller failure over A2A = %s, want a failed task", raw)
	}
	task := rpc.Result.Task
	if task.Status.State != string(a2a.TaskStateFailed) || len(task.Status.Message.Parts) == 0 || task.Status.Message.Parts[0].Text == "" {
		t.Fatalf("task = %s, want failed with a text status message", raw)
	}
	var data []byte
	for _, part := range task.Artifacts[0].Parts {
		if part.Data != nil {
			data = part.Data
		}
	}
	spectest.Validate(t, "compliance/comply-test-controller-response.json", data)
}

// TestSDKErrorsSpeakOurWords: whatever a2a-go refuses itself, before the
// handler runs, reaches the buyer in the storefront's words, never in
// encoding/json's (which name Go types and struct fields), and every
// JSON-RPC error carries the storefront's clock. The requests are the
// methods' valid bodies with each member in turn replaced by a value of
// every other JSON type, sent over both bindings, with the profile and
// without it (so both the fast path and a2a-go read them).
func TestSDKErrorsSpeakOurWords(t *testing.T) {
	env := testenv.Start(t)
	url := env.BaseURL + "/a2a"
	bases := []string{
		`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m1","contextId":"c1","role":"ROLE_USER","parts":[{"text":"hi"},{"data":{"skill":"get_adcp_capabilities","input":{}},"mediaType":"application/json"}],"metadata":{"k":"v"},"extensions":["x"]},"configuration":{"historyLength":1,"acceptedOutputModes":["application/json"]}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"SendStreamingMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"data":{"skill":"get_adcp_capabilities","input":{}}}]}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"t1","historyLength":2}}`,
		`{"jsonrpc":"2.0","id":1,"method":"CancelTask","params":{"id":"t1"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"ListTasks","params":{"pageSize":2}}`,
		`{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"messageId":"m1","role":"user","kind":"message","parts":[{"kind":"data","data":{"skill":"get_adcp_capabilities","parameters":{}}}],"metadata":{"k":"v"}},"configuration":{"historyLength":1,"blocking":true}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"message/stream","params":{"message":{"messageId":"m1","role":"user","kind":"message","parts":[{"kind":"data","data":{"skill":"get_adcp_capabilities","parameters":{}}}]}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"t1","historyLength":2}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tasks/cancel","params":{"id":"t1"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tasks/pushNotificationConfig/get","params":{"id":"t1"}}`,
	}
	replacements := []any{1e300, -7, "x", true, nil, map[string]any{"a": 1}, []any{1}}
	var bodies []string
	for _, base := range bases {
		var doc any
		if err := json.Unmarshal([]byte(base), &doc); err != nil {
			t.Fatalf("%s: %v", base, err)
		}
		for _, p := range jsonPaths(doc, nil) {
			for _, r := range replacements {
				b, _ := json.Marshal(replaceAt(doc, p, r))
				bodies = append(bodies, string(b))
			}
		}
		// Numbers past float64's range, which only the raw text can hold.
		bodies = append(bodies, strings.Replace(base, `"id":1,`, `"id":1,"x":1e400,`, 1),
			strings.Replace(base, `"params":{`, `"params":{"historyLength":1e400,`, 1),
			strings.Replace(base, `"messageId":"m1"`, `"messageId":1e400`, 1))
	}
	bodies = append(bodies, `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"data":1e400}]}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":[1,2]}`, `{"jsonrpc":"2.0","id":{"a":1},"method":"SendMessage"}`,
		`[{"jsonrpc":"2.0","id":1,"method":"SendMessage"}]`, `"SendMessage"`, `{"jsonrpc":2,"id":1,"method":"tasks/get"}`)

	// What encoding/json and Go say, and a buyer must not read.
	internal := regexp.MustCompile(`(?i)json: |cannot unmarshal|go (struct|value)|float64|int64|int32|uint|\bstruct\b|map\[|\[\]|\*a2a|a2a\.|invalid character|looking for beginning|unexpected end|\bof type\b`)
	stamp := testenv.Clock.UTC().Format(time.RFC3339)
	var errorsSeen int
	for _, body := range bodies {
		for _, headers := range [][]string{nil, profileHeader} {
			resp, b := post(t, url, body, headers...)
			if resp.StatusCode >= 500 {
				t.Errorf("%s: HTTP %d %s", body, resp.StatusCode, b)
			}
			for _, answer := range answers(resp.Header.Get("Content-Type"), b) {
				var m struct {
					Error *struct {
						Code    int    `json:"code"`
						Message string `json:"message"`
						Data    []struct {
							Metadata map[string]string `json:"metadata"`
						} `json:"data"`
					} `json:"error"`
				}
				if err := json.Unmarshal(answer, &m); err != nil {
					t.Errorf("%s: answer %s is not a JSON-RPC response: %v", body, answer, err)
					continue
				}
				if m.Error == nil {
					continue
				}
				errorsSeen++
				if loc := internal.FindStringIndex(m.Error.Message); loc != nil {
					t.Errorf("%s (headers %v): the message %q shows the library's %q", body, headers, m.Error.Message, m.Error.Message[loc[0]:loc[1]])
				}
				for _, d := range m.Error.Data {
					if ts, ok := d.Metadata["timestamp"]; ok && ts != stamp {
						t.Errorf("%s: ErrorInfo timestamp %s, want the storefront's clock %s", body, ts, stamp)
					}
				}
			}
		}
	}
	t.Logf("%d requests, %d errors read", 2*len(bodies), errorsSeen)

	reasons := map[float64]string{-32700: "PARSE_ERROR", -32600: "INVALID_REQUEST", -32602: "INVALID_PARAMS"}
	// The code is the one the request earns, not a2a-go's guess: it calls
	// any decoding failure but a type error a parse error, and a type
	// error anywhere invalid params.
	for _, c := range []struct {
		body string
		code float64
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":`, -32700},
		{`{"jsonrpc":"2.0","id":1,"method":"SendMessage"}`, -32602},
		{`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"foo":1}]}}}`, -32602},
		{`{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"messageId":"m","role":"user","kind":"message","parts":[{"kind":"bogus"}]}}}`, -32602},
		{`{"jsonrpc":2,"id":1,"method":"tasks/get","params":{"id":"t"}}`, -32600},
		{`{"jsonrpc":"2.0","id":1,"method":5}`, -32600},
		{`{"jsonrpc":"2.0","id":1e400,"method":"SendMessage","params":{}}`, -32600},
		{`[{"jsonrpc":"2.0","id":1,"method":"SendMessage"}]`, -32600},
		{`"SendMessage"`, -32600},
	} {
		status, _, m := rpc(t, url, c.body)
		e, _ := m["error"].(map[string]any)
		if status != http.StatusOK || e == nil || e["code"] != c.code {
			t.Errorf("%s: HTTP %d, error %v; want code %v", c.body, status, e, c.code)
		}
		if code, reason, _ := errorMeta(m); code != c.code || reason != reasons[c.code] {
			t.Errorf("%s: ErrorInfo reason %q, want %q for code %v", c.body, reason, reasons[c.code], c.code)
		}
	}
	if errorsSeen < len(bodies) {
		t.Errorf("only %d errors over %d requests sent twice: the corpus no longer reaches a2a-go's refusals", errorsSeen, len(bodies))
	}
	if out := env.Output(); strings.Contains(strings.ToLower(out), "panic") {
		t.Errorf("the storefront logged a panic:\n%s", out)
	}
}

// answers splits b, of content type ct, a JSON-RPC response or an event
// stream of them, into its answers.
func answers(ct string, b []byte) [][]byte {
	if !strings.HasPrefix(ct, "text/event-stream") {
		return [][]byte{b}
	}
	var out [][]byte
	for line := range bytes.Lines(b) {
		if data, ok := bytes.CutPrefix(line, []byte("data:")); ok {
			out = append(out, bytes.TrimSpace(data))
		}
	}
	return out
}

// jsonPaths lists the paths of every member and element in v, decoded
// JSON, below its root.
func jsonPaths(v any, at []any) [][]any {
	var out [][]any
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			p := append(slices.Clone(at), k)
			out = append(append(out, p), jsonPaths(e, p)...)
		}
	case []any:
		for i, e := range v {
			p := append(slices.Clone(at), i)
			out = append(append(out, p), jsonPaths(e, p)...)
		}
	}
	return out
}

// replaceAt returns a copy of v with the value at path p replaced by r.
func replaceAt(v any, p []any, r any) any {
	if len(p) == 0 {
		return r
	}
	switch v := v.(type) {
	case map[string]any:
		c := maps.Clone(v)
		c[p[0].(string)] = replaceAt(v[p[0].(string)], p[1:], r)
		return c
	case []any:
		c := slices.Clone(v)
		c[p[0].(int)] = replaceAt(v[p[0].(int)], p[1:], r)
		return c
	}
	return v
}
