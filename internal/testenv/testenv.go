// Package testenv starts the real storefront program in-process for
// end-to-end tests, on a free loopback port, and stops it when the test
// ends.
package testenv

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/storefront/storefront/app"
	"github.com/storefront/storefront/demo"
	"github.com/storefront/storefront/internal/clock"
	"github.com/storefront/storefront/store/pgstore/pgtest"
)

// Env is a running storefront.
type Env struct {
	Main    *app.Main
	BaseURL string
	// BuyerToken and AdminToken are the demo tokens the program printed.
	BuyerToken string
	AdminToken string
	out        *syncBuffer
}

// Clock is the time end-to-end tests pin the storefront to: noon on the
// day the demo's dates are written from (demo.Written), moved by
// STOREFRONT_TEST_CLOCK_SHIFT (+5y, -3y, +90d) when that is set. The demo
// is seeded relative to the clock, so its lead times and sold-out windows
// answer the same wherever the clock is; tests write the dates they send
// relative to it too (Day).
var Clock = pinned()

// ClockShiftVar moves Clock.
const ClockShiftVar = "STOREFRONT_TEST_CLOCK_SHIFT"

func pinned() time.Time {
	noon := demo.Written.Add(12 * time.Hour)
	v := os.Getenv(ClockShiftVar)
	if v == "" {
		return noon
	}
	t, err := clock.Shift(noon, v)
	if err != nil {
		panic(ClockShiftVar + ": " + err.Error())
	}
	return t
}

// Day is the date n days after Clock's, as YYYY-MM-DD.
func Day(n int) string { return Clock.AddDate(0, 0, n).Format("2006-01-02") }

// Start runs `storefront serve` with args (plus --addr 127.0.0.1:0).
func Start(t testing.TB, args ...string) *Env {
	t.Helper()
	return StartWith(t, nil, args...)
}

// StartWith is Start with configure applied to the program before it
// runs (a test's transport for governance agents, a clock of its own).
func StartWith(t testing.TB, configure func(*app.Main), args ...string) *Env {
	t.Helper()
	m := app.NewMain()
	m.Now = func() time.Time { return Clock }
	if configure != nil {
		configure(m)
	}
	out := &syncBuffer{}
	m.Stdout = out
	m.Stderr = out
	if err := m.ParseFlags(append([]string{"serve", "--addr", "127.0.0.1:0", "--log-level", "warn"}, args...)); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	select {
	case <-m.Ready:
	case err := <-done:
		cancel()
		t.Fatalf("storefront exited before serving: %v\n%s", err, out.String())
	case <-time.After(30 * time.Second):
		cancel()
		t.Fatalf("storefront did not start\n%s", out.String())
	}
	e := &Env{Main: m, BaseURL: m.Server.BaseURL(), out: out}
	if mt := regexp.MustCompile(`demo buyer token[^:]*: (\S+)`).FindStringSubmatch(out.String()); mt != nil {
		e.BuyerToken = mt[1]
	}
	if mt := regexp.MustCompile(`demo admin token[^:]*: (\S+)`).FindStringSubmatch(out.String()); mt != nil {
		e.AdminToken = mt[1]
	}
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			t.Error("storefront did not shut down")
		}
		_ = m.Close()
	})
	return e
}

// Output is what the program has logged so far.
func (e *Env) Output() string { return e.out.String() }

// BearerClient returns an HTTP client that sends token as a bearer.
func BearerClient(token string) *http.Client {
	return &http.Client{Transport: bearer{token: token, base: http.DefaultTransport}, Timeout: 30 * time.Second}
}

// CallTool calls tool over MCP at base/mcp with the MCP Go SDK client, as
// the holder of token (none when empty), and returns the AdCP object and
// whether the result was marked as an error.
//
// Credentials the storefront refuses are an HTTP 401 before any MCP
// session exists, which the SDK client reports only as a transport
// failure; then the AdCP error the refusal carries (in the JSON-RPC
// error's data) is returned as a failed result, so callers see the same
// AUTH_INVALID or AUTH_REQUIRED either way.
func CallTool(t testing.TB, base, token, tool, args string) (map[string]any, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tr := &mcp.StreamableClientTransport{Endpoint: base + "/mcp", DisableStandaloneSSE: true, MaxRetries: -1}
	if token != "" {
		tr.HTTPClient = BearerClient(token)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "storefront-test-buyer", Version: "0"}, nil).Connect(ctx, tr, nil)
	if err != nil {
		if m, ok := refusal(t, base, token, tool, args); ok {
			return m, true
		}
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: json.RawMessage(args)})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &m); err != nil {
		t.Fatalf("%s: the result's text is not the AdCP object: %v", tool, err)
	}
	return m, res.IsError
}

// refusal posts the tools/call directly and, when the storefront refuses
// it with HTTP 401, returns the AdCP error the refusal carries.
func refusal(t testing.TB, base, token, tool, args string) (map[string]any, bool) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call",
		"params": map[string]any{"name": tool, "arguments": json.RawMessage(args)}})
	req, err := http.NewRequest(http.MethodPost, base+"/mcp", bytes.NewReader(body))
	if err != nil {
		return nil, false
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, false
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		return nil, false
	}
	var rpc struct {
		Error struct {
			Data struct {
				AdcpError map[string]any `json:"adcp_error"`
			} `json:"data"`
		} `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&rpc); err != nil || rpc.Error.Data.AdcpError == nil {
		return nil, false
	}
	e := rpc.Error.Data.AdcpError
	return map[string]any{"status": "failed", "adcp_error": e, "errors": []any{e}}, true
}

type bearer struct {
	token string
	base  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if b.token != "" {
		r.Header.Set("Authorization", "Bearer "+b.token)
	}
	return b.base.RoundTrip(r)
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// OnEachStore runs fn in a subtest per store, on a storefront started with
// args: the in-memory store, then a fresh PostgreSQL database seeded with
// the demo (which pgtest skips, or fails under CI, without a database).
func OnEachStore(t *testing.T, fn func(t *testing.T, env *Env), args ...string) {
	for _, name := range []string{"memory", "postgres"} {
		t.Run(name, func(t *testing.T) {
			a := args
			if name == "postgres" {
				a = append([]string{"--database-url", pgtest.NewDatabase(t), "--seed-demo"}, args...)
			}
			fn(t, Start(t, a...))
		})
	}
}
