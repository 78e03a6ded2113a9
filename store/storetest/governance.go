package storetest

import (
	"testing"
	"time"

	"github.com/storefront/storefront/store"
)

// testGovernanceAgents registers, reads and replaces governance agents:
// one per account, replaced whole by a later registration, scoped to the
// publisher, times in UTC.
func testGovernanceAgents(t *testing.T, s store.Store) {
	withPublishers(t, s)
	ctx := t.Context()
	_, err := s.GovernanceAgent(ctx, alpha.ID, "acct_1")
	wantErr(t, "GovernanceAgent(none yet)", err, store.ErrNotFound)

	first := store.GovernanceAgent{Account: "acct_1", URL: "https://gov.example/mcp", Scheme: "Bearer",
		Credentials: "gov-token-0123456789abcdef0123456789", RegisteredBy: "buyer", UpdatedAt: at(2)}
	second := store.GovernanceAgent{Account: "acct_2", URL: "https://other-gov.example/mcp", Scheme: "Bearer",
		Credentials: "gov-token-fedcba9876543210fedcba9876", RegisteredBy: "buyer", UpdatedAt: at(2)}
	wantErr(t, "PutGovernanceAgents", s.PutGovernanceAgents(ctx, alpha.ID, []store.GovernanceAgent{first, second}), nil)
	for _, want := range []store.GovernanceAgent{first, second} {
		got, err := s.GovernanceAgent(ctx, alpha.ID, want.Account)
		wantErr(t, "GovernanceAgent("+want.Account+")", err, nil)
		want.UpdatedAt = want.UpdatedAt.UTC()
		sameJSON(t, "governance agent "+want.Account, got, want)
		if got.UpdatedAt.Location() != time.UTC {
			t.Errorf("GovernanceAgent(%q).UpdatedAt = %v, want UTC", want.Account, got.UpdatedAt)
		}
	}

	// Replace semantics: the new agent and credentials, nothing of the old.
	rotated := first
	rotated.URL, rotated.Credentials, rotated.RegisteredBy, rotated.UpdatedAt = "https://gov2.example/mcp", "rotated-0123456789abcdef0123456789ab", "buyer-2", at(5)
	wantErr(t, "PutGovernanceAgents(replace)", s.PutGovernanceAgents(ctx, alpha.ID, []store.GovernanceAgent{rotated}), nil)
	got, _ := s.GovernanceAgent(ctx, alpha.ID, "acct_1")
	rotated.UpdatedAt = rotated.UpdatedAt.UTC()
	sameJSON(t, "replaced governance agent", got, rotated)
	got, _ = s.GovernanceAgent(ctx, alpha.ID, "acct_2")
	if got.URL != second.URL {
		t.Errorf("acct_2's agent after replacing acct_1's = %q, want it untouched (%q)", got.URL, second.URL)
	}

	_, err = s.GovernanceAgent(ctx, beta.ID, "acct_1")
	wantErr(t, "GovernanceAgent(another publisher)", err, store.ErrNotFound)
	wantErr(t, "PutGovernanceAgents(ghost)", s.PutGovernanceAgents(ctx, ghost, []store.GovernanceAgent{first}), store.ErrNotFound)
}
