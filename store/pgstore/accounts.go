package pgstore

import (
	"context"
	"errors"
	"fmt"
	"regexp"

	"github.com/jackc/pgx/v5"

	"github.com/storefront/storefront/decline"
	"github.com/storefront/storefront/store"
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
	level, err := decline.ParseLevel(disclosure)
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
	defer wrap(&err, "AccountByID(%q, %q)", publisher, id)
	return s.account(ctx, `publisher_id = $1 AND id = $2`, publisher, id)
}

func (s *Store) AccountByKey(ctx context.Context, publisher, naturalKey string) (_ store.Account, err error) {
	defer wrap(&err, "AccountByKey(%q, %q)", publisher, naturalKey)
	return s.account(ctx, `publisher_id = $1 AND natural_key = $2`, publisher, naturalKey)
}

// EnsureAccount inserts a unless an account holds its natural key, and then
// reads whichever account does. Concurrent callers all insert-or-skip
// against the unique natural key, so exactly one row is created and every
// caller gets it.
func (s *Store) EnsureAccount(ctx context.Context, publisher string, a store.Account) (_ store.Account, err error) {
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
// creation time. Another account holding the natural key makes it fail
// with ErrExists (the unique constraint), leaving the old row as it was.
func (s *Store) PutAccount(ctx context.Context, publisher string, a store.Account) (err error) {
	defer wrap(&err, "PutAccount(%q, %q)", publisher, a.ID)
	_, err = s.pool.Exec(ctx, `
		INSERT INTO accounts (publisher_id, id, operator, brand_domain, brand_id, sandbox, disclosure, natural_key, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
		ON CONFLICT (publisher_id, id) DO UPDATE SET
			operator = EXCLUDED.operator, brand_domain = EXCLUDED.brand_domain, brand_id = EXCLUDED.brand_id,
			sandbox = EXCLUDED.sandbox, disclosure = EXCLUDED.disclosure, natural_key = EXCLUDED.natural_key`,
		publisher, a.ID, a.Operator, a.BrandDomain, a.BrandID, a.Sandbox, a.Disclosure.String(), a.NaturalKey(), s.now().UTC())
	return err
}

func (s *Store) ListAccounts(ctx context.Context, publisher string) (_ []store.Account, err error) {
	defer wrap(&err, "ListAccounts(%q)", publisher)
	return listScoped(ctx, s, publisher, scanAccount,
		`SELECT `+accountColumns+` FROM accounts WHERE publisher_id = $1 ORDER BY id`, publisher)
}

var digestPattern = regexp.MustCompile(`^[0-9a-f]{64}$`)

// checkDigest refuses anything but a hex SHA-256, so that a raw token is
// never written down. The schema checks the same.
func checkDigest(digest string) error {
	if !digestPattern.MatchString(digest) {
		return errors.New("a token must be stored as its hex SHA-256 digest (store.TokenDigest)")
	}
	return nil
}

func (s *Store) PutBuyerToken(ctx context.Context, publisher, digest string, b store.Buyer) (err error) {
	defer wrap(&err, "PutBuyerToken(%q, %q)", publisher, b.ID)
	if err := checkDigest(digest); err != nil {
		return err
	}
	accounts := b.Accounts
	if accounts == nil {
		accounts = []string{}
	}
	_, err = s.pool.Exec(ctx, `
		INSERT INTO buyer_tokens (publisher_id, digest, buyer_id, operator, accounts) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (publisher_id, digest) DO UPDATE SET
			buyer_id = EXCLUDED.buyer_id, operator = EXCLUDED.operator, accounts = EXCLUDED.accounts`,
		publisher, digest, b.ID, b.Operator, accounts)
	return err
}

func (s *Store) BuyerByToken(ctx context.Context, publisher, digest string) (_ store.Buyer, err error) {
	// The digest identifies a credential: it stays out of error text.
	defer wrap(&err, "BuyerByToken(%q)", publisher)
	var b store.Buyer
	err = s.pool.QueryRow(ctx, `SELECT buyer_id, operator, accounts FROM buyer_tokens WHERE publisher_id = $1 AND digest = $2`,
		publisher, digest).Scan(&b.ID, &b.Operator, &b.Accounts)
	if len(b.Accounts) == 0 {
		b.Accounts = nil
	}
	return b, err
}

func (s *Store) PutAdminToken(ctx context.Context, digest string, a store.Admin) (err error) {
	defer wrap(&err, "PutAdminToken(%q, %q)", a.Publisher, a.Name)
	if err := checkDigest(digest); err != nil {
		return err
	}
	_, err = s.pool.Exec(ctx, `
		INSERT INTO admin_tokens (digest, publisher_id, name) VALUES ($1, $2, $3)
		ON CONFLICT (digest) DO UPDATE SET publisher_id = EXCLUDED.publisher_id, name = EXCLUDED.name`,
		digest, a.Publisher, a.Name)
	return err
}

func (s *Store) AdminByToken(ctx context.Context, digest string) (_ store.Admin, err error) {
	defer wrap(&err, "AdminByToken()")
	var a store.Admin
	err = s.pool.QueryRow(ctx, `SELECT publisher_id, name FROM admin_tokens WHERE digest = $1`, digest).Scan(&a.Publisher, &a.Name)
	return a, err
}
