package pgstore_test

import (
	"testing"

	"github.com/storefront/storefront/store/pgstore/pgtest"
)

// TestNoColumnDefaultReadsTheDatabaseClock: no column of the migrated
// schema takes its value from the database's clock, so a write that left
// out a time fails (NOT NULL) rather than being stamped with a time the
// program's clock never gave. (Queries that call now() are caught in the
// source by internal/clock's TestNoWallClock.) goose's own table, which
// records when each migration ran, is not the storefront's data.
func TestNoColumnDefaultReadsTheDatabaseClock(t *testing.T) {
	s := pgtest.Open(t)
	rows, err := s.Pool().Query(t.Context(), `
		SELECT table_name, column_name, column_default FROM information_schema.columns
		WHERE table_schema = current_schema() AND table_name <> 'goose_db_version' AND column_default ~* '(now|clock_timestamp|statement_timestamp|transaction_timestamp|timeofday)\s*\(|current_(timestamp|date|time)|localtime'
		ORDER BY table_name, column_name`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var table, column, def string
		if err := rows.Scan(&table, &column, &def); err != nil {
			t.Fatal(err)
		}
		t.Errorf("%s.%s DEFAULT %s: the database's clock; pass the program's time in the INSERT and drop the default", table, column, def)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
}
