package compliance_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/storefront/storefront/internal/kittest"
	"github.com/storefront/storefront/internal/testenv"
)

// TestListScenarios: the controller names its canonical scenarios, never
// the alias it also accepts.
func TestListScenarios(t *testing.T) {
	env := testenv.Start(t, "--sandbox")
	cs := kittest.Connect(t, env.BaseURL, kittest.Kit)
	m := kittest.Control(t, cs, "list_scenarios", "")
	kittest.MustSucceed(t, m)
	want := []any{"force_get_products_arm", "force_create_media_buy_arm", "force_task_completion", "force_upstream_unavailable",
		"force_account_status", "force_media_buy_status", "simulate_delivery", "simulate_budget_spend", "seed_product", "seed_pricing_option", "seed_creative", "seed_media_buy", "seed_account"}
	if diff := cmp.Diff(want, m["scenarios"]); diff != "" {
		t.Errorf("scenarios (-want +got):\n%s", diff)
	}
	if kittest.Contains(m["scenarios"].([]any), "force_get_products_rejected") {
		t.Error("list_scenarios names the alias force_get_products_rejected")
	}
	if diff := cmp.Diff(map[string]any{"correlation_id": "ctl-list_scenarios"}, m["context"]); diff != "" {
		t.Errorf("context not echoed (-want +got):\n%s", diff)
	}
}

// TestForceRejected: a forced rejection is answered by the next brief
// with exactly the text the controller echoed (the text after the
// screen), as a successful exchange, once.
func TestForceRejected(t *testing.T) {
	env := testenv.Start(t, "--sandbox")
	cs := kittest.Connect(t, env.BaseURL, kittest.Kit)

	const reason = "Inventory for this flight is committed to another advertiser."
	suggestions := []any{"Move the flight to February.", "Consider display instead of video."}
	m := kittest.Control(t, cs, "force_get_products_arm", `{"arm":"rejected","reason":`+kittest.JSONString(reason)+`,"suggestions":`+kittest.JSONOf(t, suggestions)+`}`)
	kittest.MustSucceed(t, m)
	forced := m["forced"].(map[string]any)
	if forced["arm"] != "rejected" || forced["reason"] != reason {
		t.Errorf("forced = %v, want arm rejected with the registered reason", forced)
	}
	if diff := cmp.Diff(suggestions, forced["suggestions"]); diff != "" {
		t.Errorf("forced.suggestions (-want +got):\n%s", diff)
	}

	before := len(kittest.Decisions(t, env))
	res, payload := kittest.Call(t, cs, "get_products", kittest.Brief)
	if res.IsError {
		t.Errorf("a forced rejection set isError: %s", payload)
	}
	got := kittest.GetProducts(t, cs, `{"adcp_version":"3.2-beta.5","buying_mode":"brief","brief":"check"}`)
	// The first call consumed the directive; the second is answered
	// normally.
	kittest.WantStatus(t, got, "completed")

	rejected := kittest.Decode(t, payload)
	kittest.WantStatus(t, rejected, "rejected")
	if rejected["reason"] != forced["reason"] {
		t.Errorf("reason = %q, want the forced %q", rejected["reason"], forced["reason"])
	}
	if diff := cmp.Diff(forced["suggestions"], rejected["suggestions"]); diff != "" {
		t.Errorf("suggestions differ from the forced echo (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]any{"correlation_id": "next-brief"}, rejected["context"]); diff != "" {
		t.Errorf("context not echoed (-want +got):\n%s", diff)
	}

	// The ledger recorded the forced rejection, for this principal, before
	// the reply (newest first).
	ds := kittest.Decisions(t, env)
	if len(ds) != before+2 {
		t.Fatalf("ledger grew by %d entries for two calls, want 2", len(ds)-before)
	}
	d := ds[1]
	if d["arm"] != "rejected" || d["forced"] != true || d["principal"] != kittest.Kit {
		t.Errorf("ledger entry of the forced rejection = %v, want arm rejected, forced, principal %s", d, kittest.Kit)
	}
	if ds[0]["arm"] != "completed" || ds[0]["forced"] == true {
		t.Errorf("ledger entry of the call after = %v, want completed and not forced", ds[0])
	}
}

// TestForceRejectedIsScreened: the forced reason reaches the buyer only
// through the screen, and the controller echoes the screened text. The
// text is the caller's own: markup and vendor names are removed, but it is
// never matched against the publisher's deny-list, so a guessed secret
// comes back exactly as a random word of the same shape does.
func TestForceRejectedIsScreened(t *testing.T) {
	env := testenv.Start(t, "--sandbox")
	cs := kittest.Connect(t, env.BaseURL, kittest.Kit)
	force := func(word string) (map[string]any, map[string]any) {
		reason := "Rule " + word + " fired for this brief. Served by <b>Magnite</b>. The budget is below what this inventory sells for."
		m := kittest.Control(t, cs, "force_get_products_rejected", `{"reason":`+kittest.JSONString(reason)+`,"suggestions":["Raise the budget.","Ask `+word+` for their slot.","Ask Magnite."]}`)
		kittest.MustSucceed(t, m)
		forced := m["forced"].(map[string]any)
		if forced["arm"] != "rejected" {
			t.Errorf("the alias registered arm %v, want rejected", forced["arm"])
		}
		got := kittest.GetProducts(t, cs, kittest.Brief)
		kittest.WantStatus(t, got, "rejected")
		if got["reason"] != forced["reason"] {
			t.Errorf("reason = %q, want the echoed %q", got["reason"], forced["reason"])
		}
		if diff := cmp.Diff(forced["suggestions"], got["suggestions"]); diff != "" {
			t.Errorf("suggestions differ from the echo (-want +got):\n%s", diff)
		}
		return forced, got
	}
	// MR-2291-CTV-FLOOR is a demo rule id; MQ-5517-RTX-SHELF has its shape.
	secret, _ := force("MR-2291-CTV-FLOOR")
	random, _ := force("MQ-5517-RTX-SHELF")
	want := "Rule MR-2291-CTV-FLOOR fired for this brief. The budget is below what this inventory sells for."
	if secret["reason"] != want {
		t.Errorf("forced.reason = %q, want %q: markup and the vendor sentence gone, the caller's words kept", secret["reason"], want)
	}
	if diff := cmp.Diff([]any{"Raise the budget.", "Ask MR-2291-CTV-FLOOR for their slot."}, secret["suggestions"]); diff != "" {
		t.Errorf("forced.suggestions (-want +got):\n%s", diff)
	}
	twin := strings.ReplaceAll(string(mustJSON(random)), "MQ-5517-RTX-SHELF", "MR-2291-CTV-FLOOR")
	if string(mustJSON(secret)) != twin {
		t.Errorf("a secret and a random id of its shape are echoed differently:\n%s\n%s", mustJSON(secret), twin)
	}
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// TestDirectiveConsumption: which calls consume a directive, and which
// leave it for the next brief.
func TestDirectiveConsumption(t *testing.T) {
	env := testenv.Start(t, "--sandbox")
	cs := kittest.Connect(t, env.BaseURL, kittest.Kit)
	other := kittest.Connect(t, env.BaseURL, kittest.OtherKit)
	buyer := kittest.Connect(t, env.BaseURL, env.BuyerToken)
	force := func(t *testing.T, reason string) {
		t.Helper()
		kittest.MustSucceed(t, kittest.Control(t, cs, "force_get_products_arm", `{"arm":"rejected","reason":`+kittest.JSONString(reason)+`}`))
	}
	const wholesale = `{"adcp_version":"3.2-beta.5","buying_mode":"wholesale","filters":{"channels":["olv"]}}`
	const refine = `{"adcp_version":"3.2-beta.5","buying_mode":"refine","refine":[{"scope":"request","ask":"more video"}]}`

	t.Run("a wholesale call does not consume it", func(t *testing.T) {
		force(t, "Declined for the wholesale test.")
		kittest.WantStatus(t, kittest.GetProducts(t, cs, wholesale), "completed")
		got := kittest.GetProducts(t, cs, kittest.Brief)
		kittest.WantStatus(t, got, "rejected")
		if got["reason"] != "Declined for the wholesale test." {
			t.Errorf("reason = %v", got["reason"])
		}
	})
	t.Run("a refine call consumes it", func(t *testing.T) {
		force(t, "Declined for the refine test.")
		kittest.WantStatus(t, kittest.GetProducts(t, cs, refine), "rejected")
		kittest.WantStatus(t, kittest.GetProducts(t, cs, kittest.Brief), "completed")
	})
	t.Run("other principals do not consume it", func(t *testing.T) {
		force(t, "Declined for the principal test.")
		kittest.WantStatus(t, kittest.GetProducts(t, other, kittest.Brief), "completed")
		kittest.WantStatus(t, kittest.GetProducts(t, buyer, kittest.Brief), "completed")
		kittest.WantStatus(t, kittest.GetProducts(t, kittest.Connect(t, env.BaseURL, ""), kittest.Brief), "completed")
		got := kittest.GetProducts(t, cs, kittest.Brief)
		kittest.WantStatus(t, got, "rejected")
		if got["reason"] != "Declined for the principal test." {
			t.Errorf("reason = %v", got["reason"])
		}
	})
	t.Run("a test-kit key has one sandbox whatever account it names", func(t *testing.T) {
		force(t, "Declined for the account test.")
		got := kittest.GetProducts(t, cs, `{"adcp_version":"3.2-beta.5","buying_mode":"brief","brief":"coffee","account":{"brand":{"domain":"acme-outdoor.example"},"operator":"acme-outdoor.example","sandbox":true}}`)
		kittest.WantStatus(t, got, "rejected")
		kittest.WantStatus(t, kittest.GetProducts(t, cs, kittest.Brief), "completed")
	})
	t.Run("it is consumed once", func(t *testing.T) {
		force(t, "Declined once.")
		kittest.WantStatus(t, kittest.GetProducts(t, cs, kittest.Brief), "rejected")
		kittest.WantStatus(t, kittest.GetProducts(t, cs, kittest.Brief), "completed")
		kittest.WantStatus(t, kittest.GetProducts(t, cs, kittest.Brief), "completed")
	})
	t.Run("a second directive overwrites the first", func(t *testing.T) {
		force(t, "The first reason.")
		force(t, "The second reason.")
		got := kittest.GetProducts(t, cs, kittest.Brief)
		kittest.WantStatus(t, got, "rejected")
		if got["reason"] != "The second reason." {
			t.Errorf("reason = %q, want the second directive's", got["reason"])
		}
		kittest.WantStatus(t, kittest.GetProducts(t, cs, kittest.Brief), "completed")
	})
	t.Run("a submitted directive overwrites a rejected one", func(t *testing.T) {
		force(t, "Overwritten.")
		kittest.MustSucceed(t, kittest.Control(t, cs, "force_get_products_arm", `{"arm":"submitted","task_id":"task-overwrite"}`))
		got := kittest.GetProducts(t, cs, kittest.Brief)
		kittest.WantStatus(t, got, "submitted")
		kittest.WantStatus(t, kittest.GetProducts(t, cs, kittest.Brief), "completed")
	})
}

// TestDirectiveOnANamedAccount: a buyer with live credentials may drive
// the controller only on a sandbox account it may use, and its directive
// applies to that account alone.
func TestDirectiveOnANamedAccount(t *testing.T) {
	env := testenv.Start(t, "--sandbox")
	buyer := kittest.Connect(t, env.BaseURL, env.BuyerToken)
	const account = `{"brand":{"domain":"acme-outdoor.example"},"operator":"pinnacle-agency.example","sandbox":true}`

	m := kittest.ControlRaw(t, buyer, `{"adcp_version":"3.2-beta.5","scenario":"force_get_products_arm","params":{"arm":"rejected","reason":"Declined on the sandbox account."},"account":`+account+`}`)
	kittest.MustSucceed(t, m)

	// Without the account, or on another account, the call is answered
	// normally; on the sandbox account it is declined.
	kittest.WantStatus(t, kittest.GetProducts(t, buyer, kittest.Brief), "completed")
	kittest.WantStatus(t, kittest.GetProducts(t, buyer, `{"adcp_version":"3.2-beta.5","buying_mode":"brief","brief":"coffee","account":{"brand":{"domain":"other.example"},"operator":"pinnacle-agency.example","sandbox":true}}`), "completed")
	got := kittest.GetProducts(t, buyer, `{"adcp_version":"3.2-beta.5","buying_mode":"brief","brief":"coffee","account":`+account+`}`)
	kittest.WantStatus(t, got, "rejected")
	if got["reason"] != "Declined on the sandbox account." {
		t.Errorf("reason = %v", got["reason"])
	}
}

// TestForceSubmitted: a forced submitted arm is answered with the task id
// the controller registered, valid against the submitted schema.
func TestForceSubmitted(t *testing.T) {
	env := testenv.Start(t, "--sandbox")
	cs := kittest.Connect(t, env.BaseURL, kittest.Kit)
	m := kittest.Control(t, cs, "force_get_products_arm", `{"arm":"submitted","task_id":"task-submitted-1","message":"Queued for manual review."}`)
	kittest.MustSucceed(t, m)
	if diff := cmp.Diff(map[string]any{"arm": "submitted", "task_id": "task-submitted-1"}, m["forced"]); diff != "" {
		t.Errorf("forced (-want +got):\n%s", diff)
	}
	res, payload := kittest.Call(t, cs, "get_products", kittest.Brief)
	if res.IsError {
		t.Errorf("a submitted answer set isError: %s", payload)
	}
	got := kittest.GetProducts(t, cs, `{"adcp_version":"3.2-beta.5","buying_mode":"brief","brief":"check"}`)
	kittest.WantStatus(t, got, "completed")

	sub := kittest.Decode(t, payload)
	kittest.WantStatus(t, sub, "submitted")
	if sub["task_id"] != "task-submitted-1" {
		t.Errorf("task_id = %v, want task-submitted-1", sub["task_id"])
	}
	for _, k := range []string{"products", "reason", "errors", "adcp_error"} {
		if _, ok := sub[k]; ok {
			t.Errorf("the submitted arm carries %s: %s", k, payload)
		}
	}
}

// TestControllerBadInput: every malformed or refused request is the
// spec's ControllerError, echoes context, sets isError, and registers
// nothing: the next brief is still answered normally.
func TestControllerBadInput(t *testing.T) {
	env := testenv.Start(t, "--sandbox")
	cs := kittest.Connect(t, env.BaseURL, kittest.Kit)
	// req writes a request pinned to 3.2 unless it pins a version itself,
	// with a context that must come back unchanged.
	req := func(fields string) string {
		if !strings.Contains(fields, `"adcp_version"`) {
			fields = `"adcp_version":"3.2-beta.5",` + fields
		}
		return `{` + fields + `,"context":{"correlation_id":"bad-input","nested":{"n":[1,2]}}}`
	}
	const (
		sandbox = `"account":{"sandbox":true}`
		arm     = `"scenario":"force_get_products_arm",`
	)
	for _, test := range []struct {
		name, args string
		code       string
		// mentions is what error_detail must name, so that the refusal
		// is for the reason the case is about.
		mentions string
	}{
		{"rejected with task_id", req(arm + `"params":{"arm":"rejected","reason":"No.","task_id":"t1"},` + sandbox), "INVALID_PARAMS", "task_id"},
		{"submitted with reason", req(arm + `"params":{"arm":"submitted","task_id":"t1","reason":"No."},` + sandbox), "INVALID_PARAMS", "reason"},
		{"submitted with suggestions", req(arm + `"params":{"arm":"submitted","task_id":"t1","suggestions":["x"]},` + sandbox), "INVALID_PARAMS", "suggestions"},
		{"submitted without task_id", req(arm + `"params":{"arm":"submitted"},` + sandbox), "INVALID_PARAMS", "task_id"},
		{"submitted with a 129-character task_id", req(arm + `"params":{"arm":"submitted","task_id":"` + strings.Repeat("t", 129) + `"},` + sandbox), "INVALID_PARAMS", "task_id"},
		{"empty suggestions", req(arm + `"params":{"arm":"rejected","reason":"No.","suggestions":[]},` + sandbox), "INVALID_PARAMS", "suggestions"},
		{"21 suggestions", req(arm + `"params":{"arm":"rejected","reason":"No.","suggestions":[` + strings.TrimSuffix(strings.Repeat(`"Try again.",`, 21), ",") + `]},` + sandbox), "INVALID_PARAMS", "suggestions"},
		{"an empty suggestion", req(arm + `"params":{"arm":"rejected","reason":"No.","suggestions":[""]},` + sandbox), "INVALID_PARAMS", "suggestions[0]"},
		{"reason of 2001 characters", req(arm + `"params":{"arm":"rejected","reason":"` + strings.Repeat("a", 2001) + `"},` + sandbox), "INVALID_PARAMS", "2001"},
		{"rejected without reason", req(arm + `"params":{"arm":"rejected"},` + sandbox), "INVALID_PARAMS", "reason"},
		{"reason not a string", req(arm + `"params":{"arm":"rejected","reason":42},` + sandbox), "INVALID_PARAMS", "reason"},
		{"no arm", req(arm + `"params":{"reason":"No."},` + sandbox), "INVALID_PARAMS", "arm"},
		{"arm input-required", req(arm + `"params":{"arm":"input-required"},` + sandbox), "INVALID_PARAMS", "input-required"},
		{"unknown arm", req(arm + `"params":{"arm":"completed"},` + sandbox), "INVALID_PARAMS", "arm"},
		{"rejected pinned below 3.2", req(`"adcp_version":"3.1",` + arm + `"params":{"arm":"rejected","reason":"No."},` + sandbox), "INVALID_PARAMS", "3.2"},
		{"rejected unpinned (served 3.1)", `{` + arm + `"params":{"arm":"rejected","reason":"No."},` + sandbox + `,"context":{"correlation_id":"bad-input","nested":{"n":[1,2]}}}`, "INVALID_PARAMS", "3.2"},
		{"alias pinned below 3.2", req(`"adcp_version":"3.0","scenario":"force_get_products_rejected","params":{"reason":"No."},` + sandbox), "INVALID_PARAMS", "3.2"},
		{"no account", req(arm + `"params":{"arm":"rejected","reason":"No."}`), "INVALID_PARAMS", "account"},
		{"account without sandbox", req(arm + `"params":{"arm":"rejected","reason":"No."},"account":{}`), "INVALID_PARAMS", "sandbox"},
		{"account.sandbox false", req(arm + `"params":{"arm":"rejected","reason":"No."},"account":{"sandbox":false}`), "FORBIDDEN", "sandbox"},
		{"account.sandbox not a boolean", req(arm + `"params":{"arm":"rejected","reason":"No."},"account":{"sandbox":"yes"}`), "INVALID_PARAMS", "account"},
		{"unknown scenario", req(`"scenario":"force_session_status","params":{"session_id":"s1","status":"terminated"},` + sandbox), "UNKNOWN_SCENARIO", "force_session_status"},
		{"no scenario", req(`"params":{"arm":"rejected","reason":"No."},` + sandbox), "INVALID_PARAMS", "scenario"},
		{"params not an object", req(arm + `"params":["rejected"],` + sandbox), "INVALID_PARAMS", "params"},
		{"unsupported version pin", req(`"adcp_version":"9.0",` + arm + `"params":{"arm":"rejected","reason":"No."},` + sandbox), "INVALID_PARAMS", "9.0"},
		// Wrong-typed pins used to be read as none and served.
		{"a version pin not a string", req(`"adcp_version":3.2,` + arm + `"params":{"arm":"rejected","reason":"No."},` + sandbox), "INVALID_PARAMS", "adcp_version"},
		{"a major version not an integer", req(`"adcp_version":"3.2-beta.5","adcp_major_version":"3",` + arm + `"params":{"arm":"rejected","reason":"No."},` + sandbox), "INVALID_PARAMS", "adcp_major_version"},
		{"stale for another tool", req(`"scenario":"force_upstream_unavailable","params":{"tool":"create_media_buy"},` + sandbox), "INVALID_PARAMS", "tool"},
		{"completion of an unknown task", req(`"scenario":"force_task_completion","params":{"task_id":"no-such-task","result":{"status":"completed","products":[],"cache_scope":"public"}},` + sandbox), "NOT_FOUND", "no-such-task"},
	} {
		t.Run(test.name, func(t *testing.T) {
			m := kittest.ControlRaw(t, cs, test.args)
			if m["success"] != false || m["error"] != test.code {
				t.Fatalf("answer = %v, want success false with error %s", m, test.code)
			}
			if m["status"] != "failed" {
				t.Errorf("status = %v, want failed", m["status"])
			}
			if d, _ := m["error_detail"].(string); !strings.Contains(d, test.mentions) {
				t.Errorf("error_detail = %q, want it to name %q", d, test.mentions)
			}
			want := map[string]any{"correlation_id": "bad-input", "nested": map[string]any{"n": []any{1.0, 2.0}}}
			if diff := cmp.Diff(want, m["context"]); diff != "" {
				t.Errorf("context not echoed (-want +got):\n%s", diff)
			}
			kittest.WantStatus(t, kittest.GetProducts(t, cs, kittest.Brief), "completed")
		})
	}
	// A context that is not an object is refused, not silently dropped.
	m := kittest.ControlRaw(t, cs, `{"adcp_version":"3.2-beta.5",`+arm+`"params":{"arm":"rejected","reason":"No."},`+sandbox+`,"context":"wrong"}`)
	if d, _ := m["error_detail"].(string); m["error"] != "INVALID_PARAMS" || !strings.Contains(d, "context") || m["context"] != nil {
		t.Errorf("a string context = %v, want INVALID_PARAMS naming context, not echoed", m)
	}
}

// TestControllerGate: only sandbox principals on sandbox accounts get
// past the gate, and the gate comes before the scenario is looked up.
func TestControllerGate(t *testing.T) {
	env := testenv.Start(t, "--sandbox")
	live := kittest.Connect(t, env.BaseURL, kittest.LiveKit)
	buyer := kittest.Connect(t, env.BaseURL, env.BuyerToken)
	const force = `"scenario":"force_get_products_arm","params":{"arm":"rejected","reason":"No."}`
	for _, test := range []struct {
		name   string
		caller *mcp.ClientSession
		args   string
	}{
		{"live key, bare sandbox account", live, `{` + force + `,"account":{"sandbox":true},"context":{"k":1}}`},
		{"live key, unknown scenario", live, `{"scenario":"no_such_scenario","account":{"sandbox":true},"context":{"k":1}}`},
		{"live key, list_scenarios", live, `{"scenario":"list_scenarios","account":{"sandbox":true},"context":{"k":1}}`},
		{"live key, named account", live, `{` + force + `,"account":{"brand":{"domain":"acme-outdoor.example"},"operator":"acme-outdoor.example","sandbox":true},"context":{"k":1}}`},
		{"live buyer, bare sandbox account", buyer, `{` + force + `,"account":{"sandbox":true},"context":{"k":1}}`},
		{"live buyer, another operator's account", buyer, `{` + force + `,"account":{"brand":{"domain":"acme-outdoor.example"},"operator":"someone-else.example","sandbox":true},"context":{"k":1}}`},
	} {
		t.Run(test.name, func(t *testing.T) {
			m := kittest.ControlRaw(t, test.caller, test.args)
			if m["success"] != false || m["error"] != "FORBIDDEN" {
				t.Fatalf("answer = %v, want FORBIDDEN", m)
			}
			if diff := cmp.Diff(map[string]any{"k": 1.0}, m["context"]); diff != "" {
				t.Errorf("context not echoed (-want +got):\n%s", diff)
			}
			if strings.Contains(kittest.JSONOf(t, m), "no_such_scenario") {
				t.Errorf("the refusal names the scenario: %v", m)
			}
		})
	}
	// Without credentials, or with credentials that name no principal,
	// the call is refused with HTTP 401 before the controller reads it.
	for _, token := range []string{"", "not-a-token"} {
		for _, args := range []string{`{"scenario":"list_scenarios","account":{"sandbox":true}}`, `{"scenario":"no_such_scenario","account":{"sandbox":true}}`} {
			p := kittest.ProbeMCP(t, env.BaseURL+"/mcp", token, "comply_test_controller", args)
			if p.Status != http.StatusUnauthorized || p.Header.Get("WWW-Authenticate") == "" {
				t.Errorf("controller call with token %q = %d %v, want 401 with a challenge", token, p.Status, p.Body)
			}
			if strings.Contains(kittest.JSONOf(t, p.Body), "no_such_scenario") {
				t.Errorf("the refusal names the scenario: %v", p.Body)
			}
		}
	}
	// Nothing was registered for any of them.
	kittest.WantStatus(t, kittest.GetProducts(t, live, kittest.Brief), "completed")
	kittest.WantStatus(t, kittest.GetProducts(t, buyer, kittest.Brief), "completed")
}
