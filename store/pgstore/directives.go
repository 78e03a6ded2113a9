package pgstore

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"

	"github.com/storefront/storefront/products"
	"github.com/storefront/storefront/store"
)

func (s *Store) SetDirective(ctx context.Context, publisher, account, principal string, d products.Directive) (err error) {
	if err := store.CheckDirective(account, principal, d); err != nil {
		return err
	}
	defer wrap(&err, "SetDirective(%q, %q, %q)", publisher, account, principal)
	suggestions := d.Suggestions
	if suggestions == nil {
		suggestions = []string{}
	}
	_, err = s.pool.Exec(ctx, `
		INSERT INTO directives (publisher_id, account, principal, arm, reason, suggestions, task_id, message, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
		ON CONFLICT (publisher_id, account, principal) DO UPDATE SET
			arm = EXCLUDED.arm, reason = EXCLUDED.reason, suggestions = EXCLUDED.suggestions,
			task_id = EXCLUDED.task_id, message = EXCLUDED.message, created_at = EXCLUDED.created_at`,
		publisher, account, principal, d.Arm, d.Reason, suggestions, d.TaskID, d.Message, s.now().UTC())
	return err
}

// TakeDirective deletes and returns the directive in one statement. Of
// several replicas taking the same directive, the first DELETE to lock the
// row gets it; the others wait on the lock, find the row gone and get nil.
func (s *Store) TakeDirective(ctx context.Context, publisher, account, principal string) (_ *products.Directive, err error) {
	if store.Unkeepable(publisher, account, principal) {
		return nil, nil
	}
	defer wrap(&err, "TakeDirective(%q, %q, %q)", publisher, account, principal)
	var d products.Directive
	err = s.pool.QueryRow(ctx, `
		DELETE FROM directives WHERE publisher_id = $1 AND account = $2 AND principal = $3
		RETURNING arm, reason, suggestions, task_id, message`,
		publisher, account, principal).Scan(&d.Arm, &d.Reason, &d.Suggestions, &d.TaskID, &d.Message)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, requirePublisher(ctx, s.pool, publisher)
	}
	if err != nil {
		return nil, err
	}
	if len(d.Suggestions) == 0 {
		d.Suggestions = nil
	}
	return &d, nil
}
