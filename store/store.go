// Package store defines the storefront's storage and the types it
// persists: publishers, their catalogues, versioned rulebooks, accounts,
// buyer and admin tokens, the decision ledger, and compliance directives.
// The storage is split into roles (roles.go), one small interface for each
// kind of consumer, which Store composes for wiring. Two implementations
// satisfy every role: memstore (the embedded default) and pgstore
// (PostgreSQL). One conformance suite, storetest, runs against both, one
// function per role.
//
// This package also holds Snapshots, the cache that turns a store's current
// catalogue and rulebook into an immutable products.Snapshot and swaps it
// whole when either changes.
package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/storefront/storefront/ledger"
	"github.com/storefront/storefront/merch"
	"github.com/storefront/storefront/products"
	"github.com/storefront/storefront/vocab"
)

// Errors every store returns for the same conditions.
var (
	// ErrNotFound: the thing does not exist, or belongs to another
	// publisher (the two are not told apart).
	ErrNotFound = errors.New("not found")
	// ErrConflict: an If-Match precondition did not hold, or a token
	// no longer owns the reservation or claim it names (its lease ran
	// out and another took it over, or it was released or replaced).
	ErrConflict = errors.New("version conflict")
	// ErrExists: a create collided with an existing key.
	ErrExists = errors.New("already exists")
	// ErrDuplicate: one bulk request names the same thing twice.
	ErrDuplicate = errors.New("given twice")
	// ErrUnavailable: the storage cannot be reached or cannot serve now
	// (a lost connection, a server shutting down or out of
	// connections); retrying later may succeed.
	ErrUnavailable = errors.New("storage unavailable")
)

// Versions are a publisher's current catalogue and rulebook versions.
// Catalogue versions count catalogue edits; rulebook versions number the
// immutable rulebook versions (0: none yet).
type Versions struct {
	Catalogue int64
	Rulebook  int64
}

// RulebookVersion is one immutable version of a publisher's rulebook.
type RulebookVersion struct {
	Version   int64          `json:"version"`
	Rulebook  merch.Rulebook `json:"rulebook"`
	CreatedAt time.Time      `json:"created_at"`
	// Author names the admin token that saved it.
	Author string `json:"author"`
	// Note says why, e.g. "rollback to 3".
	Note string `json:"note,omitempty"`
}

// Account is a buyer account at one publisher.
type Account struct {
	// ID is the seller-assigned account id.
	ID string `json:"account_id"`
	// Operator and BrandDomain are the natural key; BrandID narrows it.
	Operator    string `json:"operator"`
	BrandDomain string `json:"brand_domain"`
	BrandID     string `json:"brand_id,omitempty"`
	// Sandbox accounts exist for testing; compliance directives apply
	// only to them.
	Sandbox bool `json:"sandbox"`
	// Disclosure caps what rules may disclose to this account (its
	// trust tier). Exact means the rules decide.
	Disclosure vocab.Level `json:"disclosure_cap"`
	CreatedAt  time.Time   `json:"created_at"`
}

// NaturalKey returns the products.AccountRef key of the account.
func (a Account) NaturalKey() string {
	ref := &products.AccountRef{Operator: a.Operator, Brand: &products.BrandRef{Domain: a.BrandDomain, BrandID: a.BrandID}, Sandbox: a.Sandbox}
	return ref.Key()
}

// Buyer is a buyer principal: who a bearer token speaks for.
type Buyer struct {
	ID       string   `json:"id"`
	Operator string   `json:"operator"`
	Accounts []string `json:"accounts,omitempty"`
}

// Admin is the holder of an admin token: scoped to one publisher.
type Admin struct {
	Publisher string `json:"publisher"`
	Name      string `json:"name"`
	// TokenID is the public id of the token (Token.ID).
	TokenID string `json:"token_id"`
}

// DecisionFilter selects ledger entries.
type DecisionFilter struct {
	Arm     string
	Slug    vocab.Slug
	Account string
	Since   time.Time
	Until   time.Time
	// Before returns entries with a lower sequence, for paging backwards.
	Before int64
	Limit  int
}

// Replay is an idempotency record: the response to one key, or a
// reservation while the first request with that key is in flight.
type Replay struct {
	// Scope is who and what the key is for: principal, account and tool.
	// Keys of different scopes never collide.
	Scope string
	Key   string
	// RequestHash is the digest of the request without its key; the same
	// key with a different hash is a conflict.
	RequestHash string
	// Done is false while the first request is in flight.
	Done    bool
	Payload []byte
	Failed  bool
	// Slug is the decline slug of a cached rejection, for transport _meta.
	Slug      vocab.Slug
	CreatedAt time.Time
	// Token is the owner of a reservation: a random value the request
	// reserves the key with. Only the owner completes or releases the
	// reservation; a record a store returns never carries it.
	Token string
	// Expires is when an in-flight reservation's lease ends, on the
	// store's clock: from then on another request may take the key over
	// under a token of its own, and the old owner's late writes are
	// refused.
	Expires time.Time
}

// TaskOwner is who a task belongs to: the account and the principal that
// created it. No one else can see it.
type TaskOwner struct {
	Account   string `json:"account"`
	Principal string `json:"principal"`
}

// Task is an asynchronous task.
type Task struct {
	ID    string    `json:"task_id"`
	Owner TaskOwner `json:"owner"`
	// Type is the AdCP task type, e.g. get_products.
	Type string `json:"task_type"`
	// Status is submitted, working, completed, failed, rejected or canceled.
	Status  string `json:"status"`
	Message string `json:"message,omitempty"`
	// Request is the originating request's arguments.
	Request []byte `json:"request,omitempty"`
	// Result is the terminal AdCP payload.
	Result      []byte     `json:"result,omitempty"`
	Webhook     *Webhook   `json:"webhook,omitempty"`
	CreatedAt   time.Time  `json:"created_at"`
	UpdatedAt   time.Time  `json:"updated_at"`
	CompletedAt *time.Time `json:"completed_at,omitempty"`
	Delivery    Delivery   `json:"delivery"`
}

// Terminal reports whether the task has finished.
func (t Task) Terminal() bool {
	switch t.Status {
	case "completed", "failed", "rejected", "canceled":
		return true
	}
	return false
}

// Webhook is where a task's terminal notification goes
// (push_notification_config).
type Webhook struct {
	URL         string `json:"url"`
	OperationID string `json:"operation_id"`
	Token       string `json:"token,omitempty"`
	// Scheme is "Bearer" or "HMAC-SHA256" when the buyer registered
	// legacy authentication, "" otherwise.
	Scheme      string `json:"scheme,omitempty"`
	Credentials string `json:"credentials,omitempty"`
}

// Delivery is the state of a task's webhook delivery.
type Delivery struct {
	// IdempotencyKey and Timestamp stay the same on every retry.
	IdempotencyKey string     `json:"idempotency_key,omitempty"`
	Timestamp      time.Time  `json:"timestamp,omitempty"`
	Attempts       int        `json:"attempts"`
	LastError      string     `json:"last_error,omitempty"`
	DeliveredAt    *time.Time `json:"delivered_at,omitempty"`
}

// TaskFilter selects tasks.
type TaskFilter struct {
	IDs      []string
	Type     string
	Statuses []string
	// HasWebhook, when set, selects tasks with (or without) a webhook.
	HasWebhook *bool
	Offset     int
	Limit      int
}

// SigningKey is one of a publisher's webhook-signing keys: Ed25519, as the
// AdCP webhook-signing profile allows.
type SigningKey struct {
	// KID names the key in the publisher's JWKS and in signatures.
	KID string
	// Public is the 32-byte public key; Private the 32-byte seed of the
	// private key, which never leaves the storefront.
	Public, Private []byte
	CreatedAt       time.Time
	// RetiredAt is when a rotation replaced the key; nil while it is the
	// publisher's active key. A retired key signs nothing more.
	RetiredAt *time.Time
}

// BulkCatalogue is implemented by stores that load many products at once:
// in one transaction and one catalogue version, instead of a version per
// product. It is optional; callers fall back to PutProduct.
type BulkCatalogue interface {
	// PutProducts creates or replaces every product in ps, in order, as
	// PutProduct would, all or nothing. ifMatch, when non-zero, must
	// equal the current catalogue version. Product ids must be distinct.
	// It returns the new catalogue version.
	PutProducts(ctx context.Context, publisher string, ps []products.Product, ifMatch int64) (int64, error)
}

// SharedCatalogue is implemented by stores that keep the catalogue in
// memory as values they never write, as the in-memory store does. It is
// optional; callers fall back to Catalogue.
type SharedCatalogue interface {
	// SharedCatalogue is Catalogue without the copy: the products share
	// their strings and lists with the store's own, and with each other
	// where they are equal. The caller must never write into them (a
	// snapshot only reads its products); anything that may must call
	// Catalogue.
	SharedCatalogue(ctx context.Context, publisher string) ([]products.Product, int64, error)
}

// LedgerWindow is implemented by stores that keep only the most recent
// part of each chain, as the in-memory store does so that its memory stays
// bounded: ledger.Verify then starts at the window's checkpoint.
type LedgerWindow = ledger.Window

// TokenDigest is how tokens are stored: hex SHA-256.
func TokenDigest(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// DistinctProducts reports a product id given twice in one bulk load.
func DistinctProducts(ps []products.Product) error {
	seen := make(map[string]bool, len(ps))
	for _, p := range ps {
		if seen[p.ProductID] {
			return fmt.Errorf("product %q: %w", p.ProductID, ErrDuplicate)
		}
		seen[p.ProductID] = true
	}
	return nil
}
