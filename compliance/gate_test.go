package compliance_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/storefront/storefront/compliance"
	"github.com/storefront/storefront/internal/kittest"
	"github.com/storefront/storefront/internal/spectest"
	"github.com/storefront/storefront/internal/testenv"
)

// TestProductionGate: without --sandbox the controller does not exist on
// any surface, and test-kit keys are not credentials. Each check is also
// made against a sandbox storefront, where it must come out the other
// way, so that a check that cannot fail does not pass for nothing.
func TestProductionGate(t *testing.T) {
	prod := testenv.Start(t)
	sandbox := testenv.Start(t, "--sandbox")
	for _, test := range []struct {
		name    string
		env     *testenv.Env
		sandbox bool
	}{
		{"production", prod, false},
		{"sandbox", sandbox, true},
	} {
		t.Run(test.name, func(t *testing.T) {
			// A buyer of the storefront: the kit's key in sandbox mode; a
			// buyer token in production, where the kit's keys are no
			// credentials at all (see "test-kit key").
			caller := kittest.Kit
			if !test.sandbox {
				caller = test.env.BuyerToken
			}
			t.Run("MCP tools/list", func(t *testing.T) {
				cs := kittest.Connect(t, test.env.BaseURL, caller)
				res, err := cs.ListTools(context.Background(), nil)
				if err != nil {
					t.Fatal(err)
				}
				listed := false
				for _, tool := range res.Tools {
					listed = listed || tool.Name == "comply_test_controller"
				}
				if listed != test.sandbox {
					t.Errorf("tools/list offers comply_test_controller: %v, want %v", listed, test.sandbox)
				}
			})

			t.Run("MCP call", func(t *testing.T) {
				cs := kittest.Connect(t, test.env.BaseURL, caller)
				_, payload, err := kittest.TryCall(cs, "comply_test_controller", `{"adcp_version":"3.2-beta.5","scenario":"list_scenarios","account":{"sandbox":true}}`)
				if test.sandbox {
					if err != nil {
						t.Fatalf("sandbox call failed: %v", err)
					}
					if m := kittest.Decode(t, payload); m["success"] != true {
						t.Errorf("sandbox list_scenarios = %s", payload)
					}
					return
				}
				var rpcErr *jsonrpc.Error
				if !errors.As(err, &rpcErr) {
					t.Fatalf("calling comply_test_controller: err = %v (payload %s), want the SDK's unknown-tool JSON-RPC error", err, payload)
				}
				if rpcErr.Code != jsonrpc.CodeInvalidParams || !strings.Contains(rpcErr.Message, `unknown tool "comply_test_controller"`) {
					t.Errorf("JSON-RPC error = %d %q, want %d unknown tool", rpcErr.Code, rpcErr.Message, jsonrpc.CodeInvalidParams)
				}
			})

			t.Run("A2A card", func(t *testing.T) {
				resp, err := http.Get(test.env.BaseURL + "/.well-known/agent-card.json")
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				var card struct {
					Skills []struct {
						ID string `json:"id"`
					} `json:"skills"`
				}
				if err := json.NewDecoder(resp.Body).Decode(&card); err != nil {
					t.Fatal(err)
				}
				listed := false
				for _, s := range card.Skills {
					listed = listed || s.ID == "comply_test_controller"
				}
				if len(card.Skills) == 0 {
					t.Fatal("the card has no skills")
				}
				if listed != test.sandbox {
					t.Errorf("the card offers comply_test_controller: %v, want %v", listed, test.sandbox)
				}
			})

			t.Run("A2A call", func(t *testing.T) {
				m := a2aSend(t, test.env.BaseURL, caller, "comply_test_controller", `{"adcp_version":"3.2-beta.5","scenario":"list_scenarios","account":{"sandbox":true}}`)
				if test.sandbox {
					if m["error"] != nil || m["result"] == nil {
						t.Errorf("sandbox A2A call = %v, want a result", m)
					}
					return
				}
				code, breach := a2aError(m)
				if code != -32602 || breach != "unknown_skill" {
					t.Errorf("A2A answer = %v, want -32602 with adcp_profile_error unknown_skill", m)
				}
				if m["result"] != nil {
					t.Errorf("the refusal also carries a result: %v", m)
				}
			})

			t.Run("capabilities", func(t *testing.T) {
				cs := kittest.Connect(t, test.env.BaseURL, "")
				for _, test2 := range []struct {
					args string
					// want is the scenarios compliance_testing declares in
					// sandbox mode (outside it, none: the block is absent).
					want []string
				}{
					{`{}`, compliance.Scenarios()},
					{`{"adcp_version":"3.0"}`, scenarios30Implemented},
					{`{"adcp_version":"3.1"}`, compliance.Scenarios()},
					{`{"adcp_version":"3.2-beta.4"}`, compliance.Scenarios()},
					{`{"adcp_version":"3.2-beta.5"}`, compliance.Scenarios()},
				} {
					_, payload := kittest.Call(t, cs, "get_adcp_capabilities", test2.args)
					spectest.Validate(t, "protocol/get-adcp-capabilities-response.json", payload)
					m := kittest.Decode(t, payload)
					ct, has := m["compliance_testing"].(map[string]any)
					if has != test.sandbox {
						t.Errorf("capabilities(%s) declare compliance_testing: %v, want %v", test2.args, has, test.sandbox)
					}
					if has && kittest.JSONOf(t, ct["scenarios"]) != kittest.JSONOf(t, test2.want) {
						t.Errorf("capabilities(%s) compliance_testing.scenarios = %v, want %v", test2.args, ct["scenarios"], test2.want)
					}
					if acct, _ := m["account"].(map[string]any); acct["sandbox"] != test.sandbox {
						t.Errorf("capabilities(%s) account.sandbox = %v, want %v", test2.args, acct["sandbox"], test.sandbox)
					}
				}
			})

			t.Run("test-kit key", func(t *testing.T) {
				for _, tool := range []string{"get_products", "get_task_status", "list_tasks"} {
					args := kittest.Brief
					if tool != "get_products" {
						args = `{"task_id":"t1"}`
					}
					p := kittest.ProbeMCP(t, test.env.BaseURL+"/mcp", kittest.Kit, tool, args)
					if test.sandbox {
						if p.Status != http.StatusOK {
							t.Errorf("%s: the sandbox refused its own test-kit key: %d %v", tool, p.Status, p.Body)
						}
						continue
					}
					// Outside sandbox mode the key names no principal: the
					// call is refused before dispatch, as any unknown token.
					e, _ := p.Body["error"].(map[string]any)
					data, _ := e["data"].(map[string]any)
					adcpErr, _ := data["adcp_error"].(map[string]any)
					if p.Status != http.StatusUnauthorized || !strings.Contains(p.Header.Get("WWW-Authenticate"), `error="invalid_token"`) || adcpErr["code"] != "AUTH_INVALID" {
						t.Errorf("%s with a test-kit key outside sandbox = %d %v %v, want 401 invalid_token with AUTH_INVALID", tool, p.Status, p.Header.Get("WWW-Authenticate"), p.Body)
					}
				}
			})
		})
	}
}

// a2aSend sends one AdCP profile invocation over A2A 1.0 JSON-RPC and
// returns the JSON-RPC answer.
func a2aSend(t *testing.T, base, token, skill, input string) map[string]any {
	t.Helper()
	p := kittest.ProbeA2A(t, base+"/a2a", token, skill, input)
	if p.Status != http.StatusOK {
		t.Fatalf("POST /a2a: %d %v", p.Status, p.Body)
	}
	return p.Body
}

// a2aError reads the JSON-RPC error code and the AdCP profile breach.
func a2aError(m map[string]any) (code float64, breach string) {
	e, _ := m["error"].(map[string]any)
	code, _ = e["code"].(float64)
	data, _ := e["data"].([]any)
	for _, d := range data {
		d, _ := d.(map[string]any)
		md, _ := d["metadata"].(map[string]any)
		if b, ok := md["adcp_profile_error"].(string); ok {
			breach = b
		}
	}
	return code, breach
}

// scenarios30Implemented are the scenarios of AdCP 3.0's closed
// compliance_testing.scenarios enum (protocol/get-adcp-capabilities-response.json,
// the same in 3.0.6 and 3.0.28: force_creative_status, force_account_status,
// force_media_buy_status, force_session_status, simulate_delivery,
// simulate_budget_spend) that this controller implements, in its order.
var scenarios30Implemented = []string{"force_account_status", "force_media_buy_status", "simulate_delivery", "simulate_budget_spend"}
