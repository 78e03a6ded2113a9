package compliance_test

import (
	"encoding/json"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/storefront/storefront/internal/kittest"
	"github.com/storefront/storefront/internal/testenv"
	"github.com/storefront/storefront/store/pgstore/pgtest"
)

// TestDirectiveRace: many calls from one principal race for one
// directive; exactly one is declined, whichever replica serves it.
func TestDirectiveRace(t *testing.T) {
	t.Run("memory", func(t *testing.T) {
		env := testenv.Start(t, "--sandbox")
		race(t, env, env)
	})
	t.Run("postgres, two replicas", func(t *testing.T) {
		db := pgtest.NewDatabase(t)
		r1 := testenv.Start(t, "--sandbox", "--database-url", db, "--seed-demo")
		r2 := testenv.Start(t, "--sandbox", "--database-url", db)
		race(t, r1, r2)
	})
}

// race registers a directive through a and sends 24 concurrent briefs,
// alternating between a and b, several rounds over.
func race(t *testing.T, a, b *testenv.Env) {
	const calls = 24
	sessions := make([]*mcp.ClientSession, calls)
	for i := range sessions {
		env := a
		if i%2 == 1 {
			env = b
		}
		sessions[i] = kittest.Connect(t, env.BaseURL, kittest.Kit)
	}
	for round := range 3 {
		kittest.MustSucceed(t, kittest.Control(t, sessions[0], "force_get_products_arm", `{"arm":"rejected","reason":"Only one call gets this."}`))
		statuses := make([]string, calls)
		errs := make([]error, calls)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range calls {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				_, payload, err := kittest.TryCall(sessions[i], "get_products", kittest.Brief)
				if err != nil {
					errs[i] = err
					return
				}
				var head struct {
					Status string `json:"status"`
					Reason string `json:"reason"`
				}
				errs[i] = json.Unmarshal(payload, &head)
				statuses[i] = head.Status
				if head.Status == "rejected" && head.Reason != "Only one call gets this." {
					statuses[i] = "rejected with another reason: " + head.Reason
				}
			}()
		}
		close(start)
		wg.Wait()
		count := map[string]int{}
		for i, s := range statuses {
			if errs[i] != nil {
				t.Fatalf("round %d, call %d: %v", round, i, errs[i])
			}
			count[s]++
		}
		if count["rejected"] != 1 || count["completed"] != calls-1 {
			t.Errorf("round %d: %d concurrent calls answered %v, want exactly one rejected and the rest completed", round, calls, count)
		}
	}
	// Nothing is left over for the next call.
	kittest.WantStatus(t, kittest.GetProducts(t, sessions[1], kittest.Brief), "completed")
}
