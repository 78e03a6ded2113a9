package buying_test

import (
	"strings"
	"testing"
	"time"

	"github.com/storefront/storefront/demo"
	"github.com/storefront/storefront/governance"
	"github.com/storefront/storefront/internal/govstub"
	"github.com/storefront/storefront/mediabuy"
	"github.com/storefront/storefront/products"
	"github.com/storefront/storefront/store"
	"github.com/storefront/storefront/webhook"
)

// governed is an env whose storefront calls governance agents, and a stub
// agent on loopback (the sandbox URL policy admits it).
func governed(t *testing.T) (*env, *govstub.Agent) {
	e := newEnv(t)
	stub := govstub.Start(t, func() time.Time { return e.now })
	e.svc.Governance = &governance.Client{Policy: webhook.Policy{AllowLoopback: true}, Transport: stub.Transport(),
		Now: func() time.Time { return e.now }, Name: "storefront-test", Version: "0"}
	return e, stub
}

func agentEntry(acct obj, url, creds string) obj {
	return obj{"account": acct, "governance_agents": []any{obj{"url": url,
		"authentication": obj{"schemes": []any{"Bearer"}, "credentials": creds}}}}
}

func (e *env) syncGovernance(t *testing.T, p products.Principal, entries ...any) obj {
	t.Helper()
	r := e.svc.SyncGovernance(t.Context(), e.call(p, obj{"idempotency_key": key(), "accounts": entries, "context": obj{"c": 1}}))
	validate(t, "sync_governance", r.Payload)
	return decode(t, r.Payload)
}

func (e *env) registered(t *testing.T, brand string) (store.GovernanceAgent, bool) {
	t.Helper()
	acct, err := e.svc.Accounts.Resolve(t.Context(), demo.PublisherID, buyer, &products.AccountRef{
		Brand: &products.BrandRef{Domain: brand}, Operator: "pinnacle-agency.example"})
	if err != nil {
		t.Fatal(err)
	}
	g, err := e.store.GovernanceAgent(t.Context(), demo.PublisherID, acct.Key)
	return g, err == nil
}

// TestSyncGovernance registers one agent per account with replace
// semantics, answers without the credentials, and fails only the entries
// naming accounts these credentials may not use.
func TestSyncGovernance(t *testing.T) {
	e, stub := governed(t)
	other := "https://gov.other.example/mcp"
	m := e.syncGovernance(t, buyer, agentEntry(account("acme.example"), stub.URL, govstub.Token),
		agentEntry(obj{"brand": obj{"domain": "acme.example"}, "operator": "someone-else.example"}, other, govstub.Token))
	accts := m["accounts"].([]any)
	first, second := accts[0].(obj), accts[1].(obj)
	if first["status"] != "synced" || first["governance_agents"].([]any)[0].(obj)["url"] != stub.URL {
		t.Errorf("the buyer's own account = %v, want synced with the agent", first)
	}
	if second["status"] != "failed" || second["errors"].([]any)[0].(obj)["code"] != "ACCOUNT_NOT_FOUND" {
		t.Errorf("another operator's account = %v, want failed with ACCOUNT_NOT_FOUND", second)
	}
	if m["context"].(obj)["c"] != 1.0 {
		t.Errorf("context not echoed: %v", m)
	}
	if b, _ := e.svc.SyncGovernance(t.Context(), e.call(buyer, obj{"idempotency_key": key(),
		"accounts": []any{agentEntry(account("acme.example"), stub.URL, govstub.Token)}})), 0; strings.Contains(string(b.Payload), govstub.Token) {
		t.Errorf("the answer carries the credentials: %s", b.Payload)
	}
	g, ok := e.registered(t, "acme.example")
	if !ok || g.URL != stub.URL || g.Credentials != govstub.Token || g.RegisteredBy != buyer.ID || !g.UpdatedAt.Equal(clock) {
		t.Fatalf("stored registration = %+v, %v", g, ok)
	}
	// Replace semantics: the new agent, and nothing of the old.
	rotated := "rotated-credentials-0123456789abcdefghij"
	e.syncGovernance(t, buyer, agentEntry(account("acme.example"), other, rotated))
	if g, _ := e.registered(t, "acme.example"); g.URL != other || g.Credentials != rotated {
		t.Errorf("after a second sync the registration is %+v, want the new agent and credentials", g)
	}
}

// TestSyncGovernanceRefusals: a request that breaks the schema or the URL
// policy is refused whole with a typed error naming the field, and nothing
// is registered.
func TestSyncGovernanceRefusals(t *testing.T) {
	e, stub := governed(t)
	acme := account("acme.example")
	ok := agentEntry(acme, stub.URL, govstub.Token)
	withAgent := func(agent obj) obj { return obj{"account": acme, "governance_agents": []any{agent}} }
	auth := obj{"schemes": []any{"Bearer"}, "credentials": govstub.Token}
	for _, tc := range []struct {
		name        string
		args        obj
		code, field string
	}{
		{"no idempotency key", obj{"accounts": []any{ok}}, "INVALID_REQUEST", "idempotency_key"},
		{"no accounts", obj{"idempotency_key": key(), "accounts": []any{}}, "INVALID_REQUEST", "accounts"},
		{"two agents", obj{"idempotency_key": key(), "accounts": []any{obj{"account": acme,
			"governance_agents": []any{obj{"url": stub.URL, "authentication": auth}, obj{"url": stub.URL, "authentication": auth}}}}},
			"VALIDATION_ERROR", "accounts[0].governance_agents"},
		{"plain http", obj{"idempotency_key": key(), "accounts": []any{withAgent(obj{"url": "http://gov.example/mcp", "authentication": auth})}},
			"INVALID_REQUEST", "accounts[0].governance_agents[0].url"},
		{"private address", obj{"idempotency_key": key(), "accounts": []any{withAgent(obj{"url": "https://10.0.0.7/mcp", "authentication": auth})}},
			"INVALID_REQUEST", "accounts[0].governance_agents[0].url"},
		{"short credentials", obj{"idempotency_key": key(), "accounts": []any{agentEntry(acme, stub.URL, "too-short")}},
			"INVALID_REQUEST", "accounts[0].governance_agents[0].authentication.credentials"},
		{"HMAC scheme", obj{"idempotency_key": key(), "accounts": []any{withAgent(obj{"url": stub.URL,
			"authentication": obj{"schemes": []any{"HMAC-SHA256"}, "credentials": govstub.Token}})}},
			"UNSUPPORTED_FEATURE", "accounts[0].governance_agents[0].authentication.schemes"},
		{"no authentication", obj{"idempotency_key": key(), "accounts": []any{withAgent(obj{"url": stub.URL})}},
			"INVALID_REQUEST", "accounts[0].governance_agents[0].authentication"},
		{"3.0 categories", obj{"idempotency_key": key(), "accounts": []any{withAgent(obj{"url": stub.URL, "authentication": auth,
			"categories": []any{"budget_authority"}})}}, "INVALID_REQUEST", "accounts[0].governance_agents[0].categories"},
		{"the same account twice", obj{"idempotency_key": key(), "accounts": []any{ok, ok}}, "VALIDATION_ERROR", "accounts[1].account"},
		{"no account", obj{"idempotency_key": key(), "accounts": []any{obj{"governance_agents": ok["governance_agents"]}}},
			"INVALID_REQUEST", "accounts[0].account"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.svc.SyncGovernance(t.Context(), e.call(buyer, tc.args))
			validate(t, "sync_governance", r.Payload)
			m := decode(t, r.Payload)
			if !r.Failed || m["accounts"] != nil {
				t.Fatalf("SyncGovernance = %s, want the error arm", r.Payload)
			}
			if e := m["errors"].([]any)[0].(obj); e["code"] != tc.code || e["field"] != tc.field {
				t.Errorf("error = %v, want %s on %s", e, tc.code, tc.field)
			}
			if _, ok := e.registered(t, "acme.example"); ok {
				t.Errorf("a refused request registered an agent")
			}
		})
	}
	r := e.svc.SyncGovernance(t.Context(), e.call(products.Principal{}, obj{"idempotency_key": key(), "accounts": []any{ok}}))
	if m := decode(t, r.Payload); !r.Failed || m["errors"].([]any)[0].(obj)["code"] != "AUTH_MISSING" {
		t.Errorf("anonymous sync_governance = %s, want AUTH_MISSING", r.Payload)
	}
}

func (e *env) buyUnder(t *testing.T, brand, gc string, budget float64) (obj, bool) {
	t.Helper()
	args := obj{"idempotency_key": key(), "account": account(brand), "brand": obj{"domain": brand},
		"start_time": "asap", "end_time": "2027-03-01T00:00:00Z",
		"packages": []any{obj{"product_id": "nw_display_ros_mrec", "pricing_option_id": "cpm_usd_floor_ros", "budget": budget}}}
	if gc != "" {
		args["governance_context"] = gc
	}
	r := e.svc.Create(t.Context(), e.call(buyer, args))
	validate(t, "create_media_buy", r.Payload)
	return decode(t, r.Payload), r.Failed
}

func (e *env) buys(t *testing.T) []mediabuy.Buy {
	t.Helper()
	bs, err := e.store.Buys(t.Context(), demo.PublisherID, store.BuyFilter{Principal: buyer.ID})
	if err != nil {
		t.Fatal(err)
	}
	return bs
}

func errorCode(m obj) string {
	errs, _ := m["errors"].([]any)
	if len(errs) == 0 {
		return ""
	}
	c, _ := errs[0].(obj)["code"].(string)
	return c
}

// TestBuyUnderGovernance: on an account with a governance agent a buy is
// made only after the agent approves its planned delivery; a denial, no
// decision or no governance_context make no buy.
func TestBuyUnderGovernance(t *testing.T) {
	e, stub := governed(t)
	e.syncGovernance(t, buyer, agentEntry(account("acme.example"), stub.URL, govstub.Token))
	gc := stub.Plan(10000)

	m, failed := e.buyUnder(t, "acme.example", "", 5000)
	if !failed || errorCode(m) != "PERMISSION_DENIED" || m["errors"].([]any)[0].(obj)["field"] != "governance_context" {
		t.Errorf("a buy without governance_context = %v, want PERMISSION_DENIED on governance_context", m)
	}
	if n := len(stub.Checks()); n != 0 {
		t.Errorf("the agent was called %d times for a buy that carried no authorization", n)
	}

	m, failed = e.buyUnder(t, "acme.example", gc, 5000)
	if failed || m["media_buy_id"] == nil {
		t.Fatalf("an approved buy = %v, want it made", m)
	}
	checks := stub.Checks()
	if len(checks) != 1 || checks[0]["governance_context"] != gc || checks[0]["phase"] != "purchase" || checks[0]["purchase_type"] != "media_buy" {
		t.Fatalf("the agent received %v, want one purchase check forwarding the buyer's context", checks)
	}
	pd := checks[0]["planned_delivery"].(map[string]any)
	if pd["total_budget"] != 5000.0 || pd["currency"] != "USD" || !strings.HasPrefix(pd["start_time"].(string), "2026-11-30") {
		t.Errorf("planned_delivery = %v, want the buy's total, currency and the flight the rulebook gives asap", pd)
	}
	if ec := checks[0]["execution_commitment"].(map[string]any); ec["amount"] != 5000.0 {
		t.Errorf("execution_commitment = %v", ec)
	}
	bs := e.buys(t)
	if len(bs) != 1 || bs[0].Governance == nil || bs[0].Governance.Context != gc || bs[0].Governance.CheckID == "" || bs[0].Governance.Agent != stub.URL {
		t.Fatalf("stored buys = %+v, want one carrying its governance approval", bs)
	}

	m, failed = e.buyUnder(t, "acme.example", gc, 50000)
	if !failed || errorCode(m) != "GOVERNANCE_DENIED" || m["adcp_error"].(obj)["code"] != "GOVERNANCE_DENIED" {
		t.Fatalf("a buy over the plan = %v, want GOVERNANCE_DENIED in errors and adcp_error", m)
	}
	details := m["errors"].([]any)[0].(obj)["details"].(obj)
	f := details["findings"].([]any)[0].(obj)
	if f["category_id"] != "budget_authority" || !strings.Contains(f["explanation"].(string), "exceeds") || f["details"] != nil || details["check_id"] == "" {
		t.Errorf("the denial's details = %v, want the agent's finding (without its private details) and check id", details)
	}
	if msg := m["errors"].([]any)[0].(obj)["message"].(string); !strings.Contains(msg, "governance agent denied") {
		t.Errorf("message = %q", msg)
	}

	stub.SetMode(govstub.Fail)
	m, failed = e.buyUnder(t, "acme.example", gc, 5000)
	if e := m["adcp_error"].(obj); !failed || e["code"] != "GOVERNANCE_UNAVAILABLE" || e["recovery"] != "transient" {
		t.Errorf("a buy the agent gives no decision on = %v, want GOVERNANCE_UNAVAILABLE, transient", m)
	}
	stub.SetMode(govstub.Decide)

	// A buy the seller's own rules refuse costs the agent no check.
	before := len(stub.Checks())
	if m, _ := e.buyUnder(t, "acme.example", gc, 10); errorCode(m) != "BUDGET_TOO_LOW" {
		t.Errorf("a buy under the floor = %v, want the rule's BUDGET_TOO_LOW", m)
	}
	if len(stub.Checks()) != before {
		t.Errorf("the agent was asked about a buy the rules refused")
	}
	if n := len(e.buys(t)); n != 1 {
		t.Errorf("%d buys stored, want only the approved one", n)
	}

	// An account without an agent buys as before, and keeps the context.
	m, failed = e.buyUnder(t, "ungoverned.example", "buyer-intent-token", 5000)
	if failed {
		t.Fatalf("a buy on an account without an agent = %v", m)
	}
	for _, b := range e.buys(t) {
		if b.BrandDomain == "ungoverned.example" && (b.Governance == nil || b.Governance.Context != "buyer-intent-token" || b.Governance.CheckID != "") {
			t.Errorf("the ungoverned buy's governance = %+v, want the context kept and no check", b.Governance)
		}
	}
}
