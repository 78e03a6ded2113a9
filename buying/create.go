package buying

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/storefront/storefront/adcp"
	"github.com/storefront/storefront/decline"
	"github.com/storefront/storefront/mediabuy"
	"github.com/storefront/storefront/merch"
	"github.com/storefront/storefront/outcome"
	"github.com/storefront/storefront/products"
	"github.com/storefront/storefront/sanitize"
	"github.com/storefront/storefront/store"
	"github.com/storefront/storefront/vocab"
)

// Verdict is the rulebook's judgement of a buy: the first package a rule
// refused (with the decision and the request it was judged as), and why
// the buy waits for the publisher, if it does.
type Verdict struct {
	// Refused is the index of the first refused package, or -1.
	Refused  int
	Decision merch.Decision
	Request  *products.Request
	Brief    merch.Brief
	Review   []merch.ReviewReason
}

// Judge runs the rulebook over every live package of b, each as the brief
// get_products builds for its terms, and the order desk's review rules.
// With asap, a start the lead-time rules refuse moves to the first day they
// all allow, whatever else fired: "as soon as possible" is the earliest
// start the seller accepts, so the buy is judged (and any refusal composed)
// on the flight it would really run, and a refusal never asks an asap buyer
// for a later start it would have been given. The start stays where it was
// only when the flight ends before that day: then the lead time is the
// reason, cited for the terms the buyer sent. Judge may move b.Start for
// that reason only.
func Judge(snap *products.Snapshot, b *mediabuy.Buy, acct products.Account, asap bool, now time.Time) (Verdict, error) {
	v, err := judge(snap, b, acct, now)
	if err != nil || !asap {
		return v, err
	}
	// Each package may have its own lead time: a start moved for one is
	// judged again, at most once per package.
	for range b.Packages {
		start, ok := leadTimeStart(v, b)
		if !ok {
			return v, nil
		}
		moved := *b
		moved.Start = start
		if v, err = judge(snap, &moved, acct, now); err != nil {
			return v, err
		}
		b.Start = start
	}
	return v, nil
}

// leadTimeStart is the start a refusal's lead-time reasons all allow, if
// it is later than b's and inside b's flight.
func leadTimeStart(v Verdict, b *mediabuy.Buy) (time.Time, bool) {
	if v.Refused < 0 {
		return time.Time{}, false
	}
	var earliest adcp.Date
	for _, r := range v.Decision.Reasons() {
		g := r.Grounds()
		if g.Slug == vocab.LeadTimeTooShort && g.Facts.EarliestStart.After(earliest) {
			earliest = g.Facts.EarliestStart
		}
	}
	start := earliest.Time()
	if earliest.IsZero() || !start.After(b.Start) || !b.End.After(start) {
		return time.Time{}, false
	}
	return start, true
}

func judge(snap *products.Snapshot, b *mediabuy.Buy, acct products.Account, now time.Time) (Verdict, error) {
	v := Verdict{Refused: -1}
	market := snap.Catalogue.Market()
	if snap.Rulebook.Orders.ReviewsTier(acct.Disclosure) {
		v.Review = append(v.Review, merch.TierReview(acct.Disclosure))
	}
	for i := range b.Packages {
		p := &b.Packages[i]
		if !p.Live() {
			continue
		}
		prod, ok := mediabuy.Product(snap.Catalogue, p.ProductID)
		if !ok {
			return v, fmt.Errorf("product %s left the snapshot", p.ProductID)
		}
		req := mediabuy.Terms(b, p, &prod)
		brief := products.NormaliseBrief(req, now)
		d, err := snap.Rules.Evaluate(brief, market)
		if err != nil {
			return v, err
		}
		if d.Declined() {
			v.Refused, v.Decision, v.Request, v.Brief = i, d, req, brief
			return v, nil
		}
		reasons, err := merch.Review(snap.Rulebook, brief, market)
		if err != nil {
			return v, err
		}
		v.Review = append(v.Review, reasons...)
	}
	return v, nil
}

// Refusal composes the buyer's answer to a refused package: the decline
// get_products gives for the same terms, at the rule's disclosure capped by
// the account's tier, with suggestions verified the same way, as the typed
// error a task without a rejected arm carries.
func Refusal(snap *products.Snapshot, v Verdict, acct products.Account) (outcome.Error, decline.Composed) {
	composed := decline.Compose(decline.Input{
		Grounds:      products.DeclineGrounds(snap, v.Request, v.Decision),
		Voice:        snap.Rulebook.Voice,
		Cap:          acct.Disclosure,
		Verify:       products.Verifier(snap, v.Request, v.Brief),
		VerifyFigure: products.FigureVerifier(snap, v.Request, v.Brief),
	}, snap.Screen)
	e := products.DeclineError(composed)
	e.Field, _ = snap.Screen.Line(fmt.Sprintf("packages[%d]", v.Refused), 100)
	return e, composed
}

// Create runs create_media_buy.
func (s *Service) Create(ctx context.Context, c products.Call) outcome.Sent {
	now := s.now()
	req, err := mediabuy.DecodeCreate(c.Args, now)
	a, done := s.start(ctx, c, TaskCreate, req.Envelope, err, true)
	if done != nil {
		return *done
	}
	acct, e := a.account(ctx, req.Account, true)
	if e != nil {
		return a.fail(ctx, true, *e)
	}
	if e := s.accountActive(ctx, c.Publisher, acct); e != nil {
		return a.fail(ctx, true, *e)
	}
	snap, e := a.snapshot(ctx, acct)
	if e != nil {
		return a.fail(ctx, true, *e)
	}
	var directive *products.Claim
	if s.Directives != nil && (c.Principal.Sandbox || acct.Sandbox) {
		key := acct.Key
		if c.Principal.Sandbox {
			key = ""
		}
		if directive, err = s.Directives.Claim(ctx, c.Publisher, mediabuy.DirectiveScope(key), c.Principal.ID); err != nil {
			s.log().Error("claiming a directive failed", "err", err)
			return a.fail(ctx, false, unavailable)
		}
		// Every answer but the forced one gives the directive back.
		defer products.Settle(ctx, s.Directives, directive, s.log())
		a.rec.Forced = directive != nil
	}

	packages, currency, r := mediabuy.Resolve(snap.Catalogue, req.Packages, func(int) string { return newID("pkg_") })
	if r != nil {
		// The refusal quotes the buyer's own ids: screened like the
		// buyer's words, or its wording would tell which are secrets.
		return a.fail(ctx, true, refusal(sanitize.Vendor(), r))
	}
	b := mediabuy.Buy{
		ID: BuyScope(acct, c.Principal).Stored(newID("mb_")), Account: acct.Key, Principal: c.Principal.ID, Sandbox: acct.Sandbox || c.Principal.Sandbox,
		Name: req.Name, BrandDomain: req.Brand.Domain, BrandID: req.Brand.BrandID, Industries: req.Brand.Industries,
		AdvertiserIndustry: req.AdvertiserIndustry, PONumber: req.PONumber, Currency: currency, Pacing: req.Pacing,
		Start: req.Start, End: req.End, Held: req.Paused, Packages: packages,
		Revision: 1, ConfirmedAt: now, CreatedAt: now, UpdatedAt: now, Context: req.Context,
	}
	if t := req.TotalBudget; t != nil && (t.Currency != currency || mediabuy.Round(t.Amount) != b.TotalBudget()) {
		return a.fail(ctx, true, errorOf(sanitize.Vendor(), adcp.ValidationError, "total_budget",
			fmt.Sprintf("total_budget must equal the sum of the package budgets, %v %s", b.TotalBudget(), currency), nil))
	}
	for i := range b.Packages {
		p := &b.Packages[i]
		prod, _ := mediabuy.Product(snap.Catalogue, p.ProductID)
		terms := mediabuy.Terms(&b, p, &prod)
		if ok, why := snap.Catalogue.Offers(p.ProductID, terms.Filters, terms.GeoCountries); !ok {
			return a.fail(ctx, true, errorOf(snap.Screen, adcp.ProductUnavailable, fmt.Sprintf("packages[%d].product_id", i),
				fmt.Sprintf("product %s is not available on these terms (%s)", p.ProductID, why), &outcome.Details{Exclusion: &outcome.Exclusion{ExcludedBy: why}}))
		}
	}
	v, err := Judge(snap, &b, acct, req.ASAP, now)
	if err != nil {
		s.log().Error("judging a buy failed", "publisher", c.Publisher, "err", err)
		return a.fail(ctx, false, unavailable)
	}
	b.RulebookVersion = snap.RulebookVersion
	if v.Refused >= 0 {
		e, composed := Refusal(snap, v, acct)
		a.rec.Slug, a.rec.RuleIDs = composed.Slug, v.Decision.RuleIDs()
		return a.fail(ctx, true, e)
	}
	// The seller's own rules first, then the buyer's governance: a buy
	// the rules refuse costs the governance agent no check.
	if e := s.governed(ctx, a, snap, req, &b); e != nil {
		return a.fail(ctx, true, *e)
	}

	switch {
	case directive != nil && directive.Arm == "submitted":
		return s.submitForced(ctx, a, req, acct, snap, directive)
	case directive != nil:
		return a.fail(ctx, false, errorOf(sanitize.Vendor(), adcp.ServiceUnavailable, "", "the forced arm is not one create_media_buy has", nil))
	case len(v.Review) > 0:
		return s.submitOrder(ctx, a, req, acct, snap, b, v)
	}
	payload, err := mediabuy.Created(a.env.Version, &b, now, a.env.Context)
	if err != nil {
		return a.internal(err)
	}
	if err := a.record(ctx, "completed", payload); err != nil {
		return a.fail(ctx, false, unavailable)
	}
	created := mediabuy.Event{Revision: 1, At: now, Actor: c.Principal.ID, Action: "created",
		Summary: fmt.Sprintf("created with %d package(s), %v %s", len(b.Packages), b.TotalBudget(), b.Currency)}
	if err := s.Store.CreateBuy(ctx, c.Publisher, b, created); err != nil {
		s.log().Error("storing a media buy failed after its decision was recorded", "publisher", c.Publisher, "err", err)
		return a.fail(ctx, true, unavailable)
	}
	return outcome.Sent{Payload: payload}
}

// accountActive refuses buys on an account whose terms say it may not buy.
func (s *Service) accountActive(ctx context.Context, publisher string, acct products.Account) *outcome.Error {
	if acct.Key == "" {
		return nil
	}
	t, err := s.Store.AccountTerms(ctx, publisher, acct.Key)
	switch {
	case errors.Is(err, store.ErrNotFound):
		// Natural-key accounts may buy without a sync_accounts first:
		// they are provisioned on first use with the seller's defaults.
		return nil
	case err != nil:
		return &unavailable
	case t.Status != "active":
		code := map[string]adcp.Code{"suspended": adcp.AccountSuspended, "payment_required": adcp.AccountPaymentRequired,
			"pending_approval": adcp.AccountSetupRequired}[t.Status]
		if code == "" {
			code = adcp.AccountNotFound // rejected or closed
		}
		e := errorOf(sanitize.Vendor(), code, "account", "the account is "+strings.ReplaceAll(t.Status, "_", " ")+" and cannot buy", nil)
		return &e
	}
	return nil
}

// webhook is the task webhook a request registers, vetted.
func (s *Service) webhook(push *products.PushConfig, taskID string) (*store.Webhook, *outcome.Error) {
	if push == nil {
		return nil, nil
	}
	if s.WebhookAllowed != nil {
		if err := s.WebhookAllowed(push.URL); err != nil {
			e := errorOf(sanitize.Vendor(), adcp.InvalidRequest, "push_notification_config.url", err.Error(), nil)
			return nil, &e
		}
	}
	op := push.OperationID
	if op == "" {
		// The notification needs an operation id; without one the
		// buyer correlates by task id, so that is what it gets.
		op = taskID
	}
	return &store.Webhook{URL: push.URL, OperationID: op, Token: push.Token, Scheme: push.Scheme, Credentials: push.Credentials}, nil
}

// submitOrder queues the buy for the publisher: the buyer gets the
// submitted arm and polls the task or waits for its webhook.
func (s *Service) submitOrder(ctx context.Context, a *answer, req *mediabuy.CreateRequest, acct products.Account, snap *products.Snapshot, b mediabuy.Buy, v Verdict) outcome.Sent {
	taskID := newID("task_")
	hook, e := s.webhook(req.Push, taskID)
	if e != nil {
		return a.fail(ctx, true, *e)
	}
	seller := snap.Rulebook.Voice.SellerName
	if seller == "" {
		seller = snap.Publisher.Name
	}
	msg, _ := snap.Screen.Line("Your order is with the "+seller+" sales desk for approval; the media buy is issued when it is approved.", 2000)
	o := outcome.NewSubmitted(a.env, taskID, msg)
	payload, err := o.Encode()
	if err != nil {
		return a.internal(err)
	}
	if err := a.record(ctx, "submitted", payload); err != nil {
		return a.fail(ctx, false, unavailable)
	}
	review := make([]string, len(v.Review))
	for i, r := range v.Review {
		review[i] = r.String()
	}
	order := store.Order{TaskID: taskID, Owner: taskOwner(acct, a.c.Principal),
		Status: store.OrderPending, Buy: b, Review: review, RulebookVersion: snap.RulebookVersion,
		Version: a.env.Version.String(), CreatedAt: s.now()}
	task := store.Task{ID: taskID, Owner: order.Owner, Type: TaskCreate, Status: "submitted", Message: msg.String(),
		Request: a.kept, Webhook: hook}
	if err := s.Store.CreateOrder(ctx, a.c.Publisher, order, task); err != nil {
		s.log().Error("storing an order failed after its decision was recorded", "publisher", a.c.Publisher, "err", err)
		return a.fail(ctx, true, unavailable)
	}
	return outcome.Sent{Payload: payload, Summary: msg}
}

// submitForced answers a sandbox directive's submitted arm: a task with
// the controller's id that force_task_completion later finishes.
func (s *Service) submitForced(ctx context.Context, a *answer, req *mediabuy.CreateRequest, acct products.Account, snap *products.Snapshot, d *products.Claim) outcome.Sent {
	hook, e := s.webhook(req.Push, d.TaskID)
	if e != nil {
		return a.fail(ctx, true, *e)
	}
	var msg sanitize.Text
	if d.Message != "" {
		// The controller caller's own words (see products.Service).
		msg, _ = sanitize.Vendor().Line(d.Message, 2000)
	}
	payload, err := outcome.NewSubmitted(a.env, d.TaskID, msg).Encode()
	if err != nil {
		return a.internal(err)
	}
	task := store.Task{ID: d.TaskID, Owner: taskOwner(acct, a.c.Principal),
		Type: TaskCreate, Status: "submitted", Message: msg.String(), Request: a.kept, Webhook: hook}
	switch err := s.Store.CreateTask(ctx, a.c.Publisher, task); {
	case errors.Is(err, store.ErrExists):
		return a.fail(ctx, true, errorOf(sanitize.Vendor(), adcp.InvalidRequest, "", "a task with the forced task_id already exists for this account", nil))
	case err != nil:
		return a.fail(ctx, false, unavailable)
	}
	if err := a.record(ctx, "submitted", payload); err != nil {
		return a.fail(ctx, false, unavailable)
	}
	// Recorded: the directive is spent by this answer, and by no other.
	if err := products.SpendClaim(ctx, s.Directives, d); err != nil {
		s.log().Error("spending a directive failed: answering with the error arm", "publisher", a.c.Publisher, "err", err)
		return a.fail(ctx, false, unavailable)
	}
	return outcome.Sent{Payload: payload, Summary: msg}
}
