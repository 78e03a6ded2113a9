package pgstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/storefront/storefront/store"
)

// terminalStatuses are the statuses store.Task.Terminal reports terminal,
// drawn from every AdCP task status so that the two cannot disagree about
// any of them. FinishTask moves a task only out of a status not in it.
var terminalStatuses = func() []string {
	var out []string
	for _, status := range []string{"submitted", "working", "input-required", "auth-required",
		"completed", "failed", "rejected", "canceled", "unknown"} {
		if (store.Task{Status: status}).Terminal() {
			out = append(out, status)
		}
	}
	return out
}()

const taskColumns = `id, account, principal, type, status, message, request, result, webhook,
	created_at, updated_at, completed_at,
	delivery_idempotency_key, delivery_timestamp, delivery_attempts, delivery_last_error, delivered_at`

func scanTask(row pgx.CollectableRow) (store.Task, error) {
	var (
		t                                store.Task
		webhook                          []byte
		completed, deliveryAt, delivered *time.Time
	)
	if err := row.Scan(&t.ID, &t.Owner.Account, &t.Owner.Principal, &t.Type, &t.Status, &t.Message,
		&t.Request, &t.Result, &webhook, &t.CreatedAt, &t.UpdatedAt, &completed,
		&t.Delivery.IdempotencyKey, &deliveryAt, &t.Delivery.Attempts, &t.Delivery.LastError, &delivered); err != nil {
		return t, err
	}
	if webhook != nil {
		t.Webhook = new(store.Webhook)
		if err := json.Unmarshal(webhook, t.Webhook); err != nil {
			return t, fmt.Errorf("task %s: decoding the webhook: %w", t.ID, err)
		}
	}
	t.CreatedAt, t.UpdatedAt = t.CreatedAt.UTC(), t.UpdatedAt.UTC()
	t.CompletedAt, t.Delivery.DeliveredAt = utcPtr(completed), utcPtr(delivered)
	if deliveryAt != nil {
		t.Delivery.Timestamp = deliveryAt.UTC()
	}
	return t, nil
}

func utcPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

// nullTime stores the zero time as NULL.
func nullTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

// webhookDocument is the webhook column's value, its secrets sealed:
// NULL without one.
func (s *Store) webhookDocument(publisher string, t store.Task) ([]byte, error) {
	if t.Webhook == nil {
		return nil, nil
	}
	w, err := store.SealWebhook(s.keyring(), publisher, t.Owner, t.ID, *t.Webhook)
	if err != nil {
		return nil, fmt.Errorf("task %s: %w", t.ID, err)
	}
	return json.Marshal(w)
}

// taskScanner scans a publisher's task rows, opening their webhooks'
// secrets.
func (s *Store) taskScanner(publisher string) pgx.RowToFunc[store.Task] {
	k := s.keyring()
	return func(row pgx.CollectableRow) (store.Task, error) {
		t, err := scanTask(row)
		if err != nil || t.Webhook == nil {
			return t, err
		}
		w, err := store.OpenWebhook(k, publisher, t.Owner, t.ID, *t.Webhook)
		if err != nil {
			return t, fmt.Errorf("task %s: %w", t.ID, err)
		}
		t.Webhook = &w
		return t, nil
	}
}

// CreateTask inserts the task, timed now. The primary key includes the
// owner: the same id under another owner is another task, and under the
// same owner the insert fails with a unique violation, that is ErrExists.
func (s *Store) CreateTask(ctx context.Context, publisher string, t store.Task) (err error) {
	if err := store.CheckStored(t); err != nil {
		return err
	}
	defer wrap(&err, "CreateTask(%q, %q)", publisher, t.ID)
	webhook, err := s.webhookDocument(publisher, t)
	if err != nil {
		return err
	}
	return createTask(ctx, s.pool, publisher, t, webhook, s.now().UTC())
}

// execer is what both the pool and a transaction offer for writing.
type execer interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

// createTask inserts a task, timed now, in q.
func createTask(ctx context.Context, q execer, publisher string, t store.Task, webhook []byte, now time.Time) error {
	_, err := q.Exec(ctx, `
		INSERT INTO tasks (publisher_id, account, principal, id, type, status, message, request, result, webhook,
			created_at, updated_at, completed_at,
			delivery_idempotency_key, delivery_timestamp, delivery_attempts, delivery_last_error, delivered_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $11, $12, $13, $14, $15, $16, $17)`,
		publisher, t.Owner.Account, t.Owner.Principal, t.ID, t.Type, t.Status, t.Message, t.Request, t.Result, webhook,
		now, t.CompletedAt,
		t.Delivery.IdempotencyKey, nullTime(t.Delivery.Timestamp), t.Delivery.Attempts, t.Delivery.LastError, t.Delivery.DeliveredAt)
	return err
}

func (s *Store) Task(ctx context.Context, publisher string, owner store.TaskOwner, id string) (_ store.Task, err error) {
	if store.Unkeepable(publisher, owner.Account, owner.Principal, id) {
		return store.Task{}, store.ErrNotFound
	}
	defer wrap(&err, "Task(%q, %q)", publisher, id)
	rows, err := s.pool.Query(ctx, `SELECT `+taskColumns+` FROM tasks
		WHERE publisher_id = $1 AND account = $2 AND principal = $3 AND id = $4`,
		publisher, owner.Account, owner.Principal, id)
	if err != nil {
		return store.Task{}, err
	}
	return pgx.CollectExactlyOneRow(rows, s.taskScanner(publisher))
}

// PrincipalTasks reads a principal's tasks with one id across its accounts.
// Accounts break ties byte by byte, as memstore compares them.
func (s *Store) PrincipalTasks(ctx context.Context, publisher, principal, id string) (_ []store.Task, err error) {
	if store.Unkeepable(publisher, principal, id) {
		return nil, nil
	}
	defer wrap(&err, "PrincipalTasks(%q, %q)", publisher, id)
	if err := requirePublisher(ctx, s.pool, publisher); err != nil {
		return nil, err
	}
	rows, err := s.pool.Query(ctx, `SELECT `+taskColumns+` FROM tasks
		WHERE publisher_id = $1 AND principal = $2 AND id = $3
		ORDER BY created_at DESC, account COLLATE "C"`, publisher, principal, id)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, s.taskScanner(publisher))
}

// ListTasks counts the matching tasks and reads the page in one
// repeatable-read transaction, so the total and the page agree.
func (s *Store) ListTasks(ctx context.Context, publisher string, owner store.TaskOwner, f store.TaskFilter) (_ []store.Task, _ int, err error) {
	if store.Unkeepable(publisher, owner.Account, owner.Principal, f.Type) || store.Unkeepable(f.IDs...) || store.Unkeepable(f.Statuses...) {
		return nil, 0, nil
	}
	defer wrap(&err, "ListTasks(%q)", publisher)
	// A nil slice would be NULL, which matches nothing; empty means any.
	ids, statuses := f.IDs, f.Statuses
	if ids == nil {
		ids = []string{}
	}
	if statuses == nil {
		statuses = []string{}
	}
	var limit *int64 // NULL: no limit
	if f.Limit > 0 {
		l := int64(f.Limit)
		limit = &l
	}
	offset := max(f.Offset, 0)
	const where = `publisher_id = $1 AND account = $2 AND principal = $3
		AND (cardinality($4::text[]) = 0 OR id = ANY ($4::text[]))
		AND ($5::text = '' OR type = $5::text)
		AND (cardinality($6::text[]) = 0 OR status = ANY ($6::text[]))
		AND ($7::boolean IS NULL OR (webhook IS NOT NULL) = $7::boolean)`
	args := []any{publisher, owner.Account, owner.Principal, ids, f.Type, statuses, f.HasWebhook}
	var (
		out   []store.Task
		total int
	)
	err = pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM tasks WHERE `+where, args...).Scan(&total); err != nil {
			return err
		}
		if total == 0 {
			out = []store.Task{}
			return requirePublisher(ctx, tx, publisher)
		}
		rows, err := tx.Query(ctx, `SELECT `+taskColumns+` FROM tasks WHERE `+where+`
			ORDER BY created_at DESC, id LIMIT $8 OFFSET $9`, append(args, limit, offset)...)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, s.taskScanner(publisher))
		return err
	})
	if err != nil {
		return nil, 0, err
	}
	return out, total, nil
}

// FinishTask is one conditional UPDATE: it moves the task only out of a
// non-terminal status. Of several concurrent finishers the first to lock
// the row wins; the others wait, re-check the condition against the
// status it committed, match nothing and get ErrConflict.
func (s *Store) FinishTask(ctx context.Context, publisher string, owner store.TaskOwner, id, status string, result []byte, at time.Time) (_ store.Task, err error) {
	if err := store.CheckStored(status); err != nil {
		return store.Task{}, err
	}
	if store.Unkeepable(publisher, owner.Account, owner.Principal, id) {
		return store.Task{}, store.ErrNotFound
	}
	defer wrap(&err, "FinishTask(%q, %q, %q)", publisher, id, status)
	return finishTask(ctx, s.pool, s.taskScanner(publisher), publisher, owner, id, status, result, at)
}

// rowQuerier is what both the pool and a transaction offer for reading.
type rowQuerier interface {
	querier
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// finishTask moves a task out of a non-terminal status, in q (the pool, or
// the transaction of a decision that finishes a task with other writes).
func finishTask(ctx context.Context, q rowQuerier, scan pgx.RowToFunc[store.Task], publisher string, owner store.TaskOwner, id, status string, result []byte, at time.Time) (store.Task, error) {
	rows, err := q.Query(ctx, `
		UPDATE tasks SET status = $5, result = $6, updated_at = $7, completed_at = $7
		WHERE publisher_id = $1 AND account = $2 AND principal = $3 AND id = $4
			AND NOT (status = ANY ($8::text[]))
		RETURNING `+taskColumns,
		publisher, owner.Account, owner.Principal, id, status, result, at.UTC(), terminalStatuses)
	if err != nil {
		return store.Task{}, err
	}
	t, err := pgx.CollectExactlyOneRow(rows, scan)
	if !errors.Is(err, pgx.ErrNoRows) {
		return t, err
	}
	// Tasks are never deleted: if the row is there now, it was there and
	// terminal when the update looked.
	var exists bool
	if err := q.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM tasks
		WHERE publisher_id = $1 AND account = $2 AND principal = $3 AND id = $4)`,
		publisher, owner.Account, owner.Principal, id).Scan(&exists); err != nil {
		return store.Task{}, err
	}
	if exists {
		return store.Task{}, store.ErrConflict
	}
	return store.Task{}, store.ErrNotFound
}

func (s *Store) RecordDelivery(ctx context.Context, publisher string, owner store.TaskOwner, id string, d store.Delivery) (err error) {
	if err := store.CheckStored(d); err != nil {
		return err
	}
	if store.Unkeepable(publisher, owner.Account, owner.Principal, id) {
		return store.ErrNotFound
	}
	defer wrap(&err, "RecordDelivery(%q, %q)", publisher, id)
	tag, err := s.pool.Exec(ctx, `
		UPDATE tasks SET delivery_idempotency_key = $5, delivery_timestamp = $6, delivery_attempts = $7,
			delivery_last_error = $8, delivered_at = $9
		WHERE publisher_id = $1 AND account = $2 AND principal = $3 AND id = $4`,
		publisher, owner.Account, owner.Principal, id,
		d.IdempotencyKey, nullTime(d.Timestamp), d.Attempts, d.LastError, d.DeliveredAt)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return store.ErrNotFound
	}
	return nil
}
