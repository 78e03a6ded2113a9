// Package clock is where the storefront reads the time, and the rule for
// reading it.
//
// The rule:
//
//   - Every time that is stored or served (a ledger entry, a version, a
//     task, a token's use, an A2A status, a webhook's timestamp, a cache
//     age) and every expiry or age decision (token expiry, idempotency
//     staleness and expiry, retention, lead times) comes from the
//     program's one injected clock: app.Main.Now, passed down to each
//     component as a func() time.Time and read with [Read]. Only when
//     nothing was injected (a production run, or a unit test that does not
//     care) does Read fall back to the machine's clock, and then every
//     component falls back to the same one.
//   - How long something took (request latency in logs and metrics,
//     progress updates, timings in log lines) is measured with a
//     [Stopwatch], on the monotonic clock. A Stopwatch holds no time of
//     day, so what it measures cannot be stored as one.
//   - A deadline handed to the runtime for I/O (net.Conn.SetReadDeadline)
//     comes from [Deadline]: the runtime compares it with the machine's
//     clock, never with a pinned one.
//
// No other production code reads the machine's clock, and no SQL asks the
// database for its own (now(), current_timestamp, column defaults):
// TestNoWallClock fails naming the file and line of any that does. bench/
// is the one exception: it measures the machine it runs on.
package clock

import (
	"fmt"
	"time"
)

// Read returns now(), the injected clock's time, or the machine's time
// when nothing was injected.
func Read(now func() time.Time) time.Time {
	if now != nil {
		return now()
	}
	return time.Now()
}

// A Stopwatch measures elapsed time on the monotonic clock.
type Stopwatch struct{ start time.Time }

// Start starts a stopwatch.
func Start() Stopwatch { return Stopwatch{start: time.Now()} }

// Elapsed is the time since the stopwatch started.
func (s Stopwatch) Elapsed() time.Duration { return time.Since(s.start) }

// Deadline is the I/O deadline d from now, on the machine's clock.
func Deadline(d time.Duration) time.Time { return time.Now().Add(d) }

// Shift moves a time by a shift such as +7y, -2y, +90d or -36h (years and
// days on the calendar, in UTC). Tests use it to move their pinned clock,
// and scripts/test-clock-shift.sh to move the machine's clock as Go
// programs read it.
func Shift(t time.Time, shift string) (time.Time, error) {
	y, d, h, ok := parseShift(shift)
	if !ok {
		return time.Time{}, fmt.Errorf("clock shift %q: want a sign, a whole number and y, d or h, as in +7y, -2y, +90d or -36h", shift)
	}
	return t.UTC().AddDate(y, 0, d).Add(time.Duration(h) * time.Hour), nil
}
