package pgstore

import (
	"context"

	"github.com/storefront/storefront/products"
)

// SetResyncLister replaces how a change listener lists publishers after
// reconnecting, so that a test can make the resync fail.
func SetResyncLister(s *Store, list func(context.Context) ([]products.Publisher, error)) {
	s.listPublishers = list
}
