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
	"time"

	"github.com/storefront/storefront/decline"
	"github.com/storefront/storefront/ledger"
	"github.com/storefront/storefront/merch"
	"github.com/storefront/storefront/products"
)

// Errors every store returns for the same conditions.
var (
	// ErrNotFound: the thing does not exist, or belongs to another
	// publisher (the two are not told apart).
	ErrNotFound = errors.New("not found")
	// ErrConflict: an If-Match precondition did not hold.
	ErrConflict = errors.New("version conflict")
	// ErrExists: a create collided with an existing key.
	ErrExists = errors.New("already exists")
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
	Disclosure decline.Level `json:"disclosure_cap"`
	CreatedAt  time.Time     `json:"created_at"`
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
}

// DecisionFilter selects ledger entries.
type DecisionFilter struct {
	Arm     string
	Slug    string
	Account string
	Since   time.Time
	Until   time.Time
	// Before returns entries with a lower sequence, for paging backwards.
	Before int64
	Limit  int
}

// Directive is a stored compliance directive.
type Directive struct {
	products.Directive
	CreatedAt time.Time
}

// Store is the storefront's storage. Every method is safe for concurrent use
// and scoped to one publisher where it takes one. Methods return
// ErrNotFound for anything outside that publisher.
type Store interface {
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
	PutAccount(ctx context.Context, publisher string, a Account) error
	ListAccounts(ctx context.Context, publisher string) ([]Account, error)

	// Tokens are stored as SHA-256 digests only.
	PutBuyerToken(ctx context.Context, publisher, digest string, b Buyer) error
	BuyerByToken(ctx context.Context, publisher, digest string) (Buyer, error)
	PutAdminToken(ctx context.Context, digest string, a Admin) error
	AdminByToken(ctx context.Context, digest string) (Admin, error)

	// Append adds a decision to the publisher's chain once it is durable.
	Append(ctx context.Context, r ledger.Record) (ledger.Entry, error)
	// Decisions lists entries matching f, newest first.
	Decisions(ctx context.Context, publisher string, f DecisionFilter) ([]ledger.Entry, error)
	// WalkLedger calls fn on every entry of the chain in sequence order.
	WalkLedger(ctx context.Context, publisher string, fn func(ledger.Entry) error) error
	// LedgerLen is the number of entries in the chain.
	LedgerLen(ctx context.Context, publisher string) (int64, error)

	// SetDirective stores the directive for (account, principal),
	// replacing any earlier one.
	SetDirective(ctx context.Context, publisher, account, principal string, d products.Directive) error
	// TakeDirective removes and returns the directive for (account,
	// principal); nil when there is none. Exactly one caller gets it.
	TakeDirective(ctx context.Context, publisher, account, principal string) (*products.Directive, error)

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
