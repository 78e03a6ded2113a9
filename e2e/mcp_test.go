package e2e

import (
	"testing"
)

// TestSDKOverMCP is the README's worked example, run by a real buyer client:
// the @adcp/sdk CLI gets a completed and a rejected response over MCP from
// the real binary on its embedded default.
func TestSDKOverMCP(t *testing.T) {
	sf := Start(t, nil)

	completed := ADCP(t, sf.BaseURL+"/mcp", "get_products",
		`{"buying_mode":"brief","brief":"Video for a coffee brand launch","pagination":{"max_results":3},"context":{"correlation_id":"readme-completed"}}`,
		"--protocol", "mcp")
	if completed.Exit != 0 {
		t.Fatalf("completed call exited %d:\n%s", completed.Exit, completed.Raw)
	}
	if completed.Data["status"] != "completed" {
		t.Fatalf("status = %v, want completed:\n%s", completed.Data["status"], completed.Raw)
	}
	if ps, _ := completed.Data["products"].([]any); len(ps) != 3 {
		t.Errorf("got %d products, want 3 (max_results)", len(ps))
	}
	if ctx, _ := completed.Data["context"].(map[string]any); ctx["correlation_id"] != "readme-completed" {
		t.Errorf("context not echoed: %v", completed.Data["context"])
	}

	rejected := ADCP(t, sf.BaseURL+"/mcp", "get_products",
		`{"adcp_version":"3.2-beta.5","buying_mode":"brief","brief":"Video for a coffee brand launch","filters":{"budget_range":{"max":100,"currency":"USD"}}}`,
		"--protocol", "mcp", "--auth", sf.BuyerToken)
	if rejected.Exit != 0 {
		t.Fatalf("a rejection is a successful exchange, but the CLI exited %d:\n%s", rejected.Exit, rejected.Raw)
	}
	if rejected.Data["status"] != "rejected" {
		t.Fatalf("status = %v, want rejected:\n%s", rejected.Data["status"], rejected.Raw)
	}
	if r, _ := rejected.Data["reason"].(string); r == "" {
		t.Error("rejected without a reason")
	}
	if s, _ := rejected.Data["suggestions"].([]any); len(s) == 0 {
		t.Error("a 100 USD brief was declined without suggestions")
	}
	for _, k := range []string{"products", "errors", "adcp_error", "cache_scope"} {
		if _, ok := rejected.Data[k]; ok {
			t.Errorf("rejected arm carries %s", k)
		}
	}
}
