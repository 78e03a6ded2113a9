package pgstore

import "time"

// SetClock replaces the store's clock, so that a test can run a replica
// whose clock disagrees with the database's.
func SetClock(s *Store, now func() time.Time) { s.now = now }
