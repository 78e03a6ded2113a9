package buying

import (
	"context"
	"errors"
	"strings"

	"github.com/storefront/storefront/adcp"
	"github.com/storefront/storefront/decline"
	"github.com/storefront/storefront/ledger"
	"github.com/storefront/storefront/mediabuy"
	"github.com/storefront/storefront/outcome"
	"github.com/storefront/storefront/products"
	"github.com/storefront/storefront/sanitize"
	"github.com/storefront/storefront/store"
	"github.com/storefront/storefront/vocab"
)

// Errors of the order desk.
var (
	// ErrDecided: the order was approved or declined already.
	ErrDecided = errors.New("the order has been decided already")
	// ErrFlightOver: the order's flight ended while it waited; it can
	// only be declined.
	ErrFlightOver = errors.New("the order's flight has ended; decline it")
	// ErrUnknownSlug: a decline names a slug the vocabulary lacks.
	ErrUnknownSlug = errors.New("not a published decline slug")
)

// ReasonError refuses a decline reason the screen would change: what the
// publisher writes is what the buyer reads, or it is not saved.
type ReasonError struct {
	// Screened is what the buyer would have read instead.
	Screened string
}

func (e *ReasonError) Error() string {
	return "the reason names something confidential or carries markup; the buyer would read: " + e.Screened
}

// Notify, when set, delivers a finished task's webhook (webhook.Sender).
type Notify func(ctx context.Context, publisher string, t store.Task)

// orderAnswer prepares the decision record of an order.
func (s *Service) orderAnswer(publisher string, o store.Order, task store.Task) (*answer, adcp.Version) {
	v, err := adcp.ParseVersion(o.Version)
	if err != nil {
		v = adcp.Default()
	}
	a := &answer{s: s, task: TaskCreate, env: outcome.Envelope{Version: v, Context: o.Buy.Context}}
	a.rec = ledger.Record{Publisher: publisher, Account: o.Owner.Account, Principal: o.Owner.Principal,
		RequestDigest: ledger.Digest(task.Request), Task: TaskCreate, Sandbox: o.Buy.Sandbox, RulebookVersion: o.RulebookVersion}
	return a, v
}

func (s *Service) pending(ctx context.Context, publisher, taskID string) (store.Order, store.Task, error) {
	o, err := s.Store.Order(ctx, publisher, taskID)
	if err != nil {
		return o, store.Task{}, err
	}
	if o.Status != store.OrderPending {
		return o, store.Task{}, ErrDecided
	}
	t, err := s.Store.Task(ctx, publisher, o.Owner, o.TaskID)
	return o, t, err
}

// Approve creates the order's buy, completes its task with the
// create_media_buy success answer, records the decision and notifies the
// buyer. by names the admin token deciding.
func (s *Service) Approve(ctx context.Context, publisher, taskID, by string, notify Notify) (mediabuy.Buy, error) {
	o, task, err := s.pending(ctx, publisher, taskID)
	if err != nil {
		return mediabuy.Buy{}, err
	}
	now := s.now()
	b := o.Buy
	if !now.Before(b.End) {
		return b, ErrFlightOver
	}
	b.ConfirmedAt, b.CreatedAt, b.UpdatedAt, b.Order = now, now, now, taskID
	a, v := s.orderAnswer(publisher, o, task)
	payload, err := mediabuy.Created(v, &b, now, b.Context)
	if err != nil {
		return b, err
	}
	if err := a.record(ctx, "completed", payload); err != nil {
		return b, err
	}
	created := mediabuy.Event{Revision: 1, At: now, Actor: "publisher:" + by, Action: "created",
		Summary: "approved by the sales desk"}
	t, err := s.Store.DecideOrder(ctx, publisher, store.Decision{TaskID: taskID, Status: store.OrderApproved, By: by, At: now,
		TaskStatus: "completed", Result: payload, Created: created})
	if errors.Is(err, store.ErrConflict) {
		return b, ErrDecided
	}
	if err != nil {
		return b, err
	}
	if notify != nil {
		notify(ctx, publisher, t)
	}
	return b, nil
}

// Decline refuses the order with a published slug and, optionally, the
// publisher's own words, composed in the seller's voice like any decline.
// Words the screen would change are refused (*ReasonError), never altered.
func (s *Service) Decline(ctx context.Context, publisher, taskID, by string, slug vocab.Slug, reason string, notify Notify) (decline.Composed, error) {
	if _, ok := vocab.Lookup(slug); !ok {
		return decline.Composed{}, ErrUnknownSlug
	}
	o, task, err := s.pending(ctx, publisher, taskID)
	if err != nil {
		return decline.Composed{}, err
	}
	snap, err := s.Snapshots.Snapshot(ctx, publisher)
	if err != nil {
		return decline.Composed{}, err
	}
	in := decline.Input{Grounds: []vocab.Grounds{{Slug: slug, Level: vocab.Category}}, Cap: vocab.Exact}
	if snap.Rulebook != nil {
		in.Voice = snap.Rulebook.Voice
	}
	if reason = strings.TrimSpace(reason); reason != "" {
		screened := snap.Screen.Prose(reason, 2000, sanitize.Declined)
		if screened.String() != reason {
			return decline.Composed{}, &ReasonError{Screened: screened.String()}
		}
		in.Forced = &decline.Forced{Reason: reason}
	}
	composed := decline.Compose(in, snap.Screen)
	a, _ := s.orderAnswer(publisher, o, task)
	a.rec.Slug = composed.Slug
	payload, err := outcome.NewFailed(a.env, products.DeclineError(composed)).Encode()
	if err != nil {
		return composed, err
	}
	if err := a.record(ctx, "failed", payload); err != nil {
		return composed, err
	}
	t, err := s.Store.DecideOrder(ctx, publisher, store.Decision{TaskID: taskID, Status: store.OrderDeclined, By: by, At: s.now(),
		Slug: composed.Slug, Reason: composed.Reason.String(), TaskStatus: "failed", Result: payload})
	if errors.Is(err, store.ErrConflict) {
		return composed, ErrDecided
	}
	if err != nil {
		return composed, err
	}
	if notify != nil {
		notify(ctx, publisher, t)
	}
	return composed, nil
}
