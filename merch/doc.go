// Package merch holds the publisher's merchandising rulebook and its
// evaluation. A rulebook is a document publishers read and write; each rule
// pairs confidential parts (an internal id, a name, notes) with a condition
// over the normalised brief and a decline action.
//
// Evaluate is pure and deterministic and never panics. A rulebook that is
// missing or cannot be evaluated yields an error, never an allow: the
// storefront does not fail open.
//
// The confidential parts of a rule stay in this package's Decision. What the
// decline composer receives is the public projection, vocab.Grounds, which
// has no field that could carry them.
package merch
