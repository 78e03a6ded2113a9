package memstore

import (
	"context"
	"fmt"
	"slices"

	"github.com/storefront/storefront/store"
)

func (s *Store) SigningKeys(ctx context.Context, publisher string) ([]store.SigningKey, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, err := s.pub(publisher)
	if err != nil {
		return nil, err
	}
	out := clone(p.signingKeys)
	for i := range out {
		if out[i].Private, err = store.OpenSecret(s.keys, out[i].Private, store.SigningSecretContext(publisher, out[i].KID)); err != nil {
			return nil, fmt.Errorf("memstore: signing key %s: %w", out[i].KID, err)
		}
	}
	return out, nil
}

func (s *Store) CreateSigningKey(ctx context.Context, publisher string, k store.SigningKey) error {
	if err := store.CheckStored(k); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p, err := s.pub(publisher)
	if err != nil {
		return err
	}
	if len(p.signingKeys) > 0 && p.signingKeys[0].RetiredAt == nil {
		return store.ErrExists
	}
	if k, err = s.sealSigningKey(publisher, k); err != nil {
		return err
	}
	return p.addSigningKey(k)
}

// sealSigningKey returns k with its private half sealed; the caller holds
// s.mu.
func (s *Store) sealSigningKey(publisher string, k store.SigningKey) (store.SigningKey, error) {
	sealed, err := s.keys.Seal(k.Private, store.SigningSecretContext(publisher, k.KID))
	if err != nil {
		return k, fmt.Errorf("memstore: signing key %s: %w", k.KID, err)
	}
	k.Private = sealed
	return k, nil
}

func (s *Store) RotateSigningKey(ctx context.Context, publisher string, k store.SigningKey) error {
	if err := store.CheckStored(k); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p, err := s.pub(publisher)
	if err != nil {
		return err
	}
	if p.hasSigningKey(k.KID) {
		return store.ErrExists
	}
	if k, err = s.sealSigningKey(publisher, k); err != nil {
		return err
	}
	if len(p.signingKeys) > 0 && p.signingKeys[0].RetiredAt == nil {
		at := k.CreatedAt.UTC()
		if at.Before(p.signingKeys[0].CreatedAt) {
			at = p.signingKeys[0].CreatedAt
		}
		p.signingKeys[0].RetiredAt = &at
	}
	return p.addSigningKey(k)
}

// addSigningKey adds k as the active key, as PostgreSQL's primary key
// would: a kid given twice is ErrExists.
func (p *publisher) addSigningKey(k store.SigningKey) error {
	if p.hasSigningKey(k.KID) {
		return store.ErrExists
	}
	k = clone(k)
	k.CreatedAt, k.RetiredAt = k.CreatedAt.UTC(), nil
	p.signingKeys = append([]store.SigningKey{k}, p.signingKeys...)
	return nil
}

func (p *publisher) hasSigningKey(kid string) bool {
	return slices.ContainsFunc(p.signingKeys, func(o store.SigningKey) bool { return o.KID == kid })
}
