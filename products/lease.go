package products

import (
	"sync"
	"sync/atomic"
)

// A lease is a pooled buffer a completed answer is encoded into when the
// caller lends it (Call.Lent): the MCP fast path copies the payload into
// its response and hands the buffer back, so that the answer's bytes,
// most of what a request allocates, are not garbage every time. Nothing
// else may hold the payload: a buffer handed back is the next answer's,
// for another buyer.
type lease struct{ buf []byte }

// maxLent is the largest buffer kept for reuse; an answer that grew one
// past it leaves it to the collector.
const maxLent = 1 << 20

var leases = sync.Pool{New: func() any { return new(lease) }}

func lend() *lease { return leases.Get().(*lease) }

// giveBack returns a lease to the pool; a test counts its calls.
var giveBack = func(l *lease) { leases.Put(l) }

// hold is the Release of a Result whose payload l's buffer holds (nil
// for no lease). The payload's array becomes l's buffer, grown or not.
// Each Release hands l back once, however often it is called: a second
// call must not give away a buffer another answer has taken since.
func (l *lease) hold(payload []byte) func() {
	if l == nil {
		return nil
	}
	l.buf = payload[:0]
	var back atomic.Bool
	return func() {
		if !back.Swap(true) && cap(l.buf) <= maxLent {
			giveBack(l)
		}
	}
}
