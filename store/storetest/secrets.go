package storetest

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/storefront/storefront/store"
	"github.com/storefront/storefront/store/keyring"
)

// The secrets of a store's secret tests, one of each kind.
var (
	secretHook = store.Webhook{URL: "https://buyer.example/hooks/s", OperationID: "op-s",
		Token: "push-token-0123456789abcdef", Scheme: "HMAC-SHA256", Credentials: "whsec-0123456789abcdef0123456789abcdef"}
	secretAgent = store.GovernanceAgent{Account: "acct_1", URL: "https://gov.example/mcp", Scheme: "Bearer",
		Credentials: "gov-token-0123456789abcdef0123456789", RegisteredBy: "buyer", UpdatedAt: at(2)}
)

func secrets(t *testing.T, s store.Store) store.Secrets {
	t.Helper()
	sec, ok := s.(store.Secrets)
	if !ok {
		t.Fatalf("%T does not implement store.Secrets: every store keeps its secrets sealed", s)
	}
	return sec
}

func newKeyring(t *testing.T, keys ...keyring.Key) *keyring.Keyring {
	t.Helper()
	k, err := keyring.New(keys...)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func newKey(t *testing.T, id string) keyring.Key {
	t.Helper()
	k, err := keyring.Generate(id)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// readSecrets reads back every secret testSecrets stored: the task's
// webhook by each read, the governance agent and the signing key. It
// returns the first error.
func readSecrets(t *testing.T, s store.Store) (store.Webhook, store.GovernanceAgent, store.SigningKey, error) {
	t.Helper()
	ctx := t.Context()
	task, err := s.Task(ctx, alpha.ID, owner, "secret-task")
	if err != nil {
		return store.Webhook{}, store.GovernanceAgent{}, store.SigningKey{}, fmt.Errorf("Task: %w", err)
	}
	if list, _, err := s.ListTasks(ctx, alpha.ID, owner, store.TaskFilter{IDs: []string{"secret-task"}}); err != nil {
		return store.Webhook{}, store.GovernanceAgent{}, store.SigningKey{}, fmt.Errorf("ListTasks: %w", err)
	} else if len(list) != 1 || !cmp.Equal(list[0].Webhook, task.Webhook) {
		t.Errorf("ListTasks gives the webhook %+v, Task %+v", list, task.Webhook)
	}
	if ps, err := s.PrincipalTasks(ctx, alpha.ID, owner.Principal, "secret-task"); err != nil {
		return store.Webhook{}, store.GovernanceAgent{}, store.SigningKey{}, fmt.Errorf("PrincipalTasks: %w", err)
	} else if len(ps) != 1 || !cmp.Equal(ps[0].Webhook, task.Webhook) {
		t.Errorf("PrincipalTasks gives the webhook %+v, Task %+v", ps, task.Webhook)
	}
	g, err := s.GovernanceAgent(ctx, alpha.ID, secretAgent.Account)
	if err != nil {
		return store.Webhook{}, store.GovernanceAgent{}, store.SigningKey{}, fmt.Errorf("GovernanceAgent: %w", err)
	}
	ks, err := s.SigningKeys(ctx, alpha.ID)
	if err != nil || len(ks) != 1 {
		return store.Webhook{}, store.GovernanceAgent{}, store.SigningKey{}, fmt.Errorf("SigningKeys = %d keys: %w", len(ks), err)
	}
	return *task.Webhook, g, ks[0], nil
}

// wantSecrets fails unless the secrets read back are those stored.
func wantSecrets(t *testing.T, when string, s store.Store) {
	t.Helper()
	w, g, k, err := readSecrets(t, s)
	if err != nil {
		t.Fatalf("%s: %v", when, err)
	}
	if w != secretHook {
		t.Errorf("%s: the task's webhook = %+v, want %+v", when, w, secretHook)
	}
	if g.Credentials != secretAgent.Credentials {
		t.Errorf("%s: the governance agent's credentials = %q, want %q", when, g.Credentials, secretAgent.Credentials)
	}
	if want := signingKey("k-secret", 1); !bytes.Equal(k.Private, want.Private) {
		t.Errorf("%s: the signing key's private half = %x, want %x", when, k.Private, want.Private)
	}
}

func wantCounts(t *testing.T, when string, sec store.Secrets, want map[string]int) {
	t.Helper()
	got, err := sec.CountSecrets(t.Context())
	wantErr(t, when+": CountSecrets", err, nil)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("%s: CountSecrets (-want +got):\n%s", when, diff)
	}
}

// testSecrets: a task webhook's token and credentials, a governance
// agent's credentials and a signing key's private half are handed back as
// stored, under a keyring that holds the key that sealed them: after a
// rotation (the newest key seals, the older still opens), after a reseal
// under the newest key, and once the older key is gone. A keyring without
// their key fails every read of them, saying so, and a reseal rewrites
// nothing; without a keyring no secret is stored.
func testSecrets(t *testing.T, s store.Store) {
	ctx := t.Context()
	withPublishers(t, s)
	sec := secrets(t, s)
	k1, k2 := newKey(t, "k1"), newKey(t, "k2")
	sec.SetKeyring(newKeyring(t, k1))

	task := newTask("secret-task", owner, "get_products", "submitted", true)
	task.Webhook = &store.Webhook{}
	*task.Webhook = secretHook
	createTask(t, s, alpha.ID, task)
	wantErr(t, "PutGovernanceAgents", s.PutGovernanceAgents(ctx, alpha.ID, []store.GovernanceAgent{secretAgent}), nil)
	wantErr(t, "CreateSigningKey", s.CreateSigningKey(ctx, alpha.ID, signingKey("k-secret", 1)), nil)
	wantSecrets(t, "under the key that sealed them", s)
	wantCounts(t, "under k1", sec, map[string]int{"k1": 4})

	// Rotation: k2 seals from now on, k1 still opens.
	sec.SetKeyring(newKeyring(t, k2, k1))
	wantSecrets(t, "after adding a newer key", s)
	later := newTask("later-task", owner, "get_products", "submitted", true)
	later.Webhook.Credentials = "whsec-later-0123456789abcdef0123456789"
	createTask(t, s, alpha.ID, later)
	wantCounts(t, "after a write under k2", sec, map[string]int{"k1": 4, "k2": 1})
	if n, err := sec.ResealSecrets(ctx, store.ResealPlaintext); err != nil || n != 0 {
		t.Errorf("ResealSecrets(plaintext) = %d, %v; want 0: none is in plaintext", n, err)
	}
	wantCounts(t, "after resealing plaintext", sec, map[string]int{"k1": 4, "k2": 1})
	n, err := sec.ResealSecrets(ctx, store.ResealAll)
	wantErr(t, "ResealSecrets(all)", err, nil)
	if n != 4 {
		t.Errorf("ResealSecrets(all) = %d, want 4 (those under k1)", n)
	}
	wantCounts(t, "after the reseal", sec, map[string]int{"k2": 5})
	if n, err := sec.ResealSecrets(ctx, store.ResealAll); err != nil || n != 0 {
		t.Errorf("ResealSecrets(all) again = %d, %v; want 0: all are under the newest key", n, err)
	}
	sec.SetKeyring(newKeyring(t, k2))
	wantSecrets(t, "once the older key is gone", s)

	// Fail closed: a keyring without their key, or with a key of the
	// right name and the wrong secret, opens none of them.
	wrongSecret := newKey(t, "k2")
	for _, test := range []struct {
		name string
		ring *keyring.Keyring
		want error
	}{
		{"another key", newKeyring(t, newKey(t, "k3")), keyring.ErrUnknownKey},
		{"k2's name with another secret", newKeyring(t, wrongSecret), keyring.ErrCorrupt},
		{"no keyring", nil, keyring.ErrNoKey},
	} {
		sec.SetKeyring(test.ring)
		ctx := t.Context()
		_, err := s.Task(ctx, alpha.ID, owner, "secret-task")
		wantErr(t, test.name+": Task", err, test.want)
		_, _, err = s.ListTasks(ctx, alpha.ID, owner, store.TaskFilter{})
		wantErr(t, test.name+": ListTasks", err, test.want)
		_, err = s.GovernanceAgent(ctx, alpha.ID, secretAgent.Account)
		wantErr(t, test.name+": GovernanceAgent", err, test.want)
		_, err = s.SigningKeys(ctx, alpha.ID)
		wantErr(t, test.name+": SigningKeys", err, test.want)
		if _, err := sec.ResealSecrets(ctx, store.ResealAll); !errors.Is(err, test.want) {
			t.Errorf("%s: ResealSecrets = %v, want %v", test.name, err, test.want)
		}
	}
	sec.SetKeyring(newKeyring(t, k2))
	wantSecrets(t, "after the failed reseals", s)

	// Without a keyring no secret is stored; what has none is.
	sec.SetKeyring(nil)
	refused := newTask("refused-task", owner, "get_products", "submitted", true)
	refused.Webhook.Credentials = "whsec-refused-0123456789abcdef012345"
	wantErr(t, "CreateTask(credentials, no keyring)", s.CreateTask(ctx, alpha.ID, refused), keyring.ErrNoKey)
	wantErr(t, "PutGovernanceAgents(no keyring)", s.PutGovernanceAgents(ctx, beta.ID, []store.GovernanceAgent{secretAgent}), keyring.ErrNoKey)
	wantErr(t, "CreateSigningKey(no keyring)", s.CreateSigningKey(ctx, beta.ID, signingKey("k-beta", 1)), keyring.ErrNoKey)
	createTask(t, s, alpha.ID, newTask("plain-task", owner, "get_products", "submitted", true))
	sec.SetKeyring(newKeyring(t, k2))
	if _, err := s.Task(ctx, alpha.ID, owner, "refused-task"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Task(refused-task) = %v, want ErrNotFound: nothing of it was stored", err)
	}
	if _, err := s.GovernanceAgent(ctx, beta.ID, secretAgent.Account); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("GovernanceAgent(beta) = %v, want ErrNotFound: nothing was stored", err)
	}
}
