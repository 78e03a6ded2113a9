package memstore

import "github.com/storefront/storefront/ledger"

// window is the part of one publisher's chain the store holds, oldest
// first, and the checkpoint: the newest entry dropped from it. The entries
// sit in a ring, so dropping the oldest moves none of the others; only
// growing the ring, while the window is still filling, copies them.
type window struct {
	// ring holds the entries: the i'th oldest is at (start+i) mod
	// len(ring), for i below n.
	ring       []ledger.Entry
	start, n   int
	checkpoint ledger.Entry
}

// Len is how many entries the window holds.
func (w *window) Len() int { return w.n }

// At returns the i'th oldest entry, for 0 <= i < Len(), in place: the
// pointer is valid until the next Append.
func (w *window) At(i int) *ledger.Entry {
	if i < 0 || i >= w.n {
		panic("memstore: window index out of range")
	}
	return &w.ring[w.slot(i)]
}

func (w *window) slot(i int) int {
	j := w.start + i
	if j >= len(w.ring) {
		j -= len(w.ring)
	}
	return j
}

// Checkpoint is the newest entry dropped; zero while none has been.
func (w *window) Checkpoint() ledger.Entry { return w.checkpoint }

// Append adds e as the newest entry. With keep above zero, when e would
// take the window past keep and a tenth, the oldest entries are first
// dropped so that it holds keep with e, drop being called on each, oldest
// first; the last becomes the checkpoint. Once full, the window so holds
// from keep to keep and a tenth entries.
func (w *window) Append(e ledger.Entry, keep int, drop func(*ledger.Entry)) {
	if keep > 0 && w.n+1 > keep+keep/10 {
		d := w.n + 1 - keep
		for i := range d {
			old := w.At(i)
			drop(old)
			if i == d-1 {
				w.checkpoint = *old
			}
			// Release what the dropped entry refers to now, not when
			// its slot is next written.
			*old = ledger.Entry{}
		}
		w.start = w.slot(d)
		w.n -= d
	}
	if w.n == len(w.ring) {
		w.grow(keep)
	}
	w.ring[w.slot(w.n)] = e
	w.n++
}

// grow makes room for one more entry: it doubles the ring, but never past
// the keep and a tenth the window may hold.
func (w *window) grow(keep int) {
	size := max(2*len(w.ring), 8)
	if keep > 0 {
		size = min(size, keep+keep/10)
	}
	w.ring = w.appendTo(make([]ledger.Entry, 0, size))[:size]
	w.start = 0
}

// Clone returns a copy of the entries, oldest first.
func (w *window) Clone() []ledger.Entry {
	return w.appendTo(make([]ledger.Entry, 0, w.n))
}

func (w *window) appendTo(dst []ledger.Entry) []ledger.Entry {
	if w.n == 0 {
		return dst
	}
	end := w.start + w.n
	if end <= len(w.ring) {
		return append(dst, w.ring[w.start:end]...)
	}
	dst = append(dst, w.ring[w.start:]...)
	return append(dst, w.ring[:end-len(w.ring)]...)
}
