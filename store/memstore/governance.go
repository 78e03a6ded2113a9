package memstore

import (
	"context"
	"fmt"

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
	if g.Credentials, err = s.keys.OpenString(g.Credentials, store.GovernanceSecretContext(publisher, account)); err != nil {
		return store.GovernanceAgent{}, fmt.Errorf("memstore: the governance agent's credentials: %w", err)
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
	sealed := make([]store.GovernanceAgent, len(agents))
	for i, g := range agents {
		g.UpdatedAt = stamp(g.UpdatedAt)
		if g.Credentials, err = s.keys.SealString(g.Credentials, store.GovernanceSecretContext(publisher, g.Account)); err != nil {
			return fmt.Errorf("memstore: the governance agent's credentials: %w", err)
		}
		sealed[i] = g
	}
	// All of them or none.
	for _, g := range sealed {
		b.governance[g.Account] = g
	}
	return nil
}
