package e2e

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/storefront/storefront/internal/spectest"
)

// TestSDKAsyncGetProducts drives the submitted arm of get_products with a
// real buyer client, the @adcp/sdk CLI, against the real binary in sandbox
// mode: the steps of media_buy_seller/get_products_async that the 6.11.0
// storyboard runner skips, since its 3.0.6 schema cannot grade the
// submitted envelope. The controller is called like any other tool.
func TestSDKAsyncGetProducts(t *testing.T) {
	sf := Start(t, nil, "--sandbox")
	mcp := sf.BaseURL + "/mcp"
	const (
		kit     = "demo-acme-outdoor-v1"
		taskID  = "task_e2e_async_products"
		account = `{"brand":{"domain":"acmeoutdoor.example"},"operator":"pinnacle-agency.example","sandbox":true}`
		// The completion payload, with characters a JSON encoder might
		// escape: the CLI sends them as they are, and they must come back
		// as they went.
		result = `{"status":"completed","products":[],"cache_scope":"public","context":{"correlation_id":"e2e & <terminal>"}}`
	)
	hooks := make(chan []byte, 8)
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		hooks <- b
	}))
	defer receiver.Close()
	run := func(tool, args, token string) CLIResult {
		t.Helper()
		res := ADCP(t, mcp, tool, args, "--protocol", "mcp", "--auth", token)
		if res.Exit != 0 {
			t.Fatalf("adcp %s exited %d:\n%s", tool, res.Exit, res.Raw)
		}
		return res
	}
	// raw is the AdCP object exactly as the storefront sent it.
	raw := func(res CLIResult) []byte {
		t.Helper()
		s, _ := res.Metadata["protocolMessage"].(string)
		if s == "" {
			t.Fatalf("the CLI output has no protocolMessage:\n%s", res.Raw)
		}
		return []byte(s)
	}

	forced := run("comply_test_controller", `{"adcp_version":"3.2-beta.5","scenario":"force_get_products_arm","params":{"arm":"submitted","task_id":"`+taskID+`"},"account":`+account+`,"context":{"correlation_id":"e2e-force"}}`, kit)
	spectest.Validate(t, "compliance/comply-test-controller-response.json", raw(forced))
	if f, _ := forced.Data["forced"].(map[string]any); forced.Data["success"] != true || f["task_id"] != taskID {
		t.Fatalf("force_get_products_arm = %s", raw(forced))
	}

	sub := run("get_products", `{"adcp_version":"3.2-beta.5","buying_mode":"brief","brief":"Curate display and video inventory for a fall trail campaign.","account":`+account+
		`,"push_notification_config":{"url":"`+receiver.URL+`/hook","operation_id":"op_e2e_async"},"context":{"correlation_id":"e2e-submitted"}}`, kit)
	spectest.GetProducts(t, raw(sub))
	if sub.Data["status"] != "submitted" || sub.Data["task_id"] != taskID {
		t.Fatalf("get_products = %s, want submitted with %s", raw(sub), taskID)
	}
	if _, ok := sub.Data["products"]; ok {
		t.Error("the submitted envelope carries products")
	}

	poll := func() CLIResult {
		t.Helper()
		res := run("tasks/get", `{"task_id":"`+taskID+`","include_result":true,"account":`+account+`}`, kit)
		spectest.Validate(t, "protocol/get-task-status-response.json", raw(res))
		return res
	}
	if p := poll(); p.Data["status"] != "submitted" || p.Data["has_webhook"] != true || p.Data["result"] != nil {
		t.Errorf("tasks/get before completion = %s, want submitted with a webhook and no result", raw(p))
	}

	done := run("comply_test_controller", `{"adcp_version":"3.2-beta.5","scenario":"force_task_completion","params":{"task_id":"`+taskID+`","result":`+result+`},"account":`+account+`}`, kit)
	spectest.Validate(t, "compliance/comply-test-controller-response.json", raw(done))
	if done.Data["previous_state"] != "submitted" || done.Data["current_state"] != "completed" {
		t.Fatalf("force_task_completion = %s", raw(done))
	}

	p := poll()
	if p.Data["status"] != "completed" || p.Data["task_id"] != taskID || p.Data["completed_at"] == nil {
		t.Errorf("tasks/get after completion = %s, want completed", raw(p))
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(raw(p), &members); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(members["result"], []byte(result)) {
		t.Errorf("tasks/get result is not the completion payload:\n got %s\nwant %s", members["result"], result)
	}

	// The real binary delivered the terminal webhook to the loopback
	// receiver the buyer registered. The bound only stops a broken run.
	select {
	case body := <-hooks:
		spectest.Validate(t, "core/mcp-webhook-payload.json", body)
		var hook map[string]json.RawMessage
		if err := json.Unmarshal(body, &hook); err != nil {
			t.Fatal(err)
		}
		if string(hook["operation_id"]) != `"op_e2e_async"` || string(hook["task_id"]) != `"`+taskID+`"` || string(hook["status"]) != `"completed"` {
			t.Errorf("webhook = %s", body)
		}
		if !bytes.Equal(hook["result"], []byte(result)) {
			t.Errorf("webhook result is not the completion payload:\n got %s\nwant %s", hook["result"], result)
		}
	case <-time.After(60 * time.Second):
		t.Error("no webhook arrived")
	}
}
