package products_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/storefront/storefront/access"
	"github.com/storefront/storefront/demo"
	"github.com/storefront/storefront/ledger"
	"github.com/storefront/storefront/merch"
	"github.com/storefront/storefront/products"
	"github.com/storefront/storefront/store"
	"github.com/storefront/storefront/store/memstore"
)

// clock is the date the service tests run on, so that lead times and the
// demo's sold-out windows give stable answers.
var clock = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// env is a Service over a memstore, wired as the program wires it.
type env struct {
	svc   *products.Service
	store *memstore.Store
	snaps *store.Snapshots
}

func newEnv(t *testing.T) *env {
	t.Helper()
	s := memstore.New()
	snaps := store.NewSnapshots(s)
	return &env{
		svc: &products.Service{
			Snapshots:  snaps,
			Ledger:     store.Ledger{Store: s},
			Accounts:   access.Accounts{Store: s},
			Directives: store.Directives{Store: s},
			Tasks:      store.Tasks{Store: s},
			Now:        func() time.Time { return clock },
			Log:        quiet,
		},
		store: s,
		snaps: snaps,
	}
}

// demoEnv serves the demo publisher.
func demoEnv(t *testing.T) *env {
	t.Helper()
	e := newEnv(t)
	if err := demo.Seed(context.Background(), e.store, demo.Written); err != nil {
		t.Fatalf("seeding the demo: %v", err)
	}
	return e
}

// publisher adds a publisher with a catalogue and, when rb is not nil, a
// rulebook (stored as given, without validation).
func (e *env) publisher(t *testing.T, id string, catalogue []products.Product, rb *merch.Rulebook) {
	t.Helper()
	ctx := context.Background()
	if err := e.store.PutPublisher(ctx, products.Publisher{ID: id, Name: "Test " + id, Domain: id + ".example", AnonymousDiscovery: true}); err != nil {
		t.Fatal(err)
	}
	for _, p := range catalogue {
		if _, err := e.store.PutProduct(ctx, id, p, 0); err != nil {
			t.Fatal(err)
		}
	}
	if rb != nil {
		if _, err := e.store.SaveRulebook(ctx, id, *rb, 0, "test", "test"); err != nil {
			t.Fatal(err)
		}
	}
}

var anonymous = products.Principal{}

// agency is an authenticated buyer that may use the natural-key accounts
// of agency.example.
var agency = products.Principal{ID: "buyer_agency", Operator: "agency.example"}

// get runs one get_products call and decodes its payload.
func (e *env) get(t *testing.T, publisher string, p products.Principal, args string) (products.Result, map[string]any) {
	t.Helper()
	r := e.svc.GetProducts(context.Background(), products.Call{Publisher: publisher, Principal: p, Args: []byte(args)})
	return r, payload(t, r.Payload)
}

func payload(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("payload is not a JSON object: %v\n%s", err, b)
	}
	return m
}

// ledgerLen is the number of entries in a publisher's chain.
func (e *env) ledgerLen(t *testing.T, publisher string) int64 {
	t.Helper()
	n, err := e.store.LedgerLen(context.Background(), publisher)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// lastEntry is the newest entry of a publisher's chain.
func (e *env) lastEntry(t *testing.T, publisher string) ledger.Entry {
	t.Helper()
	es, err := e.store.Decisions(context.Background(), publisher, store.DecisionFilter{Limit: 1})
	if err != nil || len(es) == 0 {
		t.Fatalf("no ledger entry: %v", err)
	}
	return es[0]
}

// failingLedger refuses every append, like a database that is down.
type failingLedger struct{ calls int }

func (l *failingLedger) Append(context.Context, ledger.Record) (ledger.Entry, error) {
	l.calls++
	return ledger.Entry{}, errors.New("ledger: connection refused")
}

// products returns the product objects of a completed payload.
func productsOf(t *testing.T, m map[string]any) []map[string]any {
	t.Helper()
	raw, ok := m["products"].([]any)
	if !ok {
		t.Fatalf("payload has no products array: %v", m)
	}
	out := make([]map[string]any, len(raw))
	for i, p := range raw {
		out[i] = p.(map[string]any)
	}
	return out
}

func ids(ps []map[string]any) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i], _ = p["product_id"].(string)
	}
	return out
}

// firstError returns errors[0] of a failed payload, checking it is also
// adcp_error.
func firstError(t *testing.T, m map[string]any) map[string]any {
	t.Helper()
	if m["status"] != "failed" {
		t.Fatalf("status = %v, want failed: %v", m["status"], m)
	}
	errs, _ := m["errors"].([]any)
	if len(errs) == 0 {
		t.Fatalf("failed payload has no errors: %v", m)
	}
	first := errs[0].(map[string]any)
	a, _ := json.Marshal(first)
	b, _ := json.Marshal(m["adcp_error"])
	if string(a) != string(b) {
		t.Errorf("adcp_error %s is not errors[0] %s", b, a)
	}
	return first
}
