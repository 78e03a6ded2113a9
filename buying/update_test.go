package buying_test

import (
	"context"
	"testing"

	"github.com/storefront/storefront/demo"
	"github.com/storefront/storefront/store"
)

// TestUpdateRecordsTheRulebookThatJudged: every update_media_buy decision
// on the ledger names a rulebook version, on each store. An update that
// changes a package's terms is judged by the rulebook in force and records
// it; one no rule judges (a pause) records the rulebook that judged the
// buy's terms as they stand, never 0.
func TestUpdateRecordsTheRulebookThatJudged(t *testing.T) {
	onEachStore(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		res := e.svc.Create(ctx, e.call(buyer, displayBuy(5000, "2026-12-07T00:00:00Z")))
		id, _ := decode(t, res.Payload)["media_buy_id"].(string)
		if res.Failed || id == "" {
			t.Fatalf("Create = %s", res.Payload)
		}
		bs, err := e.store.Buys(ctx, demo.PublisherID, store.BuyFilter{})
		if err != nil || len(bs) != 1 {
			t.Fatalf("Buys = %v, %v", bs, err)
		}
		pkg := bs[0].Packages[0].ID
		// The publisher edits its rulebook after the buy was made.
		if _, err := e.store.SaveRulebook(ctx, demo.PublisherID, demo.Rulebook(), 1, "test", "an edit after the buy"); err != nil {
			t.Fatal(err)
		}
		for _, step := range []struct {
			name    string
			args    obj
			version int64
		}{
			{"a pause, judged by no rule", obj{"paused": true}, 1},
			{"a budget, judged again", obj{"packages": []obj{{"package_id": pkg, "budget": 6000}}}, 2},
			{"a budget the rulebook refuses", obj{"packages": []obj{{"package_id": pkg, "budget": 400}}}, 2},
			{"a resume, after the new judgement", obj{"paused": false}, 2},
		} {
			args := obj{"idempotency_key": key(), "account": account("acme.example"), "media_buy_id": id}
			for k, v := range step.args {
				args[k] = v
			}
			res := e.svc.Update(ctx, e.call(buyer, args))
			validate(t, "update_media_buy", res.Payload)
			entries, err := e.store.Decisions(ctx, demo.PublisherID, store.DecisionFilter{Limit: 1})
			if err != nil || len(entries) != 1 || entries[0].Task != "update_media_buy" {
				t.Fatalf("%s: newest ledger entry = %+v, %v; want the update (answer %s)", step.name, entries, err, res.Payload)
			}
			if got := entries[0].RulebookVersion; got != step.version {
				t.Errorf("%s: the ledger records rulebook_version %d, want %d (answer %s)", step.name, got, step.version, res.Payload)
			}
		}
		if b, err := e.store.Buy(ctx, demo.PublisherID, id); err != nil || b.RulebookVersion != 2 {
			t.Errorf("the stored buy was last judged under rulebook %d (%v), want 2", b.RulebookVersion, err)
		}
	})
}
