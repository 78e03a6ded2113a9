package app_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/storefront/storefront/app"
	"github.com/storefront/storefront/internal/kittest"
	"github.com/storefront/storefront/internal/requestid"
	"github.com/storefront/storefront/internal/spectest"
	"github.com/storefront/storefront/internal/testenv"
	"github.com/storefront/storefront/ledger"
	"github.com/storefront/storefront/store"
)

// secret is the panic value: it must reach the log and nothing else.
const secret = "xyzzy-internal-panic-detail"

// panicking is the program's store with chosen methods made to panic,
// the way a nil dereference deep in a dependency would.
type panicking struct {
	store.Store
	mu    sync.Mutex
	armed map[string]bool
}

func (p *panicking) arm(methods ...string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.armed = map[string]bool{}
	for _, m := range methods {
		p.armed[m] = true
	}
}

func (p *panicking) trip(method string) {
	p.mu.Lock()
	armed := p.armed[method]
	p.mu.Unlock()
	if armed {
		panic(secret + " in " + method)
	}
}

func (p *panicking) Append(ctx context.Context, r ledger.Record) (ledger.Entry, error) {
	p.trip("Append")
	return p.Store.Append(ctx, r)
}

func (p *panicking) Decisions(ctx context.Context, publisher string, f store.DecisionFilter) ([]ledger.Entry, error) {
	p.trip("Decisions")
	return p.Store.Decisions(ctx, publisher, f)
}

func (p *panicking) UseToken(ctx context.Context, kind store.TokenKind, publisher, digest string, now time.Time) (store.Token, error) {
	p.trip("UseToken")
	return p.Store.UseToken(ctx, kind, publisher, digest, now)
}

func (p *panicking) Versions(ctx context.Context, publisher string) (store.Versions, error) {
	p.trip("Versions")
	return p.Store.Versions(ctx, publisher)
}

// startPanicking runs the program over a panicking store.
func startPanicking(t *testing.T) (*testenv.Env, *panicking) {
	t.Helper()
	p := &panicking{}
	env := testenv.StartWith(t, func(m *app.Main) {
		m.WrapStore = func(s store.Store) store.Store { p.Store = s; return p }
	}, "--log-level", "error")
	return env, p
}

// noLeak fails if an answer shows anything of the panic.
func noLeak(t *testing.T, what string, body []byte) {
	t.Helper()
	for _, bad := range []string{secret, "panic", "goroutine", "runtime", ".go:"} {
		if strings.Contains(string(body), bad) {
			t.Errorf("%s shows %q: %s", what, bad, body)
		}
	}
}

// post sends body to url and returns the status, the X-Request-Id and the
// body.
func post(t *testing.T, url, body string, header ...string) (int, string, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v (the process died?)", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get(requestid.Header), b
}

// wantLogged checks that the log holds the recovered panic of the request
// id, with its surface, value and stack, and returns the line.
func wantLogged(t *testing.T, env *testenv.Env, surface, id string) string {
	t.Helper()
	for _, line := range strings.Split(env.Output(), "\n") {
		if strings.Contains(line, "recovered a panic") && strings.Contains(line, "request_id="+id) {
			if !strings.Contains(line, "surface="+surface) || !strings.Contains(line, secret) || !strings.Contains(line, "recover_test.go") {
				t.Errorf("the log line lacks the surface, the panic or its stack: %s", line)
			}
			return line
		}
	}
	t.Errorf("no log line recovers the panic of request %s:\n%s", id, env.Output())
	return ""
}

func recovered(t *testing.T, base, surface string) float64 {
	t.Helper()
	return value(scrape(t, base, ""), "storefront_recovered_panics_total", map[string]string{"surface": surface})
}

// alive checks that the process serves /healthz.
func alive(t *testing.T, env *testenv.Env) {
	t.Helper()
	if status, _ := kittest.Get(t, env.BaseURL+"/healthz"); status != http.StatusOK {
		t.Fatalf("/healthz = %d after a recovered panic", status)
	}
}

// TestPanicInAToolCall: a dependency that panics while get_products is
// answered (the ledger append) costs that call alone. Over MCP and A2A it
// is the same AdCP error arm, SERVICE_UNAVAILABLE and transient, which
// shows nothing of the panic; the panic is logged with its stack and the
// request id the response names, and counted on its transport; the
// process serves on.
func TestPanicInAToolCall(t *testing.T) {
	env, p := startPanicking(t)
	const args = `{"adcp_version":"3.2-beta.5","buying_mode":"brief","brief":"coffee video","context":{"correlation_id":"corr-1"}}`
	mcpBefore, a2aBefore := recovered(t, env.BaseURL, "mcp"), recovered(t, env.BaseURL, "a2a")
	p.arm("Append")

	p1 := kittest.ProbeMCP(t, env.BaseURL+"/mcp", "", "get_products", args)
	b, _ := json.Marshal(p1.Body)
	res, _ := p1.Body["result"].(map[string]any)
	if p1.Status != http.StatusOK || res["isError"] != true {
		t.Fatalf("MCP: status %d, body %s; want a tool result marked isError", p1.Status, b)
	}
	noLeak(t, "the MCP answer", b)
	viaMCP, _ := json.Marshal(res["structuredContent"])
	spectest.GetProducts(t, viaMCP)
	m := kittest.Decode(t, viaMCP)
	e, _ := m["adcp_error"].(map[string]any)
	if m["status"] != "failed" || e["code"] != "SERVICE_UNAVAILABLE" || e["recovery"] != "transient" || e["message"] != "Internal error." ||
		m["adcp_version"] != "3.2-beta.5" || m["context"].(map[string]any)["correlation_id"] != "corr-1" {
		t.Errorf("MCP answer = %s, want the transient error arm in the call's envelope", viaMCP)
	}
	id := p1.Header.Get(requestid.Header)
	if !regexp.MustCompile(`^[0-9a-f]{24}$`).MatchString(id) {
		t.Errorf("X-Request-Id = %q", id)
	}
	wantLogged(t, env, "mcp", id)

	p2, state, viaA2A := kittest.A2ATask(t, env.BaseURL+"/a2a", "", "get_products", args)
	b, _ = json.Marshal(p2.Body)
	noLeak(t, "the A2A answer", b)
	if state != "TASK_STATE_FAILED" {
		t.Errorf("A2A task state = %q, want failed: %s", state, b)
	}
	if diff := cmp.Diff(m, kittest.Decode(t, viaA2A)); diff != "" {
		t.Errorf("MCP and A2A answer a panic differently (-mcp +a2a):\n%s", diff)
	}
	id = p2.Header.Get(requestid.Header)
	wantLogged(t, env, "a2a", id)

	if got := recovered(t, env.BaseURL, "mcp") - mcpBefore; got != 1 {
		t.Errorf("recovered panics on mcp moved by %v, want 1", got)
	}
	if got := recovered(t, env.BaseURL, "a2a") - a2aBefore; got != 1 {
		t.Errorf("recovered panics on a2a moved by %v, want 1", got)
	}
	alive(t, env)
	p.arm()
	if got, _ := testenv.CallTool(t, env.BaseURL, "", "get_products", args); got["status"] != "completed" {
		t.Errorf("after the panic, get_products = %v", got)
	}
}

// TestPanicBeforeDispatch: a panic while a call's credentials are checked,
// before any tool runs, is each transport's JSON-RPC internal error, 500,
// with the request's id.
func TestPanicBeforeDispatch(t *testing.T) {
	env, p := startPanicking(t)
	before := recovered(t, env.BaseURL, "mcp") + recovered(t, env.BaseURL, "a2a")
	p.arm("UseToken")
	for _, c := range []struct{ path, body string }{
		{"/mcp", `{"jsonrpc":"2.0","id":21,"method":"tools/call","params":{"name":"get_products","arguments":{}}}`},
		{"/a2a", `{"jsonrpc":"2.0","id":21,"method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"data":{"skill":"get_products","input":{}}}]}}}`},
	} {
		status, id, b := post(t, env.BaseURL+c.path, c.body, "Authorization", "Bearer "+env.BuyerToken, "Accept", "application/json, text/event-stream",
			"A2A-Extensions", "https://adcontextprotocol.org/extensions/adcp/v3")
		var a struct {
			ID    json.RawMessage `json:"id"`
			Error struct{ Code int }
		}
		if err := json.Unmarshal(b, &a); err != nil || status != http.StatusInternalServerError || a.Error.Code != -32603 || string(a.ID) != "21" {
			t.Errorf("%s: status %d, body %s; want 500 and a JSON-RPC internal error for id 21", c.path, status, b)
		}
		noLeak(t, c.path, b)
		wantLogged(t, env, strings.TrimPrefix(c.path, "/"), id)
	}
	if got := recovered(t, env.BaseURL, "mcp") + recovered(t, env.BaseURL, "a2a") - before; got != 2 {
		t.Errorf("recovered panics moved by %v, want 2", got)
	}
	alive(t, env)
}

// TestPanicInAnA2ACall: a panic in the A2A handler outside the tool (here
// while deciding whether an anonymous call is public discovery, which
// reads the publisher's settings) is answered as a panic in the tool is:
// a failed task carrying the AdCP error arm.
func TestPanicInAnA2ACall(t *testing.T) {
	env, p := startPanicking(t)
	before := recovered(t, env.BaseURL, "a2a")
	p.arm("Versions")
	status, id, b := post(t, env.BaseURL+"/a2a",
		`{"jsonrpc":"2.0","id":9,"method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"data":{"skill":"get_products","input":{"adcp_version":"3.1","brief":"coffee"}}}]}}}`,
		"A2A-Extensions", "https://adcontextprotocol.org/extensions/adcp/v3")
	noLeak(t, "the A2A answer", b)
	if status != http.StatusOK || !strings.Contains(string(b), `"TASK_STATE_FAILED"`) ||
		!strings.Contains(string(b), `{"status":"failed","adcp_version":"3.1","errors":[{"code":"SERVICE_UNAVAILABLE","message":"Internal error.","recovery":"transient"}]`) {
		t.Errorf("status %d, body %s; want a failed task with the transient error arm", status, b)
	}
	if line := wantLogged(t, env, "a2a", id); !strings.Contains(line, `while="A2A SendMessage"`) {
		t.Errorf("the panic was not recovered by the A2A handler's boundary: %s", line)
	}
	if got := recovered(t, env.BaseURL, "a2a") - before; got != 1 {
		t.Errorf("recovered panics on a2a moved by %v, want 1", got)
	}
	p.arm()
	alive(t, env)
}

// TestPanicInTheAdminAPI: a panic in an admin request is the internal
// problem, 500 application/problem+json, naming nothing of it.
func TestPanicInTheAdminAPI(t *testing.T) {
	env, p := startPanicking(t)
	before := recovered(t, env.BaseURL, "admin")
	p.arm("Decisions")
	resp, b := kittest.AdminGet(t, env, "/decisions")
	var prob struct {
		Type   string
		Status int
		Detail string
	}
	if err := json.Unmarshal(b, &prob); err != nil || resp.StatusCode != http.StatusInternalServerError ||
		resp.Header.Get("Content-Type") != "application/problem+json" || !strings.HasSuffix(prob.Type, "/internal") || prob.Status != 500 || prob.Detail != "" {
		t.Errorf("status %d %s, body %s; want the internal problem", resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	noLeak(t, "the admin answer", b)
	wantLogged(t, env, "admin", resp.Header.Get(requestid.Header))
	if got := recovered(t, env.BaseURL, "admin") - before; got != 1 {
		t.Errorf("recovered panics on admin moved by %v, want 1", got)
	}
	alive(t, env)
}
