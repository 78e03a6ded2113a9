package store

import (
	"context"
	"time"

	"github.com/storefront/storefront/audit"
)

// Audit keeps each publisher's audit trail of admin actions: a hash chain
// (package audit) appended under the same discipline as the decision
// ledger, one chain per publisher across every replica.
type Audit interface {
	// AppendAudit adds r to its publisher's trail, timed at (never before
	// the newest entry), and returns the entry once it is durable.
	// ErrNotFound: no such publisher.
	AppendAudit(ctx context.Context, r audit.Record, at time.Time) (audit.Entry, error)
	// AuditTrail lists the publisher's entries matching f, newest first.
	AuditTrail(ctx context.Context, publisher string, f audit.Filter) ([]audit.Entry, error)
	// WalkAudit calls fn on every entry of the trail in sequence order,
	// up to the head as it was when the walk began.
	WalkAudit(ctx context.Context, publisher string, fn func(audit.Entry) error) error
	// AuditHead is where the publisher's trail stands.
	AuditHead(ctx context.Context, publisher string) (audit.Head, error)
}

// VerifyAudit walks a publisher's trail and names its first broken entry.
func VerifyAudit(ctx context.Context, s Audit, publisher string) (audit.Result, error) {
	head, err := s.AuditHead(ctx, publisher)
	if err != nil {
		return audit.Result{}, err
	}
	return audit.Verify(head, func(fn func(audit.Entry) error) error {
		return s.WalkAudit(ctx, publisher, fn)
	})
}
