package buying_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/storefront/storefront/buying"
	"github.com/storefront/storefront/demo"
	"github.com/storefront/storefront/products"
	"github.com/storefront/storefront/store"
	"github.com/storefront/storefront/vocab"
)

// order sends a buy over the demo's 100,000 USD review threshold to the
// desk and returns its task id.
func order(t *testing.T, e *env, budget float64) string {
	t.Helper()
	req := displayBuy(budget, "2026-12-07T00:00:00Z")
	req["adcp_version"] = "3.2-beta.5"
	req["push_notification_config"] = obj{"url": "https://buyer.example/hooks", "operation_id": "op-1"}
	res := e.svc.Create(context.Background(), e.call(buyer, req))
	validate(t, "create_media_buy", res.Payload)
	got := decode(t, res.Payload)
	if res.Failed || got["status"] != "submitted" || got["media_buy_id"] != nil {
		t.Fatalf("a %v USD buy = %s, want the submitted arm", budget, res.Payload)
	}
	if msg, _ := got["message"].(string); strings.Contains(msg, "OD-8810") || strings.Contains(msg, "Whitcombe") {
		t.Errorf("the submitted message names the review rule: %q", msg)
	}
	return got["task_id"].(string)
}

func TestOrderDeskApproves(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	id := order(t, e, 120000)
	o, err := e.store.Order(ctx, demo.PublisherID, id)
	if err != nil || o.Status != store.OrderPending || len(o.Review) != 1 || !strings.HasPrefix(o.Review[0], "OD-8810-LARGE-ORDERS") {
		t.Fatalf("Order = %+v, %v; want pending for the review rule", o, err)
	}
	if bs, _ := e.store.Buys(ctx, demo.PublisherID, store.BuyFilter{}); len(bs) != 0 {
		t.Fatalf("a buy exists before approval: %d", len(bs))
	}
	var notified []store.Task
	notify := func(_ context.Context, _ string, task store.Task) { notified = append(notified, task) }
	b, err := e.svc.Approve(ctx, demo.PublisherID, id, "desk", notify)
	if err != nil {
		t.Fatalf("Approve = %v", err)
	}
	if len(notified) != 1 || notified[0].Status != "completed" || notified[0].Webhook == nil || notified[0].Webhook.OperationID != "op-1" {
		t.Fatalf("notified %+v, want the completed task with its webhook", notified)
	}
	validate(t, "create_media_buy", notified[0].Result)
	var result struct {
		MediaBuyID string `json:"media_buy_id"`
	}
	_ = json.Unmarshal(notified[0].Result, &result)
	if result.MediaBuyID != b.ID {
		t.Errorf("the task's result names %q, want the created buy %q", result.MediaBuyID, b.ID)
	}
	read := e.svc.Get(ctx, e.call(buyer, obj{"account": account("acme.example"), "media_buy_ids": []string{b.ID}, "include_history": 5}))
	validate(t, "get_media_buys", read.Payload)
	if !strings.Contains(string(read.Payload), "approved by the sales desk") {
		t.Errorf("the buy's history does not say it was approved: %s", read.Payload)
	}
	if _, err := e.svc.Approve(ctx, demo.PublisherID, id, "desk", notify); !errors.Is(err, buying.ErrDecided) {
		t.Errorf("approving again = %v, want ErrDecided", err)
	}
	if _, err := e.svc.Decline(ctx, demo.PublisherID, id, "desk", vocab.CommerciallyDeclined, "", notify); !errors.Is(err, buying.ErrDecided) {
		t.Errorf("declining an approved order = %v, want ErrDecided", err)
	}
	entries, _ := e.store.Decisions(ctx, demo.PublisherID, store.DecisionFilter{Limit: 2})
	if len(entries) != 2 || entries[0].Arm != "completed" || entries[1].Arm != "submitted" || entries[0].Task != "create_media_buy" {
		t.Errorf("ledger = %+v, want the submission then the approval", entries)
	}
}

func TestOrderDeskDeclines(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	id := order(t, e, 150000)
	var notified []store.Task
	notify := func(_ context.Context, _ string, task store.Task) { notified = append(notified, task) }

	// The publisher's words are screened, never altered: a reason naming
	// a confidential term is refused and nothing is decided.
	_, err := e.svc.Decline(ctx, demo.PublisherID, id, "desk", vocab.CommerciallyDeclined, "Dana Whitcombe will not sign this.", notify)
	var re *buying.ReasonError
	if !errors.As(err, &re) || len(notified) != 0 {
		t.Fatalf("Decline with a confidential name = %v (notified %d), want a ReasonError and no decision", err, len(notified))
	}
	if _, err := e.svc.Decline(ctx, demo.PublisherID, id, "desk", "no_such_slug", "", notify); !errors.Is(err, buying.ErrUnknownSlug) {
		t.Errorf("Decline with an unknown slug = %v", err)
	}
	composed, err := e.svc.Decline(ctx, demo.PublisherID, id, "desk", vocab.FlightUnavailable, "This quarter is fully booked for large orders.", notify)
	if err != nil {
		t.Fatalf("Decline = %v", err)
	}
	if len(notified) != 1 || notified[0].Status != "failed" {
		t.Fatalf("notified %+v, want the failed task", notified)
	}
	validate(t, "create_media_buy", notified[0].Result)
	var result struct {
		AdcpError struct{ Code, Message string } `json:"adcp_error"`
	}
	_ = json.Unmarshal(notified[0].Result, &result)
	if result.AdcpError.Code != "PRODUCT_UNAVAILABLE" || result.AdcpError.Message != composed.Reason.String() ||
		!strings.Contains(result.AdcpError.Message, "This quarter is fully booked for large orders.") {
		t.Errorf("the declined task's result = %s", notified[0].Result)
	}
	if bs, _ := e.store.Buys(ctx, demo.PublisherID, store.BuyFilter{}); len(bs) != 0 {
		t.Errorf("a declined order created a buy")
	}
}

// TestOrderDecidedOnce decides one order from many goroutines: exactly one
// decision lands, and the buyer is told once.
func TestOrderDecidedOnce(t *testing.T) {
	e := newEnv(t)
	id := order(t, e, 120000)
	var mu sync.Mutex
	var wins, notified int
	notify := func(context.Context, string, store.Task) { mu.Lock(); notified++; mu.Unlock() }
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var err error
			if i%2 == 0 {
				_, err = e.svc.Approve(context.Background(), demo.PublisherID, id, "desk", notify)
			} else {
				_, err = e.svc.Decline(context.Background(), demo.PublisherID, id, "desk", vocab.CommerciallyDeclined, "", notify)
			}
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				wins++
			case !errors.Is(err, buying.ErrDecided):
				t.Errorf("decision %d = %v", i, err)
			}
		}()
	}
	wg.Wait()
	if wins != 1 || notified != 1 {
		t.Errorf("%d decisions landed and the buyer was told %d times, want 1 and 1", wins, notified)
	}
}

// TestTrustTierReview: an account whose trust tier the rulebook lists
// waits for the desk whatever it buys.
func TestTrustTierReview(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	rb := demo.Rulebook()
	rb.Orders.ReviewTiers = []vocab.Level{vocab.Category}
	if _, err := e.store.SaveRulebook(ctx, demo.PublisherID, rb, 1, "test", "tier review"); err != nil {
		t.Fatal(err)
	}
	acct, err := e.store.EnsureAccount(ctx, demo.PublisherID, store.Account{Operator: "pinnacle-agency.example", BrandDomain: "acme.example", Disclosure: vocab.Exact})
	if err != nil {
		t.Fatal(err)
	}
	acct.Disclosure = vocab.Category
	if _, err := e.store.PutAccount(ctx, demo.PublisherID, acct); err != nil {
		t.Fatal(err)
	}
	res := e.svc.Create(ctx, e.call(buyer, displayBuy(5000, "2026-12-07T00:00:00Z")))
	if got := decode(t, res.Payload); got["status"] != "submitted" {
		t.Fatalf("a small buy on a reviewed tier = %s, want submitted", res.Payload)
	}
	other := products.Principal{ID: "other", Operator: "other.example"}
	req := displayBuy(5000, "2026-12-07T00:00:00Z")
	req["account"] = obj{"brand": obj{"domain": "acme.example"}, "operator": "other.example"}
	if got := decode(t, e.svc.Create(ctx, e.call(other, req)).Payload); got["media_buy_status"] == nil {
		t.Errorf("an account of the default tier waited too: %v", got)
	}
}
