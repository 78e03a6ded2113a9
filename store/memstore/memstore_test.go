package memstore_test

import (
	"testing"

	"github.com/storefront/storefront/store"
	"github.com/storefront/storefront/store/memstore"
	"github.com/storefront/storefront/store/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		s := memstore.New()
		t.Cleanup(func() { _ = s.Close() })
		return s
	})
}
