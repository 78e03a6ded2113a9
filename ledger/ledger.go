// Package ledger defines the decision ledger's entries and its hash chain.
// Every get_products decision, allow and decline alike, is appended before
// the reply leaves. Each entry's hash covers its canonical bytes and the
// previous entry's hash, so changing, removing or reordering any entry
// breaks every later link; Verify names the first broken one.
//
// This package holds no storage. Stores append through it so that the chain
// is computed the same way everywhere. It imports nothing from the
// storefront but the vocabulary, whose slugs it records.
package ledger

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/storefront/storefront/internal/verbatim"

	"github.com/storefront/storefront/vocab"
)

// Genesis is the previous hash of a publisher's first entry.
const Genesis = "0000000000000000000000000000000000000000000000000000000000000000"

// Record is what the storefront submits for one decision.
type Record struct {
	Publisher string
	// Account is the account reference the request named ("" for an
	// anonymous public request); Principal is the authenticated caller.
	Account   string
	Principal string
	// RequestDigest is the SHA-256 of the request arguments.
	RequestDigest   string
	RulebookVersion int64
	// Task is the task decided: "" for get_products (every entry before
	// media buys), else the task's name, such as create_media_buy.
	Task string
	// Arm is completed, rejected, failed or submitted.
	Arm string
	// Slug is the public decline slug, for rejections.
	Slug vocab.Slug
	// RuleIDs are the internal ids of the rules that fired, in order.
	RuleIDs []string
	// ResponseDigest is the SHA-256 of the response payload before the
	// receipt was attached.
	ResponseDigest string
	// Sandbox marks decisions made for sandbox accounts.
	Sandbox bool
	// Forced marks decisions a compliance directive forced.
	Forced bool
	// Request is the request the decision answered, kept beside the
	// chain so that a backtest can replay it. The hash covers only
	// RequestDigest, never these bytes, so a store may drop them after
	// its retention period and the chain still verifies. nil when not
	// kept.
	Request []byte
}

// Entry is a record placed in the chain.
type Entry struct {
	Record
	Sequence int64
	Time     time.Time
	PrevHash string
	Hash     string
}

// canonical is the fixed-order, fixed-format encoding the hash covers, as
// json.Marshal writes it; Canonical writes the same bytes by hand.
// Changing it is a format change: old chains would no longer verify.
type canonical struct {
	V               int    `json:"v"`
	Publisher       string `json:"publisher"`
	Sequence        int64  `json:"sequence"`
	Time            string `json:"time"`
	Account         string `json:"account"`
	Principal       string `json:"principal"`
	RequestDigest   string `json:"request_digest"`
	RulebookVersion int64  `json:"rulebook_version"`
	// Task is left out when empty, so that get_products entries hash
	// exactly as they did before other tasks were recorded.
	Task           string   `json:"task,omitempty"`
	Arm            string   `json:"arm"`
	Slug           string   `json:"slug"`
	RuleIDs        []string `json:"rule_ids"`
	ResponseDigest string   `json:"response_digest"`
	Sandbox        bool     `json:"sandbox"`
	Forced         bool     `json:"forced"`
	PrevHash       string   `json:"prev_hash"`
}

// Canonical returns the bytes e's hash covers: json.Marshal of canonical,
// written member by member, since every entry is hashed on the way into
// the chain (TestCanonicalIsMarshal holds the two to the same bytes).
func (e Entry) Canonical() []byte {
	// The member names and punctuation are under 300 bytes, the time
	// under 40; the strings are written as they are unless escaped.
	n := 340 + len(e.Publisher) + len(e.Account) + len(e.Principal) + len(e.RequestDigest) + len(e.Task) +
		len(e.Arm) + len(e.Slug) + len(e.ResponseDigest) + len(e.PrevHash)
	for _, id := range e.RuleIDs {
		n += len(id) + 3
	}
	return e.appendCanonical(make([]byte, 0, n))
}

// appendCanonical appends Canonical's bytes to b.
func (e *Entry) appendCanonical(b []byte) []byte {
	b = append(b, `{"v":1,"publisher":`...)
	b = verbatim.AppendString(b, e.Publisher)
	b = append(b, `,"sequence":`...)
	b = strconv.AppendInt(b, e.Sequence, 10)
	b = append(b, `,"time":`...)
	// The time's digits, dashes, colons, T, Z and dot need no escaping.
	b = append(b, '"')
	b = e.Time.UTC().AppendFormat(b, time.RFC3339Nano)
	b = append(b, '"')
	b = append(b, `,"account":`...)
	b = verbatim.AppendString(b, e.Account)
	b = append(b, `,"principal":`...)
	b = verbatim.AppendString(b, e.Principal)
	b = append(b, `,"request_digest":`...)
	b = verbatim.AppendString(b, e.RequestDigest)
	b = append(b, `,"rulebook_version":`...)
	b = strconv.AppendInt(b, e.RulebookVersion, 10)
	if e.Task != "" {
		b = append(b, `,"task":`...)
		b = verbatim.AppendString(b, e.Task)
	}
	b = append(b, `,"arm":`...)
	b = verbatim.AppendString(b, e.Arm)
	b = append(b, `,"slug":`...)
	b = verbatim.AppendString(b, string(e.Slug))
	b = append(b, `,"rule_ids":[`...)
	for i, id := range e.RuleIDs {
		if i > 0 {
			b = append(b, ',')
		}
		b = verbatim.AppendString(b, id)
	}
	b = append(b, `],"response_digest":`...)
	b = verbatim.AppendString(b, e.ResponseDigest)
	b = append(b, `,"sandbox":`...)
	b = strconv.AppendBool(b, e.Sandbox)
	b = append(b, `,"forced":`...)
	b = strconv.AppendBool(b, e.Forced)
	b = append(b, `,"prev_hash":`...)
	b = verbatim.AppendString(b, e.PrevHash)
	return append(b, '}')
}

// ComputeHash returns the hash e should carry.
func (e Entry) ComputeHash() string {
	// An entry's bytes fit the buffer on the stack, unless it names many
	// rules or long ones.
	var buf [1024]byte
	return hexSum(sha256.Sum256(e.appendCanonical(buf[:0])))
}

// Next places r in the chain after prev (nil for the first entry) and
// returns the sealed entry.
func Next(prev *Entry, r Record, at time.Time) Entry {
	e := Entry{Record: r, Time: at.UTC().Truncate(time.Microsecond), PrevHash: Genesis, Sequence: 1}
	if prev != nil {
		e.PrevHash = prev.Hash
		e.Sequence = prev.Sequence + 1
	}
	e.Hash = e.ComputeHash()
	return e
}

// Digest returns the hex SHA-256 of b.
func Digest(b []byte) string {
	return hexSum(sha256.Sum256(b))
}

// hexSum spells sum in lower-case hex, as hex.EncodeToString does, with
// one allocation: the string.
func hexSum(sum [sha256.Size]byte) string {
	var h [2 * sha256.Size]byte
	hex.Encode(h[:], sum[:])
	return string(h[:])
}

// Break describes the first entry at which a chain stops verifying.
type Break struct {
	Sequence int64
	Reason   string
}

func (b *Break) Error() string {
	return fmt.Sprintf("ledger broken at sequence %d: %s", b.Sequence, b.Reason)
}

// Link is one entry of a hash chain as a verifier sees it: where it
// stands, the hash it claims to follow, the hash it carries, and the hash
// its contents give. Other chains kept with the ledger's discipline (the
// admin audit trail) verify through it.
type Link struct {
	Sequence int64
	PrevHash string
	Hash     string
	Computed string
}

// Link returns e as a link of its chain.
func (e Entry) Link() Link {
	return Link{Sequence: e.Sequence, PrevHash: e.PrevHash, Hash: e.Hash, Computed: e.ComputeHash()}
}

// Verifier checks a chain one entry at a time, in sequence order.
type Verifier struct {
	prev    *Link
	checked int64
}

// Check verifies e against the entries seen so far.
func (v *Verifier) Check(e Entry) error { return v.CheckLink(e.Link()) }

// CheckLink verifies one link against the links seen so far.
func (v *Verifier) CheckLink(l Link) error {
	wantSeq, wantPrev := int64(1), Genesis
	if v.prev != nil {
		wantSeq, wantPrev = v.prev.Sequence+1, v.prev.Hash
	}
	switch {
	case l.Sequence != wantSeq:
		return &Break{Sequence: l.Sequence, Reason: "expected sequence " + strconv.FormatInt(wantSeq, 10) + " (an entry is missing or out of order)"}
	case l.PrevHash != wantPrev:
		return &Break{Sequence: l.Sequence, Reason: "previous hash does not match the entry before it"}
	case l.Hash != l.Computed:
		return &Break{Sequence: l.Sequence, Reason: "entry hash does not match its contents (the entry was altered)"}
	}
	v.prev = &l
	v.checked++
	return nil
}

// Resume makes the verifier continue a chain from a checkpoint: seq and
// hash are those of the entry just before the first one it will check.
// It is for stores that keep only a recent window of the chain and say
// where that window starts; entries before it cannot be checked.
func (v *Verifier) Resume(seq int64, hash string) {
	v.prev = &Link{Sequence: seq, Hash: hash}
}

// Last is the sequence of the last entry verified, or of the checkpoint
// given to Resume; 0 before any.
func (v *Verifier) Last() int64 {
	if v.prev == nil {
		return 0
	}
	return v.prev.Sequence
}

// Checked is the number of entries verified so far.
func (v *Verifier) Checked() int64 { return v.checked }

// ParseArm checks an arm name.
func ParseArm(s string) (string, bool) {
	switch strings.ToLower(s) {
	case "completed", "rejected", "failed", "submitted":
		return strings.ToLower(s), true
	}
	return "", false
}
