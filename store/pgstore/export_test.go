package pgstore

import (
	"context"
	"time"

	"github.com/storefront/storefront/products"
)

// SetClock replaces the store's clock, so that a test can run a replica
// whose clock disagrees with the database's.
func SetClock(s *Store, now func() time.Time) { s.now = now }

// SetResyncLister replaces how a change listener lists publishers after
// reconnecting, so that a test can make the resync fail.
func SetResyncLister(s *Store, list func(context.Context) ([]products.Publisher, error)) {
	s.listPublishers = list
}
