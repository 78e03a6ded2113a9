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
	storetest.Run(t, newStore)
}
