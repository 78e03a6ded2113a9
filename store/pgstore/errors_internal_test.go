package pgstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/puddle/v2"

	"github.com/storefront/storefront/store"
)

// TestUnavailableByType: what counts as the database being unavailable is
// decided by error type and SQLSTATE, never by words in the message. A
// constraint violation that mentions a connection is a plain failure; a
// server out of connections is unavailable whatever it says.
func TestUnavailableByType(t *testing.T) {
	for _, test := range []struct {
		name string
		err  error
		want bool
	}{
		{"admin shutdown (57P01)", &pgconn.PgError{Code: "57P01", Message: "terminating connection due to administrator command"}, true},
		{"starting up (57P03)", &pgconn.PgError{Code: "57P03", Message: "the database system is starting up"}, true},
		{"too many clients (53300)", &pgconn.PgError{Code: "53300", Message: "sorry, too many clients already"}, true},
		{"statement cancelled (57014)", &pgconn.PgError{Code: "57014", Message: "canceling statement due to statement timeout"}, true},
		{"connection failure (08006)", &pgconn.PgError{Code: "08006", Message: "x"}, true},
		{"check violation that mentions a connection", &pgconn.PgError{Code: "23514", Message: `new row violates check constraint "connect_window"`}, false},
		{"undefined table", &pgconn.PgError{Code: "42P01", Message: `relation "closed pool" does not exist`}, false},
		{"closed pool", fmt.Errorf("acquire: %w", puddle.ErrClosedPool), true},
		{"closed connection", fmt.Errorf("query: %w", pgconn.ErrConnClosed), true},
		{"connection lost mid-reply", fmt.Errorf("read: %w", io.ErrUnexpectedEOF), true},
		{"deadline", fmt.Errorf("query: %w", context.DeadlineExceeded), true},
		{"a message that mentions connecting", errors.New("cannot connect the dots: closed pool of candidates"), false},
	} {
		if got := unavailable(test.err); got != test.want {
			t.Errorf("unavailable(%s) = %v, want %v", test.name, got, test.want)
		}
		err := test.err
		wrap(&err, "Test()")
		if got := errors.Is(err, store.ErrUnavailable); got != test.want {
			t.Errorf("wrap(%s) is ErrUnavailable: %v, want %v", test.name, got, test.want)
		}
		if !errors.Is(err, test.err) {
			t.Errorf("wrap(%s) lost the original error: %v", test.name, err)
		}
	}
}
