package compliance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/storefront/storefront/access"
	"github.com/storefront/storefront/adcp"
	"github.com/storefront/storefront/buying"
	"github.com/storefront/storefront/mediabuy"
	"github.com/storefront/storefront/products"
	"github.com/storefront/storefront/store"
)

// forceCreateArm registers a one-shot create_media_buy directive for
// (account, principal), in the create_media_buy slot: it can never be
// consumed by a get_products, nor a get_products directive by a buy.
func (c *Controller) forceCreateArm(ctx context.Context, publisher string, p products.Principal, account string, req *Request) (reply, *failure) {
	var arm string
	if ok, f := param(req, "arm", &arm); f != nil {
		return nil, f
	} else if !ok {
		return nil, fail(InvalidParams, "params.arm is required (submitted)")
	}
	switch arm {
	case "submitted":
	case "input-required":
		return nil, fail(InvalidParams, "arm input-required is not offered for create_media_buy by this seller")
	default:
		return nil, fail(InvalidParams, "params.arm must be submitted for create_media_buy")
	}
	if f := forbidden(req, arm, "reason", "suggestions"); f != nil {
		return nil, f
	}
	d := products.Directive{Arm: arm}
	if f := submittedParams(req, &d); f != nil {
		return nil, f
	}
	if p.Sandbox {
		account = ""
	}
	if err := c.Store.SetDirective(ctx, publisher, mediabuy.DirectiveScope(account), p.ID, d); err != nil {
		c.Log.Error("storing a directive failed", "err", err)
		return nil, fail(InternalError, "the directive could not be stored")
	}
	return &forcedArm{Success: true, Forced: forced{Arm: arm, TaskID: d.TaskID}, Message: d.Message}, nil
}

// sandboxBuy finds a buy the sandbox caller may drive: its own, on a
// sandbox account.
func (c *Controller) sandboxBuy(ctx context.Context, publisher string, p products.Principal, req *Request) (mediabuy.Buy, *failure) {
	var id string
	if ok, f := param(req, "media_buy_id", &id); f != nil {
		return mediabuy.Buy{}, f
	} else if !ok || id == "" {
		return mediabuy.Buy{}, fail(InvalidParams, "params.media_buy_id is required")
	}
	scope, f := c.buyScope(ctx, publisher, p, req.Account)
	if f != nil {
		return mediabuy.Buy{}, f
	}
	b, err := c.Store.Buy(ctx, publisher, scope.Stored(id))
	switch {
	case errors.Is(err, store.ErrNotFound) || (err == nil && (b.Principal != p.ID || !b.Sandbox)):
		return b, fail(NotFound, "no sandbox media buy %q for these credentials", id)
	case err != nil:
		return b, fail(InternalError, "the media buy could not be read")
	}
	return b, nil
}

// buyScope is the namespace of the buy ids a controller call names, drawn
// as the media-buy tasks draw it (buying.BuyScope): a sandbox principal's
// own, else that of the sandbox account the call names.
func (c *Controller) buyScope(ctx context.Context, publisher string, p products.Principal, ref *products.AccountRef) (mediabuy.Scope, *failure) {
	if p.Sandbox || ref == nil {
		return buying.BuyScope(products.Account{}, p), nil
	}
	a, err := (access.Accounts{Store: c.Store}).Resolve(ctx, publisher, p, ref)
	switch {
	case errors.Is(err, products.ErrAccountNotFound):
		return "", nil
	case err != nil:
		return "", fail(InternalError, "the account could not be read")
	}
	return buying.BuyScope(a, p), nil
}

// simulateDelivery records sandbox delivery for a buy: the figures are the
// buy's, allocated to its packages in proportion to their budgets, and
// added to the day's simulated rows. Figures the storefront does not keep
// are refused rather than dropped.
func (c *Controller) simulateDelivery(ctx context.Context, publisher string, p products.Principal, req *Request) (reply, *failure) {
	b, f := c.sandboxBuy(ctx, publisher, p, req)
	if f != nil {
		return nil, f
	}
	for _, name := range []string{"reach", "frequency", "reach_window", "vendor_metric_values", "vendor_metric_values_by_package",
		"not_yet_measurable_vendor_metrics", "not_yet_measurable_vendor_metrics_by_package", "commissionable_value"} {
		if raw, ok := req.Params[name]; ok && !isNull(raw) {
			return nil, fail(InvalidParams, "params.%s is not kept by this seller's delivery reporting", name)
		}
	}
	var m mediabuy.Metrics
	var ints = []struct {
		name string
		into *int64
	}{{"impressions", &m.Impressions}, {"clicks", &m.Clicks}}
	for _, x := range ints {
		if _, f := param(req, x.name, x.into); f != nil {
			return nil, f
		}
		if *x.into < 0 {
			return nil, fail(InvalidParams, "params.%s must not be negative", x.name)
		}
	}
	for _, x := range []struct {
		name string
		into *float64
	}{{"conversions", &m.Conversions}, {"conversion_value", &m.ConversionValue}} {
		if _, f := param(req, x.name, x.into); f != nil {
			return nil, f
		}
		if *x.into < 0 {
			return nil, fail(InvalidParams, "params.%s must not be negative", x.name)
		}
	}
	var spend *struct {
		Amount   float64 `json:"amount"`
		Currency string  `json:"currency"`
	}
	if _, f := param(req, "reported_spend", &spend); f != nil {
		return nil, f
	}
	if spend != nil {
		if spend.Currency != b.Currency {
			return nil, fail(InvalidParams, "params.reported_spend.currency must be the media buy's currency, %s", b.Currency)
		}
		if spend.Amount < 0 {
			return nil, fail(InvalidParams, "params.reported_spend.amount must not be negative")
		}
		m.Spend = mediabuy.Round(spend.Amount)
	}
	var v *mediabuy.Viewability
	if _, f := param(req, "viewability", &v); f != nil {
		return nil, f
	}
	if v != nil {
		if v.Measurable < 0 || v.Viewable < 0 || v.Viewable > v.Measurable || (v.Standard != "" && v.Standard != "mrc" && v.Standard != "groupm") {
			return nil, fail(InvalidParams, "params.viewability needs viewable_impressions within measurable_impressions and a standard of mrc or groupm")
		}
		m.Viewability = v
	}
	day := adcp.DateOf(c.now())
	var date string
	if ok, f := param(req, "delivery_date", &date); f != nil {
		return nil, f
	} else if ok {
		d, err := adcp.ParseDate(date)
		if err != nil {
			return nil, fail(InvalidParams, "params.delivery_date must be a date (YYYY-MM-DD)")
		}
		day = d
	}
	return c.deliver(ctx, publisher, &b, m, day)
}

// deliver adds m to the buy's simulated delivery on day, allocated to its
// live packages by budget, and answers with what was added and the buy's
// delivery to date.
func (c *Controller) deliver(ctx context.Context, publisher string, b *mediabuy.Buy, m mediabuy.Metrics, day adcp.Date) (reply, *failure) {
	now := c.now()
	var rows []mediabuy.Row
	for id, part := range mediabuy.Allocate(b, m) {
		rows = append(rows, mediabuy.Row{MediaBuyID: b.ID, PackageID: id, Date: day, Source: mediabuy.Simulated, Metrics: part, ReportedAt: now})
	}
	if len(rows) == 0 {
		return nil, fail(InvalidParams, "media buy %q has no live package to deliver", b.PublicID())
	}
	if err := c.Store.ReportDelivery(ctx, publisher, rows); err != nil {
		return nil, fail(InternalError, "the delivery could not be stored")
	}
	total, f := c.delivered(ctx, publisher, b)
	if f != nil {
		return nil, f
	}
	return &simulation{Success: true, Simulated: simulated(m, b.Currency, day), Cumulative: simulated(total, b.Currency, adcp.Date{})}, nil
}

// delivered is the buy's delivery to date.
func (c *Controller) delivered(ctx context.Context, publisher string, b *mediabuy.Buy) (mediabuy.Metrics, *failure) {
	all, err := c.Store.Delivery(ctx, publisher, []string{b.ID})
	if err != nil {
		return mediabuy.Metrics{}, fail(InternalError, "the delivery could not be read")
	}
	return mediabuy.Sum(b, all, mediabuy.Period{}).Totals, nil
}

// simulateBudgetSpend spends a sandbox buy to a percentage of its budget:
// simulated delivery today of the spend still missing, with the
// impressions that spend buys at the packages' CPM rates. Account-level
// budgets are not modelled, so the scenario takes a media buy only.
func (c *Controller) simulateBudgetSpend(ctx context.Context, publisher string, p products.Principal, req *Request) (reply, *failure) {
	if raw, ok := req.Params["account_id"]; ok && !isNull(raw) {
		return nil, fail(InvalidParams, "params.account_id: this seller keeps budgets per media buy, not per account; name params.media_buy_id")
	}
	var pct *float64
	if _, f := param(req, "spend_percentage", &pct); f != nil {
		return nil, f
	}
	if pct == nil || *pct < 0 || *pct > 100 {
		return nil, fail(InvalidParams, "params.spend_percentage is required, from 0 to 100")
	}
	b, f := c.sandboxBuy(ctx, publisher, p, req)
	if f != nil {
		return nil, f
	}
	spent, f := c.delivered(ctx, publisher, &b)
	if f != nil {
		return nil, f
	}
	var m mediabuy.Metrics
	if missing := mediabuy.Round(b.TotalBudget()**pct/100 - spent.Spend); missing > 0 {
		m.Spend = missing
		m.Impressions = impressionsFor(&b, missing)
	}
	return c.deliver(ctx, publisher, &b, m, adcp.DateOf(c.now()))
}

// impressionsFor is what spend buys across the buy's live packages, shared
// by budget, at their CPM rates (none for a package priced otherwise).
func impressionsFor(b *mediabuy.Buy, spend float64) int64 {
	total := b.TotalBudget()
	if total <= 0 {
		return 0
	}
	var n float64
	for i := range b.Packages {
		pk := &b.Packages[i]
		if pk.Live() && pk.PricingModel == "cpm" && pk.Rate > 0 {
			n += spend * pk.Budget / total / pk.Rate * 1000
		}
	}
	return int64(n)
}

// forceMediaBuyStatus moves a sandbox buy to a status, as the seller's own
// systems would (trafficking going live, a flight ending, a rejection):
// forward along the lifecycle and between active and paused, never out of
// a terminal status (INVALID_TRANSITION, with the current status).
func (c *Controller) forceMediaBuyStatus(ctx context.Context, publisher string, p products.Principal, req *Request) (reply, *failure) {
	var name string
	if ok, f := param(req, "status", &name); f != nil {
		return nil, f
	} else if !ok {
		return nil, fail(InvalidParams, "params.status is required")
	}
	to, ok := mediabuy.ParseStatus(name)
	if !ok {
		return nil, fail(InvalidParams, "params.status must be a media buy status")
	}
	b, f := c.sandboxBuy(ctx, publisher, p, req)
	if f != nil {
		return nil, f
	}
	now := c.now()
	revision := b.Revision
	from, ok := b.Force(now, to)
	if !ok {
		return nil, &failure{code: InvalidTransition, detail: fmt.Sprintf("media buy %s is %s, which cannot become %s", b.PublicID(), from, to), current: string(from)}
	}
	if from != to {
		b.Revision, b.UpdatedAt = revision+1, now
		ev := mediabuy.Event{Revision: b.Revision, At: now, Actor: "compliance", Action: "forced", Summary: fmt.Sprintf("%s to %s", from, to)}
		switch err := c.Store.UpdateBuy(ctx, publisher, b, revision, []mediabuy.Event{ev}); {
		case errors.Is(err, store.ErrConflict):
			return nil, fail(InvalidState, "media buy %s changed meanwhile; force its status again", b.PublicID())
		case err != nil:
			return nil, fail(InternalError, "the media buy could not be updated")
		}
	}
	return &transition{Success: true, PreviousState: string(from), CurrentState: string(to)}, nil
}

// delivery is simulated delivery as a controller reply reports it. Its
// members are in the order of their names, as it was first written from a
// map.
type delivery struct {
	Clicks        int64                 `json:"clicks"`
	Conversions   *float64              `json:"conversions,omitempty"`
	DeliveryDate  string                `json:"delivery_date,omitempty"`
	Impressions   int64                 `json:"impressions"`
	ReportedSpend spend                 `json:"reported_spend"`
	Viewability   *mediabuy.Viewability `json:"viewability,omitempty"`
}

type spend struct {
	Amount   float64 `json:"amount"`
	Currency string  `json:"currency"`
}

func simulated(m mediabuy.Metrics, currency string, day adcp.Date) delivery {
	out := delivery{Impressions: m.Impressions, Clicks: m.Clicks, ReportedSpend: spend{Amount: m.Spend, Currency: currency}, Viewability: m.Viewability}
	if m.Conversions > 0 {
		out.Conversions = &m.Conversions
	}
	if !day.IsZero() {
		out.DeliveryDate = day.String()
	}
	return out
}

// seedCreative accepts a creative fixture. The storefront keeps no
// creative library: a package's creative assignments are references any
// creative id can fill, so an approved creative needs nothing stored to be
// assignable. A fixture in any other state describes a review the seller
// does not model, and is refused.
func (c *Controller) seedCreative(req *Request) (reply, *failure) {
	var id string
	if ok, f := param(req, "creative_id", &id); f != nil {
		return nil, f
	} else if !ok || id == "" {
		return nil, fail(InvalidParams, "params.creative_id is required")
	}
	var fx struct {
		Status     string `json:"status"`
		FormatKind string `json:"format_kind"`
	}
	if _, f := param(req, "fixture", &fx); f != nil {
		return nil, f
	}
	if fx.Status != "" && fx.Status != "approved" {
		return nil, fail(InvalidParams, "creative status %q is not modelled: this seller keeps creative references, not a reviewed library", fx.Status)
	}
	if fx.FormatKind != "" && !adcp.IsFormatKind(fx.FormatKind) {
		return nil, fail(InvalidParams, "params.fixture.format_kind %q is not a canonical format kind", fx.FormatKind)
	}
	return &said{Success: true, Message: "Creative " + id + " can be assigned by reference; this seller keeps no creative library."}, nil
}

// seedMediaBuy stores a media buy fixture for the sandbox caller, built as
// create_media_buy would build it from the seeded catalogue. The fixture's
// status must be the one its facts give (flight, creatives, hold).
func (c *Controller) seedMediaBuy(ctx context.Context, publisher string, p products.Principal, req *Request) (reply, *failure) {
	var id string
	if ok, f := param(req, "media_buy_id", &id); f != nil {
		return nil, f
	} else if !ok || id == "" || len(id) > 128 {
		return nil, fail(InvalidParams, "params.media_buy_id is required (1 to 128 characters)")
	}
	var fx struct {
		Account   json.RawMessage `json:"account"`
		Status    string          `json:"status"`
		Currency  string          `json:"currency"`
		StartTime string          `json:"start_time"`
		EndTime   string          `json:"end_time"`
		Brand     struct {
			Domain string `json:"domain"`
		} `json:"brand"`
		Packages []struct {
			PackageID           string            `json:"package_id"`
			ProductID           string            `json:"product_id"`
			PricingOptionID     string            `json:"pricing_option_id"`
			Budget              float64           `json:"budget"`
			CreativeAssignments []json.RawMessage `json:"creative_assignments"`
		} `json:"packages"`
	}
	if ok, f := param(req, "fixture", &fx); f != nil {
		return nil, f
	} else if !ok {
		return nil, fail(InvalidParams, "params.fixture is required")
	}
	status, ok := mediabuy.ParseStatus(fx.Status)
	if !ok {
		return nil, fail(InvalidParams, "params.fixture.status must be a media buy status")
	}
	now := c.now()
	var start, end time.Time
	if fx.StartTime == "" && fx.EndTime == "" {
		// A fixture that names only a status gets a flight that gives it.
		start, end = fixtureFlight(status, now)
	} else {
		var err1, err2 error
		start, err1 = time.Parse(time.RFC3339Nano, fx.StartTime)
		end, err2 = time.Parse(time.RFC3339Nano, fx.EndTime)
		if err1 != nil || err2 != nil || !end.After(start) {
			return nil, fail(InvalidParams, "params.fixture needs start_time before end_time, as ISO 8601 date-times (or neither)")
		}
	}
	if len(fx.Packages) == 0 && !currencyCode(fx.Currency) {
		return nil, fail(InvalidParams, "params.fixture needs packages, or a currency for a buy without packages")
	}
	acctKey, sandbox, f := c.fixtureAccount(ctx, publisher, p, fx.Account)
	if f != nil {
		return nil, f
	}
	if !sandbox {
		return nil, fail(Forbidden, "params.fixture.account must name a sandbox account these credentials may use")
	}
	// The fixture's id is the caller's: it names the buy within the
	// caller's sandbox, as get_media_buys and the other tasks will.
	public := id
	id = buying.BuyScope(products.Account{Key: acctKey, Sandbox: sandbox}, p).Stored(id)
	var catalogue *products.Catalogue
	if len(fx.Packages) > 0 {
		snap, err := c.Snaps.SeededSnapshot(ctx, publisher, p.ID)
		if err != nil || snap == nil {
			return nil, fail(NotFound, "seed the products of a media buy fixture first (seed_product, seed_pricing_option)")
		}
		catalogue = snap.Catalogue
	}
	reqs := make([]mediabuy.PackageRequest, len(fx.Packages))
	for i, pk := range fx.Packages {
		budget := pk.Budget
		reqs[i] = mediabuy.PackageRequest{ProductID: pk.ProductID, PricingOptionID: pk.PricingOptionID, Budget: &budget}
		for _, raw := range pk.CreativeAssignments {
			var ref string
			var obj struct {
				CreativeID string `json:"creative_id"`
			}
			if json.Unmarshal(raw, &ref) != nil {
				if json.Unmarshal(raw, &obj) != nil || obj.CreativeID == "" {
					return nil, fail(InvalidParams, "params.fixture.packages[%d].creative_assignments holds creative ids or {creative_id}", i)
				}
				ref = obj.CreativeID
			}
			reqs[i].Assignments = append(reqs[i].Assignments, mediabuy.Assignment{CreativeID: ref})
		}
	}
	pkgs, currency, r := mediabuy.Resolve(catalogue, reqs, func(i int) string { return fx.Packages[i].PackageID })
	if r != nil {
		return nil, fail(InvalidParams, "params.fixture.%s: %s", r.Field, r.Message)
	}
	for i, pk := range fx.Packages {
		if pk.PackageID == "" {
			return nil, fail(InvalidParams, "params.fixture.packages[%d].package_id is required", i)
		}
	}
	if len(fx.Packages) == 0 {
		currency = fx.Currency
	}
	if fx.Currency != "" && fx.Currency != currency {
		return nil, fail(InvalidParams, "params.fixture.currency is %s but its pricing options are in %s", fx.Currency, currency)
	}
	domain := fx.Brand.Domain
	if domain == "" {
		var a struct {
			Brand struct {
				Domain string `json:"domain"`
			} `json:"brand"`
		}
		_ = json.Unmarshal(fx.Account, &a)
		domain = a.Brand.Domain
	}
	b := mediabuy.Buy{ID: id, Account: acctKey, Principal: p.ID, Sandbox: sandbox, BrandDomain: domain, Currency: currency,
		Start: start.UTC(), End: end.UTC(), Packages: pkgs, Revision: 1, ConfirmedAt: now, CreatedAt: now, UpdatedAt: now}
	switch status {
	case mediabuy.Paused:
		b.Held = true
	case mediabuy.Canceled:
		b.Canceled = &mediabuy.Cancellation{At: now, By: "seller", Reason: "seeded"}
	}
	if got := b.Status(now); got != status {
		return nil, fail(InvalidParams, "the fixture's facts (flight, creatives, hold) give status %s, not %s", got, status)
	}
	created := mediabuy.Event{Revision: 1, At: now, Actor: "compliance", Action: "created", Summary: "seeded"}
	err := c.Store.CreateBuy(ctx, publisher, b, created)
	if errors.Is(err, store.ErrExists) {
		// Seeding again (a new run) replaces the caller's own fixture.
		old, rerr := c.Store.Buy(ctx, publisher, id)
		if rerr != nil || old.Principal != p.ID {
			return nil, fail(InvalidParams, "media buy %q exists and is not this caller's fixture", public)
		}
		b.Revision = old.Revision + 1
		created.Revision, created.Action = b.Revision, "reseeded"
		err = c.Store.UpdateBuy(ctx, publisher, b, old.Revision, []mediabuy.Event{created})
	}
	if err != nil {
		return nil, fail(InternalError, "the fixture could not be stored")
	}
	return &said{Success: true, Message: fmt.Sprintf("Media buy %s seeded (%s).", public, status)}, nil
}

// fixtureAccount resolves a fixture's account for the sandbox caller.
func (c *Controller) fixtureAccount(ctx context.Context, publisher string, p products.Principal, raw json.RawMessage) (string, bool, *failure) {
	if len(raw) == 0 || isNull(raw) {
		return "", p.Sandbox, nil
	}
	r, err := products.DecodeRequest([]byte(`{"account":` + string(raw) + `}`))
	if err != nil || r.Account == nil {
		return "", false, fail(InvalidParams, "params.fixture.account must be an account reference")
	}
	a, err := (access.Accounts{Store: c.Store}).Resolve(ctx, publisher, p, r.Account)
	if err != nil || !a.Sandbox {
		return "", false, fail(Forbidden, "the fixture's account is not a sandbox account these credentials may use")
	}
	return a.Key, true, nil
}

// accountStatuses are the account statuses (enums/account-status.json);
// rejected and closed are final.
var accountStatuses = []string{"active", "pending_approval", "rejected", "payment_required", "suspended", "closed"}

// forceAccountStatus moves a sandbox account to a status, as a seller's
// credit desk or billing would: create_media_buy is refused on an account
// that is not active, and list_accounts reports the status.
func (c *Controller) forceAccountStatus(ctx context.Context, publisher string, p products.Principal, req *Request) (reply, *failure) {
	var id, status string
	if ok, f := param(req, "account_id", &id); f != nil {
		return nil, f
	} else if !ok || id == "" {
		return nil, fail(InvalidParams, "params.account_id is required")
	}
	if ok, f := param(req, "status", &status); f != nil {
		return nil, f
	} else if !ok || !slices.Contains(accountStatuses, status) {
		return nil, fail(InvalidParams, "params.status must be an account status")
	}
	a, err := (access.Accounts{Store: c.Store}).Resolve(ctx, publisher, p, &products.AccountRef{AccountID: id})
	if errors.Is(err, products.ErrAccountNotFound) || (err == nil && !a.Sandbox) {
		return nil, fail(NotFound, "no sandbox account %q for these credentials", id)
	}
	if err != nil {
		return nil, fail(InternalError, "the account could not be read")
	}
	t, err := c.Store.AccountTerms(ctx, publisher, id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		t = store.AccountTerms{Account: id, Billing: buying.SupportedBilling[0], PaymentTerms: buying.DefaultPaymentTerms,
			Timezone: buying.DefaultTimezone, Status: "active"}
	case err != nil:
		return nil, fail(InternalError, "the account could not be read")
	}
	previous := t.Status
	if previous == "rejected" || previous == "closed" {
		return nil, &failure{code: InvalidTransition, detail: "account " + id + " is " + previous + ", which is final", current: previous}
	}
	t.Status, t.Revision, t.UpdatedAt = status, t.Revision+1, c.now()
	if err := c.Store.PutAccountTerms(ctx, publisher, t); err != nil {
		return nil, fail(InternalError, "the account could not be updated")
	}
	return &transition{Success: true, PreviousState: previous, CurrentState: status}, nil
}

// fixtureFlight is a flight that gives a fixture without dates the status
// it names: under way for the live statuses, next week for pending_start,
// last month for completed.
func fixtureFlight(s mediabuy.Status, now time.Time) (time.Time, time.Time) {
	day := now.UTC().Truncate(24 * time.Hour)
	switch s {
	case mediabuy.PendingStart:
		return day.AddDate(0, 0, 7), day.AddDate(0, 0, 37)
	case mediabuy.Completed:
		return day.AddDate(0, 0, -31), day.AddDate(0, 0, -1)
	}
	return day.AddDate(0, 0, -1), day.AddDate(0, 0, 30)
}

// currencyCode reports whether s is shaped as an ISO 4217 code.
func currencyCode(s string) bool {
	if len(s) != 3 {
		return false
	}
	for _, r := range s {
		if r < 'A' || r > 'Z' {
			return false
		}
	}
	return true
}
