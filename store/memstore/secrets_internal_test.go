package memstore

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/storefront/storefront/products"
	"github.com/storefront/storefront/store"
	"github.com/storefront/storefront/store/keyring"
)

// TestSecretsSealedInMemory reads what the in-memory store holds, beneath
// its interface: a webhook's token and credentials, a governance agent's
// credentials and a signing key's private half are there only sealed,
// under the store's own per-process key when none is set.
func TestSecretsSealedInMemory(t *testing.T) {
	ctx := t.Context()
	s := New()
	if err := s.PutPublisher(ctx, products.Publisher{ID: "alpha", Name: "Alpha", Domain: "alpha.example"}); err != nil {
		t.Fatal(err)
	}
	const (
		token       = "push-token-IN-PLAINTEXT-0123"
		credentials = "webhook-credentials-IN-PLAINTEXT-0123456789"
		governance  = "governance-credentials-IN-PLAINTEXT-012345"
	)
	private := bytes.Repeat([]byte{0xAB}, 32)
	owner := store.TaskOwner{Account: "acct_1", Principal: "buyer"}
	if err := s.CreateTask(ctx, "alpha", store.Task{ID: "t1", Owner: owner, Type: "get_products", Status: "submitted",
		Webhook: &store.Webhook{URL: "https://buyer.example/h", OperationID: "op", Token: token, Scheme: "Bearer", Credentials: credentials}}); err != nil {
		t.Fatal(err)
	}
	if err := s.PutGovernanceAgents(ctx, "alpha", []store.GovernanceAgent{{Account: "acct_1", URL: "https://gov.example/mcp",
		Scheme: "Bearer", Credentials: governance, UpdatedAt: time.Date(2031, 1, 2, 3, 4, 5, 0, time.UTC)}}); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateSigningKey(ctx, "alpha", store.SigningKey{KID: "k1", Public: make([]byte, 32), Private: private,
		CreatedAt: time.Date(2031, 1, 2, 3, 4, 5, 0, time.UTC)}); err != nil {
		t.Fatal(err)
	}

	s.mu.Lock()
	held, err := json.Marshal(struct {
		Tasks      map[string]store.Task
		Governance map[string]store.GovernanceAgent
		Keys       []store.SigningKey
	}{s.extras["alpha"].tasks, s.extras["alpha"].buying.governance, s.pubs["alpha"].signingKeys})
	private64, _ := json.Marshal(private)
	kid := s.keys.Current()
	sealedPrivate := keyring.Sealed(s.pubs["alpha"].signingKeys[0].Private)
	s.mu.Unlock()
	if !sealedPrivate {
		t.Error("the signing key's private half is not held sealed")
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, plain := range [][]byte{[]byte(token), []byte(credentials), []byte(governance), bytes.Trim(private64, `"`)} {
		if bytes.Contains(held, plain) {
			t.Errorf("the store holds %s in plaintext:\n%s", plain, held)
		}
	}
	if n := bytes.Count(held, []byte(keyring.Prefix+kid+":")); n != 3 {
		// The private key's sealed bytes are held base64-encoded in JSON,
		// so its prefix is not counted here.
		t.Errorf("%d values sealed under the store's key %s, want 3 (token, credentials, governance):\n%s", n, kid, held)
	}

	// And the interface hands back the plaintext.
	task, err := s.Task(ctx, "alpha", owner, "t1")
	if err != nil || task.Webhook.Token != token || task.Webhook.Credentials != credentials {
		t.Errorf("Task = %+v, %v; want the webhook's secrets opened", task.Webhook, err)
	}
}
