package pgstore_test

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/storefront/storefront/store"
	"github.com/storefront/storefront/store/keyring"
	"github.com/storefront/storefront/store/pgstore"
	"github.com/storefront/storefront/store/pgstore/pgtest"
)

// Secrets in plaintext, to look for in raw rows.
const (
	rawToken       = "push-token-IN-PLAINTEXT-0123"
	rawCredentials = "webhook-credentials-IN-PLAINTEXT-0123456789"
	rawGovernance  = "governance-credentials-IN-PLAINTEXT-012345"
)

var rawPrivate = bytes.Repeat([]byte{0xAB}, 32)

// rawSecrets reads, beneath the store, the stored webhook document of task
// id, the credentials of acct_1's governance agent and the private half of
// signing key kid.
func rawSecrets(t *testing.T, s *pgstore.Store, id, kid string) (hook, governance string, private []byte) {
	t.Helper()
	if err := s.Pool().QueryRow(t.Context(), `SELECT
		(SELECT webhook::text FROM tasks WHERE id = $1),
		(SELECT credentials FROM governance_agents WHERE account_id = 'acct_1'),
		(SELECT private_key FROM signing_keys WHERE kid = $2)`, id, kid).Scan(&hook, &governance, &private); err != nil {
		t.Fatal(err)
	}
	return hook, governance, private
}

// TestSecretsSealedAtRest reads the rows PostgreSQL holds: a task
// webhook's token and credentials, a governance agent's credentials and a
// signing key's private half are there only sealed, under the store's key,
// and neither the task's kept request nor anything else holds them in
// plaintext; through the store they read back as they were given.
func TestSecretsSealedAtRest(t *testing.T) {
	s := pgtest.Open(t)
	ctx := t.Context()
	putPublishers(t, s, alpha)
	owner := store.TaskOwner{Account: "acct_1", Principal: "buyer"}
	webhook := store.Webhook{URL: "https://buyer.example/h", OperationID: "op", Token: rawToken, Scheme: "Bearer", Credentials: rawCredentials}
	if err := s.CreateTask(ctx, alpha.ID, store.Task{ID: "t1", Owner: owner, Type: "get_products", Status: "submitted", Webhook: &webhook}); err != nil {
		t.Fatal(err)
	}
	if err := s.PutGovernanceAgents(ctx, alpha.ID, []store.GovernanceAgent{{Account: "acct_1", URL: "https://gov.example/mcp",
		Scheme: "Bearer", Credentials: rawGovernance, UpdatedAt: time.Date(2031, 1, 2, 3, 4, 5, 0, time.UTC)}}); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateSigningKey(ctx, alpha.ID, store.SigningKey{KID: "k1", Public: make([]byte, 32), Private: rawPrivate,
		CreatedAt: time.Date(2031, 1, 2, 3, 4, 5, 0, time.UTC)}); err != nil {
		t.Fatal(err)
	}

	hook, governance, private := rawSecrets(t, s, "t1", "k1")
	for _, raw := range []string{hook, governance, string(private)} {
		for _, plain := range []string{rawToken, rawCredentials, rawGovernance, string(rawPrivate)} {
			if bytes.Contains([]byte(raw), []byte(plain)) {
				t.Errorf("a row holds %q in plaintext: %s", plain, raw)
			}
		}
	}
	if n := bytes.Count([]byte(hook+governance+string(private)), []byte(keyring.Prefix+pgtest.Key.ID+":")); n != 4 {
		t.Errorf("%d values sealed under %s in the rows, want 4:\n%s\n%s\n%s", n, pgtest.Key.ID, hook, governance, private)
	}
	// The whole database, dumped as text, holds none of them either.
	var dump string
	if err := s.Pool().QueryRow(ctx, `SELECT string_agg(t::text, E'\n') FROM (
		SELECT row_to_json(x)::text AS t FROM tasks x UNION ALL
		SELECT row_to_json(x)::text FROM governance_agents x UNION ALL
		SELECT row_to_json(x)::text FROM signing_keys x) rows`).Scan(&dump); err != nil {
		t.Fatal(err)
	}
	for _, plain := range []string{rawToken, rawCredentials, rawGovernance, `\\xabababab`} {
		if bytes.Contains([]byte(dump), []byte(plain)) {
			t.Errorf("the tables hold %q in plaintext", plain)
		}
	}

	task, err := s.Task(ctx, alpha.ID, owner, "t1")
	if err != nil || *task.Webhook != webhook {
		t.Errorf("Task = %+v, %v; want the webhook as given", task.Webhook, err)
	}
}

// TestPlaintextSecretsSealed: secrets an earlier release stored in
// plaintext read back as they are, are counted as plaintext, and a reseal
// seals them in their rows; a store without a key cannot reseal.
func TestPlaintextSecretsSealed(t *testing.T) {
	url := pgtest.NewDatabase(t)
	s := pgtest.OpenURL(t, url)
	ctx := t.Context()
	putPublishers(t, s, alpha)
	for _, q := range []string{
		`INSERT INTO tasks (publisher_id, account, principal, id, type, status, webhook, created_at, updated_at)
			VALUES ('alpha', 'acct_1', 'buyer', 'old', 'get_products', 'submitted',
			'{"url":"https://buyer.example/h","operation_id":"op","scheme":"Bearer","credentials":"` + rawCredentials + `"}',
			'2030-01-01T00:00:00Z', '2030-01-01T00:00:00Z')`,
		`INSERT INTO governance_agents (publisher_id, account_id, url, scheme, credentials, registered_by, updated_at)
			VALUES ('alpha', 'acct_1', 'https://gov.example/mcp', 'Bearer', '` + rawGovernance + `', 'buyer', '2030-01-01T00:00:00Z')`,
	} {
		if _, err := s.Pool().Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Pool().Exec(ctx, `INSERT INTO signing_keys (publisher_id, kid, public_key, private_key, created_at)
		VALUES ('alpha', 'old-key', $1, $2, '2030-01-01T00:00:00Z')`, make([]byte, 32), rawPrivate); err != nil {
		t.Fatal(err)
	}
	owner := store.TaskOwner{Account: "acct_1", Principal: "buyer"}
	task, err := s.Task(ctx, alpha.ID, owner, "old")
	if err != nil || task.Webhook.Credentials != rawCredentials {
		t.Fatalf("Task(stored in plaintext) = %+v, %v", task.Webhook, err)
	}
	if counts, err := s.CountSecrets(ctx); err != nil || counts[""] != 3 || len(counts) != 1 {
		t.Errorf("CountSecrets = %v, %v; want 3 in plaintext", counts, err)
	}

	keyless := pgtest.OpenURL(t, url)
	keyless.SetKeyring(nil)
	if _, err := keyless.ResealSecrets(ctx, store.ResealPlaintext); !errors.Is(err, keyring.ErrNoKey) {
		t.Errorf("ResealSecrets without a key = %v, want ErrNoKey", err)
	}

	if n, err := s.ResealSecrets(ctx, store.ResealPlaintext); err != nil || n != 3 {
		t.Fatalf("ResealSecrets = %d, %v; want 3", n, err)
	}
	if counts, err := s.CountSecrets(ctx); err != nil || counts[pgtest.Key.ID] != 3 || len(counts) != 1 {
		t.Errorf("CountSecrets after the reseal = %v, %v; want 3 under %s", counts, err, pgtest.Key.ID)
	}
	hook, governance, private := rawSecrets(t, s, "old", "old-key")
	if bytes.Contains([]byte(hook), []byte(rawCredentials)) || governance == rawGovernance || bytes.Equal(private, rawPrivate) {
		t.Errorf("after the reseal the rows still hold plaintext: %s, %s, %x", hook, governance, private)
	}
	ks, err := s.SigningKeys(ctx, alpha.ID)
	if err != nil || len(ks) != 1 || !bytes.Equal(ks[0].Private, rawPrivate) {
		t.Errorf("SigningKeys after the reseal = %+v, %v; want the private half as it was", ks, err)
	}
}
