package pgstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/storefront/storefront/store"
	"github.com/storefront/storefront/vocab"
)

const replayColumns = `scope, idempotency_key, request_hash, done, payload, failed, slug, created_at, expires_at`

func scanReplay(row pgx.CollectableRow) (store.Replay, error) {
	var r store.Replay
	err := row.Scan(&r.Scope, &r.Key, &r.RequestHash, &r.Done, &r.Payload, &r.Failed, &r.Slug, &r.CreatedAt, &r.Expires)
	r.CreatedAt, r.Expires = r.CreatedAt.UTC(), r.Expires.UTC()
	return r, err
}

// errNoToken refuses a reservation or claim without an owner: it could
// never be completed, released or told apart from another's.
var errNoToken = errors.New("a reservation needs an ownership token")

// ReserveReplay claims the key with one INSERT ... ON CONFLICT DO UPDATE.
// The primary key makes the claim exclusive across replicas: of several
// concurrent inserts of a fresh key exactly one creates the row, and the
// others wait for it and find it. The DO UPDATE takes over a reservation
// only while it is in flight and its lease has ended, and Postgres
// re-checks that condition on the row as the previous locker committed
// it, so of several replicas taking over one reservation exactly one
// succeeds; the row then carries the new owner's token, and every write
// of the old owner's is conditional on its own.
//
// Times come from the store's clock (SetClock): the lease's end is
// stamped on the row, and replicas judge it against their own clocks,
// which must agree to well within the lease.
func (s *Store) ReserveReplay(ctx context.Context, publisher string, r store.Replay, lease time.Duration) (_ *store.Replay, err error) {
	defer wrap(&err, "ReserveReplay(%q, %q, %q)", publisher, r.Scope, r.Key)
	if r.Token == "" {
		return nil, errNoToken
	}
	// The reservation can vanish between the claim that failed and the
	// read (released or purged by another replica): then claim again.
	for range 3 {
		now := s.now().UTC()
		tag, err := s.pool.Exec(ctx, `
			INSERT INTO replays (publisher_id, scope, idempotency_key, request_hash, token, created_at, expires_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7)
			ON CONFLICT (publisher_id, scope, idempotency_key) DO UPDATE SET
				request_hash = EXCLUDED.request_hash, token = EXCLUDED.token,
				created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at,
				done = false, payload = NULL, failed = false, slug = ''
			WHERE NOT replays.done AND replays.expires_at <= EXCLUDED.created_at`,
			publisher, r.Scope, r.Key, r.RequestHash, r.Token, now, now.Add(lease))
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

// CompleteReplay stores the response only while token owns the key in
// flight: an owner whose lease ran out and was taken over writes nothing.
func (s *Store) CompleteReplay(ctx context.Context, publisher, scope, key, token string, payload []byte, failed bool, slug vocab.Slug) (err error) {
	defer wrap(&err, "CompleteReplay(%q, %q, %q)", publisher, scope, key)
	tag, err := s.pool.Exec(ctx, `
		UPDATE replays SET done = true, payload = $5, failed = $6, slug = $7
		WHERE publisher_id = $1 AND scope = $2 AND idempotency_key = $3 AND token = $4 AND token <> '' AND NOT done`,
		publisher, scope, key, token, payload, failed, string(slug))
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 1 {
		return nil
	}
	var exists bool
	if err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM replays
		WHERE publisher_id = $1 AND scope = $2 AND idempotency_key = $3)`, publisher, scope, key).Scan(&exists); err != nil {
		return err
	}
	if exists {
		return store.ErrConflict
	}
	return store.ErrNotFound
}

// ReleaseReplay deletes the record only while token owns it in flight: a
// completed response stays, so a late release never un-caches it, and a
// newer owner's reservation stays too.
func (s *Store) ReleaseReplay(ctx context.Context, publisher, scope, key, token string) (err error) {
	defer wrap(&err, "ReleaseReplay(%q, %q, %q)", publisher, scope, key)
	tag, err := s.pool.Exec(ctx, `
		DELETE FROM replays WHERE publisher_id = $1 AND scope = $2 AND idempotency_key = $3
			AND token = $4 AND token <> '' AND NOT done`,
		publisher, scope, key, token)
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
