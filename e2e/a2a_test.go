package e2e

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// adcpPayload is the AdCP object the CLI printed, without what differs by
// transport or by call: the CLI's own _message (the text it found beside
// the data) and the ledger receipt, which is new for every call.
func adcpPayload(t *testing.T, r CLIResult) map[string]any {
	t.Helper()
	b, err := json.Marshal(r.Data)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	delete(m, "_message")
	if ext, ok := m["ext"].(map[string]any); ok {
		if ns, ok := ext["io.github.storefront"].(map[string]any); ok {
			delete(ns, "receipt")
		}
	}
	return m
}

// TestSDKOverA2A is the README's A2A worked example, run by a real buyer
// client: the @adcp/sdk CLI speaks A2A 0.3 to the real binary and gets a
// completed and a rejected response whose AdCP payloads are the ones the
// same requests get over MCP.
func TestSDKOverA2A(t *testing.T) {
	sf := Start(t, nil)
	for _, test := range []struct {
		name string
		// agent is the URL given to the CLI: the origin, or the
		// endpoint itself (the card is served relative to both).
		agent   string
		request string
		auth    []string
		want    string
	}{
		{"completed", sf.BaseURL,
			`{"buying_mode":"brief","brief":"Video for a coffee brand launch","pagination":{"max_results":3},"context":{"correlation_id":"readme-a2a-completed"}}`,
			nil, "completed"},
		{"rejected", sf.BaseURL + "/a2a",
			`{"adcp_version":"3.2-beta.5","buying_mode":"brief","brief":"Video for a coffee brand launch","filters":{"budget_range":{"max":100,"currency":"USD"}}}`,
			[]string{"--auth", sf.BuyerToken}, "rejected"},
	} {
		t.Run(test.name, func(t *testing.T) {
			viaA2A := ADCP(t, append([]string{test.agent, "get_products", test.request, "--protocol", "a2a"}, test.auth...)...)
			if viaA2A.Exit != 0 {
				t.Fatalf("A2A call exited %d (a rejection is a successful exchange):\n%s", viaA2A.Exit, viaA2A.Raw)
			}
			if p, _ := viaA2A.Metadata["protocol"].(string); p != "a2a" {
				t.Errorf("the CLI used protocol %q, want a2a", p)
			}
			if viaA2A.Data["status"] != test.want {
				t.Fatalf("status = %v, want %s:\n%s", viaA2A.Data["status"], test.want, viaA2A.Raw)
			}
			viaMCP := ADCP(t, append([]string{sf.BaseURL + "/mcp", "get_products", test.request, "--protocol", "mcp"}, test.auth...)...)
			if viaMCP.Exit != 0 {
				t.Fatalf("MCP call exited %d:\n%s", viaMCP.Exit, viaMCP.Raw)
			}
			if diff := cmp.Diff(adcpPayload(t, viaMCP), adcpPayload(t, viaA2A)); diff != "" {
				t.Errorf("A2A and MCP payloads differ (-mcp +a2a):\n%s", diff)
			}
		})
	}
}
