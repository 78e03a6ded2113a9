package pgstore_test

import (
	"bytes"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/storefront/storefront/demo"
	"github.com/storefront/storefront/store"
	"github.com/storefront/storefront/store/pgstore/pgtest"
)

// TestAsyncReplicas checks that the guarantees of idempotency keys, tasks
// and seeds hold between two stores on one database, as between two
// storefront replicas.
func TestAsyncReplicas(t *testing.T) {
	url := pgtest.NewDatabase(t)
	a, b := pgtest.OpenURL(t, url), pgtest.OpenURL(t, url)
	ctx := t.Context()
	putPublishers(t, a, alpha)
	replica := func(i int) store.Store {
		if i%2 == 1 {
			return b
		}
		return a
	}
	var wg sync.WaitGroup
	race := func(n int, fn func(i int)) {
		start := make(chan struct{})
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				fn(i)
			}()
		}
		close(start)
		wg.Wait()
	}

	// One key, reserved from both replicas at once: one owner.
	for round := range 5 {
		var owners atomic.Int32
		race(16, func(i int) {
			r := store.Replay{Scope: "buyer|acct_1|get_products", Key: fmt.Sprintf("key-%d", round), RequestHash: fmt.Sprint(i), Token: fmt.Sprintf("token-%d", i)}
			got, err := replica(i).ReserveReplay(ctx, alpha.ID, r, time.Hour)
			if err != nil {
				t.Errorf("ReserveReplay = %v", err)
			}
			if got == nil {
				owners.Add(1)
			}
		})
		if n := owners.Load(); n != 1 {
			t.Errorf("round %d: %d of 16 reservers across two replicas got the key, want 1", round, n)
		}
	}
	// A response completed on one replica replays byte for byte on the
	// other.
	payload := []byte(`{"z":"ünïcödé","a":[2,1]}`)
	if _, err := a.ReserveReplay(ctx, alpha.ID, store.Replay{Scope: "buyer|acct_1|get_products", Key: "key-a", Token: "a-token"}, time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := a.CompleteReplay(ctx, alpha.ID, "buyer|acct_1|get_products", "key-a", "a-token", payload, false, ""); err != nil {
		t.Fatal(err)
	}
	got, err := b.ReserveReplay(ctx, alpha.ID, store.Replay{Scope: "buyer|acct_1|get_products", Key: "key-a", Token: "b-token"}, time.Hour)
	if err != nil || got == nil || !got.Done || !bytes.Equal(got.Payload, payload) {
		t.Errorf("replica b: ReserveReplay(completed on a) = %+v, %v, want the payload byte for byte", got, err)
	}

	// One task, finished from both replicas at once: one winner.
	owner := store.TaskOwner{Account: "acct_1", Principal: "buyer"}
	for round := range 3 {
		id := fmt.Sprintf("task-%d", round)
		if err := a.CreateTask(ctx, alpha.ID, store.Task{ID: id, Owner: owner, Type: "get_products", Status: "working"}); err != nil {
			t.Fatal(err)
		}
		var wins atomic.Int32
		race(8, func(i int) {
			_, err := replica(i).FinishTask(ctx, alpha.ID, owner, id, "completed", fmt.Appendf(nil, `{"racer":%d}`, i), time.Now())
			switch {
			case err == nil:
				wins.Add(1)
			case !errors.Is(err, store.ErrConflict):
				t.Errorf("FinishTask = %v", err)
			}
		})
		if n := wins.Load(); n != 1 {
			t.Errorf("round %d: %d of 8 finishers across two replicas won, want 1", round, n)
		}
	}
	if err := b.CreateTask(ctx, alpha.ID, store.Task{ID: "task-0", Owner: owner, Type: "get_products", Status: "working"}); !errors.Is(err, store.ErrExists) {
		t.Errorf("replica b: CreateTask(an id a created) = %v, want ErrExists", err)
	}

	// Seeds from both replicas land in one catalogue.
	p := demo.Products()[0]
	race(8, func(i int) {
		q := p
		q.ProductID = fmt.Sprintf("seeded-%d", i)
		if _, err := replica(i).SeedProduct(ctx, alpha.ID, "sandbox-buyer", "run-1", q); err != nil {
			t.Errorf("SeedProduct = %v", err)
		}
	})
	cat, v, err := b.SeededCatalogue(ctx, alpha.ID, "sandbox-buyer")
	if err != nil || len(cat) != 8 || v != 8 {
		t.Errorf("SeededCatalogue after 8 seeds across replicas = %d products at version %d, %v, want 8 at 8", len(cat), v, err)
	}
}

// TestReplayLeaseAcrossReplicas: a reservation's lease is judged on the
// storefront's clock, so a replica whose clock says the lease has ended
// takes the key over under its own token, and the first replica's late
// completion and release are refused: the takeover's record stands.
func TestReplayLeaseAcrossReplicas(t *testing.T) {
	url := pgtest.NewDatabase(t)
	a, later := pgtest.OpenURL(t, url), pgtest.OpenURL(t, url)
	start := time.Date(2031, 5, 6, 7, 8, 9, 0, time.UTC)
	a.SetClock(func() time.Time { return start })
	later.SetClock(func() time.Time { return start.Add(time.Minute) })
	ctx := t.Context()
	putPublishers(t, a, alpha)
	r := store.Replay{Scope: "buyer|acct_1|get_products", Key: "k", RequestHash: "h", Token: "replica-a"}
	if got, err := a.ReserveReplay(ctx, alpha.ID, r, time.Minute); err != nil || got != nil {
		t.Fatalf("ReserveReplay = %+v, %v, want nil", got, err)
	}
	if got, err := a.ReserveReplay(ctx, alpha.ID, store.Replay{Scope: r.Scope, Key: r.Key, RequestHash: "h", Token: "a-again"}, time.Minute); err != nil || got == nil || got.Done || !got.Expires.Equal(start.Add(time.Minute)) {
		t.Fatalf("replica a: ReserveReplay(its own reservation) = %+v, %v, want it in flight until %v", got, err, start.Add(time.Minute))
	}
	taken := r
	taken.Token = "replica-later"
	if got, err := later.ReserveReplay(ctx, alpha.ID, taken, time.Minute); err != nil || got != nil {
		t.Fatalf("replica whose clock is past the lease: ReserveReplay = %+v, %v, want the key taken over (nil)", got, err)
	}
	if err := a.CompleteReplay(ctx, alpha.ID, r.Scope, r.Key, r.Token, []byte(`{"late":true}`), false, ""); !errors.Is(err, store.ErrConflict) {
		t.Errorf("replica a: CompleteReplay after the takeover = %v, want ErrConflict", err)
	}
	if err := a.ReleaseReplay(ctx, alpha.ID, r.Scope, r.Key, r.Token); err != nil {
		t.Errorf("replica a: ReleaseReplay after the takeover = %v, want nil (nothing to release)", err)
	}
	if err := later.CompleteReplay(ctx, alpha.ID, r.Scope, r.Key, taken.Token, []byte(`{"on_time":true}`), false, ""); err != nil {
		t.Fatalf("the taking replica: CompleteReplay = %v", err)
	}
	got, err := a.ReserveReplay(ctx, alpha.ID, store.Replay{Scope: r.Scope, Key: r.Key, RequestHash: "h", Token: "reader"}, time.Minute)
	if err != nil || got == nil || !got.Done || string(got.Payload) != `{"on_time":true}` {
		t.Errorf("ReserveReplay after both wrote = %+v, %v, want the taking replica's response", got, err)
	}
}

// TestTaskOrderTies gives tasks the same creation time under the store and
// checks that ids break the tie byte by byte, as memstore orders them,
// whatever the database's collation.
func TestTaskOrderTies(t *testing.T) {
	s := pgtest.Open(t)
	ctx := t.Context()
	putPublishers(t, s, alpha)
	owner := store.TaskOwner{Account: "acct_1", Principal: "buyer"}
	for _, id := range []string{"b", "a", "_x", "B", "A", "a-1", "a1"} {
		if err := s.CreateTask(ctx, alpha.ID, store.Task{ID: id, Owner: owner, Type: "get_products", Status: "submitted"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Pool().Exec(ctx, `UPDATE tasks SET created_at = '2030-01-01T00:00:00Z'`); err != nil {
		t.Fatal(err)
	}
	got, total, err := s.ListTasks(ctx, alpha.ID, owner, store.TaskFilter{})
	if err != nil || total != 7 {
		t.Fatalf("ListTasks = %d, %v", total, err)
	}
	var ids []string
	for _, task := range got {
		ids = append(ids, task.ID)
	}
	want := []string{"A", "B", "_x", "a", "a-1", "a1", "b"}
	if fmt.Sprint(ids) != fmt.Sprint(want) {
		t.Errorf("ListTasks with equal creation times = %v, want %v", ids, want)
	}
	// The test server's own collation may already be bytewise: check the
	// column's, which holds on any server.
	var collation string
	if err := s.Pool().QueryRow(ctx, `SELECT collation_name FROM information_schema.columns
		WHERE table_name = 'tasks' AND column_name = 'id'`).Scan(&collation); err != nil || collation != "C" {
		t.Errorf("tasks.id collation = %q, %v, want C", collation, err)
	}
}

// TestMigrationDown checks that 00002 rolls back and forward cleanly on a
// database with rows in its tables.
func TestMigrationDown(t *testing.T) {
	url := pgtest.NewDatabase(t)
	s := pgtest.OpenURL(t, url)
	ctx := t.Context()
	putPublishers(t, s, alpha)
	owner := store.TaskOwner{Account: "acct_1", Principal: "buyer"}
	if err := s.CreateTask(ctx, alpha.ID, store.Task{ID: "t", Owner: owner, Type: "get_products", Status: "submitted"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SeedProduct(ctx, alpha.ID, "sandbox-buyer", "run-1", demo.Products()[0]); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ReserveReplay(ctx, alpha.ID, store.Replay{Scope: "s", Key: "k", Token: "t"}, time.Hour); err != nil {
		t.Fatal(err)
	}
	_, p := migrator(t, url)
	if _, err := p.DownTo(ctx, 1); err != nil {
		t.Fatalf("migrating down to 1: %v", err)
	}
	if _, err := s.Task(ctx, alpha.ID, owner, "t"); err == nil {
		t.Error("Task after migrating down to 1 = nil error, want the table gone")
	}
	if _, err := p.Up(ctx); err != nil {
		t.Fatalf("migrating up again: %v", err)
	}
	if err := s.CreateTask(ctx, alpha.ID, store.Task{ID: "t", Owner: owner, Type: "get_products", Status: "submitted"}); err != nil {
		t.Errorf("CreateTask after migrating down and up = %v", err)
	}
	if _, _, err := s.Catalogue(ctx, alpha.ID); err != nil {
		t.Errorf("Catalogue after migrating down and up = %v", err)
	}
}
