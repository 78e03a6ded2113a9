package memstore

import (
	"context"
	"time"

	"github.com/storefront/storefront/audit"
	"github.com/storefront/storefront/store"
)

// trail is one publisher's audit trail, kept whole: admin actions come at
// the pace people work, and the in-memory store loses them at exit
// anyway.
type trail struct {
	entries []audit.Entry
}

func (t *trail) head() audit.Head {
	if len(t.entries) == 0 {
		return audit.Head{}
	}
	return t.entries[len(t.entries)-1].Head()
}

// trailOf returns the publisher's trail; the caller holds s.mu.
func (s *Store) trailOf(publisher string) (*trail, error) {
	if _, err := s.pub(publisher); err != nil {
		return nil, err
	}
	if s.trails == nil {
		s.trails = map[string]*trail{}
	}
	t, ok := s.trails[publisher]
	if !ok {
		t = &trail{}
		s.trails[publisher] = t
	}
	return t, nil
}

func (s *Store) AppendAudit(ctx context.Context, r audit.Record, at time.Time) (audit.Entry, error) {
	if err := ctx.Err(); err != nil {
		return audit.Entry{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t, err := s.trailOf(r.Publisher)
	if err != nil {
		return audit.Entry{}, err
	}
	e := audit.Next(t.head(), r, at)
	t.entries = append(t.entries, e)
	return clone(e), nil
}

func (s *Store) AuditTrail(ctx context.Context, publisher string, f audit.Filter) ([]audit.Entry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, err := s.trailOf(publisher)
	if err != nil {
		return nil, err
	}
	limit := f.Limit
	if limit <= 0 {
		limit = audit.DefaultLimit
	}
	out := []audit.Entry{}
	for i := len(t.entries) - 1; i >= 0 && len(out) < limit; i-- {
		if f.Matches(t.entries[i]) {
			out = append(out, clone(t.entries[i]))
		}
	}
	return out, nil
}

func (s *Store) WalkAudit(ctx context.Context, publisher string, fn func(audit.Entry) error) error {
	s.mu.Lock()
	t, err := s.trailOf(publisher)
	var entries []audit.Entry
	if err == nil {
		// Entries are never changed once appended: walking a copy of the
		// slice header sees exactly the trail as it was.
		entries = t.entries[:len(t.entries):len(t.entries)]
	}
	s.mu.Unlock()
	if err != nil {
		return err
	}
	return walk(ctx, entries, func(e audit.Entry) error { return fn(clone(e)) })
}

func (s *Store) AuditHead(ctx context.Context, publisher string) (audit.Head, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, err := s.trailOf(publisher)
	if err != nil {
		return audit.Head{}, err
	}
	return t.head(), nil
}

var _ store.Audit = (*Store)(nil)
