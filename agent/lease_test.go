package agent_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/storefront/storefront/access"
	"github.com/storefront/storefront/agent"
	"github.com/storefront/storefront/demo"
	"github.com/storefront/storefront/internal/spectest"
	"github.com/storefront/storefront/ledger"
	"github.com/storefront/storefront/products"
	"github.com/storefront/storefront/store"
	"github.com/storefront/storefront/store/memstore"
	"github.com/storefront/storefront/store/pgstore/pgtest"
)

// leaseClock is the one clock of a lease test's store and pipeline,
// moved by hand.
type leaseClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *leaseClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *leaseClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// heldLedger holds the first append it is given until release closes:
// a call caught between deciding and answering.
type heldLedger struct {
	products.Ledger
	once    sync.Once
	held    chan struct{} // closed once the first append is waiting
	release chan struct{}
}

func (l *heldLedger) Append(ctx context.Context, r ledger.Record) (ledger.Entry, error) {
	first := false
	l.once.Do(func() { first = true })
	if first {
		close(l.held)
		select {
		case <-l.release:
		case <-ctx.Done():
			return ledger.Entry{}, ctx.Err()
		}
	}
	return l.Ledger.Append(ctx, r)
}

// leaseAgent is the real pipeline over s, every time read from clock.
func leaseAgent(s store.Store, l products.Ledger, snaps products.Snapshots, clock func() time.Time) *agent.Agent {
	log := slog.New(slog.DiscardHandler)
	real := store.NewSnapshots(s)
	if snaps == nil {
		snaps = real
	}
	svc := &products.Service{Snapshots: snaps, Ledger: l, Accounts: access.Accounts{Store: s}, Now: clock, Log: log}
	return agent.New(s, svc, real, nil, log)
}

// adcpError is the part of an answer these tests read.
type adcpError struct {
	Status    string            `json:"status"`
	Products  []json.RawMessage `json:"products"`
	AdcpError struct {
		Code       string `json:"code"`
		RetryAfter int    `json:"retry_after"`
	} `json:"adcp_error"`
	Replayed bool `json:"replayed"`
}

func dispatch(t *testing.T, a *agent.Agent, args string) (agent.Reply, adcpError) {
	t.Helper()
	r, err := a.Dispatch(context.Background(), "get_products", agent.Call{Publisher: demo.PublisherID, Args: []byte(args)})
	if err != nil {
		t.Fatal(err)
	}
	spectest.GetProducts(t, r.Payload)
	var m adcpError
	if err := json.Unmarshal(r.Payload, &m); err != nil {
		t.Fatal(err)
	}
	return r, m
}

const leaseArgs = `{"adcp_version":"3.2-beta.5","buying_mode":"brief","brief":"coffee video","idempotency_key":"lease-key-0123456789"}`

// TestReplayTakeoverRefusesTheLateOwner: a call holds its key past the
// lease (on the injected clock); meanwhile a retry is told to wait the
// lease's remaining seconds, and once the lease has ended takes the key
// over and answers from the catalogue as it now is. When the first call
// finally answers, its late write is refused: the key replays the
// takeover's answer, not the stale one.
func TestReplayTakeoverRefusesTheLateOwner(t *testing.T) {
	clock := &leaseClock{t: time.Date(2034, 8, 9, 10, 11, 12, 0, time.UTC)}
	mem := memstore.New()
	if err := demo.Seed(context.Background(), mem, demo.Written); err != nil {
		t.Fatal(err)
	}
	mem.SetClock(clock.now)
	held := &heldLedger{Ledger: store.Ledger{Store: mem}, held: make(chan struct{}), release: make(chan struct{})}
	a := leaseAgent(mem, held, nil, clock.now)

	first := make(chan adcpError, 1)
	go func() {
		r, err := a.Dispatch(context.Background(), "get_products", agent.Call{Publisher: demo.PublisherID, Args: []byte(leaseArgs)})
		var m adcpError
		if err == nil {
			err = json.Unmarshal(r.Payload, &m)
		}
		if err != nil {
			t.Error(err)
		}
		first <- m
	}()
	<-held.held // the first call has decided, with products, and waits

	clock.advance(10500 * time.Millisecond)
	_, m := dispatch(t, a, leaseArgs)
	if m.AdcpError.Code != "IDEMPOTENCY_IN_FLIGHT" || m.AdcpError.RetryAfter != 20 {
		t.Fatalf("a retry 10.5 s into a 30 s lease = %+v, want IDEMPOTENCY_IN_FLIGHT with retry_after 20", m)
	}

	// The catalogue changes, so the takeover's answer is told apart.
	cat, _, err := mem.Catalogue(context.Background(), demo.PublisherID)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range cat {
		if _, err := mem.DeleteProduct(context.Background(), demo.PublisherID, p.ProductID, 0); err != nil {
			t.Fatal(err)
		}
	}
	clock.advance(agent.InFlight - 10500*time.Millisecond)
	_, taken := dispatch(t, a, leaseArgs)
	if taken.Status != "completed" || len(taken.Products) != 0 || taken.Replayed {
		t.Fatalf("the retry once the lease ended: %s with %d products, replayed %v; want a fresh completed answer with no products", taken.Status, len(taken.Products), taken.Replayed)
	}

	close(held.release)
	if late := <-first; late.Status != "completed" || len(late.Products) == 0 {
		t.Fatalf("the first call's own answer: %s with %d products; want the products it decided", late.Status, len(late.Products))
	}
	a.Wait(context.Background())
	_, replay := dispatch(t, a, leaseArgs)
	if !replay.Replayed || len(replay.Products) != 0 {
		t.Errorf("the replay after both answered has %d products, replayed %v; want the takeover's answer (no products), replayed", len(replay.Products), replay.Replayed)
	}
}

// cuttingSnapshots cuts the database on the first snapshot a call asks
// for, then serves as the store does (so that call fails transiently).
type cuttingSnapshots struct {
	products.Snapshots
	once sync.Once
	cut  func()
}

func (c *cuttingSnapshots) Snapshot(ctx context.Context, publisher string) (*products.Snapshot, error) {
	c.once.Do(c.cut)
	return c.Snapshots.Snapshot(ctx, publisher)
}

// TestReplayReleasedAfterAnOutage loses PostgreSQL in the middle of a call
// under an idempotency key: the call fails transiently and its release of
// the key fails too. Once the database is back the release is retried,
// so a retry with the same key runs afresh, well before the lease would
// have ended.
func TestReplayReleasedAfterAnOutage(t *testing.T) {
	db := pgtest.NewDatabase(t)
	seed := pgtest.OpenURL(t, db)
	if err := demo.Seed(context.Background(), seed, demo.Written); err != nil {
		t.Fatal(err)
	}
	proxy, via := pgtest.NewProxy(t, db)
	s := pgtest.OpenURL(t, via)
	clock := &leaseClock{t: time.Date(2035, 1, 2, 3, 4, 5, 0, time.UTC)}
	s.SetClock(clock.now)
	cutting := &cuttingSnapshots{Snapshots: store.NewSnapshots(s), cut: proxy.Cut}
	a := leaseAgent(s, store.Ledger{Store: s}, cutting, clock.now)

	_, m := dispatch(t, a, leaseArgs)
	if m.AdcpError.Code != "SERVICE_UNAVAILABLE" {
		t.Fatalf("the call that lost the database = %+v, want SERVICE_UNAVAILABLE", m)
	}
	proxy.Restore()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	a.Wait(ctx)
	if ctx.Err() != nil {
		t.Fatal("the release was not settled within 20 s of the database coming back")
	}
	// No time has passed on the clock: only the release frees the key.
	_, m = dispatch(t, a, leaseArgs)
	if m.Status != "completed" || m.Replayed {
		t.Errorf("the retry after the database came back = %+v, want a fresh completed answer, not IDEMPOTENCY_IN_FLIGHT", m)
	}
}
