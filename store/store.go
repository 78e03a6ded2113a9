// Package store defines the storefront's one storage interface and the
// types it persists: publishers, their catalogues, versioned rulebooks,
// accounts, buyer and admin tokens, the decision ledger, and compliance
// directives. Two implementations satisfy it: memstore (the embedded
// default) and pgstore (PostgreSQL). One conformance suite, storetest, runs
// against both.
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

// LedgerWindow is implemented by stores that keep only the most recent
// part of each chain, as the in-memory store does so that its memory stays
// bounded. Verification then starts at the window's checkpoint.
type LedgerWindow interface {
	// WalkWindow walks the entries held, in sequence order, like
	// WalkLedger. Before the first, it calls start with the sequence and
	// hash of the newest entry no longer held (0 and "" when the whole
	// chain is held), consistently with the entries walked.
	WalkWindow(ctx context.Context, publisher string, start func(seq int64, hash string), fn func(ledger.Entry) error) error
}

// Store is the storefront's storage. Every method is safe for concurrent use
// and scoped to one publisher where it takes one. Methods return
// ErrNotFound for anything outside that publisher. Every write returns
// ErrInvalid, before writing anything, for text no store keeps (the checks
// in valid.go); a lookup by a key no store can hold (Unkeepable) finds
// nothing.
type Store interface {
	Tokens
	Audit
	// MediaBuys holds the media-buy tasks' state (mediabuys.go).
	MediaBuys
	// Governance holds governance agent registrations (governance.go).
	Governance

	// Publishers lists the publishers served, default first.
	Publishers(ctx context.Context) ([]products.Publisher, error)
	// Publisher returns one publisher, or ErrNotFound.
	Publisher(ctx context.Context, id string) (products.Publisher, error)
	// PutPublisher creates or replaces a publisher's settings.
	PutPublisher(ctx context.Context, p products.Publisher) error

	// Versions returns the publisher's current versions.
	Versions(ctx context.Context, publisher string) (Versions, error)

	// Catalogue returns every product of the publisher, in catalogue
	// order, and the catalogue version they belong to.
	Catalogue(ctx context.Context, publisher string) ([]products.Product, int64, error)
	// PutProduct creates or replaces a product. ifMatch, when non-zero,
	// must equal the current catalogue version (ErrConflict otherwise).
	// It returns the new catalogue version.
	PutProduct(ctx context.Context, publisher string, p products.Product, ifMatch int64) (int64, error)
	// DeleteProduct removes a product (ErrNotFound if absent).
	DeleteProduct(ctx context.Context, publisher, productID string, ifMatch int64) (int64, error)

	// Rulebook returns the current rulebook version (ErrNotFound: none).
	Rulebook(ctx context.Context, publisher string) (RulebookVersion, error)
	// RulebookAt returns one version (ErrNotFound if absent).
	RulebookAt(ctx context.Context, publisher string, version int64) (RulebookVersion, error)
	// RulebookHistory lists versions, newest first, without bodies'
	// rules when brief is set.
	RulebookHistory(ctx context.Context, publisher string) ([]RulebookVersion, error)
	// SaveRulebook stores rb as a new version. ifMatch must equal the
	// current version (0 when there is none yet): otherwise ErrConflict,
	// and nothing is saved. The caller validates rb first.
	SaveRulebook(ctx context.Context, publisher string, rb merch.Rulebook, ifMatch int64, author, note string) (RulebookVersion, error)

	// Accounts.
	AccountByID(ctx context.Context, publisher, id string) (Account, error)
	AccountByKey(ctx context.Context, publisher, naturalKey string) (Account, error)
	// EnsureAccount returns the account with a's natural key, creating it
	// from a (with a fresh id) if absent.
	EnsureAccount(ctx context.Context, publisher string, a Account) (Account, error)
	// PutAccount creates or replaces the account with a's id, keeping
	// its creation time, and returns the account as stored.
	PutAccount(ctx context.Context, publisher string, a Account) (Account, error)
	ListAccounts(ctx context.Context, publisher string) ([]Account, error)

	// Append adds a decision to the publisher's chain once it is durable.
	Append(ctx context.Context, r ledger.Record) (ledger.Entry, error)
	// Decisions lists entries matching f, newest first.
	Decisions(ctx context.Context, publisher string, f DecisionFilter) ([]ledger.Entry, error)
	// WalkLedger calls fn on every entry of the chain in sequence order.
	WalkLedger(ctx context.Context, publisher string, fn func(ledger.Entry) error) error
	// LedgerLen is the number of entries in the chain.
	LedgerLen(ctx context.Context, publisher string) (int64, error)

	// SetDirective stores the directive for (account, principal),
	// replacing any earlier one, claimed or not: a claim on the one it
	// replaces no longer holds.
	SetDirective(ctx context.Context, publisher, account, principal string, d products.Directive) error
	// ClaimDirective claims the directive for (account, principal) with
	// token for lease, on the store's clock, and returns it; nil when
	// there is none, or another call's claim on it still holds. Of
	// callers claiming one directive at once exactly one gets it. The
	// claimant then spends it (answered with it) or releases it.
	ClaimDirective(ctx context.Context, publisher, account, principal, token string, lease time.Duration) (*products.Directive, error)
	// SpendDirective removes the directive token claimed. ErrConflict
	// when the claim no longer holds: the directive was replaced, or
	// its lease ran out and another call claimed it.
	SpendDirective(ctx context.Context, publisher, account, principal, token string) error
	// ReleaseDirective drops token's claim, so that the next call gets
	// the directive. It does nothing when the claim no longer holds.
	ReleaseDirective(ctx context.Context, publisher, account, principal, token string) error

	// ReserveReplay claims an idempotency key for a request, owned by
	// r.Token for lease (on the store's clock). It returns nil when the
	// token now owns the key and must complete or release it, or the
	// record already there: completed (replay it, or refuse a different
	// payload) or still in flight, with the time its lease ends. A
	// reservation whose lease has ended is taken over by the new token.
	ReserveReplay(ctx context.Context, publisher string, r Replay, lease time.Duration) (*Replay, error)
	// CompleteReplay stores the response for the key token reserved.
	// ErrNotFound when the key has no record; ErrConflict when token
	// does not own it in flight (taken over, or completed already):
	// nothing is written.
	CompleteReplay(ctx context.Context, publisher, scope, key, token string, payload []byte, failed bool, slug vocab.Slug) error
	// ReleaseReplay drops token's reservation, so that a retry runs
	// afresh. It does nothing when token does not own the key in flight:
	// a late release never drops a newer owner's reservation or a
	// completed response.
	ReleaseReplay(ctx context.Context, publisher, scope, key, token string) error
	// PurgeReplays removes records created before cutoff.
	PurgeReplays(ctx context.Context, publisher string, before time.Time) (int64, error)

	// CreateTask stores a new task; ErrExists if the owner already has one
	// with that id.
	CreateTask(ctx context.Context, publisher string, t Task) error
	// Task returns one of an owner's tasks (ErrNotFound otherwise, also
	// when the id exists under another owner).
	Task(ctx context.Context, publisher string, owner TaskOwner, id string) (Task, error)
	// PrincipalTasks returns a principal's tasks with the given id, under
	// any of its accounts, newest first: how a sandbox principal's
	// compliance controller finds the task it completes.
	PrincipalTasks(ctx context.Context, publisher, principal, id string) ([]Task, error)
	// ListTasks returns the owner's tasks matching f, newest first, and
	// how many match in all.
	ListTasks(ctx context.Context, publisher string, owner TaskOwner, f TaskFilter) ([]Task, int, error)
	// FinishTask moves a task to a terminal status with its result.
	// ErrConflict if it is already terminal.
	FinishTask(ctx context.Context, publisher string, owner TaskOwner, id, status string, result []byte, at time.Time) (Task, error)
	// RecordDelivery stores the state of a task's webhook delivery.
	RecordDelivery(ctx context.Context, publisher string, owner TaskOwner, id string, d Delivery) error

	// SeedProduct adds or replaces a product in a sandbox principal's
	// seeded catalogue. A seed from a new session first empties the
	// catalogue, so fixtures of one compliance run never leak into the
	// next. It returns the seeded catalogue's new version.
	SeedProduct(ctx context.Context, publisher, principal, session string, p products.Product) (int64, error)
	// SeededCatalogue returns a sandbox principal's seeded catalogue and
	// its version; ErrNotFound when it has seeded nothing.
	SeededCatalogue(ctx context.Context, publisher, principal string) ([]products.Product, int64, error)

	// SigningKeys lists the publisher's webhook-signing keys, newest
	// first: the active key, then retired ones.
	SigningKeys(ctx context.Context, publisher string) ([]SigningKey, error)
	// CreateSigningKey stores k as the publisher's active key when it has
	// none: the first key, which replicas may race to create. ErrExists
	// when the publisher already has an active key; nothing is stored.
	CreateSigningKey(ctx context.Context, publisher string, k SigningKey) error
	// RotateSigningKey retires the publisher's active key, if any, at
	// k.CreatedAt and stores k as the active key, as one change.
	RotateSigningKey(ctx context.Context, publisher string, k SigningKey) error

	// Changes delivers the id of a publisher whose catalogue or rulebook
	// changed, from this process or another sharing the storage. The
	// channel closes when ctx ends.
	Changes(ctx context.Context) <-chan string

	Close() error
}

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
