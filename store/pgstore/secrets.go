package pgstore

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/storefront/storefront/store"
	"github.com/storefront/storefront/store/keyring"
)

// Secrets are kept sealed in their columns (store.Secrets): a task
// webhook's token and credentials inside its webhook document, a
// governance agent's credentials, and a signing key's private_key. The
// database never sees one in plaintext, and a replica must hold the key
// that sealed a secret to read it: replicas share one keyring.

var _ store.Secrets = (*Store)(nil)

// SetKeyring implements store.Secrets. Without one (the default) storing
// a secret fails with keyring.ErrNoKey.
func (s *Store) SetKeyring(k *keyring.Keyring) { s.keys.Store(k) }

func (s *Store) keyring() *keyring.Keyring { return s.keys.Load() }

// secretRow is one stored secret: where it is, what it is sealed for, and
// its stored value.
type secretRow struct {
	// update writes value back in its place, in tx.
	update  func(ctx context.Context, tx pgx.Tx, value []byte) error
	context string
	value   []byte
	// where names it in errors.
	where string
}

// secretRows reads every stored secret in q, locking the rows when lock is
// set.
func secretRows(ctx context.Context, q pgx.Tx, lock bool) ([]secretRow, error) {
	forUpdate := ""
	if lock {
		forUpdate = " FOR UPDATE"
	}
	var out []secretRow
	rows, err := q.Query(ctx, `SELECT publisher_id, kid, private_key FROM signing_keys`+forUpdate)
	if err != nil {
		return nil, err
	}
	var publisher, kid string
	var private []byte
	if _, err := pgx.ForEachRow(rows, []any{&publisher, &kid, &private}, func() error {
		publisher, kid := publisher, kid
		out = append(out, secretRow{context: store.SigningSecretContext(publisher, kid), value: private,
			where: fmt.Sprintf("publisher %s: signing key %s", publisher, kid),
			update: func(ctx context.Context, tx pgx.Tx, v []byte) error {
				_, err := tx.Exec(ctx, `UPDATE signing_keys SET private_key = $3 WHERE publisher_id = $1 AND kid = $2`, publisher, kid, v)
				return err
			}})
		return nil
	}); err != nil {
		return nil, err
	}

	rows, err = q.Query(ctx, `SELECT publisher_id, account_id, credentials FROM governance_agents`+forUpdate)
	if err != nil {
		return nil, err
	}
	var account, credentials string
	if _, err := pgx.ForEachRow(rows, []any{&publisher, &account, &credentials}, func() error {
		if credentials == "" {
			return nil
		}
		publisher, account := publisher, account
		out = append(out, secretRow{context: store.GovernanceSecretContext(publisher, account), value: []byte(credentials),
			where: fmt.Sprintf("publisher %s: the governance agent of account %s", publisher, account),
			update: func(ctx context.Context, tx pgx.Tx, v []byte) error {
				_, err := tx.Exec(ctx, `UPDATE governance_agents SET credentials = $3 WHERE publisher_id = $1 AND account_id = $2`, publisher, account, string(v))
				return err
			}})
		return nil
	}); err != nil {
		return nil, err
	}

	rows, err = q.Query(ctx, `SELECT publisher_id, account, principal, id, webhook FROM tasks WHERE webhook IS NOT NULL`+forUpdate)
	if err != nil {
		return nil, err
	}
	var owner store.TaskOwner
	var id string
	var doc []byte
	type webhookRow struct {
		publisher string
		owner     store.TaskOwner
		id        string
		w         store.Webhook
	}
	var hooks []webhookRow
	if _, err := pgx.ForEachRow(rows, []any{&publisher, &owner.Account, &owner.Principal, &id, &doc}, func() error {
		var w store.Webhook
		if err := json.Unmarshal(doc, &w); err != nil {
			return fmt.Errorf("task %s: decoding the webhook: %w", id, err)
		}
		hooks = append(hooks, webhookRow{publisher, owner, id, w})
		return nil
	}); err != nil {
		return nil, err
	}
	// A webhook's two secrets live in one document: each row's update
	// writes its field into the document as it stands.
	for i := range hooks {
		h := &hooks[i]
		for _, f := range []struct {
			name string
			v    *string
		}{{"token", &h.w.Token}, {"credentials", &h.w.Credentials}} {
			if *f.v == "" {
				continue
			}
			field := f.v
			out = append(out, secretRow{context: store.WebhookSecretContext(h.publisher, h.owner, h.id, f.name), value: []byte(*f.v),
				where: fmt.Sprintf("publisher %s: the webhook %s of task %s", h.publisher, f.name, h.id),
				update: func(ctx context.Context, tx pgx.Tx, v []byte) error {
					*field = string(v)
					doc, err := json.Marshal(h.w)
					if err != nil {
						return err
					}
					_, err = tx.Exec(ctx, `UPDATE tasks SET webhook = $5
						WHERE publisher_id = $1 AND account = $2 AND principal = $3 AND id = $4`,
						h.publisher, h.owner.Account, h.owner.Principal, h.id, doc)
					return err
				}})
		}
	}
	return out, nil
}

// CountSecrets implements store.Secrets.
func (s *Store) CountSecrets(ctx context.Context) (_ map[string]int, err error) {
	defer wrap(&err, "CountSecrets()")
	counts := map[string]int{}
	err = pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		rows, err := secretRows(ctx, tx, false)
		for _, r := range rows {
			store.CountSecret(counts, r.value)
		}
		return err
	})
	return counts, err
}

// ResealSecrets implements store.Secrets in one transaction over locked
// rows: every secret is resealed under the newest key, or none is. A
// replica serving meanwhile waits for the rows it writes, and reads them
// under either key, since it holds both.
func (s *Store) ResealSecrets(ctx context.Context, what store.Reseal) (_ int, err error) {
	defer wrap(&err, "ResealSecrets(%d)", what)
	k := s.keyring()
	if k == nil {
		return 0, keyring.ErrNoKey
	}
	n := 0
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		n = 0
		rows, err := secretRows(ctx, tx, true)
		if err != nil {
			return err
		}
		for _, r := range rows {
			if !what.Reseals(r.value) {
				continue
			}
			out, changed, err := k.Reseal(r.value, r.context)
			if err != nil {
				return fmt.Errorf("%s: %w", r.where, err)
			}
			if !changed {
				continue
			}
			if err := r.update(ctx, tx, out); err != nil {
				return err
			}
			n++
		}
		return nil
	})
	return n, err
}
