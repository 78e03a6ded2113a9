package pgstore

import (
	"context"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/storefront/storefront/ledger"
	"github.com/storefront/storefront/store"
)

var (
	_ store.Recordings = (*Store)(nil)
	_ store.Retention  = (*Store)(nil)
)

// CountRecorded implements store.Recordings.
func (s *Store) CountRecorded(ctx context.Context, publisher string, since time.Time) (_, _ int64, err error) {
	defer wrap(&err, "CountRecorded(%q, %v)", publisher, since)
	var decisions, kept int64
	if err := s.pool.QueryRow(ctx, `
		SELECT count(*), count(r.sequence) FROM ledger_entries e
		LEFT JOIN ledger_requests r ON r.publisher_id = e.publisher_id AND r.sequence = e.sequence
		WHERE e.publisher_id = $1 AND e.at >= $2 AND e.task = ''`, publisher, ceilMicro(since)).Scan(&decisions, &kept); err != nil {
		return 0, 0, err
	}
	if decisions == 0 {
		if err := requirePublisher(ctx, s.pool, publisher); err != nil {
			return 0, 0, err
		}
	}
	return decisions, kept, nil
}

// WalkRecorded implements store.Recordings. Entry times never go
// backwards along a chain, so the window is a range of sequences; it is
// read in pages, as WalkLedger reads, up to the head as it was when the
// walk began.
func (s *Store) WalkRecorded(ctx context.Context, publisher string, since time.Time, fn func(ledger.Entry) error) (err error) {
	defer wrap(&err, "WalkRecorded(%q, %v)", publisher, since)
	end, err := s.ledgerLen(ctx, publisher)
	if err != nil {
		return err
	}
	var first *int64
	if err := s.pool.QueryRow(ctx, `SELECT min(sequence) FROM ledger_entries WHERE publisher_id = $1 AND at >= $2`,
		publisher, ceilMicro(since)).Scan(&first); err != nil {
		return err
	}
	if first == nil {
		return nil
	}
	return s.walkEntries(ctx, publisher, *first-1, end, true, func(e ledger.Entry) error {
		if e.Task != "" {
			return nil // not a brief
		}
		return fn(e)
	})
}

// purgeBatch bounds how many ledger requests one statement deletes, so a
// first pass over a long history does not hold its locks for long.
const purgeBatch = 10_000

// Purge implements store.Retention. Each kind is its own statement: a
// pass cut short keeps what it did.
func (s *Store) Purge(ctx context.Context, publisher string, before store.RetainBefore) (_ store.Purged, err error) {
	defer wrap(&err, "Purge(%q)", publisher)
	var out store.Purged
	if err := requirePublisher(ctx, s.pool, publisher); err != nil {
		return out, err
	}
	if !before.Tasks.IsZero() {
		tag, err := s.pool.Exec(ctx, `
			DELETE FROM tasks WHERE publisher_id = $1 AND completed_at < $2
			AND status IN ('completed', 'failed', 'rejected', 'canceled')`, publisher, before.Tasks)
		if err != nil {
			return out, err
		}
		out.Tasks = tag.RowsAffected()
	}
	if !before.Seeds.IsZero() {
		// The catalogue row and its version stay: a later seed starts a
		// new session on it and the version keeps growing, so no cached
		// snapshot of the old fixtures can be taken for the new ones.
		err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
			rows, err := tx.Query(ctx, `
				UPDATE seeded_catalogues c SET session = '' WHERE c.publisher_id = $1 AND c.seeded_at < $2
				AND EXISTS (SELECT 1 FROM seeded_products p WHERE p.publisher_id = c.publisher_id AND p.principal = c.principal)
				RETURNING c.principal`, publisher, before.Seeds)
			if err != nil {
				return err
			}
			principals, err := pgx.CollectRows(rows, pgx.RowTo[string])
			if err != nil {
				return err
			}
			out.Seeds = int64(len(principals))
			_, err = tx.Exec(ctx, `DELETE FROM seeded_products WHERE publisher_id = $1 AND principal = ANY($2::text[])`, publisher, principals)
			return err
		})
		if err != nil {
			return out, err
		}
	}
	if !before.Replays.IsZero() {
		tag, err := s.pool.Exec(ctx, `DELETE FROM replays WHERE publisher_id = $1 AND created_at < $2`, publisher, before.Replays)
		if err != nil {
			return out, err
		}
		out.Replays = tag.RowsAffected()
	}
	if !before.Requests.IsZero() {
		for {
			tag, err := s.pool.Exec(ctx, `
				DELETE FROM ledger_requests WHERE publisher_id = $1 AND sequence IN (
					SELECT sequence FROM ledger_requests WHERE publisher_id = $1 AND at < $2 LIMIT $3)`,
				publisher, before.Requests, purgeBatch)
			if err != nil {
				return out, err
			}
			out.Requests += tag.RowsAffected()
			if tag.RowsAffected() < purgeBatch {
				break
			}
		}
	}
	return out, nil
}

// prefixed qualifies each column of a column list with a table alias.
func prefixed(alias, columns string) string {
	parts := strings.Split(columns, ",")
	for i, c := range parts {
		parts[i] = alias + strings.TrimSpace(c)
	}
	return strings.Join(parts, ", ")
}
