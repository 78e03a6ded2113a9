package memstore

import (
	"context"
	"slices"
	"time"

	"github.com/storefront/storefront/store"
)

// tokenTable holds every publisher's tokens under s.mu, by digest, with
// an index by id.
type tokenTable struct {
	byDigest map[string]*store.Token
	byID     map[string]string
}

func (tt *tokenTable) init() {
	if tt.byDigest == nil {
		tt.byDigest = map[string]*store.Token{}
		tt.byID = map[string]string{}
	}
}

// copyToken returns t with nothing shared with the stored token.
func copyToken(t *store.Token) store.Token {
	return clone(*t)
}

func (s *Store) CreateToken(ctx context.Context, digest string, t store.Token) (store.Token, error) {
	if err := store.CheckToken(t); err != nil {
		return store.Token{}, err
	}
	if err := store.CheckDigest(digest); err != nil {
		return store.Token{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := s.pub(t.Publisher); err != nil {
		return store.Token{}, err
	}
	s.tokens.init()
	if _, ok := s.tokens.byDigest[digest]; ok {
		return store.Token{}, store.ErrExists
	}
	if t.ID == "" {
		t.ID = store.NewTokenID()
	}
	if _, ok := s.tokens.byID[t.ID]; ok {
		return store.Token{}, store.ErrExists
	}
	t = normalToken(t)
	s.tokens.byDigest[digest] = &t
	s.tokens.byID[t.ID] = digest
	return copyToken(&t), nil
}

// normalToken is t as the store keeps it: times in UTC to the
// microsecond, as PostgreSQL keeps them, and only buyer tokens with a
// buyer.
func normalToken(t store.Token) store.Token {
	t.CreatedAt = micro(t.CreatedAt)
	for _, p := range []**time.Time{&t.LastUsedAt, &t.ExpiresAt, &t.RevokedAt} {
		if *p != nil {
			v := micro(**p)
			*p = &v
		}
	}
	if t.Kind != store.BuyerToken {
		t.Buyer = nil
	} else if t.Buyer == nil {
		t.Buyer = &store.Buyer{}
	}
	if t.Buyer != nil {
		b := clone(*t.Buyer)
		if len(b.Accounts) == 0 {
			b.Accounts = nil
		}
		t.Buyer = &b
	}
	return t
}

func micro(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }

func (s *Store) UseToken(ctx context.Context, kind store.TokenKind, publisher, digest string, at time.Time) (store.Token, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.tokens.byDigest[digest]
	if !ok || t.Kind != kind || (kind == store.BuyerToken && t.Publisher != publisher) || !t.Usable(at) {
		return store.Token{}, store.ErrNotFound
	}
	if at = micro(at); t.LastUsedAt == nil || !at.Before(t.LastUsedAt.Add(store.LastUseGranularity)) {
		t.LastUsedAt = &at
	}
	return copyToken(t), nil
}

func (s *Store) TokenByDigest(ctx context.Context, digest string) (store.Token, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.tokens.byDigest[digest]
	if !ok {
		return store.Token{}, store.ErrNotFound
	}
	return copyToken(t), nil
}

// token finds one of a publisher's tokens; the caller holds s.mu.
func (s *Store) token(publisher, id string) (*store.Token, error) {
	if _, err := s.pub(publisher); err != nil {
		return nil, err
	}
	digest, ok := s.tokens.byID[id]
	if !ok || s.tokens.byDigest[digest].Publisher != publisher {
		return nil, store.ErrNotFound
	}
	return s.tokens.byDigest[digest], nil
}

func (s *Store) Token(ctx context.Context, publisher, id string) (store.Token, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, err := s.token(publisher, id)
	if err != nil {
		return store.Token{}, err
	}
	return copyToken(t), nil
}

func (s *Store) ListTokens(ctx context.Context, publisher string) ([]store.Token, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := s.pub(publisher); err != nil {
		return nil, err
	}
	out := []store.Token{}
	for _, t := range s.tokens.byDigest {
		if t.Publisher == publisher {
			out = append(out, copyToken(t))
		}
	}
	slices.SortFunc(out, store.CompareTokens)
	return out, nil
}

func (s *Store) RevokeToken(ctx context.Context, publisher, id string, at time.Time) (store.Token, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, err := s.token(publisher, id)
	if err != nil {
		return store.Token{}, err
	}
	if t.RevokedAt == nil {
		at = micro(at)
		t.RevokedAt = &at
	}
	return copyToken(t), nil
}

func (s *Store) RotateToken(ctx context.Context, publisher, id, digest string, next store.Token, until time.Time) (store.Token, store.Token, error) {
	if err := store.CheckStored(next); err != nil {
		return store.Token{}, store.Token{}, err
	}
	if err := store.CheckDigest(digest); err != nil {
		return store.Token{}, store.Token{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	old, err := s.token(publisher, id)
	if err != nil {
		return store.Token{}, store.Token{}, err
	}
	if !old.Usable(next.CreatedAt) || old.ReplacedBy != "" {
		return store.Token{}, store.Token{}, store.ErrConflict
	}
	if _, ok := s.tokens.byDigest[digest]; ok {
		return store.Token{}, store.Token{}, store.ErrExists
	}
	created := store.Rotated(*old, next)
	if _, ok := s.tokens.byID[created.ID]; ok {
		return store.Token{}, store.Token{}, store.ErrExists
	}
	created = normalToken(created)
	s.tokens.byDigest[digest] = &created
	s.tokens.byID[created.ID] = digest
	*old = normalToken(store.Retired(*old, created, until))
	return copyToken(old), copyToken(&created), nil
}
