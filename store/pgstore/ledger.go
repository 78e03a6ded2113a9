package pgstore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/storefront/storefront/internal/clock"
	"github.com/storefront/storefront/internal/recovery"
	"github.com/storefront/storefront/ledger"
	"github.com/storefront/storefront/store"
)

// maxBatch is the most entries one ledger transaction appends.
const maxBatch = 512

// appendTimeout bounds one ledger transaction. It is not tied to any one
// caller's context: a batch carries many callers' entries.
const appendTimeout = 30 * time.Second

// appendReq is one Append waiting for its batch.
type appendReq struct {
	ctx  context.Context
	rec  ledger.Record
	done chan appendResult
}

type appendResult struct {
	entry ledger.Entry
	err   error
}

// appender groups concurrent appends into batches, one flusher per
// publisher: while a batch's transaction runs, the next calls queue, and
// the flusher takes them all in its next transaction. A batch costs one
// lock of the chain head, one COPY and one commit however many entries it
// holds, so a busy storefront commits many decisions per fsync.
type appender struct {
	mu     sync.Mutex
	queues map[string][]*appendReq
}

// Append seals r onto the publisher's chain and returns once the entry is
// committed, that is durable. Appends are grouped: see appender. Across
// replicas the chain-head row is locked for the length of each batch's
// transaction, so batches from every replica take turns: each computes
// ledger.Next from the head it locked, copies its entries in and moves the
// head, and the next batch sees the new head.
//
// If ctx ends first, Append returns ctx's error at once. The entry is then
// not written if its batch had not started, and may be if it had: a
// decision recorded whose reply never left, never a reply without its
// entry. A record the database refuses fails alone, not its batch.
func (s *Store) Append(ctx context.Context, r ledger.Record) (_ ledger.Entry, err error) {
	if err := store.CheckRecord(&r); err != nil {
		return ledger.Entry{}, err
	}
	defer wrap(&err, "Append(%q)", r.Publisher)
	if err := ctx.Err(); err != nil {
		return ledger.Entry{}, err
	}
	r.RuleIDs = append([]string(nil), r.RuleIDs...)
	if len(r.Request) > store.MaxKeptRequest {
		r.Request = nil
	}
	req := &appendReq{ctx: ctx, rec: r, done: make(chan appendResult, 1)}
	a := &s.appender
	a.mu.Lock()
	if a.queues == nil {
		a.queues = map[string][]*appendReq{}
	}
	q, running := a.queues[r.Publisher]
	a.queues[r.Publisher] = append(q, req)
	a.mu.Unlock()
	if !running {
		go s.flush(r.Publisher)
	}
	select {
	case res := <-req.done:
		return res.entry, res.err
	case <-ctx.Done():
		// The flusher skips entries whose caller has gone by the time
		// their batch starts; one that had already started may still
		// commit, and is then in the chain without a reply.
		return ledger.Entry{}, ctx.Err()
	}
}

// flush appends the publisher's queued entries batch by batch until the
// queue is empty, then retires.
func (s *Store) flush(publisher string) {
	a := &s.appender
	for {
		a.mu.Lock()
		q := a.queues[publisher]
		if len(q) == 0 {
			delete(a.queues, publisher)
			a.mu.Unlock()
			return
		}
		n := min(len(q), maxBatch)
		batch := q[:n:n]
		// The key stays present (even empty) while this flusher runs, so
		// Append knows not to start another.
		a.queues[publisher] = q[n:]
		a.mu.Unlock()

		live := batch[:0:0]
		for _, req := range batch {
			if err := req.ctx.Err(); err != nil {
				req.done <- appendResult{err: err}
				continue
			}
			live = append(live, req)
		}
		if len(live) == 0 {
			continue
		}
		entries, err := s.appendRecovered(publisher, live)
		if err != nil && len(live) > 1 && isDataError(err) {
			// One record the database refuses must not fail the others
			// that happened to share its batch: append them one by one,
			// so only the bad one fails.
			for _, req := range live {
				e, err := s.appendRecovered(publisher, []*appendReq{req})
				if err != nil {
					req.done <- appendResult{err: err}
				} else {
					req.done <- appendResult{entry: e[0]}
				}
			}
			continue
		}
		for i, req := range live {
			if err != nil {
				req.done <- appendResult{err: err}
			} else {
				req.done <- appendResult{entry: entries[i]}
			}
		}
	}
}

// errBatchPanicked fails the appends of a batch that panicked.
var errBatchPanicked = errors.New("appending the ledger batch failed inside the storefront")

// appendRecovered is appendBatch under a recover boundary: a batch that
// panics (its transaction rolled back) fails its callers, who answer with
// their transient error, and the flusher goes on to the next; no caller
// is left waiting.
func (s *Store) appendRecovered(publisher string, batch []*appendReq) (entries []ledger.Entry, err error) {
	if recovery.Run(context.Background(), s.log, "background", "appending a ledger batch for "+publisher, func() {
		entries, err = s.appendBatch(publisher, batch)
	}) {
		return nil, errBatchPanicked
	}
	return entries, err
}

// isDataError reports a failure caused by what a batch holds (a value
// the database cannot store, a constraint) rather than by the database
// being unreachable or the transaction being cut short.
func isDataError(err error) bool {
	var pg *pgconn.PgError
	if !errors.As(err, &pg) {
		return false
	}
	class := pg.Code[:2]
	return class == "22" || class == "23"
}

// appendBatch writes one batch in one transaction.
func (s *Store) appendBatch(publisher string, batch []*appendReq) ([]ledger.Entry, error) {
	ctx, cancel := context.WithTimeout(s.closed, appendTimeout)
	defer cancel()
	if s.onBatch != nil {
		watch := clock.Start()
		defer func() { s.onBatch(len(batch), watch.Elapsed()) }()
	}
	entries := make([]ledger.Entry, 0, len(batch))
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		entries = entries[:0]
		var (
			seq  int64
			hash string
			last *time.Time
		)
		if err := tx.QueryRow(ctx, `SELECT sequence, hash, at FROM ledger_heads WHERE publisher_id = $1 FOR UPDATE`,
			publisher).Scan(&seq, &hash, &last); err != nil {
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
		rows := make([][]any, 0, len(batch))
		var requests [][]any
		for _, req := range batch {
			rec := req.rec
			rec.Request = nil
			e := ledger.Next(prev, rec, at)
			if len(req.rec.Request) > 0 {
				requests = append(requests, []any{publisher, e.Sequence, e.Time, req.rec.Request})
			}
			entries = append(entries, e)
			prev = &entries[len(entries)-1]
			ruleIDs := e.RuleIDs
			if ruleIDs == nil {
				ruleIDs = []string{}
			}
			rows = append(rows, []any{e.Publisher, e.Sequence, e.Time, e.Account, e.Principal, e.RequestDigest,
				e.RulebookVersion, e.Task, e.Arm, string(e.Slug), ruleIDs, e.ResponseDigest, e.Sandbox, e.Forced, e.PrevHash, e.Hash})
		}
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{"ledger_entries"}, ledgerCopyColumns, pgx.CopyFromRows(rows)); err != nil {
			return err
		}
		if len(requests) > 0 {
			if _, err := tx.CopyFrom(ctx, pgx.Identifier{"ledger_requests"}, []string{"publisher_id", "sequence", "at", "body"}, pgx.CopyFromRows(requests)); err != nil {
				return err
			}
		}
		head := entries[len(entries)-1]
		_, err := tx.Exec(ctx, `UPDATE ledger_heads SET sequence = $2, hash = $3, at = $4 WHERE publisher_id = $1`,
			publisher, head.Sequence, head.Hash, head.Time)
		return err
	})
	if err != nil {
		return nil, err
	}
	return entries, nil
}

var ledgerCopyColumns = []string{"publisher_id", "sequence", "at", "account", "principal", "request_digest",
	"rulebook_version", "task", "arm", "slug", "rule_ids", "response_digest", "sandbox", "forced", "prev_hash", "hash"}

const entryColumns = `publisher_id, sequence, at, account, principal, request_digest,
	rulebook_version, task, arm, slug, rule_ids, response_digest, sandbox, forced, prev_hash, hash`

func scanEntry(row pgx.CollectableRow) (ledger.Entry, error) { return scanEntryRow(row, false) }

// scanEntryWithRequest scans the entry columns and then its request.
func scanEntryWithRequest(row pgx.CollectableRow) (ledger.Entry, error) {
	return scanEntryRow(row, true)
}

func scanEntryRow(row pgx.CollectableRow, request bool) (ledger.Entry, error) {
	var e ledger.Entry
	dst := []any{&e.Publisher, &e.Sequence, &e.Time, &e.Account, &e.Principal, &e.RequestDigest,
		&e.RulebookVersion, &e.Task, &e.Arm, &e.Slug, &e.RuleIDs, &e.ResponseDigest, &e.Sandbox, &e.Forced, &e.PrevHash, &e.Hash}
	if request {
		dst = append(dst, &e.Request)
	}
	err := row.Scan(dst...)
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
	if store.Unkeepable(publisher, f.Arm, string(f.Slug), f.Account) {
		return nil, nil
	}
	defer wrap(&err, "Decisions(%q, %+v)", publisher, f)
	q := newQuery(`SELECT `+entryColumns+` FROM ledger_entries WHERE publisher_id = $1`, publisher)
	if f.Arm != "" {
		q.and("arm = $%d", f.Arm)
	}
	if f.Slug != "" {
		q.and("slug = $%d", string(f.Slug))
	}
	if f.Account != "" {
		q.and("account = $%d", f.Account)
	}
	if !f.Since.IsZero() {
		q.and("at >= $%d", ceilMicro(f.Since))
	}
	if !f.Until.IsZero() {
		q.and("at < $%d", ceilMicro(f.Until))
	}
	if f.Before > 0 {
		q.and("sequence < $%d", f.Before)
	}
	limit := f.Limit
	if limit <= 0 {
		limit = 100
	}
	q.args = append(q.args, limit)
	return listScoped(ctx, s, publisher, scanEntry, q.sql+fmt.Sprintf(" ORDER BY sequence DESC LIMIT $%d", len(q.args)), q.args...)
}

// query builds a statement from fixed fragments: only they are
// concatenated, and every value is a parameter.
type query struct {
	sql  string
	args []any
}

func newQuery(sql string, args ...any) *query { return &query{sql: sql, args: args} }

// and adds cond, whose %d is the placeholder for v.
func (q *query) and(cond string, v any) {
	q.args = append(q.args, v)
	q.sql += fmt.Sprintf(" AND "+cond, len(q.args))
}

// walkPage is how many entries WalkLedger reads at a time.
const walkPage = 500

// WalkLedger reads the chain in pages by sequence, up to the head as it was
// when the walk began.
func (s *Store) WalkLedger(ctx context.Context, publisher string, fn func(ledger.Entry) error) (err error) {
	defer wrap(&err, "WalkLedger(%q)", publisher)
	end, err := s.ledgerLen(ctx, publisher)
	if err != nil {
		return err
	}
	return s.walkEntries(ctx, publisher, 0, end, false, fn)
}

// walkEntries calls fn on the entries after sequence after, up to end;
// with requests, each carries the request kept beside it.
func (s *Store) walkEntries(ctx context.Context, publisher string, after, end int64, requests bool, fn func(ledger.Entry) error) error {
	q := `SELECT ` + prefixed("e.", entryColumns) + ` FROM ledger_entries e`
	scan := scanEntry
	if requests {
		scan = scanEntryWithRequest
		q = `SELECT ` + prefixed("e.", entryColumns) + `, r.body FROM ledger_entries e
			LEFT JOIN ledger_requests r ON r.publisher_id = e.publisher_id AND r.sequence = e.sequence`
	}
	q += ` WHERE e.publisher_id = $1 AND e.sequence > $2 AND e.sequence <= $3 ORDER BY e.sequence LIMIT $4`
	return walkPages(ctx, s, q, publisher, after, end, scan, func(e ledger.Entry) int64 { return e.Sequence }, fn)
}

// walkPages calls fn on a publisher's chain entries after sequence after,
// up to sequence end, reading walkPage of them at a time with query (whose
// parameters are the publisher, the sequence to start after, end and the
// page size), so memory stays flat however long the chain is and no
// connection is held while fn runs. Entries are immutable, so pages read
// at different moments still form one chain.
func walkPages[T any](ctx context.Context, s *Store, query, publisher string, after, end int64,
	scan pgx.RowToFunc[T], seq func(T) int64, fn func(T) error) error {
	for after < end {
		rows, err := s.pool.Query(ctx, query, publisher, after, end, walkPage)
		if err != nil {
			return err
		}
		page, err := pgx.CollectRows(rows, scan)
		if err != nil {
			return err
		}
		if len(page) == 0 {
			// Rows missing below the head: the verifier has already been
			// shown the gap, or the caller sees fewer entries than the
			// head says.
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
		after = seq(page[len(page)-1])
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
