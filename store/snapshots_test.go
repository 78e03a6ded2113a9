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
	// Each edit is made again until it is seen, so that the test does
	// not depend on when a rebuild runs.
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

// slowBuild is a store whose first Publisher read, once armed, returns
// what it read only when released: a snapshot build that read the
// publisher's settings before an edit and finishes after it.
type slowBuild struct {
	store.Store
	armed    atomic.Bool
	read     chan struct{} // closed once the slow read has read
	release  chan struct{}
	versions chan struct{} // signalled by each Versions call after that
}

func (s *slowBuild) Publisher(ctx context.Context, id string) (products.Publisher, error) {
	p, err := s.Store.Publisher(ctx, id)
	if s.armed.CompareAndSwap(true, false) {
		close(s.read)
		<-s.release
	}
	return p, err
}

func (s *slowBuild) Versions(ctx context.Context, id string) (store.Versions, error) {
	select {
	case <-s.read:
		select {
		case s.versions <- struct{}{}:
		default:
		}
	default:
	}
	return s.Store.Versions(ctx, id)
}

// TestWatchOutlivesASlowBuild: a request's build that read the publisher's
// settings before they changed, and is cached after the change's notice
// came, is not what the cache keeps: settings carry no version a later
// request could tell it by, so the rebuild for the notice checks the
// snapshot it ends with against the store.
func TestWatchOutlivesASlowBuild(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	mem := memstore.New()
	if err := demo.Seed(ctx, mem, demo.Written); err != nil {
		t.Fatal(err)
	}
	s := &slowBuild{Store: mem, read: make(chan struct{}), release: make(chan struct{}), versions: make(chan struct{}, 1)}
	snaps := store.NewSnapshots(s)
	snaps.Watch(ctx)
	info, err := mem.Publisher(ctx, demo.PublisherID)
	if err != nil {
		t.Fatal(err)
	}
	s.armed.Store(true)
	built := make(chan error, 1)
	go func() {
		_, err := snaps.Snapshot(ctx, demo.PublisherID)
		built <- err
	}()
	<-s.read
	info.Name = "Renamed during a build"
	if err := mem.PutPublisher(ctx, info); err != nil {
		t.Fatal(err)
	}
	// The notice's rebuild has asked for the versions: it is on its way
	// to the build lock the slow build holds.
	select {
	case <-s.versions:
	case <-time.After(10 * time.Second):
		t.Fatal("the change notice was never acted on")
	}
	close(s.release)
	if err := <-built; err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		snap, err := snaps.Snapshot(ctx, demo.PublisherID)
		if err != nil {
			t.Fatal(err)
		}
		if snap.Publisher.Name == info.Name {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the cached snapshot still names the publisher %q after it was renamed %q", snap.Publisher.Name, info.Name)
		}
	}
}
