package memstore_test

import (
	"testing"

	"github.com/storefront/storefront/store"
	"github.com/storefront/storefront/store/memstore"
	"github.com/storefront/storefront/store/storetest"
)

func newStore(t *testing.T) store.Store {
	s := memstore.New()
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// TestConformance runs the conformance suite, role by role.
func TestConformance(t *testing.T) {
	storetest.Contract(t, newStore)
	storetest.Publishers(t, newStore)
	storetest.Products(t, newStore)
	storetest.Catalogues(t, newStore)
	storetest.Rulebooks(t, newStore)
	storetest.Accounts(t, newStore)
	storetest.Tokens(t, newStore)
	storetest.Audit(t, newStore)
	storetest.Ledgers(t, newStore)
	storetest.Recordings(t, newStore)
	storetest.Sandbox(t, newStore)
	storetest.Replays(t, newStore)
	storetest.AsyncTasks(t, newStore)
	storetest.SigningKeys(t, newStore)
	storetest.Secrets(t, newStore)
	storetest.Changes(t, newStore)
	storetest.MediaBuys(t, newStore)
	storetest.Governance(t, newStore)
}
