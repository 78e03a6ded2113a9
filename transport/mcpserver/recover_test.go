package mcpserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/storefront/storefront/agent"
	"github.com/storefront/storefront/demo"
	"github.com/storefront/storefront/internal/origin"
	"github.com/storefront/storefront/metrics"
	"github.com/storefront/storefront/products"
	"github.com/storefront/storefront/store"
	"github.com/storefront/storefront/store/memstore"
	"github.com/storefront/storefront/transport/mcpserver"
)

const panicValue = "xyzzy-internal-panic-detail"

func demoAgent(t *testing.T) *agent.Agent {
	t.Helper()
	s := memstore.New()
	if err := demo.Seed(context.Background(), s, demo.Written); err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	snaps := store.NewSnapshots(s)
	return agent.New(s, &products.Service{Snapshots: snaps, Ledger: store.Ledger{Store: s}, Log: log}, snaps, nil, log)
}

func panics(context.Context, string, mcp.Request) (mcp.Result, error) { panic(panicValue) }

// TestRecoverMiddleware: a panic on the SDK's goroutine, which no HTTP
// middleware reaches, is answered: a call of one of the agent's tools with
// the error arm Dispatch gives a panic, anything else with a JSON-RPC
// internal error. Both are counted and show nothing of the panic.
func TestRecoverMiddleware(t *testing.T) {
	a := demoAgent(t)
	h := mcpserver.Recover(a)(panics)
	before := metrics.RecoveredPanics("mcp")

	args := json.RawMessage(`{"adcp_version":"3.1","context":{"trace":"t-1"}}`)
	res, err := h(context.Background(), "tools/call", &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: "get_products", Arguments: args}})
	if err != nil {
		t.Fatalf("tools/call: err = %v, want the error arm as a result", err)
	}
	got, ok := res.(*mcp.CallToolResult)
	if !ok || !got.IsError {
		t.Fatalf("tools/call = %#v, want a tool result marked isError", res)
	}
	want := a.InternalReply(args).Payload
	if text := got.Content[0].(*mcp.TextContent).Text; text != string(want) || string(got.StructuredContent.(json.RawMessage)) != string(want) {
		t.Errorf("tools/call answered %s, want %s", text, want)
	}
	if !strings.Contains(string(want), `"adcp_version":"3.1"`) || !strings.Contains(string(want), `"trace":"t-1"`) || strings.Contains(string(want), "xyzzy") {
		t.Errorf("InternalReply = %s, want the call's envelope and nothing of the panic", want)
	}

	_, err = h(context.Background(), "tools/list", &mcp.ListToolsRequest{})
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeInternalError || strings.Contains(rpcErr.Message, "xyzzy") {
		t.Errorf("tools/list: err = %v, want a JSON-RPC internal error", err)
	}
	if got := metrics.RecoveredPanics("mcp") - before; got != 2 {
		t.Errorf("recovered panics on mcp moved by %v, want 2", got)
	}
}

// TestGuardRecovers: a panic on the HTTP request's goroutine (admission,
// the SDK's HTTP handling) is a JSON-RPC internal error, 500, to the
// request's id; a panic after an answer has begun leaves that answer be.
func TestGuardRecovers(t *testing.T) {
	a := demoAgent(t)
	before := metrics.RecoveredPanics("mcp")
	for _, test := range []struct {
		name   string
		next   http.HandlerFunc
		status int
		body   string
	}{
		{"before writing", func(http.ResponseWriter, *http.Request) { panic(panicValue) }, 500,
			`{"jsonrpc":"2.0","id":"call-3","error":{"code":-32603,"message":"Internal error"}}`},
		{"after writing", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusAccepted); panic(panicValue) }, 202, ``},
	} {
		t.Run(test.name, func(t *testing.T) {
			h := mcpserver.Guard(a, origin.Policy{Listen: func() string { return "http://127.0.0.1" }}, true, test.next)
			w := httptest.NewRecorder()
			req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":"call-3","method":"tools/list"}`))
			h.ServeHTTP(w, req)
			if w.Code != test.status || w.Body.String() != test.body {
				t.Errorf("status %d, body %q; want %d and %q", w.Code, w.Body, test.status, test.body)
			}
		})
	}
	if got := metrics.RecoveredPanics("mcp") - before; got != 2 {
		t.Errorf("recovered panics on mcp moved by %v, want 2", got)
	}
}
