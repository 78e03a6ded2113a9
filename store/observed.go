package store

import (
	"context"
	"time"

	"github.com/storefront/storefront/internal/clock"
	"github.com/storefront/storefront/ledger"
	"github.com/storefront/storefront/metrics"
	"github.com/storefront/storefront/products"
)

// Observed is a Store that counts what buyer calls do to it: how long each
// ledger append waits, directives set and taken, tasks created and
// finished, orders sent to the desk and decided (the order desk's
// decisions go through the same media-buy service, so through it too). The buyer-facing code uses it; the admin API and the snapshot
// cache use the store itself, since the wrapper does not carry the
// optional roles (LedgerWindow, Catalogues, ...).
type Observed struct {
	Store
	Metrics *metrics.Metrics
}

// Append implements Store, timing the wait for durability.
func (o Observed) Append(ctx context.Context, r ledger.Record) (ledger.Entry, error) {
	watch := clock.Start()
	e, err := o.Store.Append(ctx, r)
	if err == nil {
		o.Metrics.LedgerAppend(watch.Elapsed())
	}
	return e, err
}

// SetDirective implements Store.
func (o Observed) SetDirective(ctx context.Context, publisher, account, principal string, d products.Directive) error {
	err := o.Store.SetDirective(ctx, publisher, account, principal, d)
	if err == nil {
		o.Metrics.Directive(publisher, "set")
	}
	return err
}

// SpendDirective implements Store: a directive is taken when the call
// answered with it spends it.
func (o Observed) SpendDirective(ctx context.Context, publisher, account, principal, token string) error {
	err := o.Store.SpendDirective(ctx, publisher, account, principal, token)
	if err == nil {
		o.Metrics.Directive(publisher, "taken")
	}
	return err
}

// CreateTask implements Store.
func (o Observed) CreateTask(ctx context.Context, publisher string, t Task) error {
	err := o.Store.CreateTask(ctx, publisher, t)
	if err == nil {
		o.Metrics.Task(publisher, t.Status)
	}
	return err
}

// FinishTask implements Store.
func (o Observed) FinishTask(ctx context.Context, publisher string, owner TaskOwner, id, status string, result []byte, at time.Time) (Task, error) {
	t, err := o.Store.FinishTask(ctx, publisher, owner, id, status, result, at)
	if err == nil {
		o.Metrics.Task(publisher, status)
	}
	return t, err
}

// CreateOrder implements Store: the order and its submitted task.
func (o Observed) CreateOrder(ctx context.Context, publisher string, ord Order, t Task) error {
	err := o.Store.CreateOrder(ctx, publisher, ord, t)
	if err == nil {
		o.Metrics.Order(publisher, "submitted")
		o.Metrics.Task(publisher, t.Status)
	}
	return err
}

// DecideOrder implements Store: the decision and the task it finishes.
func (o Observed) DecideOrder(ctx context.Context, publisher string, d Decision) (Task, error) {
	t, err := o.Store.DecideOrder(ctx, publisher, d)
	if err == nil {
		o.Metrics.Order(publisher, d.Status)
		o.Metrics.Task(publisher, t.Status)
	}
	return t, err
}
