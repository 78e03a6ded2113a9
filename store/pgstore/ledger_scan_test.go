package pgstore_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/storefront/storefront/store/pgstore/pgtest"
)

// TestAppendReadsNoOlderEntries: appending to the ledger must not read
// the entries already in it. PostgreSQL plans a foreign-key check once per
// connection, and a plan made while the ledger was empty may scan all of a
// publisher's entries for each check, so appends slow down as the ledger
// grows. The appends here run on one connection from an empty ledger, as
// a freshly started storefront's do, and the test counts the tuples the
// database read from ledger_entries, which its statistics report once the
// connection has closed.
func TestAppendReadsNoOlderEntries(t *testing.T) {
	url := pgtest.NewDatabase(t)
	s := pgtest.OpenURL(t, url+"&pool_max_conns=1")
	putPublishers(t, s, alpha)
	const n = 600
	for i := range n {
		r := record(alpha.ID, i)
		r.Request = fmt.Appendf(nil, `{"brief":"request %d"}`, i)
		if _, err := s.Append(t.Context(), r); err != nil {
			t.Fatalf("Append %d: %v", i, err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	// The closed connection's counts arrive when its backend exits. The
	// head row is read once an append, so its index's scans say when
	// they have.
	var headScans, read int64
	for {
		err := conn.QueryRow(ctx, `
			SELECT
				(SELECT coalesce(sum(idx_scan), 0) FROM pg_stat_user_indexes WHERE relname = 'ledger_heads'),
				(SELECT coalesce(sum(idx_tup_read), 0) FROM pg_stat_user_indexes WHERE relname = 'ledger_entries')
				+ (SELECT coalesce(seq_tup_read, 0) FROM pg_stat_user_tables WHERE relname = 'ledger_entries')`).Scan(&headScans, &read)
		if err != nil {
			t.Fatal(err)
		}
		if headScans >= n {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the database's statistics never showed the appends: %d head scans of %d", headScans, n)
		case <-time.After(100 * time.Millisecond):
		}
		// A fresh snapshot of the statistics for the next read.
		if _, err := conn.Exec(ctx, `SELECT pg_stat_clear_snapshot()`); err != nil {
			t.Fatal(err)
		}
	}
	if read > 4*n {
		t.Errorf("%d appends read %d tuples of ledger_entries, want at most %d: appending walks the entries already kept", n, read, 4*n)
	}
}
