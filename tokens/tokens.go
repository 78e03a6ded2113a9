// Package tokens makes the storefront's credentials: the secrets of admin
// and buyer tokens, the records they are stored under, and their
// rotations. A secret is shown once, when it is made; the store keeps only
// its digest (store.TokenDigest) and a short prefix to recognise it by.
// The admin API and the command line both mint through here, so that a
// token made either way is made the same way.
//
// It never keeps, logs or stores a secret: a secret leaves only in Mint's
// and Rotate's return value, for the caller to show once.
package tokens

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/storefront/storefront/field"
	"github.com/storefront/storefront/store"
)

// secretPrefixes start every secret the storefront makes, by kind.
var secretPrefixes = map[store.TokenKind]string{store.AdminToken: "sf_admin_", store.BuyerToken: "sf_buyer_"}

// NewSecret returns a fresh random secret for a token of kind: its kind's
// prefix and 192 random bits in hex.
func NewSecret(kind store.TokenKind) string {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return secretPrefixes[kind] + hex.EncodeToString(b)
}

// Prefix is what is kept of a secret to recognise it by (store.Token's
// Prefix): the kind prefix and 8 more characters of a secret the
// storefront made (32 of its 192 random bits), and at most a quarter of
// any other.
func Prefix(secret string) string {
	for _, p := range secretPrefixes {
		if len(secret) >= len(p)+32 && secret[:len(p)] == p {
			return secret[:len(p)+8]
		}
	}
	return secret[:len(secret)/4]
}

// Expiry is when a token made at now expires when it is to last for in:
// nil, never, when in is not positive.
func Expiry(now time.Time, in time.Duration) *time.Time {
	if in <= 0 {
		return nil
	}
	exp := now.Add(in)
	return &exp
}

// Mint makes a fresh secret for t, stores t under its digest, and returns
// the secret (to be shown once) and the token as stored. Its errors are
// store.Tokens.CreateToken's (store.ErrNotFound: no such publisher), never
// store.ErrExists.
func Mint(ctx context.Context, s store.Tokens, t store.Token) (string, store.Token, error) {
	// A collision of 192 random bits does not happen; the loop is for
	// form, so that ErrExists can never reach a caller from here.
	for range 3 {
		secret := NewSecret(t.Kind)
		t.Prefix = Prefix(secret)
		stored, err := s.CreateToken(ctx, store.TokenDigest(secret), t)
		if errors.Is(err, store.ErrExists) {
			continue
		}
		return secret, stored, err
	}
	return "", store.Token{}, fmt.Errorf("could not find a free token digest")
}

// Rotate makes a fresh secret for the token that replaces id (see
// store.Tokens.RotateToken) and returns it with the old and the new token.
// store.ErrNotFound: no such token; store.ErrConflict: it is revoked,
// expired or already rotated.
func Rotate(ctx context.Context, s store.Tokens, publisher, id string, next store.Token, until time.Time) (secret string, old, created store.Token, err error) {
	old, err = s.Token(ctx, publisher, id)
	if err != nil {
		return "", store.Token{}, store.Token{}, err
	}
	for range 3 {
		secret = NewSecret(old.Kind)
		next.Prefix = Prefix(secret)
		old, created, err = s.RotateToken(ctx, publisher, id, store.TokenDigest(secret), next, until)
		if errors.Is(err, store.ErrExists) {
			continue
		}
		return secret, old, created, err
	}
	return "", store.Token{}, store.Token{}, fmt.Errorf("could not find a free token digest")
}

// CheckName reports a token name that is not a field.TokenName: 1 to 100
// characters of one line, no control characters.
func CheckName(name string) error {
	if err := field.TokenName.Check(name); err != nil {
		return fmt.Errorf("name %w", err)
	}
	return nil
}

// Detail is what the audit trail says of a token.
func Detail(t store.Token) map[string]string {
	d := map[string]string{"kind": string(t.Kind), "name": t.Name, "prefix": t.Prefix}
	if t.ExpiresAt != nil {
		d["expires_at"] = t.ExpiresAt.UTC().Format(time.RFC3339)
	}
	if t.Buyer != nil {
		d["buyer"] = t.Buyer.ID
	}
	return d
}

// RotationDetail is what the audit trail says of a rotation.
func RotationDetail(old, created store.Token) map[string]string {
	d := Detail(old)
	d["replaced_by"] = created.ID
	if old.ExpiresAt != nil && old.RevokedAt == nil {
		d["old_token_until"] = old.ExpiresAt.UTC().Format(time.RFC3339)
	}
	return d
}
