package pgstore

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/storefront/storefront/store"
)

func (s *Store) SigningKeys(ctx context.Context, publisher string) (_ []store.SigningKey, err error) {
	defer wrap(&err, "SigningKeys(%q)", publisher)
	if err := requirePublisher(ctx, s.pool, publisher); err != nil {
		return nil, err
	}
	rows, err := s.pool.Query(ctx, `SELECT kid, public_key, private_key, created_at, retired_at FROM signing_keys
		WHERE publisher_id = $1 ORDER BY retired_at IS NOT NULL, created_at DESC, kid`, publisher)
	if err != nil {
		return nil, err
	}
	keys := s.keyring()
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (store.SigningKey, error) {
		var k store.SigningKey
		if err := row.Scan(&k.KID, &k.Public, &k.Private, &k.CreatedAt, &k.RetiredAt); err != nil {
			return k, err
		}
		k.CreatedAt, k.RetiredAt = k.CreatedAt.UTC(), utcPtr(k.RetiredAt)
		private, err := store.OpenSecret(keys, k.Private, store.SigningSecretContext(publisher, k.KID))
		if err != nil {
			return k, fmt.Errorf("signing key %s: %w", k.KID, err)
		}
		k.Private = private
		return k, nil
	})
}

// sealedPrivate is the private half of k as it is stored: sealed.
func (s *Store) sealedPrivate(publisher string, k store.SigningKey) ([]byte, error) {
	sealed, err := s.keyring().Seal(k.Private, store.SigningSecretContext(publisher, k.KID))
	if err != nil {
		return nil, fmt.Errorf("signing key %s: %w", k.KID, err)
	}
	return sealed, nil
}

// CreateSigningKey inserts the first active key; the partial unique index
// on active keys turns a second one into ErrExists.
func (s *Store) CreateSigningKey(ctx context.Context, publisher string, k store.SigningKey) (err error) {
	if err := store.CheckStored(k); err != nil {
		return err
	}
	defer wrap(&err, "CreateSigningKey(%q, %q)", publisher, k.KID)
	private, err := s.sealedPrivate(publisher, k)
	if err != nil {
		return err
	}
	_, err = s.pool.Exec(ctx, `INSERT INTO signing_keys (publisher_id, kid, public_key, private_key, created_at)
		VALUES ($1, $2, $3, $4, $5)`, publisher, k.KID, k.Public, private, k.CreatedAt)
	return err
}

// RotateSigningKey locks the publisher's row first, so that rotations of
// one publisher from several replicas happen one after the other: each
// retires the key the previous one created.
func (s *Store) RotateSigningKey(ctx context.Context, publisher string, k store.SigningKey) (err error) {
	if err := store.CheckStored(k); err != nil {
		return err
	}
	defer wrap(&err, "RotateSigningKey(%q, %q)", publisher, k.KID)
	private, err := s.sealedPrivate(publisher, k)
	if err != nil {
		return err
	}
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var id string
		if err := tx.QueryRow(ctx, `SELECT id FROM publishers WHERE id = $1 FOR UPDATE`, publisher).Scan(&id); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE signing_keys SET retired_at = greatest($2::timestamptz, created_at)
			WHERE publisher_id = $1 AND retired_at IS NULL`, publisher, k.CreatedAt); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO signing_keys (publisher_id, kid, public_key, private_key, created_at)
			VALUES ($1, $2, $3, $4, $5)`, publisher, k.KID, k.Public, private, k.CreatedAt)
		return err
	})
}
