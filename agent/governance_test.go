package agent_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/storefront/storefront/app"
	"github.com/storefront/storefront/internal/govstub"
	"github.com/storefront/storefront/internal/kittest"
	"github.com/storefront/storefront/internal/testenv"
	"github.com/storefront/storefront/store/pgstore/pgtest"
)

const govAccount = `{"brand":{"domain":"acme.example"},"operator":"pinnacle-agency.example"}`

func syncGovernanceArgs(key, url string) string {
	return `{"adcp_version":"3.2-beta.5","idempotency_key":"` + key + `","context":{"correlation_id":"gov"},"accounts":[{"account":` + govAccount +
		`,"governance_agents":[{"url":"` + url + `","authentication":{"schemes":["Bearer"],"credentials":"` + govstub.Token + `"}}]}]}`
}

func governedBuyArgs(key, gc string, budget int) string {
	return `{"adcp_version":"3.2-beta.5","idempotency_key":"` + key + `","account":` + govAccount + `,"brand":{"domain":"acme.example"},` +
		`"governance_context":"` + gc + `","start_time":"asap","end_time":"` + testenv.Day(92) + `T00:00:00Z",` +
		`"packages":[{"product_id":"nw_display_ros_mrec","pricing_option_id":"cpm_usd_floor_ros","budget":` + strings.TrimSpace(jsonInt(budget)) + `}]}`
}

func jsonInt(n int) string { b, _ := json.Marshal(n); return string(b) }

// a2aTask sends one AdCP invocation over A2A and returns the task's state
// and the AdCP object of its artifact.
func a2aTask(t *testing.T, env *testenv.Env, skill, input string) (string, []byte) {
	t.Helper()
	_, state, data := kittest.A2ATask(t, env.BaseURL+"/a2a", env.BuyerToken, skill, input)
	return state, data
}

// TestGovernanceEndToEnd runs the real program, on each store, with a real
// governance agent: sync_governance over MCP and A2A, the capability, and
// buys the agent approves and denies on both transports; on PostgreSQL a
// second replica sees the registration.
func TestGovernanceEndToEnd(t *testing.T) {
	for _, tc := range pgtest.Stores {
		t.Run(tc.Name, func(t *testing.T) {
			stub := govstub.Start(t, func() time.Time { return testenv.Clock })
			withStub := func(m *app.Main) { m.GovernanceTransport = stub.Transport() }
			db := tc.Args(t)
			// Sandbox mode: the stub listens on loopback.
			env := testenv.StartWith(t, withStub, append([]string{"--sandbox"}, db...)...)
			cs := kittest.Connect(t, env.BaseURL, env.BuyerToken)

			tools, err := cs.ListTools(t.Context(), nil)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tool := range tools.Tools {
				names = append(names, tool.Name)
			}
			if !slices.Contains(names, "sync_governance") {
				t.Errorf("tools/list = %v, want sync_governance", names)
			}
			_, caps := kittest.Call(t, cs, "get_adcp_capabilities", `{"adcp_version":"3.2-beta.5"}`)
			if mb := kittest.Decode(t, caps)["media_buy"].(map[string]any); mb["governance_aware"] != true {
				t.Errorf("media_buy.governance_aware = %v, want true", mb["governance_aware"])
			}

			res, synced := kittest.Call(t, cs, "sync_governance", syncGovernanceArgs("gov-sync-mcp-000001", stub.URL))
			m := validateTool(t, "sync_governance", synced)
			if res.IsError || m["accounts"].([]any)[0].(map[string]any)["status"] != "synced" || m["context"].(map[string]any)["correlation_id"] != "gov" {
				t.Fatalf("sync_governance over MCP = %s", synced)
			}
			if strings.Contains(string(synced), govstub.Token) {
				t.Errorf("the answer carries the credentials: %s", synced)
			}
			// Idempotent: the retry replays, another payload on the key conflicts.
			_, again := kittest.Call(t, cs, "sync_governance", syncGovernanceArgs("gov-sync-mcp-000001", stub.URL))
			if kittest.Decode(t, again)["replayed"] != true {
				t.Errorf("the retried sync_governance = %s, want replayed", again)
			}
			_, conflict := kittest.Call(t, cs, "sync_governance", syncGovernanceArgs("gov-sync-mcp-000001", "https://gov.elsewhere.example/mcp"))
			if kittest.Decode(t, conflict)["adcp_error"].(map[string]any)["code"] != "IDEMPOTENCY_CONFLICT" {
				t.Errorf("the same key on another agent = %s, want IDEMPOTENCY_CONFLICT", conflict)
			}

			gc := stub.Plan(10000)
			res, made := kittest.Call(t, cs, "create_media_buy", governedBuyArgs("gov-buy-mcp-0000001", gc, 5000))
			if m := validateTool(t, "create_media_buy", made); res.IsError || m["media_buy_id"] == nil {
				t.Fatalf("an approved buy over MCP = %s", made)
			}
			res, denied := kittest.Call(t, cs, "create_media_buy", governedBuyArgs("gov-buy-mcp-0000002", gc, 50000))
			if m := validateTool(t, "create_media_buy", denied); !res.IsError || m["adcp_error"].(map[string]any)["code"] != "GOVERNANCE_DENIED" {
				t.Fatalf("a buy over the plan over MCP = %s, want isError and GOVERNANCE_DENIED", denied)
			}

			state, viaA2A := a2aTask(t, env, "sync_governance", syncGovernanceArgs("gov-sync-a2a-000001", stub.URL))
			if m := validateTool(t, "sync_governance", viaA2A); state != "TASK_STATE_COMPLETED" || m["accounts"].([]any)[0].(map[string]any)["status"] != "synced" {
				t.Errorf("sync_governance over A2A: %s %s", state, viaA2A)
			}
			state, deniedA2A := a2aTask(t, env, "create_media_buy", governedBuyArgs("gov-buy-a2a-0000001", gc, 50000))
			if m := validateTool(t, "create_media_buy", deniedA2A); state != "TASK_STATE_FAILED" || m["adcp_error"].(map[string]any)["code"] != "GOVERNANCE_DENIED" {
				t.Errorf("a buy over the plan over A2A: %s %s, want a failed task with GOVERNANCE_DENIED", state, deniedA2A)
			}
			state, madeA2A := a2aTask(t, env, "create_media_buy", governedBuyArgs("gov-buy-a2a-0000002", gc, 6000))
			if m := validateTool(t, "create_media_buy", madeA2A); state != "TASK_STATE_COMPLETED" || m["media_buy_id"] == nil {
				t.Errorf("an approved buy over A2A: %s %s", state, madeA2A)
			}
			if n := len(stub.Checks()); n != 4 {
				t.Errorf("the agent received %d checks, want one per governed buy (4)", n)
			}
			for _, c := range stub.Checks() {
				if caller, _ := c["caller"].(string); !strings.HasPrefix(caller, env.BaseURL) {
					t.Errorf("check caller = %q, want the storefront's own URL (%s)", caller, env.BaseURL)
				}
			}

			if db == nil {
				return
			}
			// The registration is in the database: another replica on it
			// holds the account to its agent.
			replica := testenv.StartWith(t, withStub, "--sandbox", db[0], db[1], db[3], db[4])
			rs := kittest.Connect(t, replica.BaseURL, env.BuyerToken)
			_, noContext := kittest.Call(t, rs, "create_media_buy", strings.Replace(governedBuyArgs("gov-buy-replica-001", "x", 5000), `"governance_context":"x",`, "", 1))
			if kittest.Decode(t, noContext)["adcp_error"].(map[string]any)["code"] != "PERMISSION_DENIED" {
				t.Errorf("a buy without governance_context on the other replica = %s, want PERMISSION_DENIED", noContext)
			}
		})
	}
}
