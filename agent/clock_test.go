package agent_test

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/storefront/storefront/app"
	"github.com/storefront/storefront/internal/kittest"
	"github.com/storefront/storefront/internal/testenv"
	"github.com/storefront/storefront/store/pgstore/pgtest"
)

// movable is a clock a test moves.
type movable struct {
	mu sync.Mutex
	t  time.Time
}

func (c *movable) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *movable) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// TestOneClock runs the program, on each store, on a clock years from the
// machine's and the database's, and checks that every time it serves or
// judges by comes from that clock: idempotency records age on it (a
// replay within the TTL replays), the ledger stamps decisions with it, an
// A2A task's status time and a stale answer's cache age are taken on it,
// and a task's webhook carries its time.
func TestOneClock(t *testing.T) {
	for _, tc := range pgtest.Stores {
		t.Run(tc.Name, func(t *testing.T) {
			c := &movable{t: time.Date(2041, 3, 4, 5, 6, 7, 0, time.UTC)}
			env := testenv.StartWith(t, func(m *app.Main) { m.Now = c.now }, append([]string{"--sandbox"}, tc.Args(t)...)...)
			cs := kittest.Connect(t, env.BaseURL, kittest.Kit)
			start := c.now()

			// A replay a minute later, on this clock, is a replay.
			args := replayArgs("one-clock-replay-0123456789", "")
			kittest.WantStatus(t, kittest.GetProducts(t, cs, args), "completed")
			c.add(time.Minute)
			if again := kittest.GetProducts(t, cs, args); again["replayed"] != true || again["status"] != "completed" {
				t.Errorf("the same key a minute later on the program's clock = %v, want the replayed answer", again)
			}
			decisions := kittest.Decisions(t, env)
			if len(decisions) == 0 || decisions[0]["time"] != start.Format(time.RFC3339) {
				t.Errorf("the newest decision = %v, want it stamped %s", decisions[:min(1, len(decisions))], start.Format(time.RFC3339))
			}

			// An A2A task's status time.
			c.add(time.Minute)
			p := kittest.ProbeA2A(t, env.BaseURL+"/a2a", kittest.Kit, "get_products", `{"adcp_version":"3.2-beta.5","buying_mode":"brief","brief":"video"}`)
			raw, _ := json.Marshal(p.Body)
			var rpc struct {
				Result struct {
					Task struct {
						Status struct {
							Timestamp time.Time `json:"timestamp"`
						} `json:"status"`
					} `json:"task"`
				} `json:"result"`
			}
			if err := json.Unmarshal(raw, &rpc); err != nil || !rpc.Result.Task.Status.Timestamp.Equal(c.now()) {
				t.Errorf("A2A task status timestamp = %v (%v), want %v: %s", rpc.Result.Task.Status.Timestamp, err, c.now(), raw)
			}

			// A stale answer's cache age: the snapshot was built on this
			// clock, at the first call or after it.
			c.add(90 * time.Second)
			kittest.MustSucceed(t, kittest.Control(t, cs, "force_upstream_unavailable", `{"tool":"get_products"}`))
			stale := kittest.GetProducts(t, cs, kittest.Brief)
			errs, _ := stale["errors"].([]any)
			if len(errs) == 0 {
				t.Fatalf("the stale answer has no advisory: %v", stale)
			}
			age, _ := errs[0].(map[string]any)["details"].(map[string]any)["cache_age_seconds"].(float64)
			if elapsed := c.now().Sub(start).Seconds(); age < 90 || age > elapsed {
				t.Errorf("cache_age_seconds = %v, want the snapshot's age on the program's clock, 90 to %v", age, elapsed)
			}

			// A task's webhook.
			c.add(time.Hour)
			hooks := newHookReceiver(t)
			const taskID = "task_one_clock"
			kittest.WantStatus(t, submit(t, cs, taskID, `{"url":"`+hooks.URL+`/hook","operation_id":"op_one_clock"}`), "submitted")
			kittest.MustSucceed(t, complete(t, cs, taskID, terminalResult))
			var hook struct {
				Timestamp string `json:"timestamp"`
			}
			if h := hooks.next(t); json.Unmarshal(h.body, &hook) != nil || hook.Timestamp != c.now().Format(time.RFC3339) {
				t.Errorf("the webhook's timestamp = %q, want %s: %s", hook.Timestamp, c.now().Format(time.RFC3339), h.body)
			}
			_, status := kittest.Call(t, cs, "get_task_status", `{"task_id":"`+taskID+`","account":`+acmeAccount+`}`)
			if want := c.now().Format("2006-01-02T15:04:05"); !strings.Contains(string(status), `"updated_at":"`+want) {
				t.Errorf("get_task_status = %s, want updated_at %s", status, want)
			}
		})
	}
}
