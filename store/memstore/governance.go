package memstore

import (
	"context"

	"github.com/storefront/storefront/store"
)

func (s *Store) GovernanceAgent(ctx context.Context, publisher, account string) (store.GovernanceAgent, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, _, err := s.buying(publisher)
	if err != nil {
		return store.GovernanceAgent{}, err
	}
	g, ok := b.governance[account]
	if !ok {
		return store.GovernanceAgent{}, store.ErrNotFound
	}
	return g, nil
}

func (s *Store) PutGovernanceAgents(ctx context.Context, publisher string, agents []store.GovernanceAgent) error {
	if err := store.CheckStored(agents); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	b, _, err := s.buying(publisher)
	if err != nil {
		return err
	}
	for _, g := range agents {
		g.UpdatedAt = stamp(g.UpdatedAt)
		b.governance[g.Account] = g
	}
	return nil
}
