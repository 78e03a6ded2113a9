package pgstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/storefront/storefront/adcp"
	"github.com/storefront/storefront/mediabuy"
	"github.com/storefront/storefront/store"
)

var _ store.MediaBuys = (*Store)(nil)

func (s *Store) AccountTerms(ctx context.Context, publisher, account string) (_ store.AccountTerms, err error) {
	if store.Unkeepable(publisher, account) {
		return store.AccountTerms{}, store.ErrNotFound
	}
	defer wrap(&err, "AccountTerms(%q, %q)", publisher, account)
	t := store.AccountTerms{Account: account}
	err = s.pool.QueryRow(ctx, `SELECT billing, payment_terms, timezone, status, revision, updated_at
		FROM account_terms WHERE publisher_id = $1 AND account_id = $2`, publisher, account).
		Scan(&t.Billing, &t.PaymentTerms, &t.Timezone, &t.Status, &t.Revision, &t.UpdatedAt)
	t.UpdatedAt = t.UpdatedAt.UTC()
	return t, err
}

func (s *Store) PutAccountTerms(ctx context.Context, publisher string, t store.AccountTerms) (err error) {
	if err := store.CheckStored(t); err != nil {
		return err
	}
	defer wrap(&err, "PutAccountTerms(%q, %q)", publisher, t.Account)
	_, err = s.pool.Exec(ctx, `INSERT INTO account_terms
		(publisher_id, account_id, billing, payment_terms, timezone, status, revision, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
		ON CONFLICT (publisher_id, account_id) DO UPDATE SET billing = $3, payment_terms = $4, timezone = $5,
			status = $6, revision = $7, updated_at = $8`,
		publisher, t.Account, t.Billing, t.PaymentTerms, t.Timezone, t.Status, t.Revision, t.UpdatedAt.UTC())
	return err
}

// scanDocument reads a row of one json column into a T.
func scanDocument[T any](row pgx.CollectableRow) (T, error) {
	var raw []byte
	var v T
	if err := row.Scan(&raw); err != nil {
		return v, err
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		return v, fmt.Errorf("decoding a stored %T: %w", v, err)
	}
	return v, nil
}

var (
	scanBuy   = scanDocument[mediabuy.Buy]
	scanOrder = scanDocument[store.Order]
)

func insertEvents(ctx context.Context, q execer, publisher, id string, events []mediabuy.Event) error {
	for _, e := range events {
		if _, err := q.Exec(ctx, `INSERT INTO media_buy_history
			(publisher_id, media_buy_id, revision, at, actor, action, summary, package_id)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
			publisher, id, e.Revision, e.At.UTC(), e.Actor, e.Action, e.Summary, e.PackageID); err != nil {
			return err
		}
	}
	return nil
}

func createBuy(ctx context.Context, tx pgx.Tx, publisher string, b mediabuy.Buy, created mediabuy.Event) error {
	body, err := json.Marshal(b)
	if err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `INSERT INTO media_buys (publisher_id, id, account, principal, revision, body)
		VALUES ($1, $2, $3, $4, $5, $6)`, publisher, b.ID, b.Account, b.Principal, b.Revision, body); err != nil {
		return err
	}
	return insertEvents(ctx, tx, publisher, b.ID, []mediabuy.Event{created})
}

func (s *Store) CreateBuy(ctx context.Context, publisher string, b mediabuy.Buy, created mediabuy.Event) (err error) {
	if err := store.CheckStored(b, created); err != nil {
		return err
	}
	defer wrap(&err, "CreateBuy(%q, %q)", publisher, b.ID)
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error { return createBuy(ctx, tx, publisher, b, created) })
}

func (s *Store) Buy(ctx context.Context, publisher, id string) (_ mediabuy.Buy, err error) {
	if store.Unkeepable(publisher, id) {
		return mediabuy.Buy{}, store.ErrNotFound
	}
	defer wrap(&err, "Buy(%q, %q)", publisher, id)
	rows, err := s.pool.Query(ctx, `SELECT body FROM media_buys WHERE publisher_id = $1 AND id = $2`, publisher, id)
	if err != nil {
		return mediabuy.Buy{}, err
	}
	return pgx.CollectExactlyOneRow(rows, scanBuy)
}

func (s *Store) Buys(ctx context.Context, publisher string, f store.BuyFilter) (_ []mediabuy.Buy, err error) {
	if store.Unkeepable(append([]string{publisher, f.Account, f.Principal}, f.IDs...)...) {
		return nil, nil
	}
	defer wrap(&err, "Buys(%q, %+v)", publisher, f)
	q := newQuery(`SELECT body FROM media_buys WHERE publisher_id = $1`, publisher)
	if f.Account != "" {
		q.and("account = $%d", f.Account)
	}
	if f.Principal != "" {
		q.and("principal = $%d", f.Principal)
	}
	if len(f.IDs) > 0 {
		q.and("id = ANY ($%d::text[])", f.IDs)
	}
	return listScoped(ctx, s, publisher, scanBuy, q.sql+" ORDER BY position", q.args...)
}

func (s *Store) UpdateBuy(ctx context.Context, publisher string, b mediabuy.Buy, revision int64, events []mediabuy.Event) (err error) {
	if err := store.CheckStored(b, events); err != nil {
		return err
	}
	defer wrap(&err, "UpdateBuy(%q, %q)", publisher, b.ID)
	body, err := json.Marshal(b)
	if err != nil {
		return err
	}
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE media_buys SET revision = $4, body = $5
			WHERE publisher_id = $1 AND id = $2 AND revision = $3`, publisher, b.ID, revision, b.Revision, body)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			var exists bool
			if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM media_buys WHERE publisher_id = $1 AND id = $2)`,
				publisher, b.ID).Scan(&exists); err != nil {
				return err
			}
			if exists {
				return store.ErrConflict
			}
			return store.ErrNotFound
		}
		return insertEvents(ctx, tx, publisher, b.ID, events)
	})
}

func (s *Store) History(ctx context.Context, publisher, id string, limit int) (_ []mediabuy.Event, err error) {
	if store.Unkeepable(publisher, id) {
		return nil, store.ErrNotFound
	}
	defer wrap(&err, "History(%q, %q)", publisher, id)
	if limit <= 0 {
		limit = 1 << 30
	}
	rows, err := s.pool.Query(ctx, `SELECT revision, at, actor, action, summary, package_id FROM (
			SELECT * FROM media_buy_history WHERE publisher_id = $1 AND media_buy_id = $2
			ORDER BY position DESC LIMIT $3) newest ORDER BY position`, publisher, id, limit)
	if err != nil {
		return nil, err
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (mediabuy.Event, error) {
		var e mediabuy.Event
		err := row.Scan(&e.Revision, &e.At, &e.Actor, &e.Action, &e.Summary, &e.PackageID)
		e.At = e.At.UTC()
		return e, err
	})
	if err != nil || len(out) > 0 {
		return out, err
	}
	if _, err := s.Buy(ctx, publisher, id); err != nil {
		return nil, err
	}
	return out, nil
}

// orderBody is an order as stored: its times as PostgreSQL would keep
// them, so that both stores hand back the same instants.
func orderBody(o store.Order) ([]byte, error) {
	o.CreatedAt = o.CreatedAt.UTC().Truncate(time.Microsecond)
	o.DecidedAt = o.DecidedAt.UTC().Truncate(time.Microsecond)
	return json.Marshal(o)
}

func (s *Store) CreateOrder(ctx context.Context, publisher string, o store.Order, t store.Task) (err error) {
	if err := store.CheckStored(o, t); err != nil {
		return err
	}
	defer wrap(&err, "CreateOrder(%q, %q)", publisher, o.TaskID)
	body, err := orderBody(o)
	if err != nil {
		return err
	}
	webhook, err := s.webhookDocument(publisher, t)
	if err != nil {
		return err
	}
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO orders (publisher_id, task_id, status, created_at, body)
			VALUES ($1, $2, $3, $4, $5)`, publisher, o.TaskID, o.Status, o.CreatedAt.UTC(), body); err != nil {
			return err
		}
		return createTask(ctx, tx, publisher, t, webhook, s.now().UTC())
	})
}

func (s *Store) Order(ctx context.Context, publisher, taskID string) (_ store.Order, err error) {
	if store.Unkeepable(publisher, taskID) {
		return store.Order{}, store.ErrNotFound
	}
	defer wrap(&err, "Order(%q, %q)", publisher, taskID)
	rows, err := s.pool.Query(ctx, `SELECT body FROM orders WHERE publisher_id = $1 AND task_id = $2`, publisher, taskID)
	if err != nil {
		return store.Order{}, err
	}
	return pgx.CollectExactlyOneRow(rows, scanOrder)
}

func (s *Store) Orders(ctx context.Context, publisher, status string) (_ []store.Order, err error) {
	if store.Unkeepable(publisher, status) {
		return nil, nil
	}
	defer wrap(&err, "Orders(%q, %q)", publisher, status)
	return listScoped(ctx, s, publisher, scanOrder, `SELECT body FROM orders
		WHERE publisher_id = $1 AND ($2 = '' OR status = $2) ORDER BY created_at DESC, task_id DESC`, publisher, status)
}

func (s *Store) DecideOrder(ctx context.Context, publisher string, d store.Decision) (_ store.Task, err error) {
	if err := store.CheckStored(d); err != nil {
		return store.Task{}, err
	}
	defer wrap(&err, "DecideOrder(%q, %q, %q)", publisher, d.TaskID, d.Status)
	var task store.Task
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT body FROM orders WHERE publisher_id = $1 AND task_id = $2 FOR UPDATE`, publisher, d.TaskID)
		if err != nil {
			return err
		}
		o, err := pgx.CollectExactlyOneRow(rows, scanOrder)
		if err != nil {
			return err
		}
		if o.Status != store.OrderPending {
			return store.ErrConflict
		}
		if task, err = finishTask(ctx, tx, s.taskScanner(publisher), publisher, o.Owner, o.TaskID, d.TaskStatus, d.Result, d.At); err != nil {
			return err
		}
		if d.Status == store.OrderApproved {
			if err := createBuy(ctx, tx, publisher, o.Buy, d.Created); err != nil {
				return err
			}
		}
		o.Status, o.DecidedAt, o.DecidedBy, o.Slug, o.Reason = d.Status, d.At, d.By, d.Slug, d.Reason
		body, err := orderBody(o)
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `UPDATE orders SET status = $3, body = $4 WHERE publisher_id = $1 AND task_id = $2`,
			publisher, d.TaskID, d.Status, body)
		return err
	})
	return task, err
}

func (s *Store) ReportDelivery(ctx context.Context, publisher string, rows []mediabuy.Row) (err error) {
	if err := store.CheckStored(rows); err != nil {
		return err
	}
	defer wrap(&err, "ReportDelivery(%q, %d rows)", publisher, len(rows))
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		// Lock every buy named, in id order, so that concurrent reports
		// for one buy serialise (a simulated row adds to what is there)
		// and reports for several cannot deadlock.
		buys := map[string]mediabuy.Buy{}
		var ids []string
		for _, r := range rows {
			if _, ok := buys[r.MediaBuyID]; !ok {
				buys[r.MediaBuyID] = mediabuy.Buy{}
				ids = append(ids, r.MediaBuyID)
			}
		}
		locked, err := tx.Query(ctx, `SELECT body FROM media_buys WHERE publisher_id = $1 AND id = ANY ($2::text[])
			ORDER BY id FOR UPDATE`, publisher, ids)
		if err != nil {
			return err
		}
		found, err := pgx.CollectRows(locked, scanBuy)
		if err != nil {
			return err
		}
		for _, b := range found {
			buys[b.ID] = b
		}
		for _, r := range rows {
			b := buys[r.MediaBuyID]
			if b.ID == "" || b.Package(r.PackageID) == nil {
				return store.ErrNotFound
			}
		}
		for _, r := range rows {
			var existing *mediabuy.Row
			var raw []byte
			err := tx.QueryRow(ctx, `SELECT metrics FROM delivery_rows WHERE publisher_id = $1 AND media_buy_id = $2
				AND package_id = $3 AND day = $4 AND source = $5`,
				publisher, r.MediaBuyID, r.PackageID, r.Date.Time(), r.Source).Scan(&raw)
			switch {
			case err == nil:
				e := r
				e.Metrics = mediabuy.Metrics{}
				if err := json.Unmarshal(raw, &e.Metrics); err != nil {
					return err
				}
				existing = &e
			case !errors.Is(err, pgx.ErrNoRows):
				return err
			}
			merged := store.MergeDelivery(existing, r)
			metrics, err := json.Marshal(merged.Metrics)
			if err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `INSERT INTO delivery_rows
				(publisher_id, media_buy_id, package_id, day, source, metrics, reported_at)
				VALUES ($1, $2, $3, $4, $5, $6, $7)
				ON CONFLICT (publisher_id, media_buy_id, package_id, day, source)
				DO UPDATE SET metrics = $6, reported_at = $7`,
				publisher, r.MediaBuyID, r.PackageID, r.Date.Time(), r.Source, metrics, r.ReportedAt.UTC()); err != nil {
				return err
			}
		}
		return nil
	})
}

func (s *Store) Delivery(ctx context.Context, publisher string, buyIDs []string) (_ []mediabuy.Row, err error) {
	if store.Unkeepable(append([]string{publisher}, buyIDs...)...) {
		return nil, nil
	}
	defer wrap(&err, "Delivery(%q)", publisher)
	rows, err := s.pool.Query(ctx, `SELECT media_buy_id, package_id, day, source, metrics, reported_at FROM delivery_rows
		WHERE publisher_id = $1 AND media_buy_id = ANY ($2::text[])
		ORDER BY day, media_buy_id, package_id, source`, publisher, buyIDs)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (mediabuy.Row, error) {
		var r mediabuy.Row
		var day time.Time
		var raw []byte
		if err := row.Scan(&r.MediaBuyID, &r.PackageID, &day, &r.Source, &raw, &r.ReportedAt); err != nil {
			return r, err
		}
		r.Date, r.ReportedAt = adcp.DateOf(day), r.ReportedAt.UTC()
		return r, json.Unmarshal(raw, &r.Metrics)
	})
}
