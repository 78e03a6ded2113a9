package e2e

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/storefront/storefront/adcp"
	"github.com/storefront/storefront/internal/spectest"
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
// same requests get over MCP. A buyer pinned to each end of the 3.2 betas
// and release candidates (beta.0, beta.11, rc.0, rc.7) gets the rejected
// arm for the README's 100 USD brief on both transports.
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
			readmeBrief("3.2-rc.7"), []string{"--auth", sf.BuyerToken}, "rejected"},
		{"rejected 3.2-beta.0", sf.BaseURL + "/a2a", readmeBrief("3.2-beta.0"), []string{"--auth", sf.BuyerToken}, "rejected"},
		{"rejected 3.2-beta.11", sf.BaseURL + "/a2a", readmeBrief("3.2-beta.11"), []string{"--auth", sf.BuyerToken}, "rejected"},
		{"rejected 3.2-rc.0", sf.BaseURL + "/a2a", readmeBrief("3.2-rc.0"), []string{"--auth", sf.BuyerToken}, "rejected"},
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
			a2aPayload := adcpPayload(t, viaA2A)
			if diff := cmp.Diff(adcpPayload(t, viaMCP), a2aPayload); diff != "" {
				t.Errorf("A2A and MCP payloads differ (-mcp +a2a):\n%s", diff)
			}
			// A pinned buyer gets its pin echoed exactly, in a payload
			// valid against the official schemas (the MCP bytes, as the
			// storefront sent them).
			var req struct {
				Version string `json:"adcp_version"`
			}
			_ = json.Unmarshal([]byte(test.request), &req)
			if req.Version != "" {
				raw, _ := viaMCP.Metadata["protocolMessage"].(string)
				spectest.GetProducts(t, []byte(raw))
				if a2aPayload["adcp_version"] != req.Version || viaMCP.Data["adcp_version"] != req.Version {
					t.Errorf("adcp_version = %v over A2A, %v over MCP, want %s echoed exactly", a2aPayload["adcp_version"], viaMCP.Data["adcp_version"], req.Version)
				}
			}
		})
	}
}

// TestSDKA2AFailureReason: a failed A2A task says why in its status
// message, as the screened text and the typed error, besides the artifact.
// The @adcp/sdk 6.11.0 CLI, speaking A2A 0.3, shows a 3.1 buyer the
// decline reason it receives there (its summary line, "Error: Task
// failed", reads neither place: that client takes a failed task's reason
// only from a JSON-RPC error); and a 3.2-rc.8 buyer the versions served.
func TestSDKA2AFailureReason(t *testing.T) {
	t.Parallel()
	sf := Start(t, nil)
	for _, test := range []struct {
		pin, code, want string
	}{
		{"3.1", "BUDGET_TOO_LOW", ""},
		{"3.2-rc.8", "VERSION_UNSUPPORTED", "supported versions are " + strings.Join(adcp.SupportedStrings(), ", ")},
	} {
		t.Run(test.pin, func(t *testing.T) {
			// The reason as MCP carries it.
			_, mcpErr, _ := ADCPOutput(t, sf.BaseURL+"/mcp", "get_products", readmeBrief(test.pin), "--protocol", "mcp", "--auth", sf.BuyerToken)
			stdout, stderr, exit := ADCPOutput(t, sf.BaseURL+"/a2a", "get_products", readmeBrief(test.pin), "--protocol", "a2a", "--auth", sf.BuyerToken, "--debug")
			if exit != 3 || !strings.Contains(stderr, "TASK FAILED") {
				t.Fatalf("exit %d, want 3 with TASK FAILED:\nstdout: %s\nstderr: %s", exit, stdout, stderr)
			}
			task, _ := debugResponse(t, stderr)["result"].(map[string]any)
			status, _ := task["status"].(map[string]any)
			msg, _ := status["message"].(map[string]any)
			parts, _ := msg["parts"].([]any)
			if status["state"] != "failed" || len(parts) != 2 {
				t.Fatalf("task status = %v, want failed with a message of two parts", status)
			}
			reason, _ := parts[0].(map[string]any)["text"].(string)
			typed, _ := parts[1].(map[string]any)["data"].(map[string]any)
			ae, _ := typed["adcp_error"].(map[string]any)
			if reason == "" || ae["code"] != test.code || ae["message"] != reason {
				t.Errorf("status message parts = %v, want the reason and a %s typed error carrying it", parts, test.code)
			}
			if !strings.Contains(mcpErr, "Error: "+test.code+": "+reason) {
				t.Errorf("the status message's reason %q is not the one the CLI prints over MCP:\n%s", reason, mcpErr)
			}
			if !strings.Contains(reason, test.want) {
				t.Errorf("reason %q does not say %q", reason, test.want)
			}
			if art, _ := task["artifacts"].([]any); len(art) != 1 || !strings.Contains(mustString(t, art[0]), reason) {
				t.Errorf("the artifact does not carry the reason too: %v", task["artifacts"])
			}
		})
	}
}

func mustString(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
