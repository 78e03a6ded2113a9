package pgstore

import (
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/storefront/storefront/store"
)

// Postgres error codes the schema raises for conditions the Store
// interface names.
const (
	foreignKeyViolation = "23503" // every foreign key points at publishers
	uniqueViolation     = "23505"
)

// wrap adds the call's context to *errp, if it is an error, in the manner of
// pkgsite's derrors.Wrap: each method defers it once instead of decorating
// every return. It also turns what Postgres says into the store's errors so
// that callers can test with errors.Is: no row is store.ErrNotFound, a
// missing publisher behind a foreign key is store.ErrNotFound, and a
// duplicate key is store.ErrExists.
func wrap(errp *error, format string, args ...any) {
	err := *errp
	if err == nil {
		return
	}
	var pgErr *pgconn.PgError
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		err = store.ErrNotFound
	case errors.As(err, &pgErr) && pgErr.Code == foreignKeyViolation:
		err = fmt.Errorf("%w (%s)", store.ErrNotFound, pgErr.ConstraintName)
	case errors.As(err, &pgErr) && pgErr.Code == uniqueViolation:
		err = fmt.Errorf("%w (%s)", store.ErrExists, pgErr.ConstraintName)
	}
	*errp = fmt.Errorf("pgstore.%s: %w", fmt.Sprintf(format, args...), err)
}
