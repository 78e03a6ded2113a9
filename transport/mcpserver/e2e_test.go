package mcpserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/storefront/storefront/adcp"
	"github.com/storefront/storefront/demo"
	goldenfile "github.com/storefront/storefront/internal/golden"
	"github.com/storefront/storefront/internal/spectest"
	"github.com/storefront/storefront/internal/testenv"
)

// session connects the Go MCP client to the storefront at base, as a buyer
// holding token ("" for anonymous), speaking the MCP protocol version most
// clients use today.
func session(t *testing.T, base, token string) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "storefront-test", Version: "0"}, nil)
	tr := &mcp.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: testenv.BearerClient(token), DisableStandaloneSSE: true}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := c.Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: "2025-06-18"})
	if err != nil {
		t.Fatalf("connecting the MCP client: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// call invokes a tool with raw JSON arguments and checks the MCP result
// shape every answer must have: the AdCP object flat in structuredContent
// and the same JSON in content[0].text.
func call(t *testing.T, cs *mcp.ClientSession, tool, args string) (*mcp.CallToolResult, []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: json.RawMessage(args)})
	if err != nil {
		t.Fatalf("CallTool(%s, %s): %v", tool, args, err)
	}
	if len(res.Content) == 0 {
		t.Fatalf("CallTool(%s) returned no content", tool)
	}
	text, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("CallTool(%s) content[0] is %T, want text", tool, res.Content[0])
	}
	structured, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	if !jsonEqual(t, structured, []byte(text.Text)) {
		t.Errorf("CallTool(%s): structuredContent and content[0].text differ:\n%s\n%s", tool, structured, text.Text)
	}
	return res, []byte(text.Text)
}

func jsonEqual(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, a)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, b)
	}
	return cmp.Equal(x, y)
}

func decode(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("not a JSON object: %v\n%s", err, b)
	}
	return m
}

// demoConfidential is what the demo publisher keeps from buyers.
var demoConfidential = func() []string {
	rb := demo.Rulebook()
	return goldenfile.Confidential(&rb, demo.Products())
}()

var receiptRE = regexp.MustCompile(`"entry_hash":"[0-9a-f]{64}"|"sequence":[0-9]+`)

// golden compares payload with testdata/golden/name.json, after replacing
// the ledger receipt, which changes with every run. The demo publisher's
// confidential terms may never appear in one.
func golden(t *testing.T, name string, payload []byte) {
	t.Helper()
	goldenfile.JSON(t, filepath.Join("testdata", "golden", name+".json"), payload, goldenfile.Options{
		Confidential: demoConfidential,
		Normalise: func(b []byte) []byte {
			return receiptRE.ReplaceAllFunc(b, func(m []byte) []byte {
				if bytes.HasPrefix(m, []byte(`"entry_hash"`)) {
					return []byte(`"entry_hash":"<hash>"`)
				}
				return []byte(`"sequence":0`)
			})
		},
		Hint: "go test ./mcpserver -update",
	})
}

func TestToolsList(t *testing.T) {
	env := testenv.Start(t)
	cs := session(t, env.BaseURL, "")
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]*mcp.Tool{}
	for _, tool := range res.Tools {
		got[tool.Name] = tool
	}
	for _, want := range []string{"get_adcp_capabilities", "get_products"} {
		if got[want] == nil {
			t.Errorf("tools/list lacks %s", want)
		}
	}
	if got["comply_test_controller"] != nil {
		t.Error("tools/list offers comply_test_controller outside sandbox mode")
	}
	gp := got["get_products"]
	if gp == nil {
		t.FailNow()
	}
	for _, slug := range []string{"budget_below_minimum", "channel_not_offered", "commercially_declined"} {
		if !strings.Contains(gp.Description, slug) {
			t.Errorf("get_products description does not publish slug %s", slug)
		}
	}
	if _, ok := gp.Meta["io.github.storefront/decline_vocabulary"]; !ok {
		t.Errorf("get_products _meta lacks the decline vocabulary: %v", gp.Meta)
	}
}

func TestCapabilities(t *testing.T) {
	env := testenv.Start(t)
	cs := session(t, env.BaseURL, "")
	res, payload := call(t, cs, "get_adcp_capabilities", `{"context":{"correlation_id":"caps-1","nested":{"a":[1,2]}}}`)
	if res.IsError {
		t.Fatalf("capabilities isError: %s", payload)
	}
	spectest.Validate(t, "protocol/get-adcp-capabilities-response.json", payload)
	m := decode(t, payload)
	if m["status"] != "completed" {
		t.Errorf("status = %v, want completed", m["status"])
	}
	if m["adcp_version"] != "3.1" {
		t.Errorf("adcp_version = %v, want the default release 3.1", m["adcp_version"])
	}
	want := map[string]any{"correlation_id": "caps-1", "nested": map[string]any{"a": []any{1.0, 2.0}}}
	if diff := cmp.Diff(want, m["context"]); diff != "" {
		t.Errorf("context not echoed unchanged (-want +got):\n%s", diff)
	}
	adcpBlock := m["adcp"].(map[string]any)
	var served []any
	for _, v := range adcp.SupportedStrings() {
		served = append(served, v)
	}
	if diff := cmp.Diff(served, adcpBlock["supported_versions"]); diff != "" {
		t.Errorf("supported_versions (-want +got):\n%s", diff)
	}
	if _, ok := m["compliance_testing"]; ok {
		t.Error("capabilities advertise compliance_testing outside sandbox mode")
	}

	_, pinned := call(t, cs, "get_adcp_capabilities", `{"adcp_version":"3.2-beta.5"}`)
	if v := decode(t, pinned)["adcp_version"]; v != "3.2-beta.5" {
		t.Errorf("pinned capabilities adcp_version = %v, want 3.2-beta.5", v)
	}
}

func TestGetProductsArms(t *testing.T) {
	env := testenv.Start(t)
	anon := session(t, env.BaseURL, "")
	for _, test := range []struct {
		name      string
		args      string
		wantArm   string
		wantError bool
	}{
		{"completed", `{"adcp_version":"3.2-beta.5","buying_mode":"brief","brief":"Coffee brand launch video","filters":{"channels":["olv"],"pricing_currencies":["USD"]},"pagination":{"max_results":2},"context":{"correlation_id":"arm-completed"}}`, "completed", false},
		{"completed_empty", `{"adcp_version":"3.2-beta.5","buying_mode":"wholesale","filters":{"channels":["olv"],"delivery_type":"guaranteed","format_kinds":["audio_hosted"]},"context":{"correlation_id":"arm-empty"}}`, "completed", false},
		{"rejected_budget", `{"adcp_version":"3.2-beta.5","buying_mode":"brief","brief":"Coffee brand launch video","filters":{"budget_range":{"max":100,"currency":"USD"}},"context":{"correlation_id":"arm-rejected"}}`, "rejected", false},
		{"rejected_channel", `{"adcp_version":"3.2-beta.5","buying_mode":"brief","brief":"Billboards for a coffee launch","filters":{"channels":["dooh"]},"context":{"correlation_id":"arm-channel"}}`, "rejected", false},
		{"rejected_final", `{"adcp_version":"3.2-beta.4","buying_mode":"brief","brief":"Online casino welcome bonus","context":{"correlation_id":"arm-final"}}`, "rejected", false},
		{"failed_invalid", `{"adcp_version":"3.2-beta.5","buying_mode":"wholesale","brief":"not allowed here","filters":{"budget_range":{"max":"lots","currency":"USD"}},"context":{"correlation_id":"arm-failed"}}`, "failed", true},
		{"failed_version", `{"adcp_major_version":99,"buying_mode":"brief","brief":"Version negotiation probe","context":{"correlation_id":"arm-version"}}`, "failed", true},
		{"legacy_decline", `{"adcp_version":"3.1","buying_mode":"brief","brief":"Coffee brand launch video","filters":{"budget_range":{"max":100,"currency":"USD"}},"context":{"correlation_id":"arm-legacy"}}`, "failed", true},
	} {
		t.Run(test.name, func(t *testing.T) {
			res, payload := call(t, anon, "get_products", test.args)
			if res.IsError != test.wantError {
				t.Errorf("isError = %v, want %v\n%s", res.IsError, test.wantError, payload)
			}
			if arm := spectest.GetProducts(t, payload); arm != test.wantArm {
				t.Errorf("status = %q, want %q\n%s", arm, test.wantArm, payload)
			}
			m := decode(t, payload)
			wantCtx := decode(t, []byte(test.args))["context"]
			if diff := cmp.Diff(wantCtx, m["context"]); diff != "" {
				t.Errorf("context not echoed (-want +got):\n%s", diff)
			}
			if m["adcp_version"] == nil {
				t.Error("response lacks adcp_version")
			}
			golden(t, "get_products_"+test.name, payload)
		})
	}
}

func TestRejectedArm(t *testing.T) {
	env := testenv.Start(t)
	cs := session(t, env.BaseURL, "")
	res, payload := call(t, cs, "get_products", `{"adcp_version":"3.2-beta.5","buying_mode":"brief","brief":"Coffee launch","filters":{"budget_range":{"max":100,"currency":"USD"}}}`)
	m := decode(t, payload)
	if res.IsError {
		t.Error("a rejection flipped isError")
	}
	for _, forbidden := range []string{"products", "proposals", "errors", "adcp_error", "incomplete", "cache_scope", "filter_diagnostics", "refinement_applied", "unchanged", "wholesale_feed_version", "pricing_version", "pagination"} {
		if _, ok := m[forbidden]; ok {
			t.Errorf("rejected arm carries %s", forbidden)
		}
	}
	sugg, _ := m["suggestions"].([]any)
	if len(sugg) == 0 {
		t.Fatalf("a 100 USD brief was declined without suggestions: %s", payload)
	}
	meta, _ := res.Meta["io.github.storefront/decline"].(map[string]any)
	if meta["slug"] != "budget_below_minimum" {
		t.Errorf("_meta slug = %v, want budget_below_minimum", meta)
	}
	ext := m["ext"].(map[string]any)["io.github.storefront"].(map[string]any)
	if ext["decline"].(map[string]any)["slug"] != "budget_below_minimum" {
		t.Errorf("ext slug = %v", ext)
	}
	receipt := ext["receipt"].(map[string]any)
	if receipt["sequence"].(float64) < 1 || len(receipt["entry_hash"].(string)) != 64 {
		t.Errorf("receipt = %v, want a sequence and a 64-hex entry hash", receipt)
	}

	// The same decline for a 3.1 buyer is a typed, correctable error with
	// the same screened text, never an empty product list.
	res31, p31 := call(t, cs, "get_products", `{"adcp_version":"3.1","buying_mode":"brief","brief":"Coffee launch","filters":{"budget_range":{"max":100,"currency":"USD"}}}`)
	if !res31.IsError {
		t.Error("a 3.1 decline did not set isError")
	}
	e := decode(t, p31)["adcp_error"].(map[string]any)
	if e["code"] != "BUDGET_TOO_LOW" || e["recovery"] != "correctable" {
		t.Errorf("3.1 decline error = %v, want BUDGET_TOO_LOW correctable", e)
	}
	if e["message"] != m["reason"] {
		t.Errorf("3.1 message %q differs from the 3.2 reason %q", e["message"], m["reason"])
	}
}

func TestVersionNegotiation(t *testing.T) {
	env := testenv.Start(t)
	cs := session(t, env.BaseURL, "")
	for _, test := range []struct {
		args string
		want string // served version, or VERSION_UNSUPPORTED
	}{
		{`{"buying_mode":"brief","brief":"coffee"}`, "3.1"},
		{`{"adcp_major_version":3,"buying_mode":"brief","brief":"coffee"}`, "3.1"},
		{`{"adcp_version":"3.0","buying_mode":"brief","brief":"coffee"}`, "3.0"},
		{`{"adcp_version":"3.2-beta.4","buying_mode":"brief","brief":"coffee"}`, "3.2-beta.4"},
		{`{"adcp_version":"3.7","buying_mode":"brief","brief":"coffee"}`, "3.1"},
		{`{"adcp_version":"3.2","buying_mode":"brief","brief":"coffee"}`, "3.1"},
		{`{"adcp_version":"3.2-beta.3","buying_mode":"brief","brief":"coffee"}`, "3.2-beta.3"},
		{`{"adcp_version":"3.2-rc.7","buying_mode":"brief","brief":"coffee"}`, "3.2-rc.7"},
		{`{"adcp_version":"3.2-rc.8","buying_mode":"brief","brief":"coffee"}`, "VERSION_UNSUPPORTED"},
		{`{"adcp_version":"99.0","buying_mode":"brief","brief":"coffee"}`, "VERSION_UNSUPPORTED"},
		{`{"adcp_major_version":99,"buying_mode":"brief","brief":"coffee"}`, "VERSION_UNSUPPORTED"},
		{`{"adcp_version":"3.2.0-beta.5","buying_mode":"brief","brief":"coffee"}`, "VERSION_UNSUPPORTED"},
	} {
		res, payload := call(t, cs, "get_products", test.args)
		m := decode(t, payload)
		if test.want == "VERSION_UNSUPPORTED" {
			e, _ := m["adcp_error"].(map[string]any)
			if !res.IsError || e["code"] != "VERSION_UNSUPPORTED" {
				t.Errorf("get_products(%s) = %s, want VERSION_UNSUPPORTED", test.args, payload)
				continue
			}
			details, _ := e["details"].(map[string]any)
			if sv, _ := details["supported_versions"].([]any); len(sv) != len(adcp.Supported()) {
				t.Errorf("VERSION_UNSUPPORTED details.supported_versions = %v", details)
			}
			spectest.Validate(t, "error-details/version-unsupported.json", mustJSON(t, details))
			continue
		}
		if m["adcp_version"] != test.want {
			t.Errorf("get_products(%s) served %v, want %s", test.args, m["adcp_version"], test.want)
		}
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestBadInput(t *testing.T) {
	env := testenv.Start(t)
	anon := session(t, env.BaseURL, "")
	// A call naming an account needs credentials; without them it is
	// refused with HTTP 401 before its arguments are read (TestAuthHTTP).
	buyer := session(t, env.BaseURL, env.BuyerToken)
	for _, test := range []struct {
		name, args, code, field string
	}{
		{"wrong type", `{"buying_mode":"brief","brief":42}`, "INVALID_REQUEST", "brief"},
		{"nested wrong type", `{"buying_mode":"brief","brief":"x","filters":{"budget_range":{"max":"100","currency":"USD"}}}`, "INVALID_REQUEST", "filters.budget_range.max"},
		{"unknown buying_mode", `{"buying_mode":"auction","brief":"x"}`, "INVALID_REQUEST", "buying_mode"},
		{"brief with wholesale", `{"buying_mode":"wholesale","brief":"x"}`, "INVALID_REQUEST", "brief"},
		{"refine outside refine mode", `{"buying_mode":"brief","brief":"x","refine":[{"scope":"request","ask":"more"}]}`, "INVALID_REQUEST", "refine"},
		{"refine finalize mixed", `{"buying_mode":"refine","refine":[{"scope":"proposal","proposal_id":"p1","action":"finalize"},{"scope":"product","product_id":"nw_display_ros_mrec"}]}`, "INVALID_REQUEST", "refine[1]"},
		{"refine bad scope", `{"buying_mode":"refine","refine":[{"scope":"everything","ask":"x"}]}`, "INVALID_REQUEST", "refine[0].scope"},
		{"refine empty", `{"buying_mode":"refine","refine":[]}`, "INVALID_REQUEST", "refine"},
		{"reversed budget", `{"buying_mode":"brief","brief":"x","filters":{"budget_range":{"min":500,"max":100,"currency":"USD"}}}`, "VALIDATION_ERROR", "filters.budget_range"},
		{"reversed dates", `{"buying_mode":"brief","brief":"x","filters":{"start_date":"2027-02-01","end_date":"2027-01-01"}}`, "VALIDATION_ERROR", "filters.end_date"},
		{"bad date", `{"buying_mode":"brief","brief":"x","filters":{"start_date":"next week"}}`, "INVALID_REQUEST", "filters.start_date"},
		{"bad channel", `{"buying_mode":"brief","brief":"x","filters":{"channels":["video"]}}`, "INVALID_REQUEST", "filters.channels[0]"},
		{"bad page size", `{"buying_mode":"brief","brief":"x","pagination":{"max_results":1000}}`, "INVALID_REQUEST", "pagination.max_results"},
		{"bad cursor", `{"buying_mode":"brief","brief":"x","pagination":{"cursor":"forged"}}`, "INVALID_REQUEST", "pagination.cursor"},
		{"oversized brief", `{"buying_mode":"brief","brief":"` + strings.Repeat("a", 10001) + `"}`, "INVALID_REQUEST", "brief"},
		{"context not object", `{"buying_mode":"brief","brief":"x","context":"abc"}`, "INVALID_REQUEST", "context"},
		{"contradictory geo", `{"buying_mode":"brief","brief":"x","filters":{"countries":["US"]},"targeting_overlay":{"geo_countries":["GB"]}}`, "INVALID_REQUEST", "filters.countries"},
		{"account without operator", `{"buying_mode":"brief","brief":"x","account":{"brand":{"domain":"acme.example"}}}`, "INVALID_REQUEST", "account.operator"},
		// Each of these once panicked and took the process down.
		{"empty account id", `{"buying_mode":"brief","brief":"x","account":{"account_id":""}}`, "INVALID_REQUEST", "account.account_id"},
		{"account id not a string", `{"buying_mode":"brief","brief":"x","account":{"account_id":7}}`, "INVALID_REQUEST", "account.account_id"},
	} {
		t.Run(test.name, func(t *testing.T) {
			cs := anon
			if strings.Contains(test.args, `"account"`) {
				cs = buyer
			}
			res, payload := call(t, cs, "get_products", test.args)
			if !res.IsError {
				t.Fatalf("isError = false for bad input: %s", payload)
			}
			spectest.GetProducts(t, payload)
			m := decode(t, payload)
			if _, ok := m["products"]; ok {
				t.Errorf("bad input answered with products: %s", payload)
			}
			found := false
			for _, e := range m["errors"].([]any) {
				e := e.(map[string]any)
				if e["code"] == test.code && e["field"] == test.field {
					found = true
				}
			}
			if !found {
				t.Errorf("errors lack %s at %s: %s", test.code, test.field, payload)
			}
		})
	}

	// Unknown fields are accepted: the request schemas allow them.
	res, payload := call(t, anon, "get_products", `{"buying_mode":"brief","brief":"coffee video","x_custom":{"a":1},"filters":{"ext":{"vendor":{"k":"v"}}}}`)
	if res.IsError || decode(t, payload)["status"] != "completed" {
		t.Errorf("unknown extra fields were refused: %s", payload)
	}
}

// rawPost sends a raw JSON-RPC body to /mcp.
func rawPost(t *testing.T, url, body string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

func TestTransportErrors(t *testing.T) {
	env := testenv.Start(t)
	// An anonymous caller is refused any tool but public discovery with
	// HTTP 401 (TestAuthHTTP); a buyer calling a tool this seller does
	// not have gets the SDK's unknown-tool error.
	cs := session(t, env.BaseURL, env.BuyerToken)

	_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "comply_test_controller", Arguments: map[string]any{}})
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) {
		t.Errorf("calling an unknown tool: err = %v, want a JSON-RPC error", err)
	}

	status, body := rawPost(t, env.BaseURL+"/mcp", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_products","arguments":`)
	if status == http.StatusOK && !bytes.Contains(body, []byte(`"error"`)) {
		t.Errorf("malformed JSON-RPC body: status %d, body %s; want a JSON-RPC error", status, body)
	}

	big := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_products","arguments":{"buying_mode":"brief","brief":"` + strings.Repeat("x", 2<<20) + `"}}}`
	if status, _ := rawPost(t, env.BaseURL+"/mcp", big); status != http.StatusRequestEntityTooLarge {
		t.Errorf("2 MiB body: status %d, want 413", status)
	}

	// Arguments that are not an object get a typed AdCP error, not a panic.
	status, body = rawPost(t, env.BaseURL+"/mcp", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get_products","arguments":["not","an","object"]}}`)
	if status != http.StatusOK || !(bytes.Contains(body, []byte(`INVALID_REQUEST`)) || bytes.Contains(body, []byte(`"error"`))) {
		t.Errorf("array arguments: status %d body %s", status, body)
	}
}
