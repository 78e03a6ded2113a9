package pgstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/puddle/v2"

	"github.com/storefront/storefront/store"
)

// Postgres error codes the schema raises for conditions the Store
// interface names.
const (
	foreignKeyViolation = "23503" // every foreign key points at publishers
	uniqueViolation     = "23505"
)

// unavailable reports errors that mean the database cannot serve now,
// by type and SQLSTATE, never by message text: no connection could be
// made, the pool is closed, the connection was lost, the server is
// shutting down or starting, is out of connections or resources, or
// cancelled the statement (class 08 connection exception, class 53
// insufficient resources, class 57 operator intervention).
func unavailable(err error) bool {
	var (
		pgErr   *pgconn.PgError
		connErr *pgconn.ConnectError
		netErr  net.Error
	)
	if errors.As(err, &pgErr) {
		switch pgErr.Code[:min(2, len(pgErr.Code))] {
		case "08", "53", "57":
			return true
		}
		return false
	}
	return errors.As(err, &connErr) || errors.As(err, &netErr) ||
		errors.Is(err, puddle.ErrClosedPool) || errors.Is(err, pgconn.ErrConnClosed) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) ||
		pgconn.Timeout(err) || errors.Is(err, context.DeadlineExceeded)
}

// wrap adds the call's context to *errp, if it is an error, in the manner of
// pkgsite's derrors.Wrap: each method defers it once instead of decorating
// every return. It also turns what Postgres says into the store's errors so
// that callers can test with errors.Is: no row is store.ErrNotFound, a
// missing publisher behind a foreign key is store.ErrNotFound, a
// duplicate key is store.ErrExists, and a database that cannot serve now
// is store.ErrUnavailable.
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
	case unavailable(err):
		err = fmt.Errorf("%w: %w", store.ErrUnavailable, err)
	}
	*errp = fmt.Errorf("pgstore.%s: %w", fmt.Sprintf(format, args...), err)
}
