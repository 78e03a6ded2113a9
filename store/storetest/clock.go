package storetest

import (
	"sync"
	"testing"
	"time"

	"github.com/storefront/storefront/internal/clock"
	"github.com/storefront/storefront/store"
)

// Epoch is where every store under the suite has its clock start: years
// from the machine's clock and the database's, so that a time a store
// took from anywhere but its own clock (a column default, now() in a
// query, time.Now) cannot pass for one it was given. The suite checks the
// times it reads back against the clock.
var Epoch = time.Date(2041, 3, 4, 5, 6, 7, 0, time.UTC)

// storeClock is Epoch plus the time elapsed on the monotonic clock since
// the store was made, so that waits in the tests still age what the store
// stamped.
type storeClock struct{ since clock.Stopwatch }

func (c storeClock) now() time.Time { return Epoch.Add(c.since.Elapsed()) }

// clocks maps each store under the suite to its clock's reading.
var clocks sync.Map

// withClock sets s's clock. The suite needs every store to take one.
func withClock(t *testing.T, s store.Store) store.Store {
	t.Helper()
	c, ok := s.(interface{ SetClock(func() time.Time) })
	if !ok {
		t.Fatalf("%T has no SetClock(func() time.Time): the suite runs every store on a clock of its own", s)
	}
	sc := storeClock{since: clock.Start()}
	c.SetClock(sc.now)
	clocks.Store(s, sc.now)
	t.Cleanup(func() { clocks.Delete(s) })
	return s
}

// now reads s's clock.
func now(t *testing.T, s store.Store) time.Time {
	t.Helper()
	c, ok := clocks.Load(s)
	if !ok {
		t.Fatal("the store has no clock of the suite's")
	}
	return c.(func() time.Time)()
}

// testClock is a clock a test moves by hand.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *testClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// withTestClock replaces s's clock with one standing at start that the
// test moves by hand, for leases and ages measured to the microsecond.
func withTestClock(t *testing.T, s store.Store, start time.Time) *testClock {
	t.Helper()
	settable, ok := s.(interface{ SetClock(func() time.Time) })
	if !ok {
		t.Fatalf("%T has no SetClock(func() time.Time): its times must come from the injected clock", s)
	}
	c := &testClock{t: start}
	settable.SetClock(c.now)
	clocks.Store(s, c.now)
	return c
}
