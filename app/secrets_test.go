package app_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/storefront/storefront/app"
	"github.com/storefront/storefront/internal/testenv"
	"github.com/storefront/storefront/store/keyring"
	"github.com/storefront/storefront/store/pgstore/pgtest"
)

// startErr runs serve with args and returns why it would not start ("" if
// it served).
func startErr(t *testing.T, args ...string) string {
	t.Helper()
	m := app.NewMain()
	var out bytes.Buffer
	m.Stdout, m.Stderr = &out, &out
	if err := m.ParseFlags(append([]string{"serve", "--addr", "127.0.0.1:0", "--log-level", "warn"}, args...)); err != nil {
		return err.Error()
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	select {
	case <-m.Ready:
		cancel()
		<-done
		_ = m.Close()
		return ""
	case err := <-done:
		cancel()
		_ = m.Close()
		if err == nil {
			t.Fatalf("serve %v exited without serving and without an error\n%s", args, out.String())
		}
		return err.Error()
	}
}

// privateKeyRow reads the northwind signing key's stored private half.
func privateKeyRow(t *testing.T, db string) []byte {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var private []byte
	if err := conn.QueryRow(context.Background(), `SELECT private_key FROM signing_keys WHERE publisher_id = 'northwind' AND retired_at IS NULL`).Scan(&private); err != nil {
		t.Fatal(err)
	}
	return private
}

// TestSecretKeysOnPostgres walks the key policy and a rotation through the
// real program: a database without secrets serves without a key; once a
// key sealed a signing key, the storefront refuses to start without it, or
// with only another key, saying which; a newer key listed first serves,
// `secrets rewrap` moves every secret to it, and then the old key can go,
// the published signing key unchanged.
func TestSecretKeysOnPostgres(t *testing.T) {
	db := pgtest.NewDatabase(t)
	old, newer := keyGen(t, "2026-01"), keyGen(t, "2026-07")
	oldFile, bothFile, newerFile := pgtest.KeysFile(t, old), pgtest.KeysFile(t, newer, old), pgtest.KeysFile(t, newer)

	// No secrets yet: it serves without a key, storing none.
	if err := startErr(t, "--database-url", db, "--seed-demo"); err != "" {
		t.Fatalf("serve without a key on a database without secrets: %s", err)
	}
	r := testenv.Start(t, "--database-url", db, "--secret-keys-file", oldFile)
	kids := jwksKids(t, r.BaseURL) // makes the publisher's signing key, sealed under old
	if id, ok := keyring.KeyID(privateKeyRow(t, db)); !ok || id != old.ID {
		t.Fatalf("the signing key is stored under %q (sealed %v), want sealed under %s", id, ok, old.ID)
	}
	_ = r.Main.Close()

	if err := startErr(t, "--database-url", db); !strings.Contains(err, "STOREFRONT_SECRET_KEYS") || !strings.Contains(err, "no secret key is configured") {
		t.Errorf("serve without a key on a database with secrets = %q, want a refusal naming STOREFRONT_SECRET_KEYS", err)
	}
	if err := startErr(t, "--database-url", db, "--secret-keys-file", newerFile); !strings.Contains(err, old.ID) || !strings.Contains(err, "do not include") {
		t.Errorf("serve with only another key = %q, want a refusal naming %s", err, old.ID)
	}
	if out, _, err := run(t, "secrets", "status", "--database-url", db, "--secret-keys-file", newerFile); err != nil || !strings.Contains(out, "1 secret(s) sealed under key "+old.ID+" (NOT configured") {
		t.Errorf("secrets status = %v\n%s", err, out)
	}

	// Rotation: the newer key first, the old one beside it.
	r = testenv.Start(t, "--database-url", db, "--secret-keys-file", bothFile)
	if got := jwksKids(t, r.BaseURL); strings.Join(got, ",") != strings.Join(kids, ",") {
		t.Errorf("after adding a key the publisher's keys are %v, want %v", got, kids)
	}
	_ = r.Main.Close()
	out, errOut, err := run(t, "secrets", "rewrap", "--database-url", db, "--secret-keys-file", bothFile)
	if err != nil || !strings.Contains(out, "resealed 1 secret(s) under key "+newer.ID) {
		t.Fatalf("secrets rewrap = %v\n%s%s", err, out, errOut)
	}
	if id, _ := keyring.KeyID(privateKeyRow(t, db)); id != newer.ID {
		t.Errorf("after rewrap the signing key is sealed under %q, want %s", id, newer.ID)
	}
	r = testenv.Start(t, "--database-url", db, "--secret-keys-file", newerFile)
	if got := jwksKids(t, r.BaseURL); strings.Join(got, ",") != strings.Join(kids, ",") {
		t.Errorf("with the old key dropped the publisher's keys are %v, want %v", got, kids)
	}

	if _, _, err := run(t, "secrets", "rewrap", "--database-url", db); err == nil || !strings.Contains(err.Error(), "STOREFRONT_SECRET_KEYS") {
		t.Errorf("secrets rewrap without a key = %v, want a refusal naming STOREFRONT_SECRET_KEYS", err)
	}
	if err := startErr(t, "--database-url", db, "--secret-keys-file", newerFile, "--secret-keys-file", "/no/such/file"); !strings.Contains(err, "/no/such/file") {
		t.Errorf("serve with a missing keys file = %q, want it named", err)
	}
}

// TestGenerateKey: the printed key is one the storefront accepts.
func TestGenerateKey(t *testing.T) {
	out, _, err := run(t, "secrets", "generate-key", "--id", "2026-07")
	if err != nil {
		t.Fatal(err)
	}
	keys, err := keyring.Parse(out)
	if err != nil || len(keys) != 1 || keys[0].ID != "2026-07" {
		t.Fatalf("generate-key printed %q: %v", out, err)
	}
	if _, err := keyring.New(keys...); err != nil {
		t.Errorf("the generated key is refused: %v", err)
	}
}

func keyGen(t *testing.T, id string) keyring.Key {
	t.Helper()
	k, err := keyring.Generate(id)
	if err != nil {
		t.Fatal(err)
	}
	return k
}
