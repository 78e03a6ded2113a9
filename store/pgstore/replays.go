package pgstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/storefront/storefront/store"
)

const replayColumns = `scope, idempotency_key, request_hash, done, payload, failed, slug, created_at`

func scanReplay(row pgx.CollectableRow) (store.Replay, error) {
	var r store.Replay
	err := row.Scan(&r.Scope, &r.Key, &r.RequestHash, &r.Done, &r.Payload, &r.Failed, &r.Slug, &r.CreatedAt)
	r.CreatedAt = r.CreatedAt.UTC()
	return r, err
}

// ReserveReplay claims the key with one INSERT ... ON CONFLICT DO UPDATE.
// The primary key makes the claim exclusive across replicas: of several
// concurrent inserts of a fresh key exactly one creates the row, and the
// others wait for it and find it. The DO UPDATE takes over a reservation
// only while it is in flight and stale, and Postgres re-checks that
// condition on the row as the previous locker committed it, so of several
// replicas taking over one stale reservation exactly one succeeds.
//
// The reservation's time and its staleness are read from the program's
// clock, as every other time the store stamps is (replicas keep their
// clocks in step as they must for the ledger's times), never from the
// database's: a pinned or shifted clock then ages records it made itself.
func (s *Store) ReserveReplay(ctx context.Context, publisher string, r store.Replay, staleAfter time.Duration) (_ *store.Replay, err error) {
	defer wrap(&err, "ReserveReplay(%q, %q, %q)", publisher, r.Scope, r.Key)
	// The reservation can vanish between the claim that failed and the
	// read (released or purged by another replica): then claim again.
	for range 3 {
		tag, err := s.pool.Exec(ctx, `
			INSERT INTO replays (publisher_id, scope, idempotency_key, request_hash, created_at)
			VALUES ($1, $2, $3, $4, $6)
			ON CONFLICT (publisher_id, scope, idempotency_key) DO UPDATE SET
				request_hash = EXCLUDED.request_hash, created_at = EXCLUDED.created_at,
				done = false, payload = NULL, failed = false, slug = ''
			WHERE NOT replays.done AND replays.created_at <= $6::timestamptz - $5::bigint * interval '1 microsecond'`,
			publisher, r.Scope, r.Key, r.RequestHash, staleAfter.Microseconds(), s.now().UTC())
		if err != nil {
			return nil, err
		}
		if tag.RowsAffected() == 1 {
			return nil, nil
		}
		rows, err := s.pool.Query(ctx, `SELECT `+replayColumns+` FROM replays
			WHERE publisher_id = $1 AND scope = $2 AND idempotency_key = $3`, publisher, r.Scope, r.Key)
		if err != nil {
			return nil, err
		}
		existing, err := pgx.CollectExactlyOneRow(rows, scanReplay)
		if errors.Is(err, pgx.ErrNoRows) {
			continue
		}
		if err != nil {
			return nil, err
		}
		return &existing, nil
	}
	return nil, fmt.Errorf("the key kept being released concurrently")
}

// CompleteReplay stores the response, as memstore does whether or not the
// record is still in flight: the interface names no reservation to check.
func (s *Store) CompleteReplay(ctx context.Context, publisher, scope, key string, payload []byte, failed bool, slug string) (err error) {
	defer wrap(&err, "CompleteReplay(%q, %q, %q)", publisher, scope, key)
	tag, err := s.pool.Exec(ctx, `
		UPDATE replays SET done = true, payload = $4, failed = $5, slug = $6
		WHERE publisher_id = $1 AND scope = $2 AND idempotency_key = $3`,
		publisher, scope, key, payload, failed, slug)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return store.ErrNotFound
	}
	return nil
}

// ReleaseReplay deletes the record only while it is in flight: a completed
// response stays, so a late release never un-caches it.
func (s *Store) ReleaseReplay(ctx context.Context, publisher, scope, key string) (err error) {
	defer wrap(&err, "ReleaseReplay(%q, %q, %q)", publisher, scope, key)
	tag, err := s.pool.Exec(ctx, `
		DELETE FROM replays WHERE publisher_id = $1 AND scope = $2 AND idempotency_key = $3 AND NOT done`,
		publisher, scope, key)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return requirePublisher(ctx, s.pool, publisher)
	}
	return nil
}

func (s *Store) PurgeReplays(ctx context.Context, publisher string, before time.Time) (_ int64, err error) {
	defer wrap(&err, "PurgeReplays(%q, %v)", publisher, before)
	tag, err := s.pool.Exec(ctx, `DELETE FROM replays WHERE publisher_id = $1 AND created_at < $2`, publisher, before)
	if err != nil {
		return 0, err
	}
	if tag.RowsAffected() == 0 {
		return 0, requirePublisher(ctx, s.pool, publisher)
	}
	return tag.RowsAffected(), nil
}
