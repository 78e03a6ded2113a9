package pgstore_test

import (
	"database/sql"
	"errors"
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/pressly/goose/v3"

	"github.com/storefront/storefront/store"
	"github.com/storefront/storefront/store/pgstore"
	"github.com/storefront/storefront/store/pgstore/pgtest"
)

// migrator opens the database at url and a goose provider over the
// embedded migrations, for tests that move its schema up and down.
func migrator(t *testing.T, url string) (*sql.DB, *goose.Provider) {
	t.Helper()
	db, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	p, err := goose.NewProvider(goose.DialectPostgres, db, pgstore.Migrations(), goose.WithDisableGlobalRegistry(true))
	if err != nil {
		t.Fatal(err)
	}
	return db, p
}

// migratedDownTo makes a fresh database and migrates it down to version,
// returning its URL, the database and the provider.
func migratedDownTo(t *testing.T, version int64) (string, *sql.DB, *goose.Provider) {
	t.Helper()
	url := pgtest.NewDatabase(t)
	db, p := migrator(t, url)
	if _, err := p.DownTo(t.Context(), version); err != nil {
		t.Fatalf("migrating down to %d: %v", version, err)
	}
	return url, db, p
}

// TestTokensMigration: tokens made before 00060 keep working after it,
// with their kind, publisher, name, scope and creation time, and fresh
// ids; a secret stored as both an admin and a buyer token stays an admin
// token only. Migrating down carries back the tokens still usable, and
// never a revoked one.
func TestTokensMigration(t *testing.T) {
	url, db, p := migratedDownTo(t, 2)
	ctx := t.Context()
	adminD, buyerD, bothD := store.TokenDigest("sf_admin_old"), store.TokenDigest("sf_buyer_old"), store.TokenDigest("both")
	created := time.Date(2025, 6, 1, 8, 30, 0, 0, time.UTC)
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{`INSERT INTO publishers (id, settings) VALUES ('alpha', '{"name":"Alpha Media","domain":"alpha.example"}')`, nil},
		{`INSERT INTO admin_tokens (digest, publisher_id, name, created_at) VALUES ($1, 'alpha', 'ops', $2)`, []any{adminD, created}},
		{`INSERT INTO admin_tokens (digest, publisher_id, name, created_at) VALUES ($1, 'alpha', 'both', $2)`, []any{bothD, created}},
		{`INSERT INTO buyer_tokens (publisher_id, digest, buyer_id, operator, accounts, created_at) VALUES ('alpha', $1, 'agency-1', 'agency.example', '{acct_1}', $2)`, []any{buyerD, created}},
		{`INSERT INTO buyer_tokens (publisher_id, digest, buyer_id, operator, created_at) VALUES ('alpha', $1, 'twice', 'agency.example', $2)`, []any{bothD, created}},
	} {
		if _, err := db.ExecContext(ctx, q.sql, q.args...); err != nil {
			t.Fatalf("%s: %v", q.sql, err)
		}
	}
	if _, err := p.Up(ctx); err != nil {
		t.Fatalf("migrating up: %v", err)
	}
	s := pgtest.OpenURL(t, url)
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	a, err := s.UseToken(ctx, store.AdminToken, "", adminD, at)
	if err != nil || a.Publisher != "alpha" || a.Name != "ops" || !a.CreatedAt.Equal(created) || a.Prefix != "" || len(a.ID) != 20 {
		t.Errorf("the old admin token after migrating = %+v, %v", a, err)
	}
	b, err := s.UseToken(ctx, store.BuyerToken, "alpha", buyerD, at)
	if err != nil || b.Buyer == nil || b.Buyer.ID != "agency-1" || b.Buyer.Operator != "agency.example" || len(b.Buyer.Accounts) != 1 || b.Name != "agency-1" {
		t.Errorf("the old buyer token after migrating = %+v, %v", b, err)
	}
	if a.ID == b.ID {
		t.Error("two migrated tokens share an id")
	}
	if _, err := s.UseToken(ctx, store.AdminToken, "", bothD, at); err != nil {
		t.Errorf("the secret stored as both kinds is not an admin token: %v", err)
	}
	if _, err := s.UseToken(ctx, store.BuyerToken, "alpha", bothD, at); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the secret stored as both kinds is still a buyer token: %v", err)
	}

	if _, err := s.RevokeToken(ctx, "alpha", a.ID, at); err != nil {
		t.Fatal(err)
	}
	if _, err := p.DownTo(ctx, 2); err != nil {
		t.Fatalf("migrating down again: %v", err)
	}
	var admins, buyers int
	if err := db.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM admin_tokens), (SELECT count(*) FROM buyer_tokens)`).Scan(&admins, &buyers); err != nil {
		t.Fatal(err)
	}
	if admins != 1 || buyers != 1 {
		t.Errorf("migrating down kept %d admin and %d buyer tokens, want the unrevoked admin token and the buyer token", admins, buyers)
	}
	if _, err := p.Up(ctx); err != nil {
		t.Fatalf("migrating up again: %v", err)
	}
}

// TestMigratesOutOfOrder: a database migrated before 00040 (media buys)
// arrived, while later numbers (00050, 00060) were already applied, gets
// 00040 at the next start, and the store then keeps buys in it.
func TestMigratesOutOfOrder(t *testing.T) {
	_, db, _ := migratedDownTo(t, 30)
	ctx := t.Context()
	without := fstest.MapFS{}
	err := fs.WalkDir(pgstore.Migrations(), ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasPrefix(path, "00040_") {
			return err
		}
		b, err := fs.ReadFile(pgstore.Migrations(), path)
		without[path] = &fstest.MapFile{Data: b}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	before, err := goose.NewProvider(goose.DialectPostgres, db, without, goose.WithDisableGlobalRegistry(true))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := before.Up(ctx); err != nil {
		t.Fatalf("migrating up without 00040: %v", err)
	}
	sources := before.ListSources()
	newest := sources[len(sources)-1].Version
	if v, err := before.GetDBVersion(ctx); err != nil || v != newest || newest < 60 {
		t.Fatalf("the database before media buys is at version %d, %v; want the newest, %d (60 or later)", v, err, newest)
	}
	if err := pgstore.Migrate(ctx, db, nil); err != nil {
		t.Fatalf("migrating with 00040 added: %v", err)
	}
	var buys int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM media_buys`).Scan(&buys); err != nil {
		t.Fatalf("00040 was not applied: %v", err)
	}
	var tasks int
	if err := db.QueryRowContext(ctx, `SELECT count(task) FROM ledger_entries`).Scan(&tasks); err != nil {
		t.Fatalf("the ledger has no task column: %v", err)
	}
}
