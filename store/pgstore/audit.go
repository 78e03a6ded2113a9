package pgstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/storefront/storefront/audit"
	"github.com/storefront/storefront/store"
)

var _ store.Audit = (*Store)(nil)

// AppendAudit appends under a lock on the publisher's audit head row, as
// ledger appends do, so that replicas append to one chain in turn. The
// head row is made on a publisher's first action.
func (s *Store) AppendAudit(ctx context.Context, r audit.Record, at time.Time) (_ audit.Entry, err error) {
	defer wrap(&err, "AppendAudit(%q, %q)", r.Publisher, r.Action)
	var e audit.Entry
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO audit_heads (publisher_id) VALUES ($1) ON CONFLICT DO NOTHING`, r.Publisher); err != nil {
			return err
		}
		var head audit.Head
		var last *time.Time
		if err := tx.QueryRow(ctx, `SELECT sequence, hash, at FROM audit_heads WHERE publisher_id = $1 FOR UPDATE`,
			r.Publisher).Scan(&head.Sequence, &head.Hash, &last); err != nil {
			return err
		}
		if last != nil {
			head.Time = last.UTC()
		}
		e = audit.Next(head, r, at)
		detail, err := json.Marshal(e.Detail)
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `
			INSERT INTO audit_entries (publisher_id, sequence, at, actor, token_id, action, target, detail, address, prev_hash, hash)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
			e.Publisher, e.Sequence, e.Time, e.Actor, e.TokenID, string(e.Action), e.Target, string(detail), e.Address,
			e.PrevHash, e.Hash); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `UPDATE audit_heads SET sequence = $2, hash = $3, at = $4 WHERE publisher_id = $1`,
			e.Publisher, e.Sequence, e.Hash, e.Time)
		return err
	})
	return e, err
}

const auditColumns = `publisher_id, sequence, at, actor, token_id, action, target, detail, address, prev_hash, hash`

func scanAudit(row pgx.CollectableRow) (audit.Entry, error) {
	var (
		e              audit.Entry
		action, detail string
	)
	if err := row.Scan(&e.Publisher, &e.Sequence, &e.Time, &e.Actor, &e.TokenID, &action, &e.Target, &detail,
		&e.Address, &e.PrevHash, &e.Hash); err != nil {
		return e, err
	}
	e.Action = audit.Action(action)
	// The hash covers the time as UTC text; pgx hands it back in the
	// local zone.
	e.Time = e.Time.UTC()
	if err := json.Unmarshal([]byte(detail), &e.Detail); err != nil {
		return e, fmt.Errorf("audit entry %d: detail: %w", e.Sequence, err)
	}
	return e, nil
}

// AuditTrail pushes the filter into SQL, agreeing with audit.Filter.Matches.
func (s *Store) AuditTrail(ctx context.Context, publisher string, f audit.Filter) (_ []audit.Entry, err error) {
	if store.Unkeepable(publisher, f.Token, string(f.Action)) {
		return nil, nil
	}
	defer wrap(&err, "AuditTrail(%q, %+v)", publisher, f)
	// Only fixed fragments are concatenated; every value is a parameter.
	q := `SELECT ` + auditColumns + ` FROM audit_entries WHERE publisher_id = $1`
	args := []any{publisher}
	where := func(cond string, v any) {
		args = append(args, v)
		q += " AND " + strings.ReplaceAll(cond, "?", fmt.Sprintf("$%d", len(args)))
	}
	if f.Token != "" {
		where("(token_id = ? OR target = ?)", f.Token)
	}
	if f.Action != "" {
		where("action = ?", string(f.Action))
	}
	if f.Before > 0 {
		where("sequence < ?", f.Before)
	}
	limit := f.Limit
	if limit <= 0 {
		limit = audit.DefaultLimit
	}
	args = append(args, limit)
	q += fmt.Sprintf(" ORDER BY sequence DESC LIMIT $%d", len(args))
	es, err := listScoped(ctx, s, publisher, scanAudit, q, args...)
	if es == nil && err == nil {
		es = []audit.Entry{}
	}
	return es, err
}

// WalkAudit reads the trail in pages, up to the head as it was when the
// walk began.
func (s *Store) WalkAudit(ctx context.Context, publisher string, fn func(audit.Entry) error) (err error) {
	defer wrap(&err, "WalkAudit(%q)", publisher)
	head, err := s.auditHead(ctx, publisher)
	if err != nil {
		return err
	}
	return walkPages(ctx, s, `SELECT `+auditColumns+` FROM audit_entries
		WHERE publisher_id = $1 AND sequence > $2 AND sequence <= $3 ORDER BY sequence LIMIT $4`,
		publisher, 0, head.Sequence, scanAudit, func(e audit.Entry) int64 { return e.Sequence }, fn)
}

func (s *Store) AuditHead(ctx context.Context, publisher string) (_ audit.Head, err error) {
	defer wrap(&err, "AuditHead(%q)", publisher)
	return s.auditHead(ctx, publisher)
}

// auditHead reads the head; a publisher that has no head row yet has an
// empty trail.
func (s *Store) auditHead(ctx context.Context, publisher string) (audit.Head, error) {
	var (
		h    audit.Head
		last *time.Time
	)
	err := s.pool.QueryRow(ctx, `SELECT sequence, hash, at FROM audit_heads WHERE publisher_id = $1`, publisher).
		Scan(&h.Sequence, &h.Hash, &last)
	if errors.Is(err, pgx.ErrNoRows) {
		return audit.Head{}, requirePublisher(ctx, s.pool, publisher)
	}
	if last != nil {
		h.Time = last.UTC()
	}
	return h, err
}
