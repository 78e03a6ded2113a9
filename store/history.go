package store

import (
	"context"
	"time"

	"github.com/storefront/storefront/ledger"
	"github.com/storefront/storefront/products"
)

// CatalogueVersion is one saved version of a publisher's catalogue. Every
// catalogue write is one: a product saved or deleted, a bulk load, an
// import, a rollback.
type CatalogueVersion struct {
	Version   int64     `json:"version"`
	CreatedAt time.Time `json:"created_at"`
	// Author names the admin token that saved it ("" for writes the
	// storefront made itself, such as seeding the demo).
	Author string `json:"author"`
	Note   string `json:"note,omitempty"`
	// Put and Deleted count the products the version created or changed,
	// and removed.
	Put     int64 `json:"products_put"`
	Deleted int64 `json:"products_deleted"`
}

// CatalogueEdit is one change to a catalogue, saved as one version: the
// products to create or replace, in order, and the ids to delete.
type CatalogueEdit struct {
	Put    []products.Product
	Delete []string
	// IfMatch, when non-zero, must equal the current catalogue version.
	IfMatch int64
	Author  string
	Note    string
}

// CatalogueImport says how an import applies.
type CatalogueImport struct {
	// Replace deletes every product the import does not name; otherwise
	// the import creates and replaces products and leaves the others.
	Replace bool
	// IfMatch, when non-zero, must equal the catalogue version when the
	// import commits.
	IfMatch int64
	Author  string
	Note    string
}

// ProductChange is one product's state at two catalogue versions; nil
// where it did not exist.
type ProductChange struct {
	ProductID string            `json:"product_id"`
	Before    *products.Product `json:"before"`
	After     *products.Product `json:"after"`
}

// Catalogues keeps catalogue history: every write is a version that can be
// listed, compared with another and rolled back to, as rulebook versions
// can. Both stores implement it; the Products role's methods (PutProduct,
// DeleteProduct, PutProducts) write versions too, with no author.
type Catalogues interface {
	// EditCatalogue applies e as one version, all or nothing. ErrConflict
	// when IfMatch is stale, ErrDuplicate when a product id is given
	// twice, ErrNotFound when a deleted id is not in the catalogue.
	EditCatalogue(ctx context.Context, publisher string, e CatalogueEdit) (CatalogueVersion, error)
	// ImportCatalogue streams products into the catalogue as one version.
	// It calls next until next returns io.EOF, which commits; any other
	// error from next abandons the import, saves nothing and is returned.
	// The products are not held in memory together where the store can
	// avoid it (PostgreSQL streams them into the transaction). ErrConflict
	// when IfMatch no longer holds at commit; ErrDuplicate for an id given
	// twice.
	ImportCatalogue(ctx context.Context, publisher string, opts CatalogueImport, next func() (products.Product, error)) (CatalogueVersion, error)
	// CatalogueHistory lists versions newest first, below before (0: from
	// the newest), at most limit of them.
	CatalogueHistory(ctx context.Context, publisher string, before int64, limit int) ([]CatalogueVersion, error)
	// CatalogueDiff returns the products whose state differs between
	// versions from and to, in product id order, at most limit of them,
	// and how many differ in all. ErrNotFound when either version is not
	// in the history.
	CatalogueDiff(ctx context.Context, publisher string, from, to int64, limit int) ([]ProductChange, int, error)
	// RollbackCatalogue saves, as a new version, the catalogue as it was
	// at version to. History is never rewritten. ErrConflict when ifMatch
	// is stale; ErrNotFound when to is not in the history.
	RollbackCatalogue(ctx context.Context, publisher string, to, ifMatch int64, author string) (CatalogueVersion, error)
	// WalkCatalogue calls fn on each product in catalogue order, from one
	// consistent read, without loading them all first where the store can
	// avoid it, and returns the version they belong to.
	WalkCatalogue(ctx context.Context, publisher string, fn func(products.Product) error) (int64, error)
}

// Recordings serve backtests: the get_products decisions of a window of
// time with the requests they answered. Decisions of other tasks (media
// buys, order decisions) are not briefs a rulebook draft could answer
// again, and are left out.
type Recordings interface {
	// CountRecorded counts the get_products decisions at or after since,
	// and how many of them still have their request.
	CountRecorded(ctx context.Context, publisher string, since time.Time) (decisions, withRequest int64, err error)
	// WalkRecorded calls fn, in sequence order, on each get_products
	// decision at or after since, with its Request set when it was kept.
	WalkRecorded(ctx context.Context, publisher string, since time.Time, fn func(ledger.Entry) error) error
}

// RetainBefore gives, for each kind of data retention drops, the time
// before which it goes. A zero time keeps that kind for ever.
type RetainBefore struct {
	// Tasks: finished tasks completed before this.
	Tasks time.Time
	// Seeds: sandbox seeded catalogues last seeded before this.
	Seeds time.Time
	// Replays: idempotency records created before this.
	Replays time.Time
	// Requests: the requests kept beside the ledger for decisions made
	// before this. The ledger's entries themselves are never dropped.
	Requests time.Time
}

// Purged counts what one retention pass dropped.
type Purged struct {
	Tasks    int64 `json:"tasks"`
	Seeds    int64 `json:"seeded_catalogues"`
	Replays  int64 `json:"replays"`
	Requests int64 `json:"ledger_requests"`
}

// Retention drops a publisher's data past its retention period.
type Retention interface {
	Purge(ctx context.Context, publisher string, before RetainBefore) (Purged, error)
}

// MaxKeptRequest is the largest request kept beside the ledger, in bytes.
// A larger one is recorded by its digest only and cannot be replayed.
const MaxKeptRequest = 64 << 10
