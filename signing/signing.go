// Package signing keeps each publisher's webhook-signing keys and signs
// outbound webhooks with them under the AdCP webhook-signing profile
// (RFC 9421, tag adcp/webhook-signing/v1): Ed25519, the five covered
// components, a fresh nonce per request, and a five-minute window. It also
// renders the public keys as the JWKS buyers verify against.
//
// A private key must never leave this package and the store: not in a
// JWKS, a log line or an error.
package signing

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/storefront/storefront/internal/clock"
	"github.com/storefront/storefront/store"
)

// The profile's constants.
const (
	// Tag is the profile's Signature-Input tag.
	Tag = "adcp/webhook-signing/v1"
	// Algorithm is the RFC 9421 name of the one algorithm the storefront
	// signs with; JWKAlgorithm is its JOSE name in the JWKS.
	Algorithm    = "ed25519"
	JWKAlgorithm = "EdDSA"
	// Purpose is the keys' adcp_use. The profile names "request-signing"
	// as the canonical webhook key purpose and keeps "webhook-signing" as
	// a deprecated one every webhook verifier MUST still accept; the
	// @adcp/sdk 6.11.0 verifier accepts only "webhook-signing", so that is
	// the one purpose every verifier in use accepts.
	Purpose = "webhook-signing"
	// Window is expires - created: the profile's maximum.
	Window = 5 * time.Minute
	// RetiredGrace is how long a retired key stays in the JWKS: longer
	// than any signature it made stays valid (Window and the profile's 60
	// seconds of clock skew), so a webhook signed just before a rotation
	// still verifies against a freshly fetched JWKS.
	RetiredGrace = 1 * time.Hour
	// JWKSPath is where a publisher's JWKS is served, under the
	// publisher's path prefix ("" for the default publisher, which is
	// also the origin's JWKS, "/p/<publisher>" for the others).
	JWKSPath = "/.well-known/jwks.json"
)

// Keys hands out publishers' signing keys, creating a publisher's first key
// when it is first needed, and signs with them.
type Keys struct {
	Store store.SigningKeys
	// Now is the program's clock; nil means the machine's (internal/clock).
	Now func() time.Time
}

func (k *Keys) now() time.Time {
	return clock.Read(k.Now)
}

// NewKey generates a key created at now.
func NewKey(now time.Time) (store.SigningKey, error) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return store.SigningKey{}, err
	}
	id := make([]byte, 8)
	if _, err := rand.Read(id); err != nil {
		return store.SigningKey{}, err
	}
	now = now.UTC()
	return store.SigningKey{
		KID:       "sf-webhook-" + now.Format("20060102") + "-" + hex.EncodeToString(id),
		Public:    pub,
		Private:   priv.Seed(),
		CreatedAt: now,
	}, nil
}

// Active returns the publisher's active key, creating the publisher's
// first key if it has none. Replicas racing to create it agree on one.
func (k *Keys) Active(ctx context.Context, publisher string) (store.SigningKey, error) {
	for range 2 {
		ks, err := k.Store.SigningKeys(ctx, publisher)
		if err != nil {
			return store.SigningKey{}, err
		}
		if len(ks) > 0 && ks[0].RetiredAt == nil {
			return ks[0], nil
		}
		key, err := NewKey(k.now())
		if err != nil {
			return store.SigningKey{}, err
		}
		err = k.Store.CreateSigningKey(ctx, publisher, key)
		if err == nil {
			return key, nil
		}
		if !errors.Is(err, store.ErrExists) {
			return store.SigningKey{}, err
		}
		// Another replica created it first: read theirs.
	}
	return store.SigningKey{}, fmt.Errorf("signing: publisher %q has no active key after creating one", publisher)
}

// Rotate makes a new active key for the publisher and retires the one it
// replaces, which stays in the JWKS for RetiredGrace.
func (k *Keys) Rotate(ctx context.Context, publisher string) (store.SigningKey, error) {
	key, err := NewKey(k.now())
	if err != nil {
		return store.SigningKey{}, err
	}
	if err := k.Store.RotateSigningKey(ctx, publisher, key); err != nil {
		return store.SigningKey{}, err
	}
	return key, nil
}

// Published returns the keys the publisher's JWKS lists: the active key
// (created if the publisher has none yet) and keys retired within
// RetiredGrace, newest first.
func (k *Keys) Published(ctx context.Context, publisher string) ([]store.SigningKey, error) {
	if _, err := k.Active(ctx, publisher); err != nil {
		return nil, err
	}
	ks, err := k.Store.SigningKeys(ctx, publisher)
	if err != nil {
		return nil, err
	}
	cutoff := k.now().Add(-RetiredGrace)
	out := ks[:0]
	for _, key := range ks {
		if key.RetiredAt == nil || key.RetiredAt.After(cutoff) {
			out = append(out, key)
		}
	}
	return out, nil
}

// Listed is one of a publisher's keys and whether its JWKS lists it now.
type Listed struct {
	Key       store.SigningKey
	Published bool
}

// List returns every key the publisher has had, newest first, with
// whether each is published: for the admin API and CLI.
func (k *Keys) List(ctx context.Context, publisher string) ([]Listed, error) {
	published, err := k.Published(ctx, publisher)
	if err != nil {
		return nil, err
	}
	in := map[string]bool{}
	for _, key := range published {
		in[key.KID] = true
	}
	all, err := k.Store.SigningKeys(ctx, publisher)
	if err != nil {
		return nil, err
	}
	out := make([]Listed, len(all))
	for i, key := range all {
		out[i] = Listed{key, in[key.KID]}
	}
	return out, nil
}

// JWKS returns the publisher's published keys as a JWK Set.
func (k *Keys) JWKS(ctx context.Context, publisher string) (JWKS, error) {
	ks, err := k.Published(ctx, publisher)
	if err != nil {
		return JWKS{}, err
	}
	set := JWKS{Keys: make([]JWK, len(ks))}
	for i, key := range ks {
		set.Keys[i] = PublicJWK(key)
	}
	return set, nil
}

// Sign signs an outbound webhook request for the publisher with its active
// key: now, a fresh nonce, and body as the request's body.
func (k *Keys) Sign(ctx context.Context, publisher string, req *http.Request, body []byte) error {
	key, err := k.Active(ctx, publisher)
	if err != nil {
		return fmt.Errorf("signing the webhook: %w", err)
	}
	nonce, err := NewNonce()
	if err != nil {
		return err
	}
	created := k.now()
	return SignRequest(req, body, ed25519.NewKeyFromSeed(key.Private), Params{
		KeyID: key.KID, Nonce: nonce, Created: created, Expires: created.Add(Window),
	})
}
