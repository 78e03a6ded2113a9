package agent_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/storefront/storefront/agent"
	"github.com/storefront/storefront/demo"
	"github.com/storefront/storefront/internal/kittest"
	"github.com/storefront/storefront/internal/spectest"
	"github.com/storefront/storefront/internal/testenv"
	"github.com/storefront/storefront/metrics"
	"github.com/storefront/storefront/products"
	"github.com/storefront/storefront/store"
	"github.com/storefront/storefront/store/memstore"
)

// TestAsyncDiscovery: with --async-discovery, a brief that registers a
// webhook is answered submitted with a new task id, decided in the
// background by the same pipeline, and its answer delivered to the
// webhook, signed, and kept for get_task_status; a replay starts nothing
// new. A wholesale read, or a brief that registers no webhook, stays
// synchronous and sends nothing.
func TestAsyncDiscovery(t *testing.T) {
	env := testenv.Start(t, "--sandbox", "--async-discovery")
	cs := kittest.Connect(t, env.BaseURL, kittest.Kit)
	hooks := newHookReceiver(t)
	push := func(op string) string {
		return `"push_notification_config":{"url":"` + hooks.URL + `/hooks/` + op + `","operation_id":"` + op + `"},`
	}
	for _, test := range []struct {
		name, args, op, wantArm string
	}{
		{"completed", `{"adcp_version":"3.2-rc.7","idempotency_key":"async-discovery-0001","buying_mode":"brief","brief":"Coffee brand launch video","filters":{"channels":["olv"]},` + push("op_curated_1") + `"context":{"correlation_id":"curated"}}`, "op_curated_1", "completed"},
		{"rejected", `{"adcp_version":"3.2-rc.7","buying_mode":"brief","brief":"Video for a coffee brand launch","filters":{"budget_range":{"max":100,"currency":"USD"}},` + push("op_curated_2") + `"account":` + acmeAccount + `}`, "op_curated_2", "rejected"},
		{"legacy decline", `{"adcp_version":"3.1","buying_mode":"brief","brief":"Video for a coffee brand launch","filters":{"budget_range":{"max":100,"currency":"USD"}},` + push("op_curated_3") + `"account":` + acmeAccount + `}`, "op_curated_3", "failed"},
	} {
		t.Run(test.name, func(t *testing.T) {
			res, payload := kittest.Call(t, cs, "get_products", test.args)
			if got := spectest.GetProducts(t, payload); got != "submitted" || res.IsError {
				t.Fatalf("get_products = %s, want submitted", payload)
			}
			sub := kittest.Decode(t, payload)
			taskID, _ := sub["task_id"].(string)
			if !strings.HasPrefix(taskID, "task_") {
				t.Fatalf("task_id = %v", sub["task_id"])
			}

			h := hooks.next(t)
			spectest.Validate(t, "core/mcp-webhook-payload.json", h.body)
			m := members(t, h.body)
			if string(m["operation_id"]) != `"`+test.op+`"` || string(m["task_id"]) != `"`+taskID+`"` || string(m["status"]) != `"`+test.wantArm+`"` || h.path != "/hooks/"+test.op {
				t.Errorf("webhook to %s = %s, want %s for task %s, status %s", h.path, h.body, test.op, taskID, test.wantArm)
			}
			if got := spectest.GetProducts(t, m["result"]); got != test.wantArm {
				t.Errorf("webhook result arm = %s, want %s", got, test.wantArm)
			}
			if !strings.Contains(h.header.Get("Signature-Input"), `tag="adcp/webhook-signing/v1"`) || h.header.Get("Content-Digest") == "" {
				t.Errorf("the webhook is not signed: %v", h.header)
			}

			account := ""
			if strings.Contains(test.args, `"account"`) {
				account = `,"account":` + acmeAccount
			}
			_, status := kittest.Call(t, cs, "get_task_status", `{"task_id":"`+taskID+`","include_result":true`+account+`}`)
			st := members(t, status)
			if string(st["status"]) != `"`+test.wantArm+`"` || !bytes.Equal(st["result"], m["result"]) {
				t.Errorf("get_task_status = %s, want %s with the webhook's result", status, test.wantArm)
			}
		})
	}

	// A replay with the first brief's key returns its submitted answer and
	// starts no second task, so no second webhook.
	_, replay := kittest.Call(t, cs, "get_products", `{"adcp_version":"3.2-rc.7","idempotency_key":"async-discovery-0001","buying_mode":"brief","brief":"Coffee brand launch video","filters":{"channels":["olv"]},`+push("op_curated_1")+`"context":{"correlation_id":"retry"}}`)
	if r := kittest.Decode(t, replay); r["replayed"] != true || r["status"] != "submitted" {
		t.Errorf("replay = %s, want the submitted answer replayed", replay)
	}

	// Synchronous: wholesale (a feed read never enters the task
	// lifecycle), a brief without a webhook, and an anonymous brief.
	anon := kittest.Connect(t, env.BaseURL, "")
	for _, c := range []struct {
		name, args string
		anonymous  bool
	}{
		{"wholesale", `{"adcp_version":"3.2-rc.7","buying_mode":"wholesale",` + push("op_sync_wholesale") + `"account":` + acmeAccount + `}`, false},
		{"no webhook", `{"adcp_version":"3.2-rc.7","buying_mode":"brief","brief":"Coffee brand launch video"}`, false},
		{"anonymous", `{"adcp_version":"3.2-rc.7","buying_mode":"brief","brief":"Coffee brand launch video",` + push("op_sync_anonymous") + `"context":{}}`, true},
	} {
		caller := cs
		if c.anonymous {
			caller = anon
		}
		_, payload := kittest.Call(t, caller, "get_products", c.args)
		if m := kittest.Decode(t, payload); m["status"] != "completed" || m["task_id"] != nil {
			t.Errorf("%s: get_products = %s, want a synchronous completed answer", c.name, payload)
		}
	}
	select {
	case h := <-hooks.got:
		t.Errorf("a webhook arrived for a synchronous answer or a replay: %s %s", h.path, h.body)
	case <-time.After(2 * time.Second):
	}
}

// TestCurationPanic: a decision that panics in the background still
// finishes its task, failed with the transient internal error in the
// request's envelope, and is counted; the process serves on.
func TestCurationPanic(t *testing.T) {
	ctx := context.Background()
	s := memstore.New()
	if err := demo.Seed(ctx, s, demo.Written); err != nil {
		t.Fatal(err)
	}
	owner := store.TaskOwner{Account: "acct_1", Principal: "buyer-1"}
	if err := s.CreateTask(ctx, demo.PublisherID, store.Task{ID: "task_panics", Owner: owner, Type: "get_products", Status: "submitted"}); err != nil {
		t.Fatal(err)
	}
	c := &agent.Curator{Store: s, Log: slog.New(slog.DiscardHandler), Now: func() time.Time { return testenv.Clock }}
	before := metrics.RecoveredPanics("background")
	c.Curate(demo.PublisherID, products.Submission{TaskID: "task_panics", Account: owner.Account, Principal: owner.Principal,
		Request: []byte(`{"adcp_version":"3.1","brief":"coffee","context":{"trace":"curated"}}`)},
		func(context.Context) products.Result { panic("xyzzy-internal-panic-detail") })
	waitCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	c.Wait(waitCtx)
	task, err := s.Task(ctx, demo.PublisherID, owner, "task_panics")
	if err != nil {
		t.Fatal(err)
	}
	if task.Status != "failed" || spectest.GetProducts(t, task.Result) != "failed" ||
		!bytes.Contains(task.Result, []byte(`"code":"SERVICE_UNAVAILABLE","message":"Internal error.","recovery":"transient"`)) ||
		!bytes.Contains(task.Result, []byte(`"adcp_version":"3.1"`)) || !bytes.Contains(task.Result, []byte(`"trace":"curated"`)) {
		t.Errorf("task = %s %s, want it failed with the transient internal error", task.Status, task.Result)
	}
	if got := metrics.RecoveredPanics("background") - before; got != 1 {
		t.Errorf("recovered panics on background moved by %v, want 1", got)
	}
}
