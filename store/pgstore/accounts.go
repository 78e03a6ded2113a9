package pgstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/storefront/storefront/store"
	"github.com/storefront/storefront/vocab"
)

const accountColumns = `id, operator, brand_domain, brand_id, sandbox, disclosure, created_at`

func scanAccount(row pgx.CollectableRow) (store.Account, error) {
	var (
		a          store.Account
		disclosure string
	)
	if err := row.Scan(&a.ID, &a.Operator, &a.BrandDomain, &a.BrandID, &a.Sandbox, &disclosure, &a.CreatedAt); err != nil {
		return a, err
	}
	level, err := vocab.ParseLevel(disclosure)
	if err != nil {
		return a, fmt.Errorf("account %s: %w", a.ID, err)
	}
	a.Disclosure = level
	a.CreatedAt = a.CreatedAt.UTC()
	return a, nil
}

func (s *Store) account(ctx context.Context, where string, args ...any) (store.Account, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+accountColumns+` FROM accounts WHERE `+where, args...)
	if err != nil {
		return store.Account{}, err
	}
	return pgx.CollectExactlyOneRow(rows, scanAccount)
}

func (s *Store) AccountByID(ctx context.Context, publisher, id string) (_ store.Account, err error) {
	if store.Unkeepable(publisher, id) {
		return store.Account{}, store.ErrNotFound
	}
	defer wrap(&err, "AccountByID(%q, %q)", publisher, id)
	return s.account(ctx, `publisher_id = $1 AND id = $2`, publisher, id)
}

func (s *Store) AccountByKey(ctx context.Context, publisher, naturalKey string) (_ store.Account, err error) {
	if store.Unkeepable(publisher, naturalKey) {
		return store.Account{}, store.ErrNotFound
	}
	defer wrap(&err, "AccountByKey(%q, %q)", publisher, naturalKey)
	return s.account(ctx, `publisher_id = $1 AND natural_key = $2`, publisher, naturalKey)
}

// EnsureAccount inserts a unless an account holds its natural key, and then
// reads whichever account does. Concurrent callers all insert-or-skip
// against the unique natural key, so exactly one row is created and every
// caller gets it.
func (s *Store) EnsureAccount(ctx context.Context, publisher string, a store.Account) (_ store.Account, err error) {
	if err := store.CheckAccount(a); err != nil {
		return store.Account{}, err
	}
	defer wrap(&err, "EnsureAccount(%q, %q)", publisher, a.NaturalKey())
	if a.ID == "" {
		a.ID = "acct_" + randomHex(8)
	}
	key := a.NaturalKey()
	// A conflicting insert that is rolled back leaves neither row: try
	// again. Two rounds cover that; a third is for good measure.
	for range 3 {
		rows, err := s.pool.Query(ctx, `
			INSERT INTO accounts (publisher_id, id, operator, brand_domain, brand_id, sandbox, disclosure, natural_key, created_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
			ON CONFLICT DO NOTHING
			RETURNING `+accountColumns,
			publisher, a.ID, a.Operator, a.BrandDomain, a.BrandID, a.Sandbox, a.Disclosure.String(), key, s.now().UTC())
		if err != nil {
			return store.Account{}, err
		}
		created, err := pgx.CollectExactlyOneRow(rows, scanAccount)
		if !errors.Is(err, pgx.ErrNoRows) {
			return created, err
		}
		existing, err := s.account(ctx, `publisher_id = $1 AND natural_key = $2`, publisher, key)
		if !errors.Is(err, pgx.ErrNoRows) {
			return existing, err
		}
		// The conflict was on the id: another natural key holds it.
		if _, err := s.account(ctx, `publisher_id = $1 AND id = $2`, publisher, a.ID); err == nil {
			return store.Account{}, fmt.Errorf("account id %q: %w", a.ID, store.ErrExists)
		}
	}
	return store.Account{}, fmt.Errorf("account kept being created and removed concurrently")
}

// PutAccount creates or replaces the account with a's id, keeping its
// creation time, and returns the row as stored. Another account holding
// the natural key makes it fail with ErrExists (the unique constraint),
// leaving the old row as it was.
func (s *Store) PutAccount(ctx context.Context, publisher string, a store.Account) (_ store.Account, err error) {
	if err := store.CheckAccount(a); err != nil {
		return store.Account{}, err
	}
	defer wrap(&err, "PutAccount(%q, %q)", publisher, a.ID)
	rows, err := s.pool.Query(ctx, `
		INSERT INTO accounts (publisher_id, id, operator, brand_domain, brand_id, sandbox, disclosure, natural_key, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
		ON CONFLICT (publisher_id, id) DO UPDATE SET
			operator = EXCLUDED.operator, brand_domain = EXCLUDED.brand_domain, brand_id = EXCLUDED.brand_id,
			sandbox = EXCLUDED.sandbox, disclosure = EXCLUDED.disclosure, natural_key = EXCLUDED.natural_key
		RETURNING `+accountColumns,
		publisher, a.ID, a.Operator, a.BrandDomain, a.BrandID, a.Sandbox, a.Disclosure.String(), a.NaturalKey(), s.now().UTC())
	if err != nil {
		return store.Account{}, err
	}
	return pgx.CollectExactlyOneRow(rows, scanAccount)
}

func (s *Store) ListAccounts(ctx context.Context, publisher string) (_ []store.Account, err error) {
	defer wrap(&err, "ListAccounts(%q)", publisher)
	return listScoped(ctx, s, publisher, scanAccount,
		`SELECT `+accountColumns+` FROM accounts WHERE publisher_id = $1 ORDER BY id`, publisher)
}
