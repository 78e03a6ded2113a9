package a2aserver_test

import (
	"net/http"
	"testing"

	"github.com/storefront/storefront/internal/kittest"
	"github.com/storefront/storefront/internal/testenv"
)

// TestAuthHTTP: A2A enforces credentials at the HTTP layer as MCP does.
// A bearer that names no principal is a 401 with error="invalid_token"
// before a2a-go reads the call; a skill other than public discovery
// without credentials is a 401; public discovery stays open.
func TestAuthHTTP(t *testing.T) {
	env := testenv.Start(t)
	url := env.BaseURL + "/a2a"
	const products = `{"adcp_version":"3.2-beta.5","buying_mode":"brief","brief":"coffee video"}`
	refused := func(what string, p kittest.Probe, realm, code string) {
		t.Helper()
		if p.Status != http.StatusUnauthorized {
			t.Errorf("%s: HTTP %d %v, want 401", what, p.Status, p.Body)
			return
		}
		want := `Bearer realm="` + realm + `"`
		if code == "AUTH_INVALID" {
			want += `, error="invalid_token"`
		}
		if got := p.Header.Get("WWW-Authenticate"); got != want {
			t.Errorf("%s: WWW-Authenticate = %q, want %q", what, got, want)
		}
		e, _ := p.Body["error"].(map[string]any)
		if e["code"] != -31401.0 || p.Body["result"] != nil || p.Body["id"] != 7.0 {
			t.Errorf("%s: body %v, want the JSON-RPC unauthenticated error for id 7", what, p.Body)
		}
		// Both refusals name the AdCP code in an ErrorInfo, whichever
		// layer writes them (the invalid bearer before a2a-go reads the
		// call, the missing one from a2a-go's own error encoding).
		if info := errorInfo(e["data"]); info["reason"] != "UNAUTHENTICATED" || info["domain"] != "a2a-protocol.org" ||
			info["metadata"].(map[string]any)["adcp_error_code"] != code {
			t.Errorf("%s: error data %v, want an UNAUTHENTICATED ErrorInfo with adcp_error_code %s", what, e["data"], code)
		}
	}
	refused("invalid bearer, get_products", kittest.ProbeA2A(t, url, "invalid-0123456789abcdef", "get_products", products), url, "AUTH_INVALID")
	refused("invalid bearer, capabilities", kittest.ProbeA2A(t, url, "sf_buyer_not-issued", "get_adcp_capabilities", `{}`), url, "AUTH_INVALID")
	refused("0.3 invalid bearer", kittest.Post(t, url, `{"jsonrpc":"2.0","id":7,"method":"message/send","params":{"message":{"messageId":"m1","role":"user","kind":"message",
		"parts":[{"kind":"data","data":{"skill":"list_tasks","parameters":{}}}]}}}`, "Authorization", "Bearer invalid-0123456789abcdef"), url, "AUTH_INVALID")
	refused("anonymous list_tasks", kittest.ProbeA2A(t, url, "", "list_tasks", `{}`), url, "AUTH_MISSING")
	refused("anonymous unknown skill", kittest.ProbeA2A(t, url, "", "get_media_buy_delivery", `{}`), url, "AUTH_MISSING")
	refused("publisher path", kittest.ProbeA2A(t, env.BaseURL+"/p/northwind/a2a", "", "list_tasks", `{}`), env.BaseURL+"/p/northwind/a2a", "AUTH_MISSING")

	// A2A 0.3 gets the same status and challenge.
	refused("0.3 anonymous list_tasks", kittest.Post(t, url, `{"jsonrpc":"2.0","id":7,"method":"message/send","params":{"message":{"messageId":"m1","role":"user","kind":"message",
		"parts":[{"kind":"data","data":{"skill":"list_tasks","parameters":{}}}]}}}`), url, "AUTH_MISSING")

	for _, test := range []struct{ name, token, skill, args string }{
		{"anonymous capabilities", "", "get_adcp_capabilities", `{}`},
		{"anonymous get_products", "", "get_products", products},
		{"buyer list_tasks", env.BuyerToken, "list_tasks", `{}`},
	} {
		p := kittest.ProbeA2A(t, url, test.token, test.skill, test.args)
		if p.Status != http.StatusOK || p.Body["result"] == nil {
			t.Errorf("%s: %d %v, want a result", test.name, p.Status, p.Body)
		}
	}
	// The agent card is public.
	if status, _ := get(t, env.BaseURL+"/.well-known/agent-card.json"); status != http.StatusOK {
		t.Errorf("agent card: %d", status)
	}
}

// errorInfo returns the google.rpc.ErrorInfo among a JSON-RPC error's data
// (nil when there is none).
func errorInfo(data any) map[string]any {
	list, _ := data.([]any)
	for _, d := range list {
		if m, _ := d.(map[string]any); m["@type"] == "type.googleapis.com/google.rpc.ErrorInfo" {
			if _, ok := m["metadata"].(map[string]any); ok {
				return m
			}
		}
	}
	return nil
}
