package store

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/storefront/storefront/internal/clock"
	"github.com/storefront/storefront/internal/recovery"
	"github.com/storefront/storefront/merch"
	"github.com/storefront/storefront/products"
)

// Snapshots serves products.Snapshot values from a SnapshotStore. It keeps
// the last snapshot of each publisher and rebuilds it, whole, when the
// store's versions move on. A request always gets one snapshot built from
// one catalogue version and one rulebook version.
type Snapshots struct {
	Store SnapshotStore
	// Log is where Watch logs a recovered panic (slog's default when
	// nil).
	Log *slog.Logger
	// Now is the program's clock (nil: the machine's); it stamps each
	// snapshot's BuiltAt, from which a stale answer's cache age is told.
	Now func() time.Time

	mu    sync.Mutex
	cache map[string]*products.Snapshot
	// seeded caches sandbox principals' seeded snapshots, keyed by
	// publisher and principal.
	seeded map[[2]string]seededSnap
	// building serialises rebuilds per publisher so a burst of requests
	// after an edit builds the deny-list once.
	building map[string]*sync.Mutex
}

// NewSnapshots returns a snapshot cache over s.
func NewSnapshots(s SnapshotStore) *Snapshots {
	return &Snapshots{Store: s, cache: map[string]*products.Snapshot{}, seeded: map[[2]string]seededSnap{}, building: map[string]*sync.Mutex{}}
}

// Snapshot implements products.Snapshots.
func (c *Snapshots) Snapshot(ctx context.Context, publisher string) (*products.Snapshot, error) {
	v, err := c.Store.Versions(ctx, publisher)
	if errors.Is(err, ErrNotFound) {
		return nil, products.ErrUnknownPublisher
	}
	if err != nil {
		return nil, err
	}
	if s := c.cached(publisher); s != nil && s.CatalogueVersion == v.Catalogue && s.RulebookVersion == v.Rulebook {
		return s, nil
	}
	lock := c.lock(publisher)
	lock.Lock()
	defer lock.Unlock()
	if s := c.cached(publisher); s != nil && s.CatalogueVersion >= v.Catalogue && s.RulebookVersion >= v.Rulebook {
		return s, nil
	}
	s, err := c.Build(ctx, publisher)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if old := c.cache[publisher]; old == nil || old.CatalogueVersion <= s.CatalogueVersion && old.RulebookVersion <= s.RulebookVersion {
		c.cache[publisher] = s
	}
	c.mu.Unlock()
	return s, nil
}

// Invalidate drops a publisher's cached snapshot.
func (c *Snapshots) Invalidate(publisher string) {
	c.mu.Lock()
	delete(c.cache, publisher)
	c.mu.Unlock()
}

// Cached is the publisher's last snapshot without asking the store
// whether it is current (nil when there is none): for decisions that may
// trail an edit by the moment the change notice takes, and must not cost
// a store round trip.
func (c *Snapshots) Cached(publisher string) *products.Snapshot { return c.cached(publisher) }

func (c *Snapshots) cached(publisher string) *products.Snapshot {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cache[publisher]
}

func (c *Snapshots) lock(publisher string) *sync.Mutex {
	c.mu.Lock()
	defer c.mu.Unlock()
	l, ok := c.building[publisher]
	if !ok {
		l = &sync.Mutex{}
		c.building[publisher] = l
	}
	return l
}

// catalogue reads the publisher's products for a snapshot, which never
// writes into them: without a copy when the store can share them.
func (c *Snapshots) catalogue(ctx context.Context, publisher string) ([]products.Product, int64, error) {
	if sc, ok := c.Store.(SharedCatalogue); ok {
		return sc.SharedCatalogue(ctx, publisher)
	}
	return c.Store.Catalogue(ctx, publisher)
}

// Build reads the publisher's current catalogue and rulebook and builds a
// snapshot. If either changes while it reads, it reads again, so the
// snapshot never mixes versions.
func (c *Snapshots) Build(ctx context.Context, publisher string) (*products.Snapshot, error) {
	for attempt := 0; attempt < 5; attempt++ {
		info, err := c.Store.Publisher(ctx, publisher)
		if err != nil {
			if errors.Is(err, ErrNotFound) {
				return nil, products.ErrUnknownPublisher
			}
			return nil, err
		}
		catalogue, catVersion, err := c.catalogue(ctx, publisher)
		if err != nil {
			return nil, err
		}
		var rb *merch.Rulebook
		rv, err := c.Store.Rulebook(ctx, publisher)
		switch {
		case errors.Is(err, ErrNotFound):
		case err != nil:
			return nil, err
		default:
			if verr := rv.Rulebook.Validate(); verr != nil {
				// A stored rulebook that no longer validates cannot be
				// evaluated: serve no products rather than guess.
				return c.built(products.NewSnapshot(info, catalogue, catVersion, nil, rv.Version)), nil
			}
			r := rv.Rulebook
			rb = &r
		}
		after, err := c.Store.Versions(ctx, publisher)
		if err != nil {
			return nil, err
		}
		if after.Catalogue == catVersion && after.Rulebook == rv.Version {
			return c.built(products.NewSnapshot(info, catalogue, catVersion, rb, rv.Version)), nil
		}
	}
	return nil, fmt.Errorf("publisher %s kept changing while its snapshot was built", publisher)
}

// built stamps a snapshot the cache built.
func (c *Snapshots) built(s *products.Snapshot) *products.Snapshot {
	s.BuiltAt = clock.Read(c.Now)
	return s
}

// Watch invalidates cached snapshots as the store reports changes, until
// ctx ends. Requests compare versions anyway; watching makes the rebuild
// happen before the next request rather than during it, and it is the only
// way a change to publisher settings, which carry no version, reaches a
// cached snapshot. Watch subscribes before it returns, so no change made
// after it returns goes unheard, and handles the notices in the
// background, one at a time: a rebuild that read the store before a later
// change never lands after the rebuild that change caused.
func (c *Snapshots) Watch(ctx context.Context) {
	changes := c.Store.Changes(ctx)
	recovery.Go(ctx, c.Log, "background", "watching store changes", func() {
		for id := range changes {
			// A panic is recovered and counted; the next notice is
			// handled all the same.
			recovery.Run(ctx, c.Log, "background", "rebuilding the snapshot of "+id, func() { c.rebuild(ctx, id) })
		}
	})
}

// rebuild brings the cached snapshot of publisher id up to date. Publisher
// settings (anonymous discovery, the name) carry no version for Snapshot
// to compare, so the snapshot it ends with is checked against the store's
// settings, read after the notice: a request's build that read them before
// the change may have been cached since, and would otherwise stay.
func (c *Snapshots) rebuild(ctx context.Context, id string) {
	ctx = context.WithoutCancel(ctx)
	for range 3 {
		s, err := c.Snapshot(ctx, id)
		if err != nil {
			c.Invalidate(id)
			return
		}
		if info, err := c.Store.Publisher(ctx, id); err == nil && info == s.Publisher {
			return
		}
		c.Invalidate(id)
	}
}

type seededSnap struct {
	seedVersion int64
	snap        *products.Snapshot
}

// SeededSnapshot implements products.Seeds: a sandbox principal that has
// seeded products sees only them, under the publisher's current rulebook,
// so that compliance fixtures are not mixed with the real catalogue. It
// returns nil when the principal has seeded nothing.
func (c *Snapshots) SeededSnapshot(ctx context.Context, publisher, principal string) (*products.Snapshot, error) {
	seeds, version, err := c.Store.SeededCatalogue(ctx, publisher, principal)
	if errors.Is(err, ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	base, err := c.Snapshot(ctx, publisher)
	if err != nil {
		return nil, err
	}
	key := [2]string{publisher, principal}
	c.mu.Lock()
	hit, ok := c.seeded[key]
	c.mu.Unlock()
	// A seeded snapshot shares base's rulebook and screen: it is reused
	// while both are base's own.
	if ok && hit.seedVersion == version && hit.snap.Screen == base.Screen {
		return hit.snap, nil
	}
	snap := c.built(products.NewSeededSnapshot(base, seeds, version))
	c.mu.Lock()
	c.seeded[key] = seededSnap{version, snap}
	c.mu.Unlock()
	return snap, nil
}
