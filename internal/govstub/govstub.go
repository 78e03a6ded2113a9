// Package govstub is a campaign-governance agent for tests: a real MCP
// server over HTTPS that answers check_governance execution checks against
// plans it holds, checks the bearer token the seller presents, and records
// every check it receives.
//
// A test makes a plan (a budget ceiling) and gets the governance_context a
// buyer's approved intent check would carry; an execution check naming that
// context is approved when its planned total budget is within the ceiling
// and denied, with a finding, when it is not. Mode turns the agent into one
// that fails, stalls or answers with conditions.
package govstub

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Token is the credential the agent accepts (sync_governance wants at
// least 32 characters).
const Token = "govstub-token-0123456789abcdef0123456789"

// Modes.
const (
	Decide     = ""           // approve or deny on the plan
	Fail       = "fail"       // answer every check with a tool error
	Stall      = "stall"      // never answer (until the caller gives up)
	Condition  = "conditions" // answer with conditions, which execution checks may not carry
	LapsedOnly = "lapsed"     // approve with an expires_at already past
)

// Agent is a running stub governance agent.
type Agent struct {
	URL    string
	server *httptest.Server

	mu     sync.Mutex
	plans  map[string]float64
	checks []map[string]any
	mode   string
	auths  []string
	now    func() time.Time
	// release ends stalled checks when the test ends.
	release chan struct{}
}

// Start runs an agent until t ends. now is the clock its expiries are
// written against.
func Start(t testing.TB, now func() time.Time) *Agent {
	t.Helper()
	a := &Agent{plans: map[string]float64{}, now: now, release: make(chan struct{})}
	srv := mcp.NewServer(&mcp.Implementation{Name: "govstub", Version: "0"}, nil)
	srv.AddTool(&mcp.Tool{Name: "check_governance", Description: "Campaign governance check (test agent).",
		InputSchema: json.RawMessage(`{"type":"object","additionalProperties":true}`)}, a.check)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true,
		// Tests reach the stub by public names their own DNS points at
		// loopback, which the SDK's rebinding protection would refuse.
		DisableLocalhostProtection: true})
	a.server = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.mu.Lock()
		a.auths = append(a.auths, r.Header.Get("Authorization"))
		a.mu.Unlock()
		if r.Header.Get("Authorization") != "Bearer "+Token {
			http.Error(w, `{"error":"invalid bearer token"}`, http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(a.server.Close)
	t.Cleanup(func() { close(a.release) }) // runs first
	a.URL = a.server.URL + "/mcp"
	return a
}

// TLS trusts the agent's certificate.
func (a *Agent) TLS() *tls.Config {
	return a.server.Client().Transport.(*http.Transport).TLSClientConfig.Clone()
}

// CertPEM is the agent's certificate, PEM-encoded: a storefront run as a
// separate process trusts it through SSL_CERT_FILE.
func (a *Agent) CertPEM() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: a.server.Certificate().Raw})
}

// Transport is an HTTP transport that trusts the agent's certificate.
func (a *Agent) Transport() *http.Transport {
	return &http.Transport{TLSClientConfig: a.TLS()}
}

// Plan makes a plan with a budget ceiling and returns the
// governance_context an approved intent check for it would carry.
func (a *Agent) Plan(ceiling float64) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	gc := fmt.Sprintf("govstub.intent.%d", len(a.plans)+1)
	a.plans[gc] = ceiling
	return gc
}

// SetMode changes how the agent answers.
func (a *Agent) SetMode(m string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.mode = m
}

// Checks returns the arguments of every check received, oldest first.
func (a *Agent) Checks() []map[string]any {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]map[string]any(nil), a.checks...)
}

// Authorizations returns the Authorization header of every request.
func (a *Agent) Authorizations() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.auths...)
}

func (a *Agent) check(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var args map[string]any
	if err := json.Unmarshal(req.Params.Arguments, &args); err != nil {
		return toolError("the arguments are not a JSON object"), nil
	}
	a.mu.Lock()
	a.checks = append(a.checks, args)
	mode := a.mode
	gc, _ := args["governance_context"].(string)
	ceiling, known := a.plans[gc]
	a.mu.Unlock()
	switch mode {
	case Fail:
		return toolError("the governance agent failed"), nil
	case Stall:
		select {
		case <-ctx.Done():
		case <-a.release:
		}
		return toolError("stalled"), nil
	case Condition:
		return result(map[string]any{"check_id": "chk_cond", "check_type": "intent", "verdict": "conditions",
			"explanation": "adjust the budget", "consultation_context": "cc_1",
			"conditions": []any{map[string]any{"field": "payload.total_budget.amount", "reason": "over plan"}}})
	}
	pd, _ := args["planned_delivery"].(map[string]any)
	budget, _ := pd["total_budget"].(float64)
	currency, _ := pd["currency"].(string)
	id := fmt.Sprintf("chk_%d", len(a.Checks()))
	switch {
	case !known:
		return result(denied(id, "plan_binding", "The governance_context was not issued by this governance agent."))
	case budget > ceiling:
		return result(denied(id, "budget_authority", fmt.Sprintf("Planned budget %v %s exceeds the plan's remaining authority of %v.", budget, currency, ceiling)))
	}
	exp := a.now().Add(time.Hour)
	if mode == LapsedOnly {
		exp = a.now().Add(-time.Minute)
	}
	return result(map[string]any{"check_id": id, "check_type": "execution", "verdict": "approved",
		"explanation": "Planned delivery is within the plan.", "governance_context": "govstub.purchase." + id,
		"expires_at": exp.UTC().Format(time.RFC3339)})
}

func denied(id, category, why string) map[string]any {
	return map[string]any{"check_id": id, "check_type": "execution", "verdict": "denied", "explanation": why,
		"findings": []any{map[string]any{"category_id": category, "severity": "critical", "explanation": why,
			"details": map[string]any{"internal": "not for the seller to forward"}}}}
}

func result(v map[string]any) (*mcp.CallToolResult, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}, StructuredContent: v}, nil
}

func toolError(msg string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: msg}}}
}
