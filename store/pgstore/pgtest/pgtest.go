// Package pgtest gives tests a fresh, migrated PostgreSQL database each:
// pgtestdb clones a template database that the embedded goose migrations
// built once, and drops the clone when the test passes.
//
// The server comes from STOREFRONT_TEST_DATABASE_URL, or else DATABASE_URL
// (for example postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable).
// Without one, or when it cannot be reached, tests skip, unless CI=true: a
// CI run without its database must fail, never pass by skipping.
package pgtest

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"github.com/storefront/storefront/internal/required"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver pgtestdb uses
	"github.com/peterldowns/pgtestdb"

	"github.com/storefront/storefront/store/keyring"
	"github.com/storefront/storefront/store/pgstore"
)

// EnvVars are the variables that name the test server, first found wins.
var EnvVars = []string{"STOREFRONT_TEST_DATABASE_URL", "DATABASE_URL"}

// Unavailable skips the test, or fails it under CI, where the database
// is required.
func Unavailable(t testing.TB, why string) {
	t.Helper()
	required.Missing(t, "PostgreSQL: %s", why)
}

var (
	probeOnce sync.Once
	probeURL  string
	probeErr  error
)

// serverURL returns the configured server, probing it once per test
// binary.
func serverURL(t testing.TB) string {
	t.Helper()
	probeOnce.Do(func() {
		for _, k := range EnvVars {
			if v := os.Getenv(k); v != "" {
				probeURL = v
				break
			}
		}
		if probeURL == "" {
			probeErr = fmt.Errorf("no database configured (set %s)", strings.Join(EnvVars, " or "))
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, probeURL)
		if err != nil {
			probeErr = fmt.Errorf("the test database is not reachable: %w", err)
			return
		}
		probeErr = conn.Close(ctx)
	})
	if probeErr != nil {
		Unavailable(t, probeErr.Error())
	}
	return probeURL
}

// ServerURL returns the configured test server's URL, for tests that make
// their own databases on it. It skips (or fails under CI=true) when there
// is none.
func ServerURL(t testing.TB) string {
	t.Helper()
	return serverURL(t)
}

// config turns the server URL into pgtestdb's terms.
func config(t testing.TB, raw string) pgtestdb.Config {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		t.Fatalf("the test database URL is not a postgres:// URL: %v", err)
	}
	port := u.Port()
	if port == "" {
		port = "5432"
	}
	password, _ := u.User.Password()
	return pgtestdb.Config{
		DriverName: "pgx",
		Host:       u.Hostname(),
		Port:       port,
		User:       u.User.Username(),
		Password:   password,
		Database:   strings.TrimPrefix(u.Path, "/"),
		Options:    u.RawQuery,
	}
}

// migrator builds pgtestdb's template with the migrations pgstore.Open
// runs, so tests see exactly the production schema.
type migrator struct{}

// Hash names the template after the migration files' contents: editing a
// migration builds a new template.
func (migrator) Hash() (string, error) {
	h := sha256.New()
	err := fs.WalkDir(pgstore.Migrations(), ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(pgstore.Migrations(), path)
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s\x00%d\x00", path, len(b))
		h.Write(b)
		return nil
	})
	return hex.EncodeToString(h.Sum(nil)), err
}

func (migrator) Migrate(ctx context.Context, db *sql.DB, _ pgtestdb.Config) error {
	return pgstore.Migrate(ctx, db, nil)
}

// NewDatabase returns the URL of a fresh database with the storefront's
// schema, dropped when t passes (kept for inspection when it fails).
func NewDatabase(t testing.TB) string {
	t.Helper()
	conf := config(t, serverURL(t))
	return pgtestdb.Custom(t, conf, migrator{}).URL()
}

// Open opens a pgstore.Store on a fresh database and closes it when t
// ends, before the database is dropped.
func Open(t testing.TB) *pgstore.Store {
	t.Helper()
	return OpenURL(t, NewDatabase(t))
}

// OpenURL opens another pgstore.Store on the database at databaseURL,
// closed when t ends, its secrets sealed with Key: two of them on one
// database act as two replicas.
func OpenURL(t testing.TB, databaseURL string) *pgstore.Store {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := pgstore.Open(ctx, databaseURL, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatalf("pgstore.Open: %v", err)
	}
	k, err := keyring.New(Key)
	if err != nil {
		t.Fatal(err)
	}
	s.SetKeyring(k)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// KeysFile writes keys (Key when none are given), newest first, to a
// file only its owner reads, for --secret-keys-file, and returns its path.
func KeysFile(t testing.TB, keys ...keyring.Key) string {
	t.Helper()
	if len(keys) == 0 {
		keys = []keyring.Key{Key}
	}
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(k.String() + "\n")
	}
	path := filepath.Join(t.TempDir(), "secret.keys")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// Key is the secret key test stores share, as replicas do: fixed, so
// that every store a test opens on one database reads what another
// sealed. It protects nothing.
var Key = keyring.Key{ID: "pgtest", Secret: []byte("pgtest-secret-key-32-bytes-long!")}

// Stores are the two stores an end-to-end test runs the real program on,
// each with the serve flags that select it: the embedded memory store, and
// PostgreSQL on a fresh database with the demo publisher seeded and the
// key that seals stored secrets (webhook and governance credentials,
// signing keys), as replicas share it.
var Stores = []struct {
	Name string
	Args func(t *testing.T) []string
}{
	{"memstore", func(*testing.T) []string { return nil }},
	{"postgres", func(t *testing.T) []string {
		return []string{"--database-url", NewDatabase(t), "--seed-demo", "--secret-keys-file", KeysFile(t)}
	}},
}
