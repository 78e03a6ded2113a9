package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"regexp"
	"strings"
	"time"
)

// TokenKind says what a token opens: the admin API of its publisher, or
// the buyer-facing tools as a buyer principal.
type TokenKind string

// The token kinds.
const (
	AdminToken TokenKind = "admin"
	BuyerToken TokenKind = "buyer"
)

// ParseTokenKind checks a kind name.
func ParseTokenKind(s string) (TokenKind, bool) {
	switch k := TokenKind(s); k {
	case AdminToken, BuyerToken:
		return k, true
	}
	return "", false
}

// Token is what the storefront keeps of a credential: never its secret,
// which is stored only as a digest (TokenDigest), and shown once when it
// is made.
type Token struct {
	// ID is the token's public name in lists, the audit trail and
	// revocation.
	ID        string    `json:"id"`
	Kind      TokenKind `json:"kind"`
	Publisher string    `json:"publisher"`
	Name      string    `json:"name"`
	// Prefix is the start of the secret (tokens.Prefix), enough to tell
	// which token a leaked secret is and too little to use; empty for
	// tokens made before prefixes were kept.
	Prefix string `json:"prefix"`
	// Buyer is the principal a buyer token speaks for; nil for admin
	// tokens, whose scope is their publisher's whole admin API.
	Buyer     *Buyer    `json:"buyer,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	// CreatedBy is the id of the admin token that made this one, or the
	// audit trail's name for the command line.
	CreatedBy string `json:"created_by,omitempty"`
	// LastUsedAt is the last accepted use, to the minute.
	LastUsedAt *time.Time `json:"last_used_at,omitempty"`
	ExpiresAt  *time.Time `json:"expires_at,omitempty"`
	RevokedAt  *time.Time `json:"revoked_at,omitempty"`
	// Replaces and ReplacedBy link a rotation's old and new tokens.
	Replaces   string `json:"replaces,omitempty"`
	ReplacedBy string `json:"replaced_by,omitempty"`
}

// Usable reports whether the token is accepted at now.
func (t Token) Usable(now time.Time) bool {
	return t.RevokedAt == nil && (t.ExpiresAt == nil || now.Before(*t.ExpiresAt))
}

// Status is the token's state at now: active; rotated (replaced, and
// accepted until its overlap ends); expired; or revoked.
func (t Token) Status(now time.Time) string {
	switch {
	case t.RevokedAt != nil:
		return "revoked"
	case !t.Usable(now):
		return "expired"
	case t.ReplacedBy != "":
		return "rotated"
	}
	return "active"
}

// Admin is the holder of an admin token as the admin API sees it.
func (t Token) Admin() Admin { return Admin{Publisher: t.Publisher, Name: t.Name, TokenID: t.ID} }

// LastUseGranularity is how stale a token's LastUsedAt may be: a use
// within it of the recorded one is not written again, so a busy token
// costs no write per request.
const LastUseGranularity = time.Minute

// Tokens keeps admin and buyer tokens. Every lookup reads the store: no
// process caches a token, so a revocation holds on every replica from
// the next request on.
//
// Times are the caller's, read from the program's one clock; the store
// reads none of its own for tokens.
type Tokens interface {
	// CreateToken stores t under the digest of its secret and returns it
	// as stored; an empty t.ID gets a fresh one. A digest already
	// stored, for any publisher and of either kind, is ErrExists and
	// leaves that token exactly as it was: creating a token never
	// changes another's scope. ErrNotFound: no such publisher.
	CreateToken(ctx context.Context, digest string, t Token) (Token, error)
	// UseToken authenticates a secret's digest: it returns the token of
	// that kind stored under it (a buyer token only at its own
	// publisher; publisher is ignored for admin tokens, which name
	// theirs) if it is usable at at, and records at as its last use
	// (see LastUseGranularity). ErrNotFound for anything else.
	UseToken(ctx context.Context, kind TokenKind, publisher, digest string, at time.Time) (Token, error)
	// TokenByDigest returns the token stored under digest, whatever its
	// state, without recording a use; for the storefront's own commands.
	// ErrNotFound: no token has that digest.
	TokenByDigest(ctx context.Context, digest string) (Token, error)
	// Token returns one of the publisher's tokens by id. ErrNotFound: no
	// such token.
	Token(ctx context.Context, publisher, id string) (Token, error)
	// ListTokens lists the publisher's tokens, oldest first. ErrNotFound:
	// no such publisher.
	ListTokens(ctx context.Context, publisher string) ([]Token, error)
	// RevokeToken refuses the token from at on, and returns it. Revoking
	// a revoked token changes nothing. ErrNotFound: no such token.
	RevokeToken(ctx context.Context, publisher, id string, at time.Time) (Token, error)
	// RotateToken replaces token id with next, stored under digest, in
	// one step. next takes id's kind, publisher, name and scope, and
	// Replaces names id; of next's own fields only ID, Prefix, CreatedAt,
	// CreatedBy and ExpiresAt are used (see Rotated). The old token stays usable until
	// until at the latest (its expiry is brought forward, never put
	// back); an until at or before next.CreatedAt revokes it at once.
	// ErrConflict: id is revoked, expired or already rotated.
	// ErrExists: digest, or next.ID, is already stored; nothing changes.
	// ErrNotFound: no such token.
	RotateToken(ctx context.Context, publisher, id, digest string, next Token, until time.Time) (old, created Token, err error)
}

// NewTokenID returns a fresh public token id.
func NewTokenID() string {
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return "tok_" + hex.EncodeToString(b)
}

var digestPattern = regexp.MustCompile(`^[0-9a-f]{64}$`)

// CheckDigest refuses anything but a hex SHA-256, so that a raw secret is
// never written down. Both stores call it, and PostgreSQL's schema checks
// the same.
func CheckDigest(digest string) error {
	if !digestPattern.MatchString(digest) {
		return errors.New("a token must be stored as its hex SHA-256 digest (store.TokenDigest)")
	}
	return nil
}

// Rotated is the token that replaces old in a rotation: old's kind,
// publisher, name and scope, with next's id (a fresh one if empty),
// prefix, creation and expiry. Without an expiry of its own, it keeps
// old's lifetime: a token made to last 30 days is replaced by one that
// lasts 30 days.
func Rotated(old, next Token) Token {
	t := Token{
		ID: next.ID, Kind: old.Kind, Publisher: old.Publisher, Name: old.Name, Prefix: next.Prefix, Buyer: old.Buyer,
		CreatedAt: next.CreatedAt, CreatedBy: next.CreatedBy, ExpiresAt: next.ExpiresAt, Replaces: old.ID,
	}
	if t.ExpiresAt == nil && old.ExpiresAt != nil {
		exp := next.CreatedAt.Add(old.ExpiresAt.Sub(old.CreatedAt))
		t.ExpiresAt = &exp
	}
	if t.ID == "" {
		t.ID = NewTokenID()
	}
	return t
}

// Retired is old once created has replaced it: usable until until at the
// latest, or revoked at once when until is not after created's creation.
func Retired(old, created Token, until time.Time) Token {
	old.ReplacedBy = created.ID
	// Stores keep times to the microsecond: an until equal to the
	// creation time but for nanoseconds is no overlap.
	if !until.Truncate(time.Microsecond).After(created.CreatedAt.Truncate(time.Microsecond)) {
		at := created.CreatedAt
		old.RevokedAt = &at
		return old
	}
	if old.ExpiresAt == nil || until.Before(*old.ExpiresAt) {
		old.ExpiresAt = &until
	}
	return old
}

// CompareTokens orders tokens as ListTokens lists them: oldest first,
// then by id.
func CompareTokens(a, b Token) int {
	if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
		return c
	}
	return strings.Compare(a.ID, b.ID)
}
