package mediabuy

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// Scope is the namespace of the media-buy ids a caller sends and is sent.
//
// Outside a sandbox the seller issues every id, so ids are unique per
// publisher and stored as they are (the zero Scope). In a sandbox the
// compliance controller seeds buys under ids the caller chooses (a
// storyboard's fixture ids), so two sandboxes may name buys alike; each
// sandbox's buys are therefore stored under ids prefixed with its scope,
// as its seeded products live in its own catalogue. A sandbox is a sandbox
// principal (every account it names is one sandbox) or a sandbox account
// (shared by the principals that may use it), as ownership is decided.
type Scope string

const (
	scopePrefix = "sandbox."
	// scopeLen is the prefix, 16 hex digits of the owner's hash and a dot.
	scopeLen = len(scopePrefix) + 16 + 1
)

// PrincipalScope is the scope of a sandbox principal's buys.
func PrincipalScope(principal string) Scope { return scopeOf("principal\x00" + principal) }

// AccountScope is the scope of a sandbox account's buys.
func AccountScope(account string) Scope { return scopeOf("account\x00" + account) }

func scopeOf(owner string) Scope {
	h := sha256.Sum256([]byte(owner))
	return Scope(scopePrefix + hex.EncodeToString(h[:8]) + ".")
}

// Stored is the id the store keys the buy a caller in s calls id by.
func (s Scope) Stored(id string) string { return string(s) + id }

// StoredIDs maps Stored over ids (nil stays nil: no id filter).
func (s Scope) StoredIDs(ids []string) []string {
	if s == "" || ids == nil {
		return ids
	}
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = s.Stored(id)
	}
	return out
}

// PublicID is the id buyers know b by: its stored id without the scope of
// the sandbox it was made in.
func (b *Buy) PublicID() string {
	if !b.Sandbox || len(b.ID) <= scopeLen || !strings.HasPrefix(b.ID, scopePrefix) {
		return b.ID
	}
	for _, s := range []Scope{PrincipalScope(b.Principal), AccountScope(b.Account)} {
		if rest, ok := strings.CutPrefix(b.ID, string(s)); ok {
			return rest
		}
	}
	return b.ID
}
