// Package kittest drives the real storefront over MCP as the AdCP
// compliance test kit does, for the agent and compliance tests: the kit's
// keys, a brief the demo answers with products, calls that validate every
// answer against the official schemas, and the ledger read back through
// the admin API.
package kittest

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/storefront/storefront/internal/spectest"
	"github.com/storefront/storefront/internal/testenv"
	"github.com/storefront/storefront/store/pgstore/pgtest"
)

// The compliance test kit's keys: a sandbox key, another kit's sandbox
// key, and a kit's live key, which stands for a live account.
const (
	Kit      = "demo-acme-outdoor-v1"
	OtherKit = "demo-globex-v1"
	LiveKit  = "demo-acme-outdoor-live-v1"
)

// Brief is a 3.2 brief the demo catalogue answers with products.
const Brief = `{"adcp_version":"3.2-beta.5","buying_mode":"brief","brief":"Coffee brand launch video","filters":{"channels":["olv"],"pricing_currencies":["USD"]},"pagination":{"max_results":2},"context":{"correlation_id":"next-brief"}}`

// Connect opens an MCP session to base as the holder of token ("" for
// anonymous).
func Connect(t testing.TB, base, token string) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "compliance-test", Version: "0"}, nil)
	tr := &mcp.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: testenv.BearerClient(token), DisableStandaloneSSE: true, MaxRetries: -1}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := c.Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: "2025-06-18"})
	if err != nil {
		t.Fatalf("connecting the MCP client: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// Call invokes tool with raw JSON arguments and returns the result and
// the AdCP object exactly as content[0].text carries it.
func Call(t testing.TB, cs *mcp.ClientSession, tool, args string) (*mcp.CallToolResult, []byte) {
	t.Helper()
	res, payload, err := TryCall(cs, tool, args)
	if err != nil {
		t.Fatalf("CallTool(%s, %s): %v", tool, args, err)
	}
	return res, payload
}

// TryCall is Call for goroutines: it reports instead of failing.
func TryCall(cs *mcp.ClientSession, tool, args string) (*mcp.CallToolResult, []byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: json.RawMessage(args)})
	if err != nil {
		return nil, nil, err
	}
	if len(res.Content) == 0 {
		return res, nil, errNoContent
	}
	text, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		return res, nil, errNoContent
	}
	return res, []byte(text.Text), nil
}

type errString string

func (e errString) Error() string { return string(e) }

const errNoContent = errString("the result has no text content")

// Decode parses a JSON object.
func Decode(t testing.TB, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("not a JSON object: %v\n%s", err, b)
	}
	return m
}

// Control calls comply_test_controller pinned to 3.2 (the rejected arm
// exists only there) on the caller's bare sandbox account, with a context
// to be echoed, and checks the answer is a
// controller response whose isError matches success.
func Control(t testing.TB, cs *mcp.ClientSession, scenario, params string) map[string]any {
	t.Helper()
	args := `{"adcp_version":"3.2-beta.5","scenario":"` + scenario + `","account":{"sandbox":true},"context":{"correlation_id":"ctl-` + scenario + `"}`
	if params != "" {
		args += `,"params":` + params
	}
	return ControlRaw(t, cs, args+`}`)
}

// ControlRaw is Control with the whole request given.
func ControlRaw(t testing.TB, cs *mcp.ClientSession, args string) map[string]any {
	t.Helper()
	res, payload := Call(t, cs, "comply_test_controller", args)
	spectest.Validate(t, "compliance/comply-test-controller-response.json", payload)
	m := Decode(t, payload)
	if ok, _ := m["success"].(bool); res.IsError == ok {
		t.Errorf("comply_test_controller: isError = %v with success %v: %s", res.IsError, m["success"], payload)
	}
	if m["status"] == nil || m["adcp_version"] == nil {
		t.Errorf("comply_test_controller answer lacks status or adcp_version: %s", payload)
	}
	return m
}

// MustSucceed fails the test unless a controller answer succeeded.
func MustSucceed(t testing.TB, m map[string]any) {
	t.Helper()
	if m["success"] != true {
		t.Fatalf("controller call failed: %v", m)
	}
}

// GetProducts calls get_products, validates the answer against the
// official schema for its arm, checks isError is set for the failed arm
// only, and returns the object.
func GetProducts(t testing.TB, cs *mcp.ClientSession, args string) map[string]any {
	t.Helper()
	res, payload := Call(t, cs, "get_products", args)
	status := spectest.GetProducts(t, payload)
	if res.IsError != (status == "failed") {
		t.Errorf("get_products: isError = %v for status %s: %s", res.IsError, status, payload)
	}
	return Decode(t, payload)
}

// WantStatus fails unless m has status want.
func WantStatus(t testing.TB, m map[string]any, want string) {
	t.Helper()
	if m["status"] != want {
		b, _ := json.Marshal(m)
		t.Fatalf("status = %v, want %s: %s", m["status"], want, b)
	}
}

// Decisions reads the publisher's newest ledger entries through the admin
// API.
func Decisions(t testing.TB, env *testenv.Env) []map[string]any {
	t.Helper()
	resp, b := AdminGet(t, env, "/decisions?limit=1000")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET decisions: %d %s", resp.StatusCode, b)
	}
	var out struct {
		Decisions []map[string]any `json:"decisions"`
	}
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("decisions: %v\n%s", err, b)
	}
	return out.Decisions
}

// AdminGet reads path under the demo publisher's admin API with the demo
// admin token, and returns the response (its body read) and the body.
func AdminGet(t testing.TB, env *testenv.Env, path string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, env.BaseURL+"/admin/v1/publishers/northwind"+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+env.AdminToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

// JSONString is s as a JSON string literal.
func JSONString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// JSONOf is v encoded as JSON.
func JSONOf(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Contains reports whether a decoded JSON list holds s.
func Contains(list []any, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// Probe is the raw HTTP exchange of one call, as the storyboard runner's
// authentication probes make it: no session, no initialize.
type Probe struct {
	Status int
	Header http.Header
	Body   map[string]any
}

// ProbeMCP posts a bare JSON-RPC tools/call to url with token as a bearer
// ("" for none) and returns the exchange.
func ProbeMCP(t testing.TB, url, token, tool, args string) Probe {
	t.Helper()
	return Post(t, url, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":`+JSONString(tool)+`,"arguments":`+args+`}}`,
		append(bearerHeader(token), "Accept", "application/json, text/event-stream")...)
}

// ProbeA2A posts one AdCP profile invocation over A2A 1.0 JSON-RPC to url
// with token as a bearer ("" for none) and returns the exchange.
func ProbeA2A(t testing.TB, url, token, skill, input string) Probe {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":7,"method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"data":{"skill":` + JSONString(skill) + `,"input":` + input + `}}]}}}`
	return Post(t, url, body, append(bearerHeader(token), "A2A-Extensions", "https://adcontextprotocol.org/extensions/adcp/v3")...)
}

// A2ATask sends one invocation as ProbeA2A does and returns the exchange,
// the task's state and the AdCP object of its artifact (its data part).
func A2ATask(t testing.TB, url, token, skill, input string) (Probe, string, []byte) {
	t.Helper()
	p := ProbeA2A(t, url, token, skill, input)
	raw, _ := json.Marshal(p.Body)
	var rpc struct {
		Result struct {
			Task struct {
				Status struct {
					State string `json:"state"`
				} `json:"status"`
				Artifacts []struct {
					Parts []struct {
						Data json.RawMessage `json:"data"`
					} `json:"parts"`
				} `json:"artifacts"`
			} `json:"task"`
		} `json:"result"`
	}
	if err := json.Unmarshal(raw, &rpc); err != nil || len(rpc.Result.Task.Artifacts) == 0 {
		t.Fatalf("A2A %s = %s", skill, raw)
	}
	for _, part := range rpc.Result.Task.Artifacts[0].Parts {
		if part.Data != nil {
			return p, rpc.Result.Task.Status.State, part.Data
		}
	}
	t.Fatalf("A2A %s: no data part in %s", skill, raw)
	return p, "", nil
}

func bearerHeader(token string) []string {
	if token == "" {
		return nil
	}
	return []string{"Authorization", "Bearer " + token}
}

// Post posts a JSON body to url with the given header name/value pairs and
// returns the exchange; the answer must be a JSON object.
func Post(t testing.TB, url, body string, header ...string) Probe {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return Probe{Status: resp.StatusCode, Header: resp.Header, Body: Decode(t, b)}
}

// Get fetches url and returns the status and body.
func Get(t testing.TB, url string) (int, []byte) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// FuzzStore names the store the fuzz targets run the program on:
// STOREFRONT_FUZZ_STORE=postgres for a fresh PostgreSQL database, the
// in-memory store otherwise.
const FuzzStore = "STOREFRONT_FUZZ_STORE"

// FuzzStoreArgs are the program arguments for the store FuzzStore names.
func FuzzStoreArgs(t testing.TB) []string {
	t.Helper()
	switch s := os.Getenv(FuzzStore); s {
	case "", "memory":
		return nil
	case "postgres":
		return []string{"--database-url", pgtest.NewDatabase(t), "--seed-demo"}
	default:
		t.Fatalf("%s=%q: want memory or postgres", FuzzStore, s)
		return nil
	}
}
