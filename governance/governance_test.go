package governance_test

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/storefront/storefront/governance"
	"github.com/storefront/storefront/internal/fakedns"
	"github.com/storefront/storefront/internal/govstub"
	"github.com/storefront/storefront/webhook"
)

var clock = time.Date(2031, 5, 6, 7, 0, 0, 0, time.UTC)

func now() time.Time { return clock }

func client(stub *govstub.Agent) *governance.Client {
	return &governance.Client{Policy: webhook.Policy{AllowLoopback: true}, Transport: stub.Transport(), Now: now,
		Timeout: 2 * time.Second, Name: "storefront-test", Version: "0"}
}

func check(gc string, budget float64) governance.Check {
	return governance.Check{Caller: "https://seller.example/mcp", GovernanceContext: gc, PurchaseType: "media_buy", Phase: "purchase",
		PlannedDelivery:     governance.PlannedDelivery{StartTime: "2031-06-01T00:00:00Z", EndTime: "2031-07-01T00:00:00Z", TotalBudget: budget, Currency: "USD"},
		ExecutionCommitment: governance.Commitment{Amount: budget, Currency: "USD"}}
}

func TestCheckDecides(t *testing.T) {
	stub := govstub.Start(t, now)
	c := client(stub)
	agent := governance.Agent{URL: stub.URL, Scheme: "Bearer", Credentials: govstub.Token}
	gc := stub.Plan(10000)

	v, err := c.Check(t.Context(), agent, check(gc, 8000))
	if err != nil || !v.Approved || v.Context == "" || !v.ExpiresAt.Equal(clock.Add(time.Hour)) {
		t.Fatalf("Check(within the plan) = %+v, %v; want an in-date approval with its context", v, err)
	}
	v, err = c.Check(t.Context(), agent, check(gc, 50000))
	if err != nil || v.Approved || v.CheckID == "" || len(v.Findings) != 1 || v.Findings[0].CategoryID != "budget_authority" {
		t.Fatalf("Check(over the plan) = %+v, %v; want a denial with its finding", v, err)
	}
	checks := stub.Checks()
	if len(checks) != 2 || checks[0]["governance_context"] != gc || checks[0]["phase"] != "purchase" || checks[0]["caller"] != "https://seller.example/mcp" {
		t.Fatalf("the agent received %v, want two purchase checks forwarding the buyer's context", checks)
	}
	if pd, _ := checks[0]["planned_delivery"].(map[string]any); pd["total_budget"] != 8000.0 || pd["currency"] != "USD" {
		t.Errorf("planned_delivery = %v, want the buy's total and currency", checks[0]["planned_delivery"])
	}
	for _, h := range stub.Authorizations() {
		if h != "Bearer "+govstub.Token {
			t.Errorf("a request carried Authorization %q, want the registered bearer token", h)
		}
	}
}

// TestCheckNoValidDecision: anything but an approved or denied execution
// verdict is no decision, and never an approval.
func TestCheckNoValidDecision(t *testing.T) {
	stub := govstub.Start(t, now)
	c := client(stub)
	agent := governance.Agent{URL: stub.URL, Scheme: "Bearer", Credentials: govstub.Token}
	gc := stub.Plan(10000)
	for _, tc := range []struct {
		name, mode string
		agent      governance.Agent
	}{
		{"tool error", govstub.Fail, agent},
		{"conditions", govstub.Condition, agent},
		{"lapsed approval", govstub.LapsedOnly, agent},
		{"stalls past the timeout", govstub.Stall, agent},
		{"wrong credentials", govstub.Decide, governance.Agent{URL: stub.URL, Scheme: "Bearer", Credentials: strings.Repeat("x", 40)}},
		{"nothing listening", govstub.Decide, governance.Agent{URL: "https://127.0.0.1:1/mcp", Scheme: "Bearer", Credentials: govstub.Token}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stub.SetMode(tc.mode)
			start := time.Now()
			v, err := c.Check(t.Context(), tc.agent, check(gc, 100))
			if !errors.Is(err, governance.ErrUnavailable) || v.Approved {
				t.Fatalf("Check = %+v, %v; want ErrUnavailable and no approval", v, err)
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("Check took %v, want it bounded by the 2s timeout", d)
			}
		})
	}
}

// TestPolicy: the storefront registers and calls only public https agents
// (loopback too in sandbox mode), whatever a name resolves to.
func TestPolicy(t *testing.T) {
	prod := &governance.Client{}
	sandbox := &governance.Client{Policy: webhook.Policy{AllowLoopback: true}}
	for _, tc := range []struct {
		url          string
		prod, sandbx bool
	}{
		{"https://gov.example/mcp", true, true},
		{"http://gov.example/mcp", false, false},
		{"https://10.1.2.3/mcp", false, false},
		{"https://169.254.169.254/latest", false, false},
		{"https://127.0.0.1:8443/mcp", false, true},
		{"https://localhost/mcp", false, true},
		{"http://127.0.0.1:8443/mcp", false, false},
		{"not a url", false, false},
	} {
		if got := prod.Allowed(tc.url) == nil; got != tc.prod {
			t.Errorf("production Allowed(%q) = %v, want %v", tc.url, got, tc.prod)
		}
		if got := sandbox.Allowed(tc.url) == nil; got != tc.sandbx {
			t.Errorf("sandbox Allowed(%q) = %v, want %v", tc.url, got, tc.sandbx)
		}
	}
}

// TestGuardAtDialTime: an agent registered under a public name whose name
// resolves to a loopback or private address is never called outside
// sandbox mode: the call is refused at dial time, as every outbound call
// to a buyer-chosen URL is, by the webhooks' guard. The name is resolved
// by a DNS server the test controls; sandbox mode calls loopback (the
// control), and still refuses a private address.
func TestGuardAtDialTime(t *testing.T) {
	stub := govstub.Start(t, now)
	dns := fakedns.New(t)
	u, err := url.Parse(stub.URL)
	if err != nil {
		t.Fatal(err)
	}
	// The stub's certificate names example.com, a public name.
	u.Host = net.JoinHostPort("example.com", u.Port())
	agent := governance.Agent{URL: u.String(), Scheme: "Bearer", Credentials: govstub.Token}
	gc := stub.Plan(10000)
	call := func(p webhook.Policy) error {
		c := client(stub)
		c.Policy = p
		_, err := c.Check(t.Context(), agent, check(gc, 8000))
		return err
	}
	for _, addr := range []string{"127.0.0.1", "10.0.0.1", "169.254.169.254", "::1"} {
		dns.Set("example.com", addr)
		if err := call(webhook.Policy{Resolver: dns.Resolver()}); !errors.Is(err, governance.ErrUnavailable) || !strings.Contains(err.Error(), webhook.ErrRefusedAddress.Error()) {
			t.Errorf("production Check(an agent named example.com at %s) = %v, want refused by the guard", addr, err)
		}
	}
	if n := len(stub.Checks()); n != 0 {
		t.Fatalf("the agent behind refused addresses received %d checks", n)
	}
	dns.Set("example.com", "127.0.0.1")
	if err := call(webhook.Policy{AllowLoopback: true, Resolver: dns.Resolver()}); err != nil {
		t.Errorf("sandbox Check(example.com at 127.0.0.1) = %v, want the verdict", err)
	}
	dns.Set("example.com", "10.0.0.1")
	if err := call(webhook.Policy{AllowLoopback: true, Resolver: dns.Resolver()}); !strings.Contains(fmt.Sprint(err), webhook.ErrRefusedAddress.Error()) {
		t.Errorf("sandbox Check(example.com at 10.0.0.1) = %v, want refused by the guard", err)
	}
}
