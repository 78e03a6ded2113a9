package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/storefront/storefront/store"
	"github.com/storefront/storefront/store/keyring"
)

// The secret keys that seal the secrets the stores keep (webhook and
// governance credentials, signing keys' private halves): from
// STOREFRONT_SECRET_KEYS (the keys themselves) or --secret-keys-file
// (STOREFRONT_SECRET_KEYS_FILE), never both. Either lists "<id>:<base64 of
// 32 bytes>" entries, newest first, by commas or lines; the first seals,
// every one opens. `storefront secrets generate-key` makes one.
//
// Without a key the in-memory store seals under a key made for the
// process, as nothing it keeps outlives the process. PostgreSQL keeps
// secrets across restarts and replicas, which must share the key, so the
// storefront never makes one up for it: without a configured key it
// refuses to start on a database holding secrets (sealed, or kept in
// plaintext by an earlier release), and on one holding none it starts
// storing none (see checkSecrets).

// secretKeysEnv holds the keys inline.
const secretKeysEnv = "STOREFRONT_SECRET_KEYS"

// loadKeyring is the configured keyring, or nil when none is configured.
func (m *Main) loadKeyring() (*keyring.Keyring, error) {
	text, from := m.SecretKeys, secretKeysEnv
	switch {
	case m.SecretKeys != "" && m.SecretKeysFile != "":
		return nil, fmt.Errorf("both %s and --secret-keys-file are set: give the keys one way", secretKeysEnv)
	case m.SecretKeysFile != "":
		b, err := os.ReadFile(m.SecretKeysFile)
		if err != nil {
			return nil, fmt.Errorf("--secret-keys-file: %w", err)
		}
		if info, err := os.Stat(m.SecretKeysFile); err == nil && info.Mode().Perm()&0o077 != 0 {
			m.log.Warn("the secret keys file can be read by other users: make it readable by the storefront's user only (chmod 600)", "file", m.SecretKeysFile)
		}
		text, from = string(b), "--secret-keys-file "+m.SecretKeysFile
	case m.SecretKeys == "":
		return nil, nil
	}
	keys, err := keyring.Parse(text)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", from, err)
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("%s holds no key", from)
	}
	k, err := keyring.New(keys...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", from, err)
	}
	return k, nil
}

// errNoSecretKey is how every refusal for want of a key ends.
var errNoSecretKey = errors.New("set " + secretKeysEnv + " or --secret-keys-file (storefront secrets generate-key makes a key; README: secrets at rest)")

// checkSecrets holds the opened store to the key policy before it serves
// or changes secrets. On PostgreSQL it refuses a database holding secrets
// it could not open: any when no key is configured, and any sealed under a
// key the keyring does not hold. It seals what an earlier release kept in
// plaintext. Without a key and without secrets it warns that none will be
// stored.
func (m *Main) checkSecrets(ctx context.Context) error {
	sec, ok := m.Store.(store.Secrets)
	if !ok || m.DatabaseURL == "" {
		return nil
	}
	counts, err := sec.CountSecrets(ctx)
	if err != nil {
		return fmt.Errorf("counting the stored secrets: %w", err)
	}
	var unknown []string
	sealed := 0
	for id, n := range counts {
		if id == "" {
			continue
		}
		sealed += n
		if !m.keys.Has(id) {
			unknown = append(unknown, id)
		}
	}
	slices.Sort(unknown)
	plaintext := counts[""]
	switch {
	case m.keys == nil && sealed+plaintext > 0:
		return fmt.Errorf("the database holds %d sealed secret(s) (keys %s) and %d kept in plaintext by an earlier release, and no secret key is configured: %w",
			sealed, strings.Join(unknown, ", "), plaintext, errNoSecretKey)
	case len(unknown) > 0:
		return fmt.Errorf("the database holds secrets sealed under key(s) %s, which the configured keys (%s) do not include: configure those keys too",
			strings.Join(unknown, ", "), strings.Join(m.keys.IDs(), ", "))
	case plaintext > 0:
		n, err := sec.ResealSecrets(ctx, store.ResealPlaintext)
		if err != nil {
			return fmt.Errorf("sealing the secrets an earlier release kept in plaintext: %w", err)
		}
		m.log.Warn("sealed the secrets an earlier release kept in plaintext", "secrets", n, "key", m.keys.Current())
	case m.keys == nil:
		m.log.Warn("no secret key is configured: the storefront stores no secrets on PostgreSQL, so webhooks registered with authentication are refused and webhooks cannot be signed; " + errNoSecretKey.Error())
	}
	return nil
}

// secretsRewrap seals every stored secret under the newest configured
// key: after a new key is listed first on every replica, so that the older
// one can then be dropped.
func (m *Main) secretsRewrap(ctx context.Context) error {
	if err := m.needDatabase(); err != nil {
		return err
	}
	if _, err := m.openStore(ctx); err != nil {
		return err
	}
	if m.keys == nil {
		return fmt.Errorf("no secret key is configured to seal with: %w", errNoSecretKey)
	}
	if err := m.checkSecrets(ctx); err != nil {
		return err
	}
	sec := m.Store.(store.Secrets)
	n, err := sec.ResealSecrets(ctx, store.ResealAll)
	if err != nil {
		return fmt.Errorf("resealing: %w (nothing was rewritten)", err)
	}
	fmt.Fprintf(m.Stdout, "resealed %d secret(s) under key %s\n", n, m.keys.Current())
	return m.printSecretCounts(ctx, sec)
}

// secretsStatus says how many secrets each key seals, and whether each
// key is configured.
func (m *Main) secretsStatus(ctx context.Context) error {
	if err := m.needDatabase(); err != nil {
		return err
	}
	if _, err := m.openStore(ctx); err != nil {
		return err
	}
	return m.printSecretCounts(ctx, m.Store.(store.Secrets))
}

func (m *Main) printSecretCounts(ctx context.Context, sec store.Secrets) error {
	counts, err := sec.CountSecrets(ctx)
	if err != nil {
		return err
	}
	ids := make([]string, 0, len(counts))
	for id := range counts {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	if len(ids) == 0 {
		fmt.Fprintln(m.Stdout, "no secrets stored")
	}
	for _, id := range ids {
		switch {
		case id == "":
			fmt.Fprintf(m.Stdout, "%d secret(s) in plaintext, from an earlier release\n", counts[id])
		case m.keys.Has(id):
			fmt.Fprintf(m.Stdout, "%d secret(s) sealed under key %s (configured)\n", counts[id], id)
		default:
			fmt.Fprintf(m.Stdout, "%d secret(s) sealed under key %s (NOT configured: they cannot be read)\n", counts[id], id)
		}
	}
	return nil
}

// secretsGenerateKey prints a new random key as configuration lists it.
func (m *Main) secretsGenerateKey() error {
	k, err := keyring.Generate(m.Name)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(m.Stdout, k.String())
	return err
}
