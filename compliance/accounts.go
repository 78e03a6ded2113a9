package compliance

import (
	"context"
	"errors"
	"slices"

	"github.com/storefront/storefront/adcp"
	"github.com/storefront/storefront/buying"
	"github.com/storefront/storefront/products"
	"github.com/storefront/storefront/store"
	"github.com/storefront/storefront/vocab"
)

// seedAccount creates a sandbox account under the id the fixture names, as
// sync_accounts would provision it, with the status and billing the fixture
// gives. Seeding the same fixture again changes nothing; the same id with
// another identity or other terms is INVALID_STATE.
func (c *Controller) seedAccount(ctx context.Context, publisher string, p products.Principal, req *Request) (reply, *failure) {
	var id string
	if ok, f := param(req, "account_id", &id); f != nil {
		return nil, f
	} else if !ok || !fixtureID(id) {
		return nil, fail(InvalidParams, "params.account_id is required: 1 to 128 letters, digits, '_', '-', '.' or ':'")
	}
	var fx struct {
		Brand struct {
			Domain  string `json:"domain"`
			BrandID string `json:"brand_id"`
		} `json:"brand"`
		Operator     string `json:"operator"`
		Billing      string `json:"billing"`
		PaymentTerms string `json:"payment_terms"`
		Sandbox      *bool  `json:"sandbox"`
		Status       string `json:"status"`
	}
	if ok, f := param(req, "fixture", &fx); f != nil {
		return nil, f
	} else if !ok {
		return nil, fail(InvalidParams, "params.fixture is required")
	}
	switch {
	case !adcp.IsDomain(fx.Brand.Domain):
		return nil, fail(InvalidParams, "params.fixture.brand.domain must be a lower-case domain name")
	case !adcp.IsDomain(fx.Operator):
		return nil, fail(InvalidParams, "params.fixture.operator must be a lower-case domain name")
	case fx.Sandbox != nil && !*fx.Sandbox:
		return nil, fail(Forbidden, "params.fixture.sandbox is false: the controller seeds sandbox accounts only")
	}
	if fx.Billing == "" {
		fx.Billing = buying.SupportedBilling[0]
	} else if !slices.Contains(buying.SupportedBilling, fx.Billing) {
		return nil, fail(InvalidParams, "params.fixture.billing %q is not one this seller supports (%v)", fx.Billing, buying.SupportedBilling)
	}
	if fx.PaymentTerms == "" {
		fx.PaymentTerms = buying.DefaultPaymentTerms
	}
	if fx.Status == "" {
		fx.Status = "active"
	} else if !slices.Contains(accountStatuses, fx.Status) {
		return nil, fail(InvalidParams, "params.fixture.status must be an account status")
	}
	want := store.Account{ID: id, Operator: fx.Operator, BrandDomain: fx.Brand.Domain, BrandID: fx.Brand.BrandID, Sandbox: true, Disclosure: vocab.Exact}
	got, err := c.Store.EnsureAccount(ctx, publisher, want)
	switch {
	case errors.Is(err, store.ErrExists) || (err == nil && got.ID != id):
		return nil, fail(InvalidState, "account %s, or an account with this brand and operator, was seeded with another identity", id)
	case err != nil:
		return nil, fail(InternalError, "the account could not be stored")
	}
	terms := store.AccountTerms{Account: id, Billing: fx.Billing, PaymentTerms: fx.PaymentTerms, Timezone: buying.DefaultTimezone,
		Status: fx.Status, Revision: 1, UpdatedAt: c.now()}
	prev, err := c.Store.AccountTerms(ctx, publisher, id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		if err := c.Store.PutAccountTerms(ctx, publisher, terms); err != nil {
			return nil, fail(InternalError, "the account could not be stored")
		}
	case err != nil:
		return nil, fail(InternalError, "the account could not be read")
	case prev.Billing != terms.Billing || prev.PaymentTerms != terms.PaymentTerms || prev.Status != terms.Status:
		return nil, fail(InvalidState, "account %s was seeded with other terms", id)
	}
	return &said{Success: true, Message: "Sandbox account " + id + " is " + fx.Status + "."}, nil
}

// fixtureID reports whether id is usable as a seeded resource id.
func fixtureID(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	for _, r := range id {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.' || r == ':') {
			return false
		}
	}
	return true
}
