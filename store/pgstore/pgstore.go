// Package pgstore is the PostgreSQL store.Store: the store several
// storefront replicas share. It uses pgx and a schema migrated by goose from
// SQL files embedded in the binary.
//
// Every guarantee the Store interface makes across goroutines it makes here
// across processes, and it keeps them in the database, never in process
// memory: If-Match is a compare-and-set on the publisher row, each
// publisher's ledger is appended under a lock on its chain-head row, a
// directive is claimed by one conditional UPDATE and spent by a DELETE
// conditional on the claimant's token, an idempotency key is reserved by
// one INSERT ... ON CONFLICT under its owner's token and a lease judged on
// the store's clock, a task is finished by one conditional UPDATE, a seed
// locks its seeded
// catalogue's row, and change notices travel by LISTEN/NOTIFY. It must
// never hold state a second replica cannot see.
package pgstore

import (
	"context"
	"crypto/rand"
	"database/sql"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"

	"github.com/storefront/storefront/internal/clock"
	"github.com/storefront/storefront/merch"
	"github.com/storefront/storefront/products"
	"github.com/storefront/storefront/store"
	"github.com/storefront/storefront/store/keyring"
)

//go:embed migrations/*.sql
var migrations embed.FS

// changesChannel is the NOTIFY channel; its payload is a publisher id.
const changesChannel = "storefront_changes"

// Store is a store.Store on PostgreSQL.
type Store struct {
	pool  *pgxpool.Pool
	log   *slog.Logger
	clock func() time.Time
	// keys seal the secrets kept (secrets.go); none until SetKeyring.
	keys atomic.Pointer[keyring.Keyring]

	// closed ends every Changes listener when the store closes, so that
	// Close leaves no connection behind.
	closed    context.Context
	close     context.CancelFunc
	mu        sync.Mutex
	isClosed  bool
	listeners sync.WaitGroup

	appender appender
	onBatch  func(entries int, took time.Duration)

	// listPublishers is how a change listener lists the publishers to
	// resync after reconnecting; tests replace it to make that fail.
	listPublishers func(context.Context) ([]products.Publisher, error)
	// resyncFailures counts failed resync listings.
	resyncFailures atomic.Int64
}

var (
	// The composite, which embeds every role.
	_ store.Store = (*Store)(nil)

	// The optional roles it adds.
	_ store.BulkCatalogue = (*Store)(nil)
	_ store.Catalogues    = (*Store)(nil)
	_ store.Recordings    = (*Store)(nil)
	_ store.Retention     = (*Store)(nil)
	_ store.Secrets       = (*Store)(nil)
)

// Open connects to the database at databaseURL, brings its schema up to
// date and returns the store. It fails, naming the server, when PostgreSQL
// cannot be reached within the connect timeout (the URL's connect_timeout,
// or 5 seconds).
func Open(ctx context.Context, databaseURL string, logger *slog.Logger) (*Store, error) {
	if logger == nil {
		logger = slog.Default()
	}
	cfg, err := pgxpool.ParseConfig(databaseURL)
	if err != nil {
		// pgx redacts the password in its parse errors.
		return nil, fmt.Errorf("pgstore: reading the database URL: %w", err)
	}
	if cfg.ConnConfig.ConnectTimeout == 0 {
		cfg.ConnConfig.ConnectTimeout = 5 * time.Second
	}
	where := fmt.Sprintf("%s:%d/%s as %s", cfg.ConnConfig.Host, cfg.ConnConfig.Port, cfg.ConnConfig.Database, cfg.ConnConfig.User)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("pgstore: connecting to PostgreSQL at %s: %w", where, err)
	}
	pingCtx, cancel := context.WithTimeout(ctx, cfg.ConnConfig.ConnectTimeout+time.Second)
	err = pool.Ping(pingCtx)
	cancel()
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("pgstore: cannot reach PostgreSQL at %s: %w", where, err)
	}
	db := stdlib.OpenDBFromPool(pool)
	err = Migrate(ctx, db, logger)
	db.Close()
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("pgstore: migrating the database at %s: %w", where, err)
	}
	closed, closeFn := context.WithCancel(context.Background())
	s := &Store{pool: pool, log: logger, closed: closed, close: closeFn}
	s.listPublishers = s.Publishers
	return s, nil
}

// Migrations returns the embedded migration files, for tools that build
// template databases from them.
func Migrations() fs.FS {
	sub, err := fs.Sub(migrations, "migrations")
	if err != nil {
		panic(err) // the embed pattern guarantees the directory
	}
	return sub
}

// Migrate applies every pending migration to db. A Postgres advisory lock
// held for the duration makes replicas starting together migrate once.
//
// Features are built in parallel, each numbering its migrations in its
// own range, and land in whatever order they are finished: a database
// migrated before a feature with a lower number arrived (00040 media buys
// after 00050 and 00060) still applies it, so out-of-order migrations are
// allowed. Each one touches only its own tables and columns.
func Migrate(ctx context.Context, db *sql.DB, logger *slog.Logger) error {
	locker, err := lock.NewPostgresSessionLocker()
	if err != nil {
		return err
	}
	p, err := goose.NewProvider(goose.DialectPostgres, db, Migrations(),
		goose.WithSessionLocker(locker), goose.WithDisableGlobalRegistry(true), goose.WithAllowOutofOrder(true))
	if err != nil {
		return err
	}
	results, err := p.Up(ctx)
	if err != nil {
		return err
	}
	for _, r := range results {
		if logger != nil {
			logger.Info("applied database migration", "version", r.Source.Version, "file", r.Source.Path, "took", r.Duration)
		}
	}
	return nil
}

// Pool is the store's connection pool. Tests use it to reach under the
// Store interface, for example to alter a ledger row.
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

// Close stops every Changes listener and closes the pool.
func (s *Store) Close() error {
	s.mu.Lock()
	if s.isClosed {
		s.mu.Unlock()
		return nil
	}
	s.isClosed = true
	s.mu.Unlock()
	s.close()
	s.listeners.Wait()
	s.pool.Close()
	return nil
}

// notify queues a change notice for publisher. Postgres delivers it when,
// and only if, tx commits.
func notify(ctx context.Context, tx pgx.Tx, publisher string) error {
	_, err := tx.Exec(ctx, `SELECT pg_notify($1, $2)`, changesChannel, publisher)
	return err
}

// publisherExists tells a missing publisher (ErrNotFound) apart from a
// query that matched nothing for an existing one.
func publisherExists(ctx context.Context, q querier, publisher string) (bool, error) {
	var ok bool
	err := q.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM publishers WHERE id = $1)`, publisher).Scan(&ok)
	return ok, err
}

// requirePublisher returns ErrNotFound unless publisher exists.
// listScoped runs a query that lists one publisher's rows. An empty list
// is told apart from an unknown publisher, which is ErrNotFound.
func listScoped[T any](ctx context.Context, s *Store, publisher string, scan pgx.RowToFunc[T], q string, args ...any) ([]T, error) {
	rows, err := s.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	out, err := pgx.CollectRows(rows, scan)
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		if err := requirePublisher(ctx, s.pool, publisher); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func requirePublisher(ctx context.Context, q querier, publisher string) error {
	ok, err := publisherExists(ctx, q, publisher)
	if err != nil {
		return err
	}
	if !ok {
		return store.ErrNotFound
	}
	return nil
}

// querier is what both the pool and a transaction offer.
type querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

func (s *Store) Publishers(ctx context.Context) (_ []products.Publisher, err error) {
	defer wrap(&err, "Publishers()")
	rows, err := s.pool.Query(ctx, `SELECT id, settings FROM publishers ORDER BY position`)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, scanPublisher)
}

func scanPublisher(row pgx.CollectableRow) (products.Publisher, error) {
	var (
		id       string
		settings []byte
		p        products.Publisher
	)
	if err := row.Scan(&id, &settings); err != nil {
		return p, err
	}
	if err := json.Unmarshal(settings, &p); err != nil {
		return p, fmt.Errorf("publisher %s: decoding settings: %w", id, err)
	}
	p.ID = id
	return p, nil
}

func (s *Store) Publisher(ctx context.Context, id string) (_ products.Publisher, err error) {
	if store.Unkeepable(id) {
		return products.Publisher{}, store.ErrNotFound
	}
	defer wrap(&err, "Publisher(%q)", id)
	rows, err := s.pool.Query(ctx, `SELECT id, settings FROM publishers WHERE id = $1`, id)
	if err != nil {
		return products.Publisher{}, err
	}
	return pgx.CollectExactlyOneRow(rows, scanPublisher)
}

// PutPublisher creates the publisher with an empty chain head, or replaces
// its settings; either way it tells every replica.
func (s *Store) PutPublisher(ctx context.Context, p products.Publisher) (err error) {
	if err := store.CheckPublisher(p); err != nil {
		return err
	}
	defer wrap(&err, "PutPublisher(%q)", p.ID)
	settings, err := json.Marshal(p)
	if err != nil {
		return err
	}
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `
			INSERT INTO publishers (id, settings, created_at) VALUES ($1, $2, $3)
			ON CONFLICT (id) DO UPDATE SET settings = EXCLUDED.settings`, p.ID, settings, s.now().UTC()); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO ledger_heads (publisher_id) VALUES ($1) ON CONFLICT DO NOTHING`, p.ID); err != nil {
			return err
		}
		return notify(ctx, tx, p.ID)
	})
}

func (s *Store) Versions(ctx context.Context, publisher string) (_ store.Versions, err error) {
	defer wrap(&err, "Versions(%q)", publisher)
	var v store.Versions
	err = s.pool.QueryRow(ctx, `SELECT catalogue_version, rulebook_version FROM publishers WHERE id = $1`, publisher).
		Scan(&v.Catalogue, &v.Rulebook)
	return v, err
}

// Catalogue reads the products and the version in one statement (see
// WalkCatalogue), so they come from one snapshot of the database.
func (s *Store) Catalogue(ctx context.Context, publisher string) (_ []products.Product, _ int64, err error) {
	defer wrap(&err, "Catalogue(%q)", publisher)
	out := []products.Product{}
	v, err := s.walkCatalogue(ctx, publisher, func(p products.Product) error {
		out = append(out, p)
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	return out, v, nil
}

// bumpCatalogue is the catalogue's If-Match: one conditional UPDATE that
// advances the version only if it still equals ifMatch (0: any). The row
// lock it takes serialises catalogue edits until the transaction ends, and
// a writer that waited re-checks the condition against the committed
// version, so two writers holding the same version cannot both succeed.
func bumpCatalogue(ctx context.Context, tx pgx.Tx, publisher string, ifMatch int64) (int64, error) {
	var v int64
	err := tx.QueryRow(ctx, `
		UPDATE publishers SET catalogue_version = catalogue_version + 1
		WHERE id = $1 AND ($2::bigint = 0 OR catalogue_version = $2)
		RETURNING catalogue_version`, publisher, ifMatch).Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, conflictOrMissing(ctx, tx, publisher)
	}
	return v, err
}

// conflictOrMissing explains a compare-and-set that matched no row.
func conflictOrMissing(ctx context.Context, q querier, publisher string) error {
	if err := requirePublisher(ctx, q, publisher); err != nil {
		return err
	}
	return store.ErrConflict
}

func (s *Store) PutProduct(ctx context.Context, publisher string, p products.Product, ifMatch int64) (_ int64, err error) {
	defer wrap(&err, "PutProduct(%q, %q, %d)", publisher, p.ProductID, ifMatch)
	v, err := s.editCatalogue(ctx, publisher, store.CatalogueEdit{Put: []products.Product{p}, IfMatch: ifMatch})
	return v.Version, err
}

// PutProducts implements store.BulkCatalogue: one transaction, one version
// and one notification.
func (s *Store) PutProducts(ctx context.Context, publisher string, ps []products.Product, ifMatch int64) (_ int64, err error) {
	defer wrap(&err, "PutProducts(%q, %d products, %d)", publisher, len(ps), ifMatch)
	v, err := s.editCatalogue(ctx, publisher, store.CatalogueEdit{Put: ps, IfMatch: ifMatch})
	return v.Version, err
}

func (s *Store) DeleteProduct(ctx context.Context, publisher, productID string, ifMatch int64) (_ int64, err error) {
	defer wrap(&err, "DeleteProduct(%q, %q, %d)", publisher, productID, ifMatch)
	v, err := s.editCatalogue(ctx, publisher, store.CatalogueEdit{Delete: []string{productID}, IfMatch: ifMatch})
	return v.Version, err
}

const rulebookColumns = `version, rulebook, author, note, created_at`

func scanRulebook(row pgx.CollectableRow) (store.RulebookVersion, error) {
	var (
		v    store.RulebookVersion
		body []byte
	)
	if err := row.Scan(&v.Version, &body, &v.Author, &v.Note, &v.CreatedAt); err != nil {
		return v, err
	}
	if err := json.Unmarshal(body, &v.Rulebook); err != nil {
		return v, fmt.Errorf("decoding rulebook version %d: %w", v.Version, err)
	}
	v.CreatedAt = v.CreatedAt.UTC()
	return v, nil
}

func (s *Store) Rulebook(ctx context.Context, publisher string) (_ store.RulebookVersion, err error) {
	defer wrap(&err, "Rulebook(%q)", publisher)
	// The publisher row names the current version: reading through it
	// agrees with Versions even while a save is committing.
	rows, err := s.pool.Query(ctx, `
		SELECT `+rulebookColumns+` FROM rulebook_versions
		WHERE publisher_id = $1 AND version = (SELECT rulebook_version FROM publishers WHERE id = $1)`, publisher)
	if err != nil {
		return store.RulebookVersion{}, err
	}
	return pgx.CollectExactlyOneRow(rows, scanRulebook)
}

func (s *Store) RulebookAt(ctx context.Context, publisher string, version int64) (_ store.RulebookVersion, err error) {
	defer wrap(&err, "RulebookAt(%q, %d)", publisher, version)
	rows, err := s.pool.Query(ctx, `SELECT `+rulebookColumns+` FROM rulebook_versions WHERE publisher_id = $1 AND version = $2`,
		publisher, version)
	if err != nil {
		return store.RulebookVersion{}, err
	}
	return pgx.CollectExactlyOneRow(rows, scanRulebook)
}

func (s *Store) RulebookHistory(ctx context.Context, publisher string) (_ []store.RulebookVersion, err error) {
	defer wrap(&err, "RulebookHistory(%q)", publisher)
	return listScoped(ctx, s, publisher, scanRulebook,
		`SELECT `+rulebookColumns+` FROM rulebook_versions WHERE publisher_id = $1 ORDER BY version DESC`, publisher)
}

// SaveRulebook advances the publisher's rulebook version by compare-and-set
// (as bumpCatalogue does) and inserts the new version in the same
// transaction: on a conflict nothing is written.
func (s *Store) SaveRulebook(ctx context.Context, publisher string, rb merch.Rulebook, ifMatch int64, author, note string) (_ store.RulebookVersion, err error) {
	if err := errors.Join(store.CheckChange(author, note), store.CheckStored(rb)); err != nil {
		return store.RulebookVersion{}, err
	}
	defer wrap(&err, "SaveRulebook(%q, ifMatch=%d)", publisher, ifMatch)
	body, err := json.Marshal(rb)
	if err != nil {
		return store.RulebookVersion{}, err
	}
	out := store.RulebookVersion{Author: author, Note: note}
	// The caller keeps rb; the result is decoded afresh so the two never
	// share maps or slices, as with every read.
	if err := json.Unmarshal(body, &out.Rulebook); err != nil {
		return store.RulebookVersion{}, err
	}
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		err := tx.QueryRow(ctx, `
			UPDATE publishers SET rulebook_version = rulebook_version + 1
			WHERE id = $1 AND rulebook_version = $2
			RETURNING rulebook_version`, publisher, ifMatch).Scan(&out.Version)
		if errors.Is(err, pgx.ErrNoRows) {
			return conflictOrMissing(ctx, tx, publisher)
		}
		if err != nil {
			return err
		}
		if err := tx.QueryRow(ctx, `
			INSERT INTO rulebook_versions (publisher_id, version, rulebook, author, note, created_at)
			VALUES ($1, $2, $3, $4, $5, $6)
			RETURNING created_at`, publisher, out.Version, body, author, note, s.now().UTC()).Scan(&out.CreatedAt); err != nil {
			return err
		}
		return notify(ctx, tx, publisher)
	})
	if err != nil {
		return store.RulebookVersion{}, err
	}
	out.CreatedAt = out.CreatedAt.UTC()
	return out, nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)
}

// SetClock replaces the store's clock: every time it stamps (ledger
// entries, versions, tasks, accounts, idempotency records, seeds) and the
// leases it judges (idempotency reservations, directive claims) come from
// now, never from the database's clock. Without it the store reads the
// machine's clock.
func (s *Store) SetClock(now func() time.Time) { s.clock = now }

func (s *Store) now() time.Time { return clock.Read(s.clock) }

// ObserveBatches makes the store tell fn the size and the duration of each
// ledger batch it commits (for metrics). Call it before the store is used.
func (s *Store) ObserveBatches(fn func(entries int, took time.Duration)) { s.onBatch = fn }
