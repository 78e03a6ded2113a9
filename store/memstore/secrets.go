package memstore

import (
	"context"
	"fmt"

	"github.com/storefront/storefront/store"
	"github.com/storefront/storefront/store/keyring"
)

// The in-memory store keeps secrets sealed as PostgreSQL does, under a
// keyring of its own: a random key made for the process unless one is set,
// which is enough for what lives no longer than the process.

var _ store.Secrets = (*Store)(nil)

// SetKeyring implements store.Secrets.
func (s *Store) SetKeyring(k *keyring.Keyring) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.keys = k
}

// sealTask returns t with its webhook's secrets sealed; the caller holds
// s.mu.
func (s *Store) sealTask(publisher string, t store.Task) (store.Task, error) {
	if t.Webhook == nil {
		return t, nil
	}
	w, err := store.SealWebhook(s.keys, publisher, t.Owner, t.ID, *t.Webhook)
	if err != nil {
		return t, fmt.Errorf("memstore: task %s: %w", t.ID, err)
	}
	t.Webhook = &w
	return t, nil
}

// openTasks returns copies of ts with their webhooks' secrets opened; the
// caller holds s.mu.
func (s *Store) openTasks(publisher string, ts ...store.Task) ([]store.Task, error) {
	out := clone(ts)
	for i := range out {
		if t := &out[i]; t.Webhook != nil {
			w, err := store.OpenWebhook(s.keys, publisher, t.Owner, t.ID, *t.Webhook)
			if err != nil {
				return nil, fmt.Errorf("memstore: task %s: %w", t.ID, err)
			}
			t.Webhook = &w
		}
	}
	return out, nil
}

// openTask is openTasks of one task.
func (s *Store) openTask(publisher string, t store.Task) (store.Task, error) {
	out, err := s.openTasks(publisher, t)
	if err != nil {
		return store.Task{}, err
	}
	return out[0], nil
}

// CountSecrets implements store.Secrets.
func (s *Store) CountSecrets(ctx context.Context) (map[string]int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	counts := map[string]int{}
	err := s.eachSecret(func(v []byte, _ string) ([]byte, error) {
		store.CountSecret(counts, v)
		return v, nil
	})
	return counts, err
}

// ResealSecrets implements store.Secrets: every secret is resealed into a
// copy first, and the copies replace the originals only once all opened.
func (s *Store) ResealSecrets(ctx context.Context, what store.Reseal) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.keys == nil {
		return 0, keyring.ErrNoKey
	}
	resealed := map[string][]byte{}
	err := s.eachSecret(func(v []byte, context string) ([]byte, error) {
		if !what.Reseals(v) {
			return v, nil
		}
		out, changed, err := s.keys.Reseal(v, context)
		if changed {
			resealed[context] = out
		}
		return v, err
	})
	if err != nil {
		return 0, err
	}
	err = s.eachSecret(func(v []byte, context string) ([]byte, error) {
		if out, ok := resealed[context]; ok {
			return out, nil
		}
		return v, nil
	})
	return len(resealed), err
}

// eachSecret calls fn on every stored secret and its context, and stores
// what fn returns in its place; the caller holds s.mu.
func (s *Store) eachSecret(fn func(v []byte, context string) ([]byte, error)) error {
	for id, p := range s.pubs {
		for i := range p.signingKeys {
			k := &p.signingKeys[i]
			out, err := fn(k.Private, store.SigningSecretContext(id, k.KID))
			if err != nil {
				return fmt.Errorf("memstore: signing key %s: %w", k.KID, err)
			}
			k.Private = out
		}
	}
	for id, x := range s.extras {
		for key, t := range x.tasks {
			if t.Webhook == nil {
				continue
			}
			w := *t.Webhook
			for _, f := range []struct {
				name string
				v    *string
			}{{"token", &w.Token}, {"credentials", &w.Credentials}} {
				if *f.v == "" {
					continue
				}
				out, err := fn([]byte(*f.v), store.WebhookSecretContext(id, t.Owner, t.ID, f.name))
				if err != nil {
					return fmt.Errorf("memstore: task %s: the webhook %s: %w", t.ID, f.name, err)
				}
				*f.v = string(out)
			}
			t.Webhook = &w
			x.tasks[key] = t
		}
		for account, g := range x.buying.governance {
			if g.Credentials == "" {
				continue
			}
			out, err := fn([]byte(g.Credentials), store.GovernanceSecretContext(id, account))
			if err != nil {
				return fmt.Errorf("memstore: the governance agent of %s: %w", account, err)
			}
			g.Credentials = string(out)
			x.buying.governance[account] = g
		}
	}
	return nil
}
