package storetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/storefront/storefront/adcp"
	"github.com/storefront/storefront/ledger"
	"github.com/storefront/storefront/mediabuy"
	"github.com/storefront/storefront/store"
)

func testBuy(id, account, principal string) mediabuy.Buy {
	start := time.Date(2031, 3, 4, 0, 0, 0, 0, time.UTC)
	return mediabuy.Buy{
		ID: id, Account: account, Principal: principal, BrandDomain: "acme.example", Currency: "USD",
		Start: start, End: start.AddDate(0, 1, 0), Revision: 1, ConfirmedAt: at(1).UTC(), CreatedAt: at(1).UTC(), UpdatedAt: at(1).UTC(),
		Context: json.RawMessage(`{"z":1, "a":"echoed as sent"}`),
		Packages: []mediabuy.Package{
			{ID: id + "_p1", ProductID: "prod_a", PricingOptionID: "cpm", PricingModel: "cpm", Budget: 600, Rate: 12,
				Params: json.RawMessage(`{"width":300,"height":250}`)},
			{ID: id + "_p2", ProductID: "prod_b", PricingOptionID: "cpm", PricingModel: "cpm", Budget: 400, Rate: 8,
				Assignments: []mediabuy.Assignment{{CreativeID: "cr_1"}}},
		},
	}
}

func created(rev int64) mediabuy.Event {
	return mediabuy.Event{Revision: rev, At: at(1), Actor: "buyer", Action: "created", Summary: "created"}
}

func testAccountTerms(t *testing.T, s store.Store) {
	withPublishers(t, s)
	ctx := t.Context()
	_, err := s.AccountTerms(ctx, alpha.ID, "acct_1")
	wantErr(t, "AccountTerms(unknown)", err, store.ErrNotFound)
	terms := store.AccountTerms{Account: "acct_1", Billing: "operator", PaymentTerms: "net_30", Timezone: "UTC", Status: "active", Revision: 1, UpdatedAt: at(2)}
	wantErr(t, "PutAccountTerms", s.PutAccountTerms(ctx, alpha.ID, terms), nil)
	got, err := s.AccountTerms(ctx, alpha.ID, "acct_1")
	wantErr(t, "AccountTerms", err, nil)
	terms.UpdatedAt = terms.UpdatedAt.UTC()
	sameJSON(t, "account terms", got, terms)
	if got.UpdatedAt.Location() != time.UTC {
		t.Errorf("AccountTerms().UpdatedAt = %v, want UTC", got.UpdatedAt)
	}
	terms.PaymentTerms, terms.Revision = "prepay", 2
	wantErr(t, "PutAccountTerms(replace)", s.PutAccountTerms(ctx, alpha.ID, terms), nil)
	got, _ = s.AccountTerms(ctx, alpha.ID, "acct_1")
	if got.PaymentTerms != "prepay" || got.Revision != 2 {
		t.Errorf("after replacing: %+v, want prepay at revision 2", got)
	}
	_, err = s.AccountTerms(ctx, beta.ID, "acct_1")
	wantErr(t, "AccountTerms(another publisher)", err, store.ErrNotFound)
	wantErr(t, "PutAccountTerms(ghost)", s.PutAccountTerms(ctx, ghost, terms), store.ErrNotFound)
}

// testMediaBuys stores, reads, lists and updates buys: the document comes
// back as it went in (the buyer's context byte for byte), updates check the
// revision, and history is appended.
func testMediaBuys(t *testing.T, s store.Store) {
	withPublishers(t, s)
	ctx := t.Context()
	b1 := testBuy("mb_1", "acct_1", "buyer")
	b2 := testBuy("mb_2", "acct_2", "buyer")
	b3 := testBuy("mb_3", "acct_1", "other-buyer")
	for _, b := range []mediabuy.Buy{b1, b2, b3} {
		wantErr(t, "CreateBuy("+b.ID+")", s.CreateBuy(ctx, alpha.ID, b, created(1)), nil)
	}
	wantErr(t, "CreateBuy(taken id)", s.CreateBuy(ctx, alpha.ID, b1, created(1)), store.ErrExists)
	wantErr(t, "CreateBuy(ghost)", s.CreateBuy(ctx, ghost, testBuy("mb_9", "a", "p"), created(1)), store.ErrNotFound)

	got, err := s.Buy(ctx, alpha.ID, "mb_1")
	wantErr(t, "Buy(mb_1)", err, nil)
	sameJSON(t, "stored buy", got, b1)
	// The context is kept as sent but for insignificant space (the
	// buy is a JSON document): key order and values survive.
	if want := `{"z":1,"a":"echoed as sent"}`; string(got.Context) != want {
		t.Errorf("Buy().Context = %s, want %s", got.Context, want)
	}
	_, err = s.Buy(ctx, beta.ID, "mb_1")
	wantErr(t, "Buy(another publisher)", err, store.ErrNotFound)

	ids := func(bs []mediabuy.Buy) []string {
		var out []string
		for _, b := range bs {
			out = append(out, b.ID)
		}
		return out
	}
	for _, c := range []struct {
		f    store.BuyFilter
		want []string
	}{
		{store.BuyFilter{}, []string{"mb_1", "mb_2", "mb_3"}},
		{store.BuyFilter{Account: "acct_1"}, []string{"mb_1", "mb_3"}},
		{store.BuyFilter{Principal: "buyer"}, []string{"mb_1", "mb_2"}},
		{store.BuyFilter{Account: "acct_1", Principal: "buyer"}, []string{"mb_1"}},
		{store.BuyFilter{IDs: []string{"mb_3", "mb_2", "nope"}}, []string{"mb_2", "mb_3"}},
		{store.BuyFilter{Account: "acct_9"}, nil},
	} {
		bs, err := s.Buys(ctx, alpha.ID, c.f)
		wantErr(t, fmt.Sprintf("Buys(%+v)", c.f), err, nil)
		if fmt.Sprint(ids(bs)) != fmt.Sprint(c.want) {
			t.Errorf("Buys(%+v) = %v, want %v", c.f, ids(bs), c.want)
		}
	}
	_, err = s.Buys(ctx, ghost, store.BuyFilter{})
	wantErr(t, "Buys(ghost)", err, store.ErrNotFound)

	next := b1
	next.Revision, next.Held = 2, true
	ev := mediabuy.Event{Revision: 2, At: at(3), Actor: "buyer", Action: "paused", Summary: "paused by the buyer"}
	wantErr(t, "UpdateBuy(stale)", s.UpdateBuy(ctx, alpha.ID, next, 5, []mediabuy.Event{ev}), store.ErrConflict)
	wantErr(t, "UpdateBuy", s.UpdateBuy(ctx, alpha.ID, next, 1, []mediabuy.Event{ev}), nil)
	wantErr(t, "UpdateBuy(again from 1)", s.UpdateBuy(ctx, alpha.ID, next, 1, nil), store.ErrConflict)
	wantErr(t, "UpdateBuy(unknown)", s.UpdateBuy(ctx, alpha.ID, testBuy("mb_9", "a", "p"), 1, nil), store.ErrNotFound)
	got, _ = s.Buy(ctx, alpha.ID, "mb_1")
	if got.Revision != 2 || !got.Held {
		t.Errorf("after UpdateBuy: revision %d held %v, want 2 and true", got.Revision, got.Held)
	}
	hist, err := s.History(ctx, alpha.ID, "mb_1", 0)
	wantErr(t, "History", err, nil)
	want := []mediabuy.Event{created(1), ev}
	for i := range want {
		want[i].At = want[i].At.UTC()
	}
	sameJSON(t, "history", hist, want)
	for _, e := range hist {
		if e.At.Location() != time.UTC {
			t.Errorf("History entry time %v, want UTC", e.At)
		}
	}
	hist, _ = s.History(ctx, alpha.ID, "mb_1", 1)
	if len(hist) != 1 || hist[0].Action != "paused" {
		t.Errorf("History(limit 1) = %+v, want the newest entry only", hist)
	}
	_, err = s.History(ctx, alpha.ID, "mb_9", 0)
	wantErr(t, "History(unknown)", err, store.ErrNotFound)
}

// testMediaBuyRevisionRace updates one revision from many goroutines:
// exactly one wins, as an update_media_buy naming a revision must.
func testMediaBuyRevisionRace(t *testing.T, s store.Store) {
	withPublishers(t, s)
	b := testBuy("mb_race", "acct_1", "buyer")
	wantErr(t, "CreateBuy", s.CreateBuy(t.Context(), alpha.ID, b, created(1)), nil)
	var wins atomic.Int32
	parallel(8, func(i int) {
		next := b
		next.Revision, next.Name = 2, fmt.Sprintf("racer %d", i)
		err := s.UpdateBuy(t.Context(), alpha.ID, next, 1, []mediabuy.Event{{Revision: 2, At: at(i), Action: "renamed"}})
		switch {
		case err == nil:
			wins.Add(1)
		case !errors.Is(err, store.ErrConflict):
			t.Errorf("UpdateBuy(racer %d) = %v, want nil or ErrConflict", i, err)
		}
	})
	if n := wins.Load(); n != 1 {
		t.Fatalf("%d of 8 concurrent updates from revision 1 succeeded, want exactly 1", n)
	}
	hist, _ := s.History(t.Context(), alpha.ID, "mb_race", 0)
	if len(hist) != 2 {
		t.Errorf("history has %d entries, want the creation and the one winning update", len(hist))
	}
}

func testOrder(id string) (store.Order, store.Task) {
	b := testBuy("mb_"+id, owner.Account, owner.Principal)
	o := store.Order{TaskID: id, Owner: owner, Status: store.OrderPending, Buy: b, Review: []string{"OD-1 Large orders"},
		RulebookVersion: 3, CreatedAt: at(4)}
	task := newTask(id, owner, "create_media_buy", "submitted", true)
	return o, task
}

// testOrders stores orders with their tasks and decides them: approval
// creates the buy and finishes the task in one go, a decline only the task.
func testOrders(t *testing.T, s store.Store) {
	withPublishers(t, s)
	ctx := t.Context()
	o1, t1 := testOrder("task_a")
	o2, t2 := testOrder("task_b")
	o2.CreatedAt = at(5)
	wantErr(t, "CreateOrder(a)", s.CreateOrder(ctx, alpha.ID, o1, t1), nil)
	wantErr(t, "CreateOrder(b)", s.CreateOrder(ctx, alpha.ID, o2, t2), nil)
	wantErr(t, "CreateOrder(a again)", s.CreateOrder(ctx, alpha.ID, o1, t1), store.ErrExists)
	if got := getTask(t, s, alpha.ID, owner, "task_a"); got.Status != "submitted" || got.Type != "create_media_buy" {
		t.Errorf("the order's task is %s/%s, want a submitted create_media_buy", got.Type, got.Status)
	}
	got, err := s.Order(ctx, alpha.ID, "task_a")
	wantErr(t, "Order(a)", err, nil)
	o1.CreatedAt = o1.CreatedAt.UTC()
	sameJSON(t, "order", got, o1)
	list, err := s.Orders(ctx, alpha.ID, store.OrderPending)
	wantErr(t, "Orders(pending)", err, nil)
	if len(list) != 2 || list[0].TaskID != "task_b" || list[1].TaskID != "task_a" {
		t.Errorf("Orders(pending) = %d orders starting %v, want task_b then task_a", len(list), list)
	}
	_, err = s.Order(ctx, beta.ID, "task_a")
	wantErr(t, "Order(another publisher)", err, store.ErrNotFound)

	result := []byte(`{"status":"completed","media_buy_id":"mb_task_a"}`)
	task, err := s.DecideOrder(ctx, alpha.ID, store.Decision{TaskID: "task_a", Status: store.OrderApproved, By: "desk", At: at(6),
		TaskStatus: "completed", Result: result, Created: created(1)})
	wantErr(t, "DecideOrder(approve a)", err, nil)
	if task.Status != "completed" || string(task.Result) != string(result) || task.Webhook == nil {
		t.Errorf("the approved order's task = %s %s (webhook %v), want completed with the result and its webhook", task.Status, task.Result, task.Webhook)
	}
	if _, err := s.Buy(ctx, alpha.ID, "mb_task_a"); err != nil {
		t.Errorf("Buy(approved order's buy) = %v, want it created", err)
	}
	_, err = s.DecideOrder(ctx, alpha.ID, store.Decision{TaskID: "task_b", Status: store.OrderDeclined, By: "desk", At: at(7),
		Slug: "commercially_declined", Reason: "No.", TaskStatus: "rejected", Result: []byte(`{"status":"rejected"}`)})
	wantErr(t, "DecideOrder(decline b)", err, nil)
	if _, err := s.Buy(ctx, alpha.ID, "mb_task_b"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Buy(declined order's buy) = %v, want ErrNotFound", err)
	}
	got, _ = s.Order(ctx, alpha.ID, "task_b")
	if got.Status != store.OrderDeclined || got.DecidedBy != "desk" || !got.DecidedAt.Equal(at(7)) || got.Reason != "No." {
		t.Errorf("declined order = %+v", got)
	}
	_, err = s.DecideOrder(ctx, alpha.ID, store.Decision{TaskID: "task_b", Status: store.OrderApproved, At: at(8), TaskStatus: "completed"})
	wantErr(t, "DecideOrder(decided)", err, store.ErrConflict)
	_, err = s.DecideOrder(ctx, alpha.ID, store.Decision{TaskID: "nope", Status: store.OrderApproved, At: at(8), TaskStatus: "completed"})
	wantErr(t, "DecideOrder(unknown)", err, store.ErrNotFound)
	if list, _ := s.Orders(ctx, alpha.ID, store.OrderPending); len(list) != 0 {
		t.Errorf("Orders(pending) after deciding both = %d, want 0", len(list))
	}
	if list, _ := s.Orders(ctx, alpha.ID, ""); len(list) != 2 {
		t.Errorf("Orders(all) = %d, want 2", len(list))
	}
}

// testOrderDecidedOnce decides one order from many goroutines, approving
// and declining: exactly one decision lands.
func testOrderDecidedOnce(t *testing.T, s store.Store) {
	withPublishers(t, s)
	o, task := testOrder("task_race")
	wantErr(t, "CreateOrder", s.CreateOrder(t.Context(), alpha.ID, o, task), nil)
	var wins atomic.Int32
	parallel(8, func(i int) {
		d := store.Decision{TaskID: "task_race", Status: store.OrderApproved, At: at(i), TaskStatus: "completed", Created: created(1)}
		if i%2 == 1 {
			d.Status, d.TaskStatus = store.OrderDeclined, "rejected"
		}
		_, err := s.DecideOrder(t.Context(), alpha.ID, d)
		switch {
		case err == nil:
			wins.Add(1)
		case !errors.Is(err, store.ErrConflict):
			t.Errorf("DecideOrder(racer %d) = %v, want nil or ErrConflict", i, err)
		}
	})
	if n := wins.Load(); n != 1 {
		t.Fatalf("%d of 8 concurrent decisions succeeded, want exactly 1", n)
	}
	got, _ := s.Order(t.Context(), alpha.ID, "task_race")
	_, buyErr := s.Buy(t.Context(), alpha.ID, o.Buy.ID)
	if (got.Status == store.OrderApproved) != (buyErr == nil) {
		t.Errorf("order %s but Buy() = %v: the buy exists exactly when the order was approved", got.Status, buyErr)
	}
}

func row(buy, pkg, day, source string, imps int64, spend float64) mediabuy.Row {
	return mediabuy.Row{MediaBuyID: buy, PackageID: pkg, Date: adcp.MustDate(day), Source: source,
		Metrics: mediabuy.Metrics{Impressions: imps, Spend: spend}, ReportedAt: at(9)}
}

// testDelivery stores delivery rows: an ad-server row replaces its day,
// a simulated row adds to it, a batch naming an unknown buy or package
// stores nothing.
func testDelivery(t *testing.T, s store.Store) {
	withPublishers(t, s)
	ctx := t.Context()
	b := testBuy("mb_d", "acct_1", "buyer")
	wantErr(t, "CreateBuy", s.CreateBuy(ctx, alpha.ID, b, created(1)), nil)
	wantErr(t, "ReportDelivery", s.ReportDelivery(ctx, alpha.ID, []mediabuy.Row{
		row("mb_d", "mb_d_p1", "2031-03-05", mediabuy.AdServer, 1000, 12),
		row("mb_d", "mb_d_p2", "2031-03-05", mediabuy.AdServer, 500, 4),
		row("mb_d", "mb_d_p1", "2031-03-04", mediabuy.Simulated, 10, 1),
	}), nil)
	// The same period again replaces (the ad server re-sent a
	// correction); a simulation adds.
	wantErr(t, "ReportDelivery(again)", s.ReportDelivery(ctx, alpha.ID, []mediabuy.Row{
		row("mb_d", "mb_d_p1", "2031-03-05", mediabuy.AdServer, 1100, 13.2),
		row("mb_d", "mb_d_p1", "2031-03-04", mediabuy.Simulated, 5, 0.5),
		row("mb_d", "mb_d_p1", "2031-03-04", mediabuy.Simulated, 5, 0.5),
	}), nil)
	wantErr(t, "ReportDelivery(unknown package)", s.ReportDelivery(ctx, alpha.ID, []mediabuy.Row{
		row("mb_d", "mb_d_p1", "2031-03-06", mediabuy.AdServer, 1, 1),
		row("mb_d", "nope", "2031-03-06", mediabuy.AdServer, 1, 1),
	}), store.ErrNotFound)
	wantErr(t, "ReportDelivery(unknown buy)", s.ReportDelivery(ctx, alpha.ID, []mediabuy.Row{row("mb_x", "p", "2031-03-06", mediabuy.AdServer, 1, 1)}), store.ErrNotFound)
	rows, err := s.Delivery(ctx, alpha.ID, []string{"mb_d"})
	wantErr(t, "Delivery", err, nil)
	want := []mediabuy.Row{
		row("mb_d", "mb_d_p1", "2031-03-04", mediabuy.Simulated, 20, 2),
		row("mb_d", "mb_d_p1", "2031-03-05", mediabuy.AdServer, 1100, 13.2),
		row("mb_d", "mb_d_p2", "2031-03-05", mediabuy.AdServer, 500, 4),
	}
	for i := range want {
		want[i].ReportedAt = want[i].ReportedAt.UTC()
	}
	sameJSON(t, "delivery rows", rows, want)
	if rows, _ := s.Delivery(ctx, beta.ID, []string{"mb_d"}); len(rows) != 0 {
		t.Errorf("Delivery(another publisher) = %d rows, want none", len(rows))
	}
}

// testDeliveryConcurrentSimulations adds simulations to one day from many
// goroutines: none is lost.
func testDeliveryConcurrentSimulations(t *testing.T, s store.Store) {
	withPublishers(t, s)
	b := testBuy("mb_sim", "acct_1", "buyer")
	wantErr(t, "CreateBuy", s.CreateBuy(t.Context(), alpha.ID, b, created(1)), nil)
	parallel(8, func(i int) {
		err := s.ReportDelivery(t.Context(), alpha.ID, []mediabuy.Row{row("mb_sim", "mb_sim_p1", "2031-03-05", mediabuy.Simulated, 100, 1)})
		if err != nil {
			t.Errorf("ReportDelivery(racer %d) = %v", i, err)
		}
	})
	rows, _ := s.Delivery(t.Context(), alpha.ID, []string{"mb_sim"})
	if len(rows) != 1 || rows[0].Impressions != 800 || rows[0].Spend != 8 {
		t.Errorf("after 8 concurrent simulations of 100 impressions: %+v, want one row of 800 impressions and 8 spent", rows)
	}
}

// testLedgerTask records decisions of other tasks beside get_products': the
// task is kept, and the chain verifies across both kinds of entry.
func testLedgerTask(t *testing.T, s store.Store) {
	withPublishers(t, s)
	for i, task := range []string{"", "create_media_buy", "", "update_media_buy"} {
		r := ledger.Record{Publisher: alpha.ID, Account: "acct_1", Principal: "buyer", RequestDigest: ledger.Digest([]byte{byte(i)}),
			Task: task, Arm: "completed", ResponseDigest: ledger.Digest([]byte{byte(i), 1})}
		if _, err := s.Append(t.Context(), r); err != nil {
			t.Fatalf("Append(%q) = %v", task, err)
		}
	}
	var tasks []string
	if err := s.WalkLedger(t.Context(), alpha.ID, func(e ledger.Entry) error {
		tasks = append(tasks, e.Task)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(tasks) != fmt.Sprint([]string{"", "create_media_buy", "", "update_media_buy"}) {
		t.Errorf("tasks read back = %q", tasks)
	}
	verify(t, s, alpha.ID)
}
