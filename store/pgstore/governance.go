package pgstore

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/storefront/storefront/store"
)

var _ store.Governance = (*Store)(nil)

func (s *Store) GovernanceAgent(ctx context.Context, publisher, account string) (_ store.GovernanceAgent, err error) {
	if store.Unkeepable(publisher, account) {
		return store.GovernanceAgent{}, store.ErrNotFound
	}
	defer wrap(&err, "GovernanceAgent(%q, %q)", publisher, account)
	g := store.GovernanceAgent{Account: account}
	err = s.pool.QueryRow(ctx, `SELECT url, scheme, credentials, registered_by, updated_at
		FROM governance_agents WHERE publisher_id = $1 AND account_id = $2`, publisher, account).
		Scan(&g.URL, &g.Scheme, &g.Credentials, &g.RegisteredBy, &g.UpdatedAt)
	if err != nil {
		return g, err
	}
	g.UpdatedAt = g.UpdatedAt.UTC()
	if g.Credentials, err = s.keyring().OpenString(g.Credentials, store.GovernanceSecretContext(publisher, account)); err != nil {
		return store.GovernanceAgent{}, fmt.Errorf("the governance agent's credentials: %w", err)
	}
	return g, nil
}

func (s *Store) PutGovernanceAgents(ctx context.Context, publisher string, agents []store.GovernanceAgent) (err error) {
	if err := store.CheckStored(agents); err != nil {
		return err
	}
	defer wrap(&err, "PutGovernanceAgents(%q, %d)", publisher, len(agents))
	k := s.keyring()
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		for _, g := range agents {
			credentials, err := k.SealString(g.Credentials, store.GovernanceSecretContext(publisher, g.Account))
			if err != nil {
				return fmt.Errorf("the governance agent's credentials: %w", err)
			}
			if _, err := tx.Exec(ctx, `INSERT INTO governance_agents
				(publisher_id, account_id, url, scheme, credentials, registered_by, updated_at)
				VALUES ($1, $2, $3, $4, $5, $6, $7)
				ON CONFLICT (publisher_id, account_id) DO UPDATE SET url = $3, scheme = $4, credentials = $5,
					registered_by = $6, updated_at = $7`,
				publisher, g.Account, g.URL, g.Scheme, credentials, g.RegisteredBy, g.UpdatedAt.UTC()); err != nil {
				return err
			}
		}
		return nil
	})
}
