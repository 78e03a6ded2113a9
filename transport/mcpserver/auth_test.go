package mcpserver_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/storefront/storefront/internal/kittest"
	"github.com/storefront/storefront/internal/spectest"
	"github.com/storefront/storefront/internal/testenv"
)

// wantRefused fails unless p is HTTP 401 with a Bearer challenge naming
// realm (with error="invalid_token" exactly when code is AUTH_INVALID) and
// a JSON-RPC error -32028 carrying the AdCP error code, valid against
// core/error.json.
func wantRefused(t *testing.T, what string, p kittest.Probe, realm, code string) {
	t.Helper()
	if p.Status != http.StatusUnauthorized {
		t.Errorf("%s: HTTP %d %v, want 401", what, p.Status, p.Body)
		return
	}
	challenge := p.Header.Get("WWW-Authenticate")
	want := `Bearer realm="` + realm + `"`
	if code == "AUTH_INVALID" {
		want += `, error="invalid_token"`
	}
	if challenge != want {
		t.Errorf("%s: WWW-Authenticate = %q, want %q", what, challenge, want)
	}
	e, _ := p.Body["error"].(map[string]any)
	data, _ := e["data"].(map[string]any)
	adcpErr, _ := data["adcp_error"].(map[string]any)
	if e["code"] != -32028.0 || adcpErr["code"] != code {
		t.Errorf("%s: body %v, want JSON-RPC -32028 with adcp_error %s", what, p.Body, code)
	}
	if p.Body["id"] != 7.0 {
		t.Errorf("%s: id = %v, want the request's 7", what, p.Body["id"])
	}
	b, _ := json.Marshal(adcpErr)
	spectest.Validate(t, "core/error.json", b)
}

// TestAuthHTTP: credentials are enforced at the HTTP layer, as
// security_baseline probes them. A bearer that names no principal is a
// 401 with error="invalid_token" on any request; a call without
// credentials is a 401 unless it is public discovery, which stays open.
func TestAuthHTTP(t *testing.T) {
	env := testenv.Start(t)
	url := env.BaseURL + "/mcp"
	const products = `{"adcp_version":"3.2-beta.5","buying_mode":"brief","brief":"coffee video"}`
	const withAccount = `{"adcp_version":"3.2-beta.5","buying_mode":"brief","brief":"coffee video","account":{"brand":{"domain":"acme.example"},"operator":"pinnacle-agency.example"}}`

	// Invalid credentials, whatever is called: the runner's random key,
	// an unknown token, on a public and on a protected call.
	for _, token := range []string{"invalid-8e4a2c1f9b7d3e5a6c0b1d2e3f4a5b6c", "sf_buyer_not-issued"} {
		wantRefused(t, "get_products with "+token, kittest.ProbeMCP(t, url, token, "get_products", products), url, "AUTH_INVALID")
		wantRefused(t, "get_adcp_capabilities with "+token, kittest.ProbeMCP(t, url, token, "get_adcp_capabilities", `{}`), url, "AUTH_INVALID")
		wantRefused(t, "list_tasks with "+token, kittest.ProbeMCP(t, url, token, "list_tasks", `{}`), url, "AUTH_INVALID")
	}
	// Another scheme is credentials this seller does not accept.
	basic := kittest.Post(t, url, `{"jsonrpc":"2.0","id":7,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`,
		"Accept", "application/json, text/event-stream", "Authorization", "Basic dXNlcjpwYXNz")
	wantRefused(t, "initialize with Basic credentials", basic, url, "AUTH_INVALID")

	// No credentials on a protected call: the tools that need a
	// principal, tools this seller does not have (an anonymous caller
	// learns nothing by probing names), and get_products naming an account.
	wantRefused(t, "anonymous list_tasks", kittest.ProbeMCP(t, url, "", "list_tasks", `{}`), url, "AUTH_MISSING")
	wantRefused(t, "anonymous get_task_status", kittest.ProbeMCP(t, url, "", "get_task_status", `{"task_id":"t1"}`), url, "AUTH_MISSING")
	wantRefused(t, "anonymous get_media_buy_delivery", kittest.ProbeMCP(t, url, "", "get_media_buy_delivery", `{"context":{"correlation_id":"x"}}`), url, "AUTH_MISSING")
	wantRefused(t, "anonymous get_products with an account", kittest.ProbeMCP(t, url, "", "get_products", withAccount), url, "AUTH_MISSING")

	// Public discovery stays open, and a real buyer is served.
	for _, test := range []struct{ name, token, tool, args string }{
		{"anonymous capabilities", "", "get_adcp_capabilities", `{}`},
		{"anonymous get_products", "", "get_products", products},
		{"buyer get_products with an account", env.BuyerToken, "get_products", withAccount},
		{"buyer list_tasks", env.BuyerToken, "list_tasks", `{}`},
	} {
		p := kittest.ProbeMCP(t, url, test.token, test.tool, test.args)
		res, _ := p.Body["result"].(map[string]any)
		if p.Status != http.StatusOK || res == nil || res["isError"] == true {
			t.Errorf("%s: %d %v, want a successful result", test.name, p.Status, p.Body)
		}
	}

	// The realm is the URL called: a publisher's own path, or the public
	// URL the storefront is configured with.
	wantRefused(t, "publisher path", kittest.ProbeMCP(t, env.BaseURL+"/p/northwind/mcp", "", "list_tasks", `{}`), env.BaseURL+"/p/northwind/mcp", "AUTH_MISSING")
	proxied := testenv.Start(t, "--public-url", "https://seller.example")
	wantRefused(t, "behind a proxy", kittest.ProbeMCP(t, proxied.BaseURL+"/mcp", "", "list_tasks", `{}`), "https://seller.example/mcp", "AUTH_MISSING")
}

// TestAuthAnonymousDiscoveryOff: a publisher that switches anonymous
// discovery off makes get_products a protected call; the capabilities stay
// public.
func TestAuthAnonymousDiscoveryOff(t *testing.T) {
	env := testenv.Start(t)
	url := env.BaseURL + "/mcp"
	const products = `{"adcp_version":"3.2-beta.5","buying_mode":"brief","brief":"coffee video"}`
	if p := kittest.ProbeMCP(t, url, "", "get_products", products); p.Status != http.StatusOK {
		t.Fatalf("anonymous discovery before the change: %d %v", p.Status, p.Body)
	}
	req, _ := http.NewRequest(http.MethodPut, env.BaseURL+"/admin/v1/publishers/northwind",
		bytes.NewReader([]byte(`{"name":"Northwind Media","domain":"northwind.example","anonymous_discovery":false}`)))
	req.Header.Set("Authorization", "Bearer "+env.AdminToken)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("PUT publisher: %d", resp.StatusCode)
	}
	// The change reaches the serving snapshot asynchronously.
	deadline := time.Now().Add(10 * time.Second)
	for {
		p := kittest.ProbeMCP(t, url, "", "get_products", products)
		if p.Status == http.StatusUnauthorized {
			wantRefused(t, "anonymous get_products, discovery off", p, url, "AUTH_MISSING")
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("anonymous get_products still %d after switching discovery off", p.Status)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if p := kittest.ProbeMCP(t, url, "", "get_adcp_capabilities", `{}`); p.Status != http.StatusOK {
		t.Errorf("anonymous capabilities with discovery off: %d %v", p.Status, p.Body)
	}
	if p := kittest.ProbeMCP(t, url, env.BuyerToken, "get_products", products); p.Status != http.StatusOK {
		t.Errorf("a buyer's get_products with discovery off: %d %v", p.Status, p.Body)
	}
}

// TestAuthReadsNamesAsTheSDKDoes: admission reads the tool's name exactly
// as the SDK does, so a call the SDK dispatches as list_accounts is not
// admitted as public discovery by a second, differently cased name.
func TestAuthReadsNamesAsTheSDKDoes(t *testing.T) {
	env := testenv.Start(t)
	url := env.BaseURL + "/mcp"
	p := kittest.Post(t, url, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"list_accounts","NAME":"get_products","arguments":{}}}`,
		"Accept", "application/json, text/event-stream")
	wantRefused(t, "list_accounts beside NAME get_products", p, url, "AUTH_MISSING")
}
