package pgstore

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/storefront/storefront/store"
)

const tokenColumns = `id, kind, publisher_id, name, prefix, buyer_id, operator, accounts,
	created_at, created_by, last_used_at, expires_at, revoked_at, replaces, replaced_by`

func scanToken(row pgx.CollectableRow) (store.Token, error) {
	var (
		t                 store.Token
		kind              string
		buyer             store.Buyer
		last, exp, revoke *time.Time
	)
	if err := row.Scan(&t.ID, &kind, &t.Publisher, &t.Name, &t.Prefix, &buyer.ID, &buyer.Operator, &buyer.Accounts,
		&t.CreatedAt, &t.CreatedBy, &last, &exp, &revoke, &t.Replaces, &t.ReplacedBy); err != nil {
		return t, err
	}
	t.Kind = store.TokenKind(kind)
	if t.Kind == store.BuyerToken {
		if len(buyer.Accounts) == 0 {
			buyer.Accounts = nil
		}
		t.Buyer = &buyer
	}
	t.CreatedAt = t.CreatedAt.UTC()
	t.LastUsedAt, t.ExpiresAt, t.RevokedAt = utc(last), utc(exp), utc(revoke)
	return t, nil
}

func utc(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

// insertToken adds t under digest unless the digest (or the id) is
// taken, in which case it changes nothing and reports ErrExists.
func insertToken(ctx context.Context, q rowsQuerier, digest string, t store.Token) (store.Token, error) {
	var b store.Buyer
	if t.Buyer != nil && t.Kind == store.BuyerToken {
		b = *t.Buyer
	}
	accounts := b.Accounts
	if accounts == nil {
		accounts = []string{}
	}
	rows, err := q.Query(ctx, `
		INSERT INTO tokens (digest, id, publisher_id, kind, name, prefix, buyer_id, operator, accounts,
			created_at, created_by, expires_at, replaces)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
		ON CONFLICT DO NOTHING
		RETURNING `+tokenColumns,
		digest, t.ID, t.Publisher, string(t.Kind), t.Name, t.Prefix, b.ID, b.Operator, accounts,
		t.CreatedAt.UTC(), t.CreatedBy, t.ExpiresAt, t.Replaces)
	if err != nil {
		return store.Token{}, err
	}
	created, err := pgx.CollectExactlyOneRow(rows, scanToken)
	if errors.Is(err, pgx.ErrNoRows) {
		return store.Token{}, store.ErrExists
	}
	return created, err
}

// CreateToken inserts and never updates: ON CONFLICT DO NOTHING leaves a
// token already stored under the digest exactly as it was.
func (s *Store) CreateToken(ctx context.Context, digest string, t store.Token) (_ store.Token, err error) {
	if err := store.CheckToken(t); err != nil {
		return store.Token{}, err
	}
	defer wrap(&err, "CreateToken(%q, %q)", t.Publisher, t.Name)
	if err := store.CheckDigest(digest); err != nil {
		return store.Token{}, err
	}
	if t.ID == "" {
		t.ID = store.NewTokenID()
	}
	return insertToken(ctx, s.pool, digest, t)
}

// rowsQuerier is what both the pool and a transaction offer.
type rowsQuerier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// UseToken reads the token and records its use in one statement. The
// update touches the row only when the recorded use is older than
// store.LastUseGranularity, so a busy token costs no write per request.
func (s *Store) UseToken(ctx context.Context, kind store.TokenKind, publisher, digest string, at time.Time) (_ store.Token, err error) {
	if store.Unkeepable(publisher, digest) {
		return store.Token{}, store.ErrNotFound
	}
	// The digest identifies a credential: it stays out of error text.
	defer wrap(&err, "UseToken(%q, %q)", kind, publisher)
	if kind == store.AdminToken {
		publisher = ""
	}
	rows, err := s.pool.Query(ctx, `
		WITH found AS (
			SELECT digest FROM tokens
			WHERE digest = $1 AND kind = $2 AND ($3 = '' OR publisher_id = $3)
				AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > $4)
		), used AS (
			UPDATE tokens SET last_used_at = $4
			WHERE digest IN (SELECT digest FROM found)
				AND (last_used_at IS NULL OR last_used_at <= $4 - $5::bigint * interval '1 microsecond')
			RETURNING `+tokenColumns+`
		)
		SELECT `+tokenColumns+` FROM used
		UNION ALL
		SELECT `+tokenColumns+` FROM tokens WHERE digest IN (SELECT digest FROM found) AND NOT EXISTS (SELECT 1 FROM used)`,
		digest, string(kind), publisher, at.UTC(), store.LastUseGranularity.Microseconds())
	if err != nil {
		return store.Token{}, err
	}
	return pgx.CollectExactlyOneRow(rows, scanToken)
}

func (s *Store) TokenByDigest(ctx context.Context, digest string) (_ store.Token, err error) {
	if store.Unkeepable(digest) {
		return store.Token{}, store.ErrNotFound
	}
	defer wrap(&err, "TokenByDigest()")
	rows, err := s.pool.Query(ctx, `SELECT `+tokenColumns+` FROM tokens WHERE digest = $1`, digest)
	if err != nil {
		return store.Token{}, err
	}
	return pgx.CollectExactlyOneRow(rows, scanToken)
}

func (s *Store) Token(ctx context.Context, publisher, id string) (_ store.Token, err error) {
	if store.Unkeepable(publisher, id) {
		return store.Token{}, store.ErrNotFound
	}
	defer wrap(&err, "Token(%q, %q)", publisher, id)
	rows, err := s.pool.Query(ctx, `SELECT `+tokenColumns+` FROM tokens WHERE publisher_id = $1 AND id = $2`, publisher, id)
	if err != nil {
		return store.Token{}, err
	}
	return pgx.CollectExactlyOneRow(rows, scanToken)
}

func (s *Store) ListTokens(ctx context.Context, publisher string) (_ []store.Token, err error) {
	defer wrap(&err, "ListTokens(%q)", publisher)
	// COLLATE "C" breaks ties by id byte by byte, as store.CompareTokens
	// does.
	ts, err := listScoped(ctx, s, publisher, scanToken,
		`SELECT `+tokenColumns+` FROM tokens WHERE publisher_id = $1 ORDER BY created_at, id COLLATE "C"`, publisher)
	if ts == nil && err == nil {
		ts = []store.Token{}
	}
	return ts, err
}

// RevokeToken sets the revocation time once; a second revocation keeps
// the first.
func (s *Store) RevokeToken(ctx context.Context, publisher, id string, at time.Time) (_ store.Token, err error) {
	if store.Unkeepable(publisher, id) {
		return store.Token{}, store.ErrNotFound
	}
	defer wrap(&err, "RevokeToken(%q, %q)", publisher, id)
	rows, err := s.pool.Query(ctx, `
		UPDATE tokens SET revoked_at = COALESCE(revoked_at, $3)
		WHERE publisher_id = $1 AND id = $2
		RETURNING `+tokenColumns, publisher, id, at.UTC())
	if err != nil {
		return store.Token{}, err
	}
	return pgx.CollectExactlyOneRow(rows, scanToken)
}

// RotateToken locks the old token's row, so that of two rotations of one
// token only the first succeeds, and inserts the new token and retires
// the old one in the same transaction.
func (s *Store) RotateToken(ctx context.Context, publisher, id, digest string, next store.Token, until time.Time) (_, _ store.Token, err error) {
	if err := store.CheckStored(next); err != nil {
		return store.Token{}, store.Token{}, err
	}
	if store.Unkeepable(publisher, id) {
		return store.Token{}, store.Token{}, store.ErrNotFound
	}
	defer wrap(&err, "RotateToken(%q, %q)", publisher, id)
	if err := store.CheckDigest(digest); err != nil {
		return store.Token{}, store.Token{}, err
	}
	var old, created store.Token
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT `+tokenColumns+` FROM tokens WHERE publisher_id = $1 AND id = $2 FOR UPDATE`, publisher, id)
		if err != nil {
			return err
		}
		if old, err = pgx.CollectExactlyOneRow(rows, scanToken); err != nil {
			return err
		}
		if !old.Usable(next.CreatedAt) || old.ReplacedBy != "" {
			return store.ErrConflict
		}
		if created, err = insertToken(ctx, tx, digest, store.Rotated(old, next)); err != nil {
			return err
		}
		retired := store.Retired(old, created, until)
		rows, err = tx.Query(ctx, `
			UPDATE tokens SET replaced_by = $3, expires_at = $4, revoked_at = $5
			WHERE publisher_id = $1 AND id = $2
			RETURNING `+tokenColumns, publisher, id, retired.ReplacedBy, retired.ExpiresAt, retired.RevokedAt)
		if err != nil {
			return err
		}
		old, err = pgx.CollectExactlyOneRow(rows, scanToken)
		return err
	})
	return old, created, err
}
