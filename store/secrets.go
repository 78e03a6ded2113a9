package store

import (
	"context"
	"fmt"

	"github.com/storefront/storefront/store/keyring"
)

// Secrets is how a store keeps the secrets it holds sealed at rest (with
// keyring): a task webhook's token and credentials, a governance agent's
// credentials, and the private half of each signing key. Callers hand the
// store plaintext and get plaintext back; what the store keeps is sealed
// under the keyring's newest key, for the row and field it belongs to. A
// secret sealed under a key the keyring does not hold fails its read with
// keyring.ErrUnknownKey (and without a keyring, keyring.ErrNoKey): never
// a guess, never the sealed bytes. Both stores implement it.
type Secrets interface {
	// SetKeyring sets the keys secrets are sealed and opened with; nil
	// holds none, and then storing a secret fails with keyring.ErrNoKey.
	SetKeyring(k *keyring.Keyring)
	// CountSecrets counts the secrets stored, by the id of the key that
	// sealed them; "" counts those an earlier release kept in plaintext.
	CountSecrets(ctx context.Context) (map[string]int, error)
	// ResealSecrets seals the stored secrets what names under the
	// keyring's newest key. It returns how many it rewrote, and rewrites
	// nothing when one cannot be opened.
	ResealSecrets(ctx context.Context, what Reseal) (int, error)
}

// Reseal names the secrets ResealSecrets seals again.
type Reseal int

const (
	// ResealPlaintext seals those an earlier release kept in plaintext,
	// and leaves sealed ones under the key that sealed them: what a
	// replica does at start, when others may not hold its newest key yet.
	ResealPlaintext Reseal = iota
	// ResealAll also moves those sealed under an older key to the newest
	// (storefront secrets rewrap), checking that every one opens.
	ResealAll
)

// Reseals reports whether what reseals a stored value v.
func (what Reseal) Reseals(v []byte) bool { return what == ResealAll || !keyring.Sealed(v) }

// The contexts secrets are sealed for: the row and field each belongs to,
// so that a sealed value moved to another row does not open there.

// WebhookSecretContext is the context of a task webhook's field ("token"
// or "credentials").
func WebhookSecretContext(publisher string, owner TaskOwner, taskID, field string) string {
	return fmt.Sprintf("task-webhook\x00%s\x00%s\x00%s\x00%s\x00%s", publisher, owner.Account, owner.Principal, taskID, field)
}

// GovernanceSecretContext is the context of a governance agent's
// credentials.
func GovernanceSecretContext(publisher, account string) string {
	return fmt.Sprintf("governance-agent\x00%s\x00%s\x00credentials", publisher, account)
}

// SigningSecretContext is the context of a signing key's private half.
func SigningSecretContext(publisher, kid string) string {
	return fmt.Sprintf("signing-key\x00%s\x00%s\x00private", publisher, kid)
}

// SealWebhook returns w with its token and credentials sealed for the task.
func SealWebhook(k *keyring.Keyring, publisher string, owner TaskOwner, taskID string, w Webhook) (Webhook, error) {
	return mapWebhook(w, func(v, field string) (string, error) {
		return k.SealString(v, WebhookSecretContext(publisher, owner, taskID, field))
	})
}

// OpenWebhook returns w with its token and credentials opened.
func OpenWebhook(k *keyring.Keyring, publisher string, owner TaskOwner, taskID string, w Webhook) (Webhook, error) {
	return mapWebhook(w, func(v, field string) (string, error) {
		return k.OpenString(v, WebhookSecretContext(publisher, owner, taskID, field))
	})
}

// ResealWebhook returns w with its secrets sealed under k's newest key,
// and whether that changed it.
func ResealWebhook(k *keyring.Keyring, publisher string, owner TaskOwner, taskID string, w Webhook) (Webhook, bool, error) {
	changed := false
	w, err := mapWebhook(w, func(v, field string) (string, error) {
		out, c, err := k.Reseal([]byte(v), WebhookSecretContext(publisher, owner, taskID, field))
		changed = changed || c
		return string(out), err
	})
	return w, changed, err
}

func mapWebhook(w Webhook, fn func(v, field string) (string, error)) (Webhook, error) {
	var err error
	if w.Token, err = fn(w.Token, "token"); err != nil {
		return w, fmt.Errorf("the webhook token: %w", err)
	}
	if w.Credentials, err = fn(w.Credentials, "credentials"); err != nil {
		return w, fmt.Errorf("the webhook credentials: %w", err)
	}
	return w, nil
}

// WebhookSecrets are the stored values of w's secrets, for counting.
func WebhookSecrets(w Webhook) [][]byte { return nonEmpty(w.Token, w.Credentials) }

func nonEmpty(vs ...string) [][]byte {
	var out [][]byte
	for _, v := range vs {
		if v != "" {
			out = append(out, []byte(v))
		}
	}
	return out
}

// CountSecret adds v to counts under the id of its key ("" when v is
// plaintext).
func CountSecret(counts map[string]int, v []byte) {
	id, _ := keyring.KeyID(v)
	counts[id]++
}

// OpenSecret opens a secret kept as bytes (a signing key's private half).
// Bytes that are not sealed were stored by an earlier release in
// plaintext, and are returned as they are.
func OpenSecret(k *keyring.Keyring, v []byte, context string) ([]byte, error) {
	if len(v) == 0 || !keyring.Sealed(v) {
		return v, nil
	}
	return k.Open(v, context)
}
