package pgstore

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/storefront/storefront/ledger"
	"github.com/storefront/storefront/store"
)

// Append seals r onto the publisher's chain. The chain-head row is locked
// for the length of the transaction, so appends from every replica take
// turns: each computes ledger.Next from the head it locked, inserts the
// entry and moves the head, and the next one sees the new head. The entry
// is returned only after the commit, that is once it is durable.
func (s *Store) Append(ctx context.Context, r ledger.Record) (_ ledger.Entry, err error) {
	defer wrap(&err, "Append(%q)", r.Publisher)
	var e ledger.Entry
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var (
			seq  int64
			hash string
			last *time.Time
		)
		if err := tx.QueryRow(ctx, `SELECT sequence, hash, at FROM ledger_heads WHERE publisher_id = $1 FOR UPDATE`,
			r.Publisher).Scan(&seq, &hash, &last); err != nil {
			return err
		}
		var prev *ledger.Entry
		if seq > 0 {
			prev = &ledger.Entry{Sequence: seq, Hash: hash}
		}
		// Read the clock only once the lock is held, and never go behind
		// the previous entry: replicas' clocks may disagree a little.
		at := s.now()
		if last != nil && at.Before(*last) {
			at = *last
		}
		r.RuleIDs = append([]string(nil), r.RuleIDs...)
		e = ledger.Next(prev, r, at)
		ruleIDs := e.RuleIDs
		if ruleIDs == nil {
			ruleIDs = []string{}
		}
		_, err := tx.Exec(ctx, `
			WITH entry AS (
				INSERT INTO ledger_entries (publisher_id, sequence, at, account, principal, request_digest,
					rulebook_version, arm, slug, rule_ids, response_digest, sandbox, forced, prev_hash, hash)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)
			)
			UPDATE ledger_heads SET sequence = $2, hash = $15, at = $3 WHERE publisher_id = $1`,
			e.Publisher, e.Sequence, e.Time, e.Account, e.Principal, e.RequestDigest,
			e.RulebookVersion, e.Arm, e.Slug, ruleIDs, e.ResponseDigest, e.Sandbox, e.Forced, e.PrevHash, e.Hash)
		return err
	})
	if err != nil {
		return ledger.Entry{}, err
	}
	return e, nil
}

const entryColumns = `publisher_id, sequence, at, account, principal, request_digest,
	rulebook_version, arm, slug, rule_ids, response_digest, sandbox, forced, prev_hash, hash`

func scanEntry(row pgx.CollectableRow) (ledger.Entry, error) {
	var e ledger.Entry
	err := row.Scan(&e.Publisher, &e.Sequence, &e.Time, &e.Account, &e.Principal, &e.RequestDigest,
		&e.RulebookVersion, &e.Arm, &e.Slug, &e.RuleIDs, &e.ResponseDigest, &e.Sandbox, &e.Forced, &e.PrevHash, &e.Hash)
	// The hash covers the time as UTC text; pgx hands it back in the
	// local zone.
	e.Time = e.Time.UTC()
	if len(e.RuleIDs) == 0 {
		e.RuleIDs = nil
	}
	return e, err
}

// ceilMicro rounds t up to the microsecond. Entry times are whole
// microseconds and pgx truncates parameters to them, so comparing against
// the rounded-up bound selects exactly what store.Matches selects.
func ceilMicro(t time.Time) time.Time {
	if c := t.Truncate(time.Microsecond); !c.Equal(t) {
		return c.Add(time.Microsecond)
	}
	return t
}

// Decisions pushes every filter into SQL, agreeing with store.Matches.
func (s *Store) Decisions(ctx context.Context, publisher string, f store.DecisionFilter) (_ []ledger.Entry, err error) {
	defer wrap(&err, "Decisions(%q, %+v)", publisher, f)
	// Only fixed fragments are concatenated; every value is a parameter.
	q := `SELECT ` + entryColumns + ` FROM ledger_entries WHERE publisher_id = $1`
	args := []any{publisher}
	where := func(cond string, v any) {
		args = append(args, v)
		q += fmt.Sprintf(" AND "+cond, len(args))
	}
	if f.Arm != "" {
		where("arm = $%d", f.Arm)
	}
	if f.Slug != "" {
		where("slug = $%d", f.Slug)
	}
	if f.Account != "" {
		where("account = $%d", f.Account)
	}
	if !f.Since.IsZero() {
		where("at >= $%d", ceilMicro(f.Since))
	}
	if !f.Until.IsZero() {
		where("at < $%d", ceilMicro(f.Until))
	}
	if f.Before > 0 {
		where("sequence < $%d", f.Before)
	}
	limit := f.Limit
	if limit <= 0 {
		limit = 100
	}
	args = append(args, limit)
	q += fmt.Sprintf(" ORDER BY sequence DESC LIMIT $%d", len(args))
	rows, err := s.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	out, err := pgx.CollectRows(rows, scanEntry)
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		if err := requirePublisher(ctx, s.pool, publisher); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// walkPage is how many entries WalkLedger reads at a time.
const walkPage = 500

// WalkLedger reads the chain in pages by sequence, up to the head as it was
// when the walk began, so memory stays flat however long the chain is and
// no connection is held while fn runs. Entries are immutable, so pages
// read at different moments still form one chain.
func (s *Store) WalkLedger(ctx context.Context, publisher string, fn func(ledger.Entry) error) (err error) {
	defer wrap(&err, "WalkLedger(%q)", publisher)
	end, err := s.ledgerLen(ctx, publisher)
	if err != nil {
		return err
	}
	var after int64
	for after < end {
		rows, err := s.pool.Query(ctx, `SELECT `+entryColumns+` FROM ledger_entries
			WHERE publisher_id = $1 AND sequence > $2 AND sequence <= $3
			ORDER BY sequence LIMIT $4`, publisher, after, end, walkPage)
		if err != nil {
			return err
		}
		page, err := pgx.CollectRows(rows, scanEntry)
		if err != nil {
			return err
		}
		if len(page) == 0 {
			// Rows missing below the head: the verifier has already been
			// shown the gap, or the caller sees fewer entries than
			// LedgerLen.
			return nil
		}
		for _, e := range page {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := fn(e); err != nil {
				return err
			}
		}
		after = page[len(page)-1].Sequence
	}
	return nil
}

// LedgerLen is the head's sequence: the chain's length by construction.
func (s *Store) LedgerLen(ctx context.Context, publisher string) (_ int64, err error) {
	defer wrap(&err, "LedgerLen(%q)", publisher)
	return s.ledgerLen(ctx, publisher)
}

func (s *Store) ledgerLen(ctx context.Context, publisher string) (int64, error) {
	var n int64
	err := s.pool.QueryRow(ctx, `SELECT sequence FROM ledger_heads WHERE publisher_id = $1`, publisher).Scan(&n)
	return n, err
}
