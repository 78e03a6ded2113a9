package agent_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/storefront/storefront/internal/kittest"
	"github.com/storefront/storefront/internal/spectest"
	"github.com/storefront/storefront/internal/testenv"
)

// replayArgs is a 3.2 brief under an idempotency key.
func replayArgs(key, extra string) string {
	return `{"adcp_version":"3.2-beta.5","buying_mode":"brief","brief":"Coffee brand launch video","filters":{"channels":["olv"]},"pagination":{"max_results":2},` +
		extra + `"idempotency_key":"` + key + `","context":{"correlation_id":"replay"}}`
}

// TestReplay: the same key with the same request replays the first answer
// byte for byte, with replayed: true appended as its last member, for
// each arm, and has none of the first call's effects: no ledger entry, no
// directive consumed, no task created.
func TestReplay(t *testing.T) {
	env := testenv.Start(t, "--sandbox")
	cs := kittest.Connect(t, env.BaseURL, kittest.Kit)
	for _, test := range []struct {
		name string
		// first and second are directives registered before the first
		// call and before the replay ("" for none).
		first, second string
		want          string
		isError       bool
	}{
		{"completed", "", "", "completed", false},
		{"rejected",
			`{"arm":"rejected","reason":"Declined for the replay test.","suggestions":["Try February."]}`,
			`{"arm":"rejected","reason":"The second directive."}`, "rejected", false},
		{"submitted", `{"arm":"submitted","task_id":"task-replay-1"}`, `{"arm":"submitted","task_id":"task-replay-2"}`, "submitted", false},
		{"failed", "", "", "failed", true},
	} {
		t.Run(test.name, func(t *testing.T) {
			key := "replay-" + test.name + "-0123456789"
			args := replayArgs(key, "")
			if test.name == "failed" {
				// A request error the task decides (one its schema
				// admits: a brief is not read in wholesale mode) is
				// kept and replayed like any other answer.
				args = strings.Replace(args, `"buying_mode":"brief"`, `"buying_mode":"wholesale"`, 1)
			}
			if test.first != "" {
				kittest.MustSucceed(t, kittest.Control(t, cs, "force_get_products_arm", test.first))
			}
			before := len(kittest.Decisions(t, env))
			res1, first := kittest.Call(t, cs, "get_products", args)
			if got := spectest.GetProducts(t, first); got != test.want {
				t.Fatalf("first call status = %s, want %s: %s", got, test.want, first)
			}
			if res1.IsError != test.isError {
				t.Errorf("first call isError = %v", res1.IsError)
			}
			if bytes.Contains(first, []byte(`"replayed"`)) {
				t.Errorf("the first answer is marked replayed: %s", first)
			}
			ledger := len(kittest.Decisions(t, env))
			if ledger != before+1 {
				t.Errorf("the first call appended %d ledger entries, want 1", ledger-before)
			}

			if test.second != "" {
				kittest.MustSucceed(t, kittest.Control(t, cs, "force_get_products_arm", test.second))
			}
			res2, second := kittest.Call(t, cs, "get_products", args)
			want := append(bytes.TrimSuffix(bytes.Clone(first), []byte("}")), []byte(`,"replayed":true}`)...)
			if !bytes.Equal(second, want) {
				t.Errorf("replay differs from the first answer plus replayed:\n got %s\nwant %s", second, want)
			}
			spectest.GetProducts(t, second)
			if res2.IsError != res1.IsError {
				t.Errorf("replay isError = %v, first %v", res2.IsError, res1.IsError)
			}
			if diff := cmp.Diff(res1.Meta, res2.Meta); diff != "" {
				t.Errorf("replay _meta differs (-first +replay):\n%s", diff)
			}
			if n := len(kittest.Decisions(t, env)); n != ledger {
				t.Errorf("the replay appended %d ledger entries, want none", n-ledger)
			}

			switch test.name {
			case "rejected":
				// The replay left the second directive for the next call.
				got := kittest.GetProducts(t, cs, kittest.Brief)
				kittest.WantStatus(t, got, "rejected")
				if got["reason"] != "The second directive." {
					t.Errorf("reason = %v, want the second directive's", got["reason"])
				}
			case "submitted":
				// One task for the call and its replay; the second
				// directive makes the next call's task.
				if ids := taskIDs(t, cs); !cmp.Equal(ids, []string{"task-replay-1"}) {
					t.Errorf("tasks after the replay = %v, want only task-replay-1", ids)
				}
				got := kittest.GetProducts(t, cs, kittest.Brief)
				kittest.WantStatus(t, got, "submitted")
				if got["task_id"] != "task-replay-2" {
					t.Errorf("task_id = %v, want task-replay-2", got["task_id"])
				}
			}
			kittest.WantStatus(t, kittest.GetProducts(t, cs, kittest.Brief), "completed")
		})
	}
}

// taskIDs lists the caller's tasks (with no account).
func taskIDs(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	_, payload := kittest.Call(t, cs, "list_tasks", `{}`)
	spectest.Validate(t, "protocol/list-tasks-response.json", payload)
	var ids []string
	for _, task := range kittest.Decode(t, payload)["tasks"].([]any) {
		ids = append(ids, task.(map[string]any)["task_id"].(string))
	}
	return ids
}

// TestReplayConflict: the same key with another request is refused with
// only a code and a message, and has no effect.
func TestReplayConflict(t *testing.T) {
	env := testenv.Start(t, "--sandbox")
	cs := kittest.Connect(t, env.BaseURL, kittest.Kit)
	const key = "conflict-key-0123456789"
	kittest.WantStatus(t, kittest.GetProducts(t, cs, replayArgs(key, "")), "completed")

	kittest.MustSucceed(t, kittest.Control(t, cs, "force_get_products_arm", `{"arm":"rejected","reason":"Still armed."}`))
	before := len(kittest.Decisions(t, env))
	for _, args := range []string{
		strings.Replace(replayArgs(key, ""), "Coffee brand launch video", "Tea brand launch video", 1),
		strings.Replace(replayArgs(key, ""), `"max_results":2`, `"max_results":3`, 1),
		// ext is in the payload, as the spec has it.
		replayArgs(key, `"ext":{"trace":"another"},`),
	} {
		res, payload := kittest.Call(t, cs, "get_products", args)
		if !res.IsError {
			t.Errorf("a conflict did not set isError: %s", payload)
		}
		if spectest.GetProducts(t, payload) != "failed" {
			t.Fatalf("conflict = %s, want the failed arm", payload)
		}
		m := kittest.Decode(t, payload)
		e := m["adcp_error"].(map[string]any)
		if e["code"] != "IDEMPOTENCY_CONFLICT" {
			t.Errorf("adcp_error.code = %v, want IDEMPOTENCY_CONFLICT", e["code"])
		}
		keys := []string{}
		for k := range e {
			keys = append(keys, k)
		}
		if len(keys) != 2 || e["message"] == nil {
			t.Errorf("adcp_error has members %v, want only code and message", keys)
		}
		if errs := m["errors"].([]any); len(errs) != 1 || !cmp.Equal(errs[0], m["adcp_error"]) {
			t.Errorf("errors = %v, want the one conflict", errs)
		}
		if _, ok := m["products"]; ok {
			t.Errorf("a conflict carries products: %s", payload)
		}
		if m["context"] == nil {
			t.Errorf("context not echoed: %s", payload)
		}
	}
	if n := len(kittest.Decisions(t, env)); n != before {
		t.Errorf("conflicts appended %d ledger entries, want none", n-before)
	}
	// The directive is still armed.
	kittest.WantStatus(t, kittest.GetProducts(t, cs, kittest.Brief), "rejected")
}

// TestReplayIgnoresEchoData: what the spec leaves out of payload
// equivalence (context, governance_context and a webhook's rotated
// credential) may change on a retry, which still replays.
func TestReplayIgnoresEchoData(t *testing.T) {
	env := testenv.Start(t, "--sandbox")
	cs := kittest.Connect(t, env.BaseURL, kittest.Kit)
	const key = "echo-data-key-0123456789"
	push := func(cred string) string {
		return `"push_notification_config":{"url":"https://buyer.example/hook","operation_id":"op-1","authentication":{"schemes":["HMAC-SHA256"],"credentials":"` + cred + `"}},`
	}
	first := replayArgs(key, push(strings.Repeat("a", 32)))
	kittest.WantStatus(t, kittest.GetProducts(t, cs, first), "completed")
	retry := strings.Replace(replayArgs(key, push(strings.Repeat("b", 32))+`"governance_context":"refreshed-token",`), `"correlation_id":"replay"`, `"correlation_id":"retry"`, 1)
	_, payload := kittest.Call(t, cs, "get_products", retry)
	if m := kittest.Decode(t, payload); m["replayed"] != true || m["status"] != "completed" {
		t.Errorf("a retry differing only in context, governance_context and credentials = %s, want the replay", payload)
	}
}

// TestReplayScope: a key belongs to one principal and account: anyone
// else reusing it gets a fresh answer.
func TestReplayScope(t *testing.T) {
	env := testenv.Start(t, "--sandbox")
	cs := kittest.Connect(t, env.BaseURL, kittest.Kit)
	const key = "scoped-key-0123456789"
	kittest.MustSucceed(t, kittest.Control(t, cs, "force_get_products_arm", `{"arm":"rejected","reason":"Only for the first principal."}`))
	kittest.WantStatus(t, kittest.GetProducts(t, cs, replayArgs(key, "")), "rejected")

	for _, test := range []struct {
		name  string
		token string
		extra string
	}{
		{"another test-kit key", kittest.OtherKit, ""},
		{"the demo buyer", env.BuyerToken, ""},
		{"the same key on a named account", kittest.Kit, `"account":{"brand":{"domain":"acme-outdoor.example"},"operator":"acme-outdoor.example","sandbox":true},`},
	} {
		t.Run(test.name, func(t *testing.T) {
			got := kittest.GetProducts(t, kittest.Connect(t, env.BaseURL, test.token), replayArgs(key, test.extra))
			kittest.WantStatus(t, got, "completed")
			if _, ok := got["replayed"]; ok {
				t.Errorf("another scope got a replay: %v", got)
			}
		})
	}
	// The first principal still replays its own answer.
	got := kittest.GetProducts(t, cs, replayArgs(key, ""))
	kittest.WantStatus(t, got, "rejected")
	if got["replayed"] != true {
		t.Errorf("the owner's retry is not a replay: %v", got)
	}
}

// TestIdempotencyCapabilities: the capabilities declare replay support
// with a window the spec allows.
func TestIdempotencyCapabilities(t *testing.T) {
	env := testenv.Start(t)
	cs := kittest.Connect(t, env.BaseURL, "")
	for _, args := range []string{`{}`, `{"adcp_version":"3.2-beta.5"}`} {
		_, payload := kittest.Call(t, cs, "get_adcp_capabilities", args)
		spectest.Validate(t, "protocol/get-adcp-capabilities-response.json", payload)
		idem, _ := kittest.Decode(t, payload)["adcp"].(map[string]any)["idempotency"].(map[string]any)
		if idem["supported"] != true {
			t.Errorf("capabilities(%s) adcp.idempotency = %v, want supported", args, idem)
		}
		if ttl, _ := idem["replay_ttl_seconds"].(float64); ttl < 3600 || ttl > 604800 {
			t.Errorf("capabilities(%s) replay_ttl_seconds = %v, want 3600..604800", args, idem["replay_ttl_seconds"])
		}
	}
}

// TestReplayEscapedKeyName: a key whose member name is spelled with
// escapes is the key all the same, so the shortcut that leaves calls
// with no key undecoded must not skip it.
func TestReplayEscapedKeyName(t *testing.T) {
	env := testenv.Start(t, "--sandbox")
	cs := kittest.Connect(t, env.BaseURL, kittest.Kit)
	args := strings.Replace(replayArgs("escaped-name-key-0123456789", ""), `"idempotency_key"`, `"idempotency\u005fkey"`, 1)
	kittest.WantStatus(t, kittest.GetProducts(t, cs, args), "completed")
	if got := kittest.GetProducts(t, cs, args); got["replayed"] != true {
		t.Errorf("the retry of a call whose key name is escaped is not a replay: %v", got)
	}
}
