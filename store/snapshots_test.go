package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/storefront/storefront/demo"
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
	go snaps.Watch(ctx)
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
