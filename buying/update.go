package buying

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/storefront/storefront/adcp"
	"github.com/storefront/storefront/mediabuy"
	"github.com/storefront/storefront/outcome"
	"github.com/storefront/storefront/products"
	"github.com/storefront/storefront/sanitize"
	"github.com/storefront/storefront/store"
)

// Update runs update_media_buy: the state machine decides pause, resume and
// cancel, and every change to a package's terms (budget, flight, markets)
// is judged by the rulebook again, as a new buy on those terms would be.
func (s *Service) Update(ctx context.Context, c products.Call) outcome.Sent {
	now := s.now()
	req, err := mediabuy.DecodeUpdate(c.Args, now)
	a, done := s.start(ctx, c, TaskUpdate, req.Envelope, err, true)
	if done != nil {
		return *done
	}
	acct, e := a.account(ctx, req.Account, true)
	if e != nil {
		return a.fail(ctx, true, *e)
	}
	b, e := a.owned(ctx, req.MediaBuyID, acct)
	if e != nil {
		return a.fail(ctx, true, *e)
	}
	// The decision stands on the rulebook that judged the buy's terms,
	// unless the update changes them and the rulebook in force judges
	// them again (a.snapshot records that one).
	a.rec.RulebookVersion = b.RulebookVersion
	prev := b.Revision
	ch, r := mediabuy.Apply(&b, req, now, c.Principal.ID)
	if r != nil {
		return a.fail(ctx, true, refusal(sanitize.Vendor(), r))
	}
	if len(ch.Rejudge) > 0 {
		snap, e := a.snapshot(ctx, acct)
		if e != nil {
			return a.fail(ctx, true, *e)
		}
		if res, refused := s.rejudge(ctx, a, snap, &b, acct, ch.Rejudge, now); refused {
			return res
		}
		b.RulebookVersion = snap.RulebookVersion
	}
	if e := s.underSpend(ctx, c.Publisher, &b, ch.Affected); e != nil {
		return a.fail(ctx, true, *e)
	}
	if len(ch.Events) > 0 {
		b.Revision, b.UpdatedAt = prev+1, now
		for i := range ch.Events {
			ch.Events[i].Revision = b.Revision
		}
	}
	payload, err := mediabuy.Updated(a.env.Version, &b, ch.Affected, now, a.env.Context)
	if err != nil {
		return a.internal(err)
	}
	if len(ch.Events) == 0 {
		// Nothing changed: no new revision, nothing to record.
		return outcome.Sent{Payload: payload}
	}
	if err := a.record(ctx, "completed", payload); err != nil {
		return a.fail(ctx, false, unavailable)
	}
	switch err := s.Store.UpdateBuy(ctx, c.Publisher, b, prev, ch.Events); {
	case errors.Is(err, store.ErrConflict):
		return a.fail(ctx, true, errorOf(sanitize.Vendor(), adcp.Conflict, "revision",
			"the media buy changed while this update was applied: read it again and retry", nil))
	case err != nil:
		s.log().Error("storing a media buy update failed", "publisher", c.Publisher, "err", err)
		return a.fail(ctx, true, unavailable)
	}
	return outcome.Sent{Payload: payload}
}

// rejudge judges the changed packages on their new terms.
func (s *Service) rejudge(ctx context.Context, a *answer, snap *products.Snapshot, b *mediabuy.Buy, acct products.Account, ids []string, now time.Time) (outcome.Sent, bool) {
	for i := range b.Packages {
		p := &b.Packages[i]
		if !contains(ids, p.ID) {
			continue
		}
		prod, ok := mediabuy.Product(snap.Catalogue, p.ProductID)
		if !ok {
			return a.fail(ctx, true, errorOf(snap.Screen, adcp.ProductUnavailable, fmt.Sprintf("packages[%d]", i),
				fmt.Sprintf("product %s is no longer offered, so package %s cannot change its terms", p.ProductID, p.ID), nil)), true
		}
		req := mediabuy.Terms(b, p, &prod)
		brief := products.NormaliseBrief(req, now)
		d, err := snap.Rules.Evaluate(brief, snap.Catalogue.Market())
		if err != nil {
			s.log().Error("judging an update failed", "err", err)
			return a.fail(ctx, false, unavailable), true
		}
		if d.Declined() {
			e, composed := Refusal(snap, Verdict{Refused: i, Decision: d, Request: req, Brief: brief}, acct)
			a.rec.Slug, a.rec.RuleIDs = composed.Slug, d.RuleIDs()
			return a.fail(ctx, true, e), true
		}
	}
	return outcome.Sent{}, false
}

// underSpend refuses a package budget below what has already been spent:
// reported spend counts against the new budget.
func (s *Service) underSpend(ctx context.Context, publisher string, b *mediabuy.Buy, affected []string) *outcome.Error {
	if len(affected) == 0 {
		return nil
	}
	rows, err := s.Store.Delivery(ctx, publisher, []string{b.ID})
	if err != nil {
		return &unavailable
	}
	d := mediabuy.Sum(b, rows, mediabuy.Period{})
	for _, pd := range d.Packages {
		if contains(affected, pd.Package.ID) && pd.Package.Live() && pd.Spend > pd.Package.Budget {
			e := errorOf(sanitize.Vendor(), adcp.ValidationError, "packages",
				fmt.Sprintf("package %s has already spent %v %s, more than the new budget", pd.Package.ID, pd.Spend, b.Currency), nil)
			return &e
		}
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
