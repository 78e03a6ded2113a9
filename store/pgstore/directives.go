package pgstore

import (
	"context"
	"errors"
	"time"

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
			task_id = EXCLUDED.task_id, message = EXCLUDED.message, created_at = EXCLUDED.created_at,
			claim_token = '', claimed_until = NULL`,
		publisher, account, principal, d.Arm, d.Reason, suggestions, d.TaskID, d.Message, s.now().UTC())
	return err
}

// ClaimDirective claims the directive in one conditional UPDATE. Of
// several replicas claiming the same directive, the first to lock the
// row claims it; the others wait on the lock, see the claim as it was
// committed, and get nil.
func (s *Store) ClaimDirective(ctx context.Context, publisher, account, principal, token string, lease time.Duration) (_ *products.Directive, err error) {
	if store.Unkeepable(publisher, account, principal) {
		return nil, nil
	}
	defer wrap(&err, "ClaimDirective(%q, %q, %q)", publisher, account, principal)
	if token == "" {
		return nil, errNoToken
	}
	now := s.now().UTC()
	var d products.Directive
	err = s.pool.QueryRow(ctx, `
		UPDATE directives SET claim_token = $4, claimed_until = $6
		WHERE publisher_id = $1 AND account = $2 AND principal = $3
			AND (claim_token = '' OR claimed_until <= $5)
		RETURNING arm, reason, suggestions, task_id, message`,
		publisher, account, principal, token, now, now.Add(lease)).Scan(&d.Arm, &d.Reason, &d.Suggestions, &d.TaskID, &d.Message)
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

// SpendDirective deletes the directive only while token's claim holds.
func (s *Store) SpendDirective(ctx context.Context, publisher, account, principal, token string) (err error) {
	defer wrap(&err, "SpendDirective(%q, %q, %q)", publisher, account, principal)
	tag, err := s.pool.Exec(ctx, `
		DELETE FROM directives WHERE publisher_id = $1 AND account = $2 AND principal = $3
			AND claim_token = $4 AND claim_token <> ''`,
		publisher, account, principal, token)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		if err := requirePublisher(ctx, s.pool, publisher); err != nil {
			return err
		}
		return store.ErrConflict
	}
	return nil
}

// ReleaseDirective clears token's claim, if it still holds.
func (s *Store) ReleaseDirective(ctx context.Context, publisher, account, principal, token string) (err error) {
	defer wrap(&err, "ReleaseDirective(%q, %q, %q)", publisher, account, principal)
	tag, err := s.pool.Exec(ctx, `
		UPDATE directives SET claim_token = '', claimed_until = NULL
		WHERE publisher_id = $1 AND account = $2 AND principal = $3 AND claim_token = $4 AND claim_token <> ''`,
		publisher, account, principal, token)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return requirePublisher(ctx, s.pool, publisher)
	}
	return nil
}
