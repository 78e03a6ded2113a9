package store

import (
	"context"
	"io"
	"time"

	"github.com/storefront/storefront/ledger"
	"github.com/storefront/storefront/merch"
	"github.com/storefront/storefront/products"
	"github.com/storefront/storefront/vocab"
)

// The storage roles. Each is what one kind of consumer asks for: the
// snapshot cache reads publishers, products, rulebooks and seeds; the
// webhook sender records deliveries; the account policy (package access)
// reads and provisions accounts. Store composes them for the program's
// wiring, and both implementations satisfy every role.
//
// The rules every role keeps: every method is safe for concurrent use and
// scoped to one publisher where it takes one; a publisher that does not
// exist, or a thing that belongs to another publisher, is ErrNotFound (the
// two are not told apart), and a write to an unknown publisher writes
// nothing. Every write returns ErrInvalid, before writing anything, for
// text no store keeps (the checks in valid.go); a lookup by a key no store
// can hold (Unkeepable) finds nothing. Any method may return
// ErrUnavailable when the storage cannot serve now. The errors a method's
// doc names are the others it returns.

// Publishers keeps the publishers served and where each one's catalogue
// and rulebook stand.
type Publishers interface {
	// Publishers lists the publishers served, default first (the first
	// one added).
	Publishers(ctx context.Context) ([]products.Publisher, error)
	// Publisher returns one publisher. ErrNotFound: no such publisher.
	Publisher(ctx context.Context, id string) (products.Publisher, error)
	// PutPublisher creates or replaces a publisher's settings; a
	// replaced publisher keeps its place and its versions.
	PutPublisher(ctx context.Context, p products.Publisher) error
	// Versions returns the publisher's current versions. ErrNotFound: no
	// such publisher.
	Versions(ctx context.Context, publisher string) (Versions, error)
}

// Products keeps each publisher's current catalogue. Every write is a
// catalogue version (see Catalogues for their history, written with no
// author from here).
type Products interface {
	// Catalogue returns every product of the publisher, in catalogue
	// order, and the catalogue version they belong to. ErrNotFound: no
	// such publisher.
	Catalogue(ctx context.Context, publisher string) ([]products.Product, int64, error)
	// PutProduct creates or replaces a product and returns the new
	// catalogue version. ifMatch, when non-zero, must equal the current
	// catalogue version: ErrConflict otherwise, and nothing is written.
	// ErrNotFound: no such publisher.
	PutProduct(ctx context.Context, publisher string, p products.Product, ifMatch int64) (int64, error)
	// DeleteProduct removes a product and returns the new catalogue
	// version. ErrNotFound: no such product (or publisher); ErrConflict:
	// ifMatch, when non-zero, is not the current version.
	DeleteProduct(ctx context.Context, publisher, productID string, ifMatch int64) (int64, error)
}

// Rulebooks keeps each publisher's rulebook as immutable, numbered
// versions.
type Rulebooks interface {
	// Rulebook returns the current rulebook version. ErrNotFound: the
	// publisher has none yet (or does not exist).
	Rulebook(ctx context.Context, publisher string) (RulebookVersion, error)
	// RulebookAt returns one version. ErrNotFound: no such version.
	RulebookAt(ctx context.Context, publisher string, version int64) (RulebookVersion, error)
	// RulebookHistory lists the versions, newest first. ErrNotFound: no
	// such publisher.
	RulebookHistory(ctx context.Context, publisher string) ([]RulebookVersion, error)
	// SaveRulebook stores rb as a new version. ifMatch must equal the
	// current version (0 when there is none yet): otherwise ErrConflict,
	// and nothing is saved. ErrNotFound: no such publisher. The caller
	// validates rb first.
	SaveRulebook(ctx context.Context, publisher string, rb merch.Rulebook, ifMatch int64, author, note string) (RulebookVersion, error)
}

// Accounts keeps buyer accounts. Who may use which is not the store's to
// say: package access decides it over this role.
type Accounts interface {
	// AccountByID returns an account by its id. ErrNotFound: no such
	// account.
	AccountByID(ctx context.Context, publisher, id string) (Account, error)
	// AccountByKey returns the account with a natural key
	// (Account.NaturalKey). ErrNotFound: no such account.
	AccountByKey(ctx context.Context, publisher, naturalKey string) (Account, error)
	// EnsureAccount returns the account with a's natural key, creating it
	// from a (with a fresh id when a.ID is empty) if absent. Of callers
	// ensuring one key at once, all get the same account. ErrExists: a
	// names an id another account holds. ErrNotFound: no such publisher.
	EnsureAccount(ctx context.Context, publisher string, a Account) (Account, error)
	// PutAccount creates or replaces the account with a's id, keeping
	// its creation time, and returns the account as stored. ErrExists:
	// another account has a's natural key; nothing changes. ErrNotFound:
	// no such publisher.
	PutAccount(ctx context.Context, publisher string, a Account) (Account, error)
	// ListAccounts lists the publisher's accounts. ErrNotFound: no such
	// publisher.
	ListAccounts(ctx context.Context, publisher string) ([]Account, error)
}

// Ledgers keeps each publisher's decision ledger: a hash chain (package
// ledger) appended once per decision, never rewritten. ledger.Verify
// checks a chain through this role.
type Ledgers interface {
	// Append adds a decision to its publisher's chain and returns the
	// entry once it is durable. ErrNotFound: no such publisher.
	Append(ctx context.Context, r ledger.Record) (ledger.Entry, error)
	// Decisions lists the entries matching f, newest first (see
	// Matches). ErrNotFound: no such publisher.
	Decisions(ctx context.Context, publisher string, f DecisionFilter) ([]ledger.Entry, error)
	// WalkLedger calls fn on every entry of the chain in sequence order,
	// and returns the first error fn returns. ErrNotFound: no such
	// publisher.
	WalkLedger(ctx context.Context, publisher string, fn func(ledger.Entry) error) error
	// LedgerLen is the number of entries in the chain. ErrNotFound: no
	// such publisher.
	LedgerLen(ctx context.Context, publisher string) (int64, error)
}

// Sandbox keeps what compliance testing sets up for sandbox principals:
// directives (forced answers, see products.Directives) and seeded
// catalogues.
type Sandbox interface {
	// SetDirective stores the directive for (account, principal),
	// replacing any earlier one, claimed or not: a claim on the one it
	// replaces no longer holds. ErrNotFound: no such publisher.
	SetDirective(ctx context.Context, publisher, account, principal string, d products.Directive) error
	// ClaimDirective claims the directive for (account, principal) with
	// token for lease, on the store's clock, and returns it; nil when
	// there is none, or another call's claim on it still holds. Of
	// callers claiming one directive at once exactly one gets it. The
	// claimant then spends it (answered with it) or releases it.
	// ErrNotFound: no such publisher.
	ClaimDirective(ctx context.Context, publisher, account, principal, token string, lease time.Duration) (*products.Directive, error)
	// SpendDirective removes the directive token claimed. ErrConflict
	// when the claim no longer holds: the directive was replaced, or
	// its lease ran out and another call claimed it. ErrNotFound: no
	// such publisher.
	SpendDirective(ctx context.Context, publisher, account, principal, token string) error
	// ReleaseDirective drops token's claim, so that the next call gets
	// the directive. It does nothing when the claim no longer holds.
	// ErrNotFound: no such publisher.
	ReleaseDirective(ctx context.Context, publisher, account, principal, token string) error

	// SeedProduct adds or replaces a product in a sandbox principal's
	// seeded catalogue. A seed from a new session first empties the
	// catalogue, so fixtures of one compliance run never leak into the
	// next. It returns the seeded catalogue's new version. ErrNotFound:
	// no such publisher.
	SeedProduct(ctx context.Context, publisher, principal, session string, p products.Product) (int64, error)
	// SeededCatalogue returns a sandbox principal's seeded catalogue and
	// its version. ErrNotFound: it has seeded nothing (or no such
	// publisher).
	SeededCatalogue(ctx context.Context, publisher, principal string) ([]products.Product, int64, error)
}

// Replays keeps idempotency records: each key's response, or its
// reservation while the first request with it is in flight.
type Replays interface {
	// ReserveReplay claims an idempotency key for a request, owned by
	// r.Token for lease (on the store's clock). It returns nil when the
	// token now owns the key and must complete or release it, or the
	// record already there: completed (replay it, or refuse a different
	// payload) or still in flight, with the time its lease ends. A
	// reservation whose lease has ended is taken over by the new token.
	// ErrNotFound: no such publisher.
	ReserveReplay(ctx context.Context, publisher string, r Replay, lease time.Duration) (*Replay, error)
	// CompleteReplay stores the response for the key token reserved.
	// ErrNotFound when the key has no record (or no such publisher);
	// ErrConflict when token does not own it in flight (taken over, or
	// completed already): nothing is written.
	CompleteReplay(ctx context.Context, publisher, scope, key, token string, payload []byte, failed bool, slug vocab.Slug) error
	// ReleaseReplay drops token's reservation, so that a retry runs
	// afresh. It does nothing when token does not own the key in flight:
	// a late release never drops a newer owner's reservation or a
	// completed response. ErrNotFound: no such publisher.
	ReleaseReplay(ctx context.Context, publisher, scope, key, token string) error
	// PurgeReplays removes records created before cutoff and returns how
	// many it removed. ErrNotFound: no such publisher.
	PurgeReplays(ctx context.Context, publisher string, before time.Time) (int64, error)
}

// AsyncTasks keeps asynchronous tasks and the state of their webhook
// deliveries. A task belongs to its owner: no one else can see it.
type AsyncTasks interface {
	// CreateTask stores a new task. ErrExists: the owner already has one
	// with that id. ErrNotFound: no such publisher.
	CreateTask(ctx context.Context, publisher string, t Task) error
	// Task returns one of an owner's tasks. ErrNotFound otherwise, also
	// when the id exists under another owner.
	Task(ctx context.Context, publisher string, owner TaskOwner, id string) (Task, error)
	// PrincipalTasks returns a principal's tasks with the given id, under
	// any of its accounts, newest first: how a sandbox principal's
	// compliance controller finds the task it completes. ErrNotFound: no
	// such publisher (none found is an empty list).
	PrincipalTasks(ctx context.Context, publisher, principal, id string) ([]Task, error)
	// ListTasks returns the owner's tasks matching f, newest first, and
	// how many match in all (see TaskMatches). ErrNotFound: no such
	// publisher.
	ListTasks(ctx context.Context, publisher string, owner TaskOwner, f TaskFilter) ([]Task, int, error)
	// FinishTask moves a task to a terminal status with its result and
	// returns it. ErrConflict: it is already terminal. ErrNotFound: no
	// such task.
	FinishTask(ctx context.Context, publisher string, owner TaskOwner, id, status string, result []byte, at time.Time) (Task, error)
	// RecordDelivery stores the state of a task's webhook delivery.
	// ErrNotFound: no such task.
	RecordDelivery(ctx context.Context, publisher string, owner TaskOwner, id string, d Delivery) error
}

// SigningKeys keeps each publisher's webhook-signing keys (package
// signing hands them out).
type SigningKeys interface {
	// SigningKeys lists the publisher's webhook-signing keys, newest
	// first: the active key, then retired ones. ErrNotFound: no such
	// publisher.
	SigningKeys(ctx context.Context, publisher string) ([]SigningKey, error)
	// CreateSigningKey stores k as the publisher's active key when it has
	// none: the first key, which replicas may race to create. ErrExists
	// when the publisher already has an active key (or a key named
	// k.KID); nothing is stored. ErrNotFound: no such publisher.
	CreateSigningKey(ctx context.Context, publisher string, k SigningKey) error
	// RotateSigningKey retires the publisher's active key, if any, at
	// k.CreatedAt and stores k as the active key, as one change.
	// ErrExists: the publisher already has a key named k.KID.
	// ErrNotFound: no such publisher.
	RotateSigningKey(ctx context.Context, publisher string, k SigningKey) error
}

// Changes announces catalogue, rulebook and publisher settings changes,
// for the snapshot cache.
type Changes interface {
	// Changes delivers the id of a publisher whose catalogue, rulebook
	// or settings changed, from this process or another sharing the
	// storage; a failed write announces nothing. The channel closes when
	// ctx ends.
	Changes(ctx context.Context) <-chan string
}

// Store is the storefront's storage: every role, for the program's
// wiring. Consumers ask for the roles they use (the snapshot cache,
// SnapshotStore; the webhook sender, AsyncTasks; ...), so that what each
// one may touch is in its signature. Optional roles some stores add
// (BulkCatalogue, Catalogues, LedgerWindow, Recordings, Retention,
// Secrets, SharedCatalogue) are found by type assertion.
type Store interface {
	Publishers
	Products
	Rulebooks
	Accounts
	Tokens
	Audit
	Ledgers
	Sandbox
	Replays
	AsyncTasks
	SigningKeys
	// MediaBuys holds the media-buy tasks' state (mediabuys.go).
	MediaBuys
	// Governance holds governance agent registrations (governance.go).
	Governance
	Changes
	// Close releases the storage; the store is not used after it.
	io.Closer
}

// Content is what a publisher serves: its settings, its catalogue and its
// rulebook. Seeding the demo or a benchmark writes it.
type Content interface {
	Publishers
	Products
	Rulebooks
}

// SnapshotStore is what the snapshot cache reads: publishers' content,
// sandbox seeds, and the changes to them.
type SnapshotStore interface {
	Content
	Sandbox
	Changes
}
