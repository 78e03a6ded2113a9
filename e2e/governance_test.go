package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/storefront/storefront/internal/govstub"
	"github.com/storefront/storefront/internal/spectest"
)

// TestGovernanceWithTheSDK is a buyer with the @adcp/sdk CLI registering
// its governance agent on an account with sync_governance and buying on
// it: the storefront binary asks the agent (a real MCP server over HTTPS,
// trusted through SSL_CERT_FILE) before each buy, makes the one the plan
// covers and refuses the one it does not with GOVERNANCE_DENIED.
func TestGovernanceWithTheSDK(t *testing.T) {
	stub := govstub.Start(t, time.Now)
	cert := filepath.Join(t.TempDir(), "govstub.pem")
	if err := os.WriteFile(cert, stub.CertPEM(), 0o600); err != nil {
		t.Fatal(err)
	}
	// Sandbox mode: the agent listens on loopback.
	sf := Start(t, []string{"SSL_CERT_FILE=" + cert}, "--sandbox")
	mcp := sf.BaseURL + "/mcp"
	buyer := func(tool, args string) (CLIResult, []byte) {
		t.Helper()
		res := ADCP(t, mcp, tool, args, "--protocol", "mcp", "--auth", sf.BuyerToken)
		raw, _ := res.Metadata["protocolMessage"].(string)
		return res, []byte(raw)
	}
	const account = `{"brand":{"domain":"acme.example"},"operator":"pinnacle-agency.example"}`

	synced, raw := buyer("sync_governance", `{"adcp_version":"3.2-beta.5","idempotency_key":"e2e-sync-governance-0001","accounts":[{"account":`+account+
		`,"governance_agents":[{"url":"`+stub.URL+`","authentication":{"schemes":["Bearer"],"credentials":"`+govstub.Token+`"}}]}]}`)
	if synced.Exit != 0 || len(raw) == 0 {
		t.Fatalf("sync_governance: exit %d\n%s%s", synced.Exit, synced.Raw, synced.Stderr)
	}
	spectest.Validate(t, "account/sync-governance-response.json", raw)
	if a := synced.Data["accounts"].([]any)[0].(map[string]any); a["status"] != "synced" {
		t.Fatalf("sync_governance = %s, want the account synced", raw)
	}

	gc := stub.Plan(10000)
	now := time.Now().UTC()
	buy := func(key string, budget int) string {
		return `{"adcp_version":"3.2-beta.5","idempotency_key":"` + key + `","account":` + account + `,"brand":{"domain":"acme.example"},` +
			`"governance_context":"` + gc + `","start_time":"` + now.AddDate(0, 0, 2).Format("2006-01-02") + `T00:00:00Z","end_time":"` +
			now.AddDate(0, 0, 40).Format("2006-01-02") + `T00:00:00Z","packages":[{"product_id":"nw_display_ros_mrec","pricing_option_id":"cpm_usd_floor_ros","budget":` + jsonInt(budget) + `}]}`
	}
	made, raw := buyer("create_media_buy", buy("e2e-governed-buy-00001", 5000))
	if made.Exit != 0 || made.Data["media_buy_id"] == nil {
		t.Fatalf("a buy the plan covers: exit %d\n%s%s", made.Exit, made.Raw, made.Stderr)
	}
	spectest.Validate(t, "media-buy/create-media-buy-response.json", raw)
	denied, _ := buyer("create_media_buy", buy("e2e-governed-buy-00002", 50000))
	if denied.Exit == 0 || !strings.Contains(denied.Stderr+denied.Raw, "GOVERNANCE_DENIED") {
		t.Fatalf("a buy over the plan: exit %d, want GOVERNANCE_DENIED\n%s%s", denied.Exit, denied.Raw, denied.Stderr)
	}
	checks := stub.Checks()
	if len(checks) != 2 || checks[0]["governance_context"] != gc || checks[1]["phase"] != "purchase" {
		t.Errorf("the agent received %v, want one purchase check per buy, forwarding the buyer's context", checks)
	}
}
