package memstore

import (
	"context"
	"errors"
	"slices"
	"sort"
	"time"

	"github.com/storefront/storefront/products"
	"github.com/storefront/storefront/store"
	"github.com/storefront/storefront/vocab"
)

// extra holds what the in-memory store keeps for idempotency, tasks and
// sandbox seeds, per publisher.
type extra struct {
	replays map[string]store.Replay // scope \x00 key
	tasks   map[string]store.Task   // account \x00 principal \x00 id
	seeds   map[string]*seeded      // principal
	buying  *buying                 // mediabuys.go
}

type seeded struct {
	session  string
	products []products.Product
	version  int64
	// seededAt is the last seed's time; retention empties catalogues
	// not seeded for a while.
	seededAt time.Time
}

func (s *Store) extra(publisher string) (*extra, error) {
	if _, err := s.pub(publisher); err != nil {
		return nil, err
	}
	if s.extras == nil {
		s.extras = map[string]*extra{}
	}
	x, ok := s.extras[publisher]
	if !ok {
		x = &extra{replays: map[string]store.Replay{}, tasks: map[string]store.Task{}, seeds: map[string]*seeded{}, buying: newBuying()}
		s.extras[publisher] = x
	}
	return x, nil
}

func replayKey(scope, key string) string { return scope + "\x00" + key }

// errNoToken refuses a reservation or claim without an owner: it could
// never be completed, released or told apart from another's.
var errNoToken = errors.New("memstore: a reservation needs an ownership token")

// stamp is how times are kept: in UTC, to the microsecond, as PostgreSQL
// keeps them, so that both stores hand back the same instants.
func stamp(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }

func stampPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := stamp(*t)
	return &u
}

// stampDelivery keeps a delivery's times as stamp does.
func stampDelivery(d store.Delivery) store.Delivery {
	d.Timestamp, d.DeliveredAt = stamp(d.Timestamp), stampPtr(d.DeliveredAt)
	return d
}

func (s *Store) ReserveReplay(ctx context.Context, publisher string, r store.Replay, lease time.Duration) (*store.Replay, error) {
	if r.Token == "" {
		return nil, errNoToken
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	x, err := s.extra(publisher)
	if err != nil {
		return nil, err
	}
	k := replayKey(r.Scope, r.Key)
	now := stamp(s.now())
	if old, ok := x.replays[k]; ok && (old.Done || now.Before(old.Expires)) {
		c := old
		c.Payload, c.Token = slices.Clone(old.Payload), ""
		return &c, nil
	}
	r.Done, r.Payload, r.Failed, r.Slug = false, nil, false, ""
	r.CreatedAt, r.Expires = now, stamp(now.Add(lease))
	x.replays[k] = r
	return nil, nil
}

// owned returns the record of key that token holds in flight: ErrNotFound
// without a record, ErrConflict when token does not own it in flight.
func (x *extra) owned(scope, key, token string) (store.Replay, error) {
	r, ok := x.replays[replayKey(scope, key)]
	switch {
	case !ok:
		return r, store.ErrNotFound
	case r.Done || token == "" || r.Token != token:
		return r, store.ErrConflict
	}
	return r, nil
}

func (s *Store) CompleteReplay(ctx context.Context, publisher, scope, key, token string, payload []byte, failed bool, slug vocab.Slug) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	x, err := s.extra(publisher)
	if err != nil {
		return err
	}
	r, err := x.owned(scope, key, token)
	if err != nil {
		return err
	}
	r.Done, r.Payload, r.Failed, r.Slug = true, slices.Clone(payload), failed, slug
	x.replays[replayKey(scope, key)] = r
	return nil
}

func (s *Store) ReleaseReplay(ctx context.Context, publisher, scope, key, token string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	x, err := s.extra(publisher)
	if err != nil {
		return err
	}
	if _, err := x.owned(scope, key, token); err == nil {
		delete(x.replays, replayKey(scope, key))
	}
	return nil
}

func (s *Store) PurgeReplays(ctx context.Context, publisher string, before time.Time) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	x, err := s.extra(publisher)
	if err != nil {
		return 0, err
	}
	var n int64
	for k, r := range x.replays {
		if r.CreatedAt.Before(before) {
			delete(x.replays, k)
			n++
		}
	}
	return n, nil
}

func taskKey(o store.TaskOwner, id string) string {
	return o.Account + "\x00" + o.Principal + "\x00" + id
}

func (s *Store) CreateTask(ctx context.Context, publisher string, t store.Task) error {
	if err := store.CheckStored(t); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	x, err := s.extra(publisher)
	if err != nil {
		return err
	}
	return s.createTask(publisher, x, t)
}

// createTask stores a new task, its webhook's secrets sealed; the caller
// holds s.mu.
func (s *Store) createTask(publisher string, x *extra, t store.Task) error {
	k := taskKey(t.Owner, t.ID)
	if _, ok := x.tasks[k]; ok {
		return store.ErrExists
	}
	now := stamp(s.now())
	t.CreatedAt, t.UpdatedAt = now, now
	t.CompletedAt, t.Delivery = stampPtr(t.CompletedAt), stampDelivery(t.Delivery)
	t = clone(t)
	t, err := s.sealTask(publisher, t)
	if err != nil {
		return err
	}
	x.tasks[k] = t
	return nil
}

func (s *Store) Task(ctx context.Context, publisher string, owner store.TaskOwner, id string) (store.Task, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	x, err := s.extra(publisher)
	if err != nil {
		return store.Task{}, err
	}
	t, ok := x.tasks[taskKey(owner, id)]
	if !ok {
		return store.Task{}, store.ErrNotFound
	}
	return s.openTask(publisher, t)
}

func (s *Store) PrincipalTasks(ctx context.Context, publisher, principal, id string) ([]store.Task, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	x, err := s.extra(publisher)
	if err != nil {
		return nil, err
	}
	var out []store.Task
	for _, t := range x.tasks {
		if t.Owner.Principal == principal && t.ID == id {
			out = append(out, t)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].CreatedAt.Equal(out[j].CreatedAt) {
			return out[i].CreatedAt.After(out[j].CreatedAt)
		}
		return out[i].Owner.Account < out[j].Owner.Account
	})
	return s.openTasks(publisher, out...)
}

func (s *Store) ListTasks(ctx context.Context, publisher string, owner store.TaskOwner, f store.TaskFilter) ([]store.Task, int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	x, err := s.extra(publisher)
	if err != nil {
		return nil, 0, err
	}
	var all []store.Task
	for _, t := range x.tasks {
		if t.Owner == owner && store.TaskMatches(t, f) {
			all = append(all, t)
		}
	}
	sort.Slice(all, func(i, j int) bool {
		if !all[i].CreatedAt.Equal(all[j].CreatedAt) {
			return all[i].CreatedAt.After(all[j].CreatedAt)
		}
		return all[i].ID < all[j].ID
	})
	total := len(all)
	// A negative offset is none, as a limit of zero or less is no limit.
	f.Offset = min(max(f.Offset, 0), len(all))
	all = all[f.Offset:]
	if f.Limit > 0 && len(all) > f.Limit {
		all = all[:f.Limit]
	}
	out, err := s.openTasks(publisher, all...)
	if err != nil {
		return nil, 0, err
	}
	return out, total, nil
}

func (s *Store) FinishTask(ctx context.Context, publisher string, owner store.TaskOwner, id, status string, result []byte, at time.Time) (store.Task, error) {
	if err := store.CheckStored(status); err != nil {
		return store.Task{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	x, err := s.extra(publisher)
	if err != nil {
		return store.Task{}, err
	}
	t, err := finishTask(x, owner, id, status, result, at)
	if err != nil {
		return store.Task{}, err
	}
	return s.openTask(publisher, t)
}

// finishTask moves a task to a terminal status; the caller holds s.mu.
func finishTask(x *extra, owner store.TaskOwner, id, status string, result []byte, at time.Time) (store.Task, error) {
	k := taskKey(owner, id)
	t, ok := x.tasks[k]
	if !ok {
		return store.Task{}, store.ErrNotFound
	}
	if t.Terminal() {
		return store.Task{}, store.ErrConflict
	}
	at = stamp(at)
	t.Status, t.Result, t.UpdatedAt, t.CompletedAt = status, slices.Clone(result), at, &at
	x.tasks[k] = t
	return clone(t), nil
}

func (s *Store) RecordDelivery(ctx context.Context, publisher string, owner store.TaskOwner, id string, d store.Delivery) error {
	if err := store.CheckStored(d); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	x, err := s.extra(publisher)
	if err != nil {
		return err
	}
	k := taskKey(owner, id)
	t, ok := x.tasks[k]
	if !ok {
		return store.ErrNotFound
	}
	t.Delivery = stampDelivery(clone(d))
	x.tasks[k] = t
	return nil
}

func (s *Store) SeedProduct(ctx context.Context, publisher, principal, session string, p products.Product) (int64, error) {
	if err := store.CheckStored(p, principal, session); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	x, err := s.extra(publisher)
	if err != nil {
		return 0, err
	}
	sd, ok := x.seeds[principal]
	if !ok {
		sd = &seeded{}
		x.seeds[principal] = sd
	}
	if sd.session != session {
		sd.session, sd.products = session, nil
	}
	p = clone(p)
	replaced := false
	for i := range sd.products {
		if sd.products[i].ProductID == p.ProductID {
			sd.products[i], replaced = p, true
		}
	}
	if !replaced {
		sd.products = append(sd.products, p)
	}
	sd.version++
	sd.seededAt = stamp(s.now())
	return sd.version, nil
}

func (s *Store) SeededCatalogue(ctx context.Context, publisher, principal string) ([]products.Product, int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	x, err := s.extra(publisher)
	if err != nil {
		return nil, 0, err
	}
	sd, ok := x.seeds[principal]
	if !ok || len(sd.products) == 0 {
		return nil, 0, store.ErrNotFound
	}
	return clone(sd.products), sd.version, nil
}
