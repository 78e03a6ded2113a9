package e2e

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/storefront/storefront/adcp"
)

// readmeBrief is the README's 100 USD brief, which the demo publisher
// declines as below its floor; pinned is it pinned to version.
func readmeBrief(version string) string {
	return `{"adcp_version":"` + version + `","buying_mode":"brief","brief":"Video for a coffee brand launch","filters":{"budget_range":{"max":100,"currency":"USD"}}}`
}

// TestSDKUnservedPinOverMCP: a buyer pinned to 3.2-rc.8 gets
// VERSION_UNSUPPORTED listing what is served. (The served pins, 3.2-beta.0
// to 3.2-rc.7, are TestSDKOverA2A's, over MCP and A2A.)
func TestSDKUnservedPinOverMCP(t *testing.T) {
	t.Parallel()
	sf := Start(t, nil)
	_, stderr, exit := ADCPOutput(t, sf.BaseURL+"/mcp", "get_products", readmeBrief("3.2-rc.8"), "--protocol", "mcp", "--auth", sf.BuyerToken)
	want := "AdCP version 3.2-rc.8 is not supported; supported versions are " + strings.Join(adcp.SupportedStrings(), ", ")
	if exit == 0 || !strings.Contains(stderr, want) {
		t.Errorf("3.2-rc.8: exit %d, stderr:\n%s\nwant a failure printing %q", exit, stderr, want)
	}
}

// debugResponse is the agent's response in the conversation the CLI
// prints with --debug.
func debugResponse(t *testing.T, stderr string) map[string]any {
	t.Helper()
	i := strings.LastIndex(stderr, "Conversation:")
	if i < 0 {
		t.Fatalf("the CLI printed no conversation:\n%s", stderr)
	}
	var conv []struct {
		Role    string         `json:"role"`
		Content map[string]any `json:"content"`
	}
	if err := json.Unmarshal([]byte(stderr[i+len("Conversation:"):]), &conv); err != nil {
		t.Fatalf("the conversation is not JSON: %v\n%s", err, stderr[i:])
	}
	for _, m := range conv {
		if m.Role == "agent" {
			return m.Content
		}
	}
	t.Fatalf("the conversation has no agent response:\n%s", stderr[i:])
	return nil
}

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
		`{"adcp_version":"3.2-rc.7","buying_mode":"brief","brief":"Video for a coffee brand launch","filters":{"budget_range":{"max":100,"currency":"USD"}}}`,
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
