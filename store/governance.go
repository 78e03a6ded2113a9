package store

import (
	"context"
	"time"
)

// GovernanceAgent is the governance agent a buyer registered on an account
// with sync_governance: the seller calls it (check_governance) before it
// commits a media buy on that account. An account has at most one.
type GovernanceAgent struct {
	Account string `json:"account_id"`
	URL     string `json:"url"`
	// Scheme and Credentials are what the seller presents when it calls
	// the agent. Credentials are write-only: no answer ever carries them.
	Scheme      string `json:"scheme"`
	Credentials string `json:"credentials"`
	// RegisteredBy is the principal whose sync_governance set it.
	RegisteredBy string    `json:"registered_by"`
	UpdatedAt    time.Time `json:"updated_at"`
}

// Governance stores governance agent registrations, one per account.
type Governance interface {
	// GovernanceAgent returns the agent registered on an account
	// (ErrNotFound: none).
	GovernanceAgent(ctx context.Context, publisher, account string) (GovernanceAgent, error)
	// PutGovernanceAgents registers agents, each replacing whatever its
	// account had, all of them or none.
	PutGovernanceAgents(ctx context.Context, publisher string, agents []GovernanceAgent) error
}
