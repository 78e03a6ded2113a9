package pgstore_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/storefront/storefront/demo"
	"github.com/storefront/storefront/metrics"
	"github.com/storefront/storefront/products"
	"github.com/storefront/storefront/store/pgstore"
	"github.com/storefront/storefront/store/pgstore/pgtest"
)

// TestAppendBatchPanic: a ledger batch that panics fails its callers at
// once, with an error, instead of leaving them waiting; it is counted,
// and the next append goes through onto an intact chain.
func TestAppendBatchPanic(t *testing.T) {
	s := pgtest.Open(t)
	putPublishers(t, s, alpha)
	var once atomic.Bool
	s.ObserveBatches(func(int, time.Duration) {
		if once.CompareAndSwap(false, true) {
			panic("xyzzy-internal-panic-detail")
		}
	})
	before := metrics.RecoveredPanics("background")
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if _, err := s.Append(ctx, record(alpha.ID, 1)); err == nil || ctx.Err() != nil {
		t.Fatalf("Append in a batch that panicked = %v (context %v), want its error at once", err, ctx.Err())
	}
	if got := metrics.RecoveredPanics("background") - before; got != 1 {
		t.Errorf("recovered panics on background moved by %v, want 1", got)
	}
	if _, err := s.Append(ctx, record(alpha.ID, 2)); err != nil {
		t.Fatalf("the next Append: %v", err)
	}
	if _, err := verify(ctx, s, alpha.ID); err != nil {
		t.Errorf("the chain after a panicked batch: %v", err)
	}
}

// TestChangesSurvivePanic: a panic while forwarding change notices is
// counted, and forwarding starts again, reconnected and resynced.
func TestChangesSurvivePanic(t *testing.T) {
	s := pgtest.Open(t)
	ctx := t.Context()
	putPublishers(t, s, alpha, beta)
	var calls atomic.Int32
	pgstore.SetResyncLister(s, func(ctx context.Context) ([]products.Publisher, error) {
		if calls.Add(1) == 1 {
			panic("xyzzy-internal-panic-detail")
		}
		return s.Publishers(ctx)
	})
	changes := s.Changes(ctx)
	before := metrics.RecoveredPanics("background")
	dropListener(t, s)
	receive(t, changes, alpha.ID, 20*time.Second)
	receive(t, changes, beta.ID, 20*time.Second)
	if got := metrics.RecoveredPanics("background") - before; got != 1 || calls.Load() != 2 {
		t.Errorf("recovered panics moved by %v after %d resyncs, want 1 after 2", got, calls.Load())
	}
	if _, err := s.PutProduct(ctx, beta.ID, demo.Products()[0], 0); err != nil {
		t.Fatal(err)
	}
	receive(t, changes, beta.ID, 5*time.Second)
}

// dropListener terminates the connection s listens for changes on, as a
// database restart would.
func dropListener(t *testing.T, s *pgstore.Store) {
	t.Helper()
	var pid int32
	if err := s.Pool().QueryRow(t.Context(), `SELECT pid FROM pg_stat_activity
		WHERE datname = current_database() AND application_name = 'storefront-changes'`).Scan(&pid); err != nil {
		t.Fatalf("finding the listening connection: %v", err)
	}
	if _, err := s.Pool().Exec(t.Context(), `SELECT pg_terminate_backend($1)`, pid); err != nil {
		t.Fatal(err)
	}
}
