package store_test

import (
	"context"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/storefront/storefront/demo"
	"github.com/storefront/storefront/metrics"
	"github.com/storefront/storefront/products"
	"github.com/storefront/storefront/store"
	"github.com/storefront/storefront/store/memstore"
)

// TestWatchPublisherSettings: a change to a publisher's settings, which
// moves no catalogue or rulebook version, still reaches the served
// snapshot (anonymous discovery switched off must take effect).
func TestWatchPublisherSettings(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := memstore.New()
	if err := demo.Seed(ctx, s, demo.Written); err != nil {
		t.Fatal(err)
	}
	snaps := store.NewSnapshots(s)
	snaps.Watch(ctx)
	before, err := snaps.Snapshot(ctx, demo.PublisherID)
	if err != nil {
		t.Fatal(err)
	}
	if !before.Publisher.AnonymousDiscovery {
		t.Fatal("the demo publisher starts with anonymous discovery off")
	}
	p := before.Publisher
	p.AnonymousDiscovery = false
	if err := s.PutPublisher(ctx, p); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		snap, err := snaps.Snapshot(ctx, demo.PublisherID)
		if err != nil {
			t.Fatal(err)
		}
		if !snap.Publisher.AnonymousDiscovery {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the snapshot still allows anonymous discovery after the publisher switched it off")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// panickyPublisher is a store whose Publisher panics while armed.
type panickyPublisher struct {
	store.Store
	armed atomic.Bool
}

func (p *panickyPublisher) Publisher(ctx context.Context, id string) (products.Publisher, error) {
	if p.armed.Load() {
		panic("xyzzy-internal-panic-detail")
	}
	return p.Store.Publisher(ctx, id)
}

// TestWatchSurvivesAPanic: a rebuild after a change notice that panics is
// recovered and counted, and Watch goes on serving the next notice.
func TestWatchSurvivesAPanic(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	mem := memstore.New()
	if err := demo.Seed(ctx, mem, demo.Written); err != nil {
		t.Fatal(err)
	}
	s := &panickyPublisher{Store: mem}
	snaps := store.NewSnapshots(s)
	snaps.Log = slog.New(slog.DiscardHandler)
	snaps.Watch(ctx)
	snap, err := snaps.Snapshot(ctx, demo.PublisherID)
	if err != nil {
		t.Fatal(err)
	}
	// Each edit is made again until it is seen: Watch may not be
	// listening yet when the first is made.
	edit := func(name string, seen func() bool) {
		t.Helper()
		p := snap.Publisher
		p.Name = name
		for deadline := time.Now().Add(10 * time.Second); !seen(); time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("renaming the publisher %q was never seen", name)
			}
			if err := mem.PutPublisher(ctx, p); err != nil {
				t.Fatal(err)
			}
		}
	}
	before := metrics.RecoveredPanics("background")
	s.armed.Store(true)
	edit("Renamed while the store panics", func() bool { return metrics.RecoveredPanics("background") > before })
	s.armed.Store(false)
	edit("Renamed again", func() bool {
		c, err := snaps.Snapshot(ctx, demo.PublisherID)
		return err == nil && c.Publisher.Name == "Renamed again"
	})
}
