package buying_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/storefront/storefront/access"
	"github.com/storefront/storefront/buying"
	"github.com/storefront/storefront/demo"
	"github.com/storefront/storefront/internal/spectest"
	"github.com/storefront/storefront/products"
	"github.com/storefront/storefront/store"
	"github.com/storefront/storefront/store/memstore"
	"github.com/storefront/storefront/store/pgstore/pgtest"
)

// clock is the date the tests run on, so that the demo's lead time and
// sold-out windows give stable answers.
var clock = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// buyer is a principal of the demo's operator.
var buyer = products.Principal{ID: "demo-buyer", Operator: "pinnacle-agency.example"}

// env is the media-buy service and get_products over one memstore,
// wired as the program wires them.
type env struct {
	svc      *buying.Service
	products *products.Service
	store    store.Store
	snaps    *store.Snapshots
	now      time.Time
}

func newEnv(t testing.TB) *env {
	t.Helper()
	return newEnvOn(t, memstore.New())
}

// onEachStore runs fn in a subtest per store: memory, then PostgreSQL
// (which pgtest skips, or fails under CI, without a database).
func onEachStore(t *testing.T, fn func(t *testing.T, e *env)) {
	t.Run("memory", func(t *testing.T) { fn(t, newEnv(t)) })
	t.Run("postgres", func(t *testing.T) { fn(t, newEnvOn(t, pgtest.Open(t))) })
}

func newEnvOn(t testing.TB, s store.Store) *env {
	t.Helper()
	if err := demo.Seed(context.Background(), s, demo.Written); err != nil {
		t.Fatalf("seeding the demo: %v", err)
	}
	e := &env{store: s, snaps: store.NewSnapshots(s), now: clock}
	now := func() time.Time { return e.now }
	e.svc = &buying.Service{Store: s, Snapshots: e.snaps, Accounts: access.Accounts{Store: s}, Ledger: store.Ledger{Store: s},
		Directives: store.Directives{Store: s}, Now: now, Log: quiet}
	e.products = &products.Service{Snapshots: e.snaps, Ledger: store.Ledger{Store: s}, Accounts: access.Accounts{Store: s},
		Now: now, Log: quiet}
	return e
}

func (e *env) call(p products.Principal, args any) products.Call {
	b, err := json.Marshal(args)
	if err != nil {
		panic(err)
	}
	return products.Call{Publisher: demo.PublisherID, Principal: p, Args: b}
}

// obj is a JSON object under construction.
type obj = map[string]any

func decode(t *testing.T, payload []byte) obj {
	t.Helper()
	var m obj
	if err := json.Unmarshal(payload, &m); err != nil {
		t.Fatalf("answer is not a JSON object: %v\n%s", err, payload)
	}
	return m
}

// validate checks an answer against the official schema of its task.
func validate(t *testing.T, task string, payload []byte) {
	t.Helper()
	spectest.MediaBuy(t, task, payload)
}

// account is the demo operator's natural-key account for a brand.
func account(brand string) obj {
	return obj{"brand": obj{"domain": brand}, "operator": "pinnacle-agency.example"}
}

var keys int

// key is a fresh idempotency key.
func key() string {
	keys++
	return "test-key-000000000000-" + time.Duration(keys).String()
}
