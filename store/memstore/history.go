package memstore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"time"

	"github.com/storefront/storefront/internal/clock"
	"github.com/storefront/storefront/ledger"
	"github.com/storefront/storefront/products"
	"github.com/storefront/storefront/store"
)

var (
	_ store.Catalogues = (*Store)(nil)
	_ store.Recordings = (*Store)(nil)
	_ store.Retention  = (*Store)(nil)
)

// catChange is the state one catalogue version left a product in: the
// value the store kept, or nil when the version deleted it. A version
// that changed a product keeps the same value as the current catalogue
// (publisher.products) until a later version replaces it there, so the
// history costs nothing for a product it has not seen change; values
// are never written after they are kept, and every read copies them.
type catChange struct {
	version int64
	prod    *products.Product
}

// SetClock replaces the store's clock: every time it stamps (ledger
// entries, versions, tasks, accounts, idempotency records, seeds) comes
// from now. Without it the store reads the machine's clock.
func (s *Store) SetClock(now func() time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clock = now
}

func (s *Store) now() time.Time { return clock.Read(s.clock) }

func encodeProduct(p products.Product) []byte {
	b, err := json.Marshal(p)
	if err != nil {
		// Products hold strings, numbers and raw JSON that decoded once.
		panic(err)
	}
	return b
}

// EditCatalogue implements store.Catalogues.
func (s *Store) EditCatalogue(ctx context.Context, publisher string, e store.CatalogueEdit) (store.CatalogueVersion, error) {
	if err := errors.Join(store.CheckChange(e.Author, e.Note), store.CheckStored(e.Put, e.Delete)); err != nil {
		return store.CatalogueVersion{}, err
	}
	if err := store.DistinctProducts(e.Put); err != nil {
		return store.CatalogueVersion{}, err
	}
	seen := map[string]bool{}
	for _, p := range e.Put {
		seen[p.ProductID] = true
	}
	for _, id := range e.Delete {
		if seen[id] {
			return store.CatalogueVersion{}, fmt.Errorf("product %q: %w", id, store.ErrDuplicate)
		}
		seen[id] = true
	}
	v, err := locked(s, func() (store.CatalogueVersion, error) {
		p, err := s.pub(publisher)
		if err != nil {
			return store.CatalogueVersion{}, err
		}
		if e.IfMatch != 0 && e.IfMatch != p.catVersion {
			return store.CatalogueVersion{}, store.ErrConflict
		}
		for _, id := range e.Delete {
			if p.indexOf(id) < 0 {
				return store.CatalogueVersion{}, store.ErrNotFound
			}
		}
		return p.apply(e.Put, e.Delete, e.Author, e.Note, s.now()), nil
	})
	if err != nil {
		return v, err
	}
	s.notify(publisher)
	return v, nil
}

// catalogue copies the current products, in catalogue order.
func (p *publisher) catalogue() []products.Product {
	out := make([]products.Product, 0, len(p.products))
	for _, prod := range p.products {
		out = append(out, clone(*prod))
	}
	return out
}

// shared lists the current products as the store keeps them, for
// readers that never write into them (store.SharedCatalogue).
func (p *publisher) shared() []products.Product {
	out := make([]products.Product, len(p.products))
	for i, prod := range p.products {
		out[i] = *prod
	}
	return out
}

func (p *publisher) indexOf(id string) int {
	for i := range p.products {
		if p.products[i].ProductID == id {
			return i
		}
	}
	return -1
}

// apply writes puts and deletes as the next version and records the
// products they changed. The caller holds the lock and has checked
// everything.
func (p *publisher) apply(puts []products.Product, deletes []string, author, note string, now time.Time) store.CatalogueVersion {
	p.catVersion++
	v := store.CatalogueVersion{Version: p.catVersion, CreatedAt: stamp(now), Author: author, Note: note}
	at := make(map[string]int, len(p.products))
	for i, prod := range p.products {
		at[prod.ProductID] = i
	}
	if p.shelf == nil {
		p.shelf = products.NewInterner()
	}
	for _, put := range puts {
		i, ok := at[put.ProductID]
		if ok && bytes.Equal(encodeProduct(*p.products[i]), encodeProduct(put)) {
			continue
		}
		// The store's own copy: decoded from the caller's JSON, so
		// nothing the caller holds reaches it, with its lists shared
		// with equal ones the store already keeps.
		kept := p.shelf.Product(clone(put))
		prod := &kept
		if ok {
			p.products[i] = prod
		} else {
			at[prod.ProductID] = len(p.products)
			p.products = append(p.products, prod)
		}
		p.catChanges[prod.ProductID] = append(p.catChanges[prod.ProductID], catChange{version: v.Version, prod: prod})
		v.Put++
	}
	if len(deletes) > 0 {
		gone := map[string]bool{}
		for _, id := range deletes {
			if _, ok := at[id]; ok && !gone[id] {
				gone[id] = true
				p.catChanges[id] = append(p.catChanges[id], catChange{version: v.Version})
				v.Deleted++
			}
		}
		p.products = slices.DeleteFunc(p.products, func(prod *products.Product) bool { return gone[prod.ProductID] })
	}
	p.catHistory = append(p.catHistory, v)
	return v
}

// ImportCatalogue implements store.Catalogues. The in-memory store holds
// the whole catalogue in memory anyway, so it gathers the import before
// applying it under its lock.
func (s *Store) ImportCatalogue(ctx context.Context, publisher string, opts store.CatalogueImport, next func() (products.Product, error)) (store.CatalogueVersion, error) {
	if err := store.CheckChange(opts.Author, opts.Note); err != nil {
		return store.CatalogueVersion{}, err
	}
	if _, err := locked(s, func() (struct{}, error) { _, err := s.pub(publisher); return struct{}{}, err }); err != nil {
		return store.CatalogueVersion{}, err
	}
	var puts []products.Product
	seen := map[string]bool{}
	for {
		if err := ctx.Err(); err != nil {
			return store.CatalogueVersion{}, err
		}
		prod, err := next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return store.CatalogueVersion{}, err
		}
		if err := store.CheckStored(prod); err != nil {
			return store.CatalogueVersion{}, err
		}
		if seen[prod.ProductID] {
			return store.CatalogueVersion{}, fmt.Errorf("product %q: %w", prod.ProductID, store.ErrDuplicate)
		}
		seen[prod.ProductID] = true
		puts = append(puts, prod)
	}
	v, err := locked(s, func() (store.CatalogueVersion, error) {
		p, err := s.pub(publisher)
		if err != nil {
			return store.CatalogueVersion{}, err
		}
		if opts.IfMatch != 0 && opts.IfMatch != p.catVersion {
			return store.CatalogueVersion{}, store.ErrConflict
		}
		var deletes []string
		if opts.Replace {
			for _, prod := range p.products {
				if !seen[prod.ProductID] {
					deletes = append(deletes, prod.ProductID)
				}
			}
		}
		return p.apply(puts, deletes, opts.Author, opts.Note, s.now()), nil
	})
	if err != nil {
		return v, err
	}
	s.notify(publisher)
	return v, nil
}

// CatalogueHistory implements store.Catalogues.
func (s *Store) CatalogueHistory(ctx context.Context, publisher string, before int64, limit int) ([]store.CatalogueVersion, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, err := s.pub(publisher)
	if err != nil {
		return nil, err
	}
	out := []store.CatalogueVersion{}
	for i := len(p.catHistory) - 1; i >= 0 && (limit <= 0 || len(out) < limit); i-- {
		if v := p.catHistory[i]; before <= 0 || v.Version < before {
			out = append(out, v)
		}
	}
	return out, nil
}

// stateAt is a product as version v left it, the store's own value: nil
// when it did not exist.
func (p *publisher) stateAt(id string, v int64) *products.Product {
	var prod *products.Product
	for _, c := range p.catChanges[id] {
		if c.version > v {
			break
		}
		prod = c.prod
	}
	return prod
}

// sameState reports whether two states of a product are equal: the same
// value, or values with the same JSON.
func sameState(a, b *products.Product) bool {
	if a == nil || b == nil || a == b {
		return a == b
	}
	return bytes.Equal(encodeProduct(*a), encodeProduct(*b))
}

func (p *publisher) inHistory(v int64) bool {
	_, ok := slices.BinarySearchFunc(p.catHistory, v, func(c store.CatalogueVersion, v int64) int {
		return int(c.Version - v)
	})
	return ok
}

// copyState copies a state for a caller: nil stays nil.
func copyState(prod *products.Product) *products.Product {
	if prod == nil {
		return nil
	}
	out := clone(*prod)
	return &out
}

// CatalogueDiff implements store.Catalogues.
func (s *Store) CatalogueDiff(ctx context.Context, publisher string, from, to int64, limit int) ([]store.ProductChange, int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, err := s.pub(publisher)
	if err != nil {
		return nil, 0, err
	}
	if !p.inHistory(from) || !p.inHistory(to) {
		return nil, 0, store.ErrNotFound
	}
	lo, hi := min(from, to), max(from, to)
	var ids []string
	for id, cs := range p.catChanges {
		for _, c := range cs {
			if c.version > lo && c.version <= hi {
				if !sameState(p.stateAt(id, from), p.stateAt(id, to)) {
					ids = append(ids, id)
				}
				break
			}
		}
	}
	sort.Strings(ids)
	total := len(ids)
	if limit > 0 && len(ids) > limit {
		ids = ids[:limit]
	}
	out := make([]store.ProductChange, 0, len(ids))
	for _, id := range ids {
		out = append(out, store.ProductChange{ProductID: id, Before: copyState(p.stateAt(id, from)), After: copyState(p.stateAt(id, to))})
	}
	return out, total, nil
}

// RollbackCatalogue implements store.Catalogues.
func (s *Store) RollbackCatalogue(ctx context.Context, publisher string, to, ifMatch int64, author string) (store.CatalogueVersion, error) {
	if err := store.CheckChange(author, ""); err != nil {
		return store.CatalogueVersion{}, err
	}
	v, err := locked(s, func() (store.CatalogueVersion, error) {
		p, err := s.pub(publisher)
		if err != nil {
			return store.CatalogueVersion{}, err
		}
		if ifMatch != 0 && ifMatch != p.catVersion {
			return store.CatalogueVersion{}, store.ErrConflict
		}
		if !p.inHistory(to) {
			return store.CatalogueVersion{}, store.ErrNotFound
		}
		var (
			puts    []products.Product
			deletes []string
		)
		ids := make([]string, 0, len(p.catChanges))
		for id := range p.catChanges {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		for _, id := range ids {
			cs := p.catChanges[id]
			if cs[len(cs)-1].version <= to {
				continue
			}
			if old := p.stateAt(id, to); old != nil {
				// apply copies it again before keeping it.
				puts = append(puts, *old)
			} else if p.indexOf(id) >= 0 {
				deletes = append(deletes, id)
			}
		}
		return p.apply(puts, deletes, author, fmt.Sprintf("rollback to version %d", to), s.now()), nil
	})
	if err != nil {
		return v, err
	}
	s.notify(publisher)
	return v, nil
}

// WalkCatalogue implements store.Catalogues.
func (s *Store) WalkCatalogue(ctx context.Context, publisher string, fn func(products.Product) error) (int64, error) {
	ps, v, err := s.Catalogue(ctx, publisher)
	if err != nil {
		return 0, err
	}
	return v, walk(ctx, ps, fn)
}

// recorded copies the get_products entries at or after since, with their
// requests.
func (s *Store) recorded(publisher string, since time.Time) ([]ledger.Entry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, err := s.pub(publisher)
	if err != nil {
		return nil, err
	}
	i := sort.Search(p.chain.Len(), func(i int) bool { return !p.chain.At(i).Time.Before(since) })
	var out []ledger.Entry
	for ; i < p.chain.Len(); i++ {
		e := *p.chain.At(i)
		if e.Task != "" {
			continue // not a brief
		}
		e.Request = slices.Clone(p.requests[e.Sequence])
		out = append(out, e)
	}
	return out, nil
}

// CountRecorded implements store.Recordings.
func (s *Store) CountRecorded(ctx context.Context, publisher string, since time.Time) (int64, int64, error) {
	es, err := s.recorded(publisher, since)
	if err != nil {
		return 0, 0, err
	}
	var kept int64
	for _, e := range es {
		if e.Request != nil {
			kept++
		}
	}
	return int64(len(es)), kept, nil
}

// WalkRecorded implements store.Recordings.
func (s *Store) WalkRecorded(ctx context.Context, publisher string, since time.Time, fn func(ledger.Entry) error) error {
	es, err := s.recorded(publisher, since)
	if err != nil {
		return err
	}
	return walk(ctx, es, fn)
}

// Purge implements store.Retention.
func (s *Store) Purge(ctx context.Context, publisher string, before store.RetainBefore) (store.Purged, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	x, err := s.extra(publisher)
	if err != nil {
		return store.Purged{}, err
	}
	p := s.pubs[publisher]
	var out store.Purged
	if !before.Tasks.IsZero() {
		for k, t := range x.tasks {
			if t.Terminal() && t.CompletedAt != nil && t.CompletedAt.Before(before.Tasks) {
				delete(x.tasks, k)
				out.Tasks++
			}
		}
	}
	if !before.Seeds.IsZero() {
		for _, sd := range x.seeds {
			if len(sd.products) > 0 && sd.seededAt.Before(before.Seeds) {
				sd.products, sd.session = nil, ""
				out.Seeds++
			}
		}
	}
	if !before.Replays.IsZero() {
		for k, r := range x.replays {
			if r.CreatedAt.Before(before.Replays) {
				delete(x.replays, k)
				out.Replays++
			}
		}
	}
	if !before.Requests.IsZero() {
		for i := range p.chain.Len() {
			e := p.chain.At(i)
			if !e.Time.Before(before.Requests) {
				break
			}
			if _, ok := p.requests[e.Sequence]; ok {
				delete(p.requests, e.Sequence)
				out.Requests++
			}
		}
	}
	return out, nil
}
