package ledger

import (
	"context"
	"errors"
)

// Chains is where Verify reads a publisher's chain from: the store's
// ledger role (store.Ledgers) has these methods.
type Chains interface {
	// LedgerLen is the number of entries in the publisher's chain.
	LedgerLen(ctx context.Context, publisher string) (int64, error)
	// WalkLedger calls fn on every entry of the chain in sequence order,
	// and returns the first error fn returns.
	WalkLedger(ctx context.Context, publisher string, fn func(Entry) error) error
}

// Window is implemented by sources that keep only the most recent part of
// each chain, as the in-memory store does so that its memory stays
// bounded (store.LedgerWindow). Verification then starts at the window's
// checkpoint.
type Window interface {
	// WalkWindow walks the entries held, in sequence order, like
	// WalkLedger. Before the first, it calls start with the sequence and
	// hash of the newest entry no longer held (0 and "" when the whole
	// chain is held), consistently with the entries walked.
	WalkWindow(ctx context.Context, publisher string, start func(seq int64, hash string), fn func(Entry) error) error
}

// Result is the outcome of walking a publisher's chain.
type Result struct {
	OK      bool  `json:"ok"`
	Checked int64 `json:"checked"`
	Total   int64 `json:"total"`
	// From is the first sequence checked when the source keeps only a
	// recent window of the chain (the in-memory store); omitted when the
	// whole chain was checked.
	From  int64       `json:"from,omitempty"`
	Break *BreakPoint `json:"first_break,omitempty"`
}

// BreakPoint names the first broken entry in a Result.
type BreakPoint struct {
	Sequence int64  `json:"sequence"`
	Reason   string `json:"reason"`
}

// Verify walks a publisher's chain from s, from its window's checkpoint
// when s is a Window, and names the first broken entry. A broken chain is
// a Result, not an error; the error is the source's, when it cannot be
// read. progress, when set, is called after each entry with how many are
// checked (counting those before the window) and the chain's length.
func Verify(ctx context.Context, s Chains, publisher string, progress func(checked, total int64)) (Result, error) {
	total, err := s.LedgerLen(ctx, publisher)
	if err != nil {
		return Result{}, err
	}
	var v Verifier
	res := Result{Total: total}
	check := func(e Entry) error {
		if err := v.Check(e); err != nil {
			return err
		}
		if progress != nil {
			progress(v.Checked()+max(res.From-1, 0), total)
		}
		return nil
	}
	if w, ok := s.(Window); ok {
		err = w.WalkWindow(ctx, publisher, func(seq int64, hash string) {
			if seq > 0 {
				v.Resume(seq, hash)
				res.From = seq + 1
			}
		}, check)
	} else {
		err = s.WalkLedger(ctx, publisher, check)
	}
	res.Checked = v.Checked()
	// Decisions appended while the walk ran may have been walked too.
	res.Total = max(res.Total, max(res.From, 1)+res.Checked-1)
	var b *Break
	switch {
	case errors.As(err, &b):
		res.Break = &BreakPoint{Sequence: b.Sequence, Reason: b.Reason}
	case err != nil:
		return res, err
	default:
		res.OK = true
	}
	return res, nil
}
