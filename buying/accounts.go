package buying

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/storefront/storefront/access"
	"github.com/storefront/storefront/adcp"
	"github.com/storefront/storefront/mediabuy"
	"github.com/storefront/storefront/outcome"
	"github.com/storefront/storefront/products"
	"github.com/storefront/storefront/sanitize"
	"github.com/storefront/storefront/store"
)

// What sync_accounts accepts: the billing models and payment terms this
// seller offers. Accounts are created active; there is no approval step.
var (
	SupportedBilling = []string{"operator"}
	paymentTerms     = []string{"net_15", "net_30", "net_45", "net_60", "net_90", "prepay"}
)

// The seller's defaults: the payment terms that apply when sync_accounts
// names none, and the clock every account is assigned.
const (
	DefaultPaymentTerms = "net_30"
	DefaultTimezone     = "UTC"
)

// MaxAccounts bounds one sync_accounts request.
const MaxAccounts = 100

// AccountWire is an account as sync_accounts and list_accounts report it.
type AccountWire struct {
	AccountID    string          `json:"account_id"`
	Name         string          `json:"name,omitempty"`
	Brand        *BrandWire      `json:"brand,omitempty"`
	Operator     string          `json:"operator,omitempty"`
	Action       string          `json:"action,omitempty"`
	Status       string          `json:"status"`
	Revision     int64           `json:"revision,omitempty"`
	Timezone     string          `json:"timezone,omitempty"`
	Billing      string          `json:"billing,omitempty"`
	PaymentTerms string          `json:"payment_terms,omitempty"`
	AccountScope string          `json:"account_scope,omitempty"`
	Sandbox      bool            `json:"sandbox"`
	Errors       []outcome.Error `json:"errors,omitempty"`
}

// BrandWire is the brand natural key.
type BrandWire struct {
	Domain  string `json:"domain"`
	BrandID string `json:"brand_id,omitempty"`
}

type syncWire struct {
	mediabuy.Envelope
	Accounts      []map[string]json.RawMessage `json:"accounts"`
	DryRun        bool                         `json:"dry_run"`
	DeleteMissing bool                         `json:"delete_missing"`
	Push          json.RawMessage              `json:"push_notification_config"`
}

// SyncAccounts runs sync_accounts in provisioning mode: each entry names
// brand, operator and billing, and gets its account, created active with
// the seller's timezone. Settings-update entries are UNSUPPORTED_PROVISIONING.
func (s *Service) SyncAccounts(ctx context.Context, c products.Call) outcome.Sent {
	var w syncWire
	decodeErr := json.Unmarshal(c.Args, &w)
	a, verr := s.begin(c, TaskSyncAccounts, w.Envelope)
	if verr != nil {
		return a.fail(ctx, false, *verr)
	}
	var errs []outcome.Error
	bad := func(code adcp.Code, field, msg string) {
		errs = append(errs, errorOf(sanitize.Vendor(), code, field, msg, nil))
	}
	switch {
	case decodeErr != nil:
		bad(adcp.InvalidRequest, "", "the request must be a JSON object with an accounts array")
	case w.IdempotencyKey == "":
		bad(adcp.InvalidRequest, "idempotency_key", "idempotency_key is required on this task: send a fresh UUID for each request")
	case len(w.Accounts) == 0:
		bad(adcp.InvalidRequest, "accounts", "accounts must list at least one account")
	case len(w.Accounts) > MaxAccounts:
		bad(adcp.InvalidRequest, "accounts", fmt.Sprintf("at most %d accounts per request", MaxAccounts))
	case w.DeleteMissing:
		bad(adcp.UnsupportedFeature, "delete_missing", "delete_missing is not supported by this seller")
	case len(w.Push) > 0 && string(w.Push) != "null":
		bad(adcp.UnsupportedFeature, "push_notification_config", "accounts are active at once here, so there is no status change to notify")
	}
	if len(errs) > 0 {
		return a.fail(ctx, false, errs[0], errs[1:]...)
	}
	if c.Principal.Anonymous() {
		return a.fail(ctx, false, errorOf(sanitize.Vendor(), adcp.AuthMissing, "", "this task needs credentials: send an Authorization: Bearer header", nil))
	}
	out := struct {
		Status      string          `json:"status"`
		AdcpVersion string          `json:"adcp_version"`
		DryRun      bool            `json:"dry_run,omitempty"`
		Accounts    []AccountWire   `json:"accounts"`
		Context     json.RawMessage `json:"context,omitempty"`
	}{Status: "completed", AdcpVersion: a.env.Version.String(), DryRun: w.DryRun, Context: a.env.Context}
	for i, entry := range w.Accounts {
		aw, err := s.syncOne(ctx, c, fmt.Sprintf("accounts[%d]", i), entry, w.DryRun)
		var unnamed entryError
		if errors.As(err, &unnamed) {
			return a.fail(ctx, false, unnamed.e)
		}
		if err != nil {
			s.log().Error("sync_accounts failed", "err", err)
			return a.fail(ctx, false, unavailable)
		}
		out.Accounts = append(out.Accounts, aw)
	}
	payload, err := encode(out)
	if err != nil {
		return a.internal(err)
	}
	if !w.DryRun {
		if err := a.record(ctx, "completed", payload); err != nil {
			return a.fail(ctx, false, unavailable)
		}
	}
	return outcome.Sent{Payload: payload}
}

// entryError is an entry's failure that cannot be reported as the entry's
// result, because the entry names no brand and operator to report it
// under: it fails the whole request.
type entryError struct{ e outcome.Error }

func (e entryError) Error() string { return "sync_accounts entry: " + string(e.e.Code) }

// syncOne provisions one entry. A per-entry problem is that entry's
// failure, not the request's; only an outage is an error.
func (s *Service) syncOne(ctx context.Context, c products.Call, path string, entry map[string]json.RawMessage, dryRun bool) (AccountWire, error) {
	failedWith := func(code adcp.Code, field, msg string, details *outcome.Details) (AccountWire, error) {
		e := errorOf(sanitize.Vendor(), code, path+"."+field, msg, details)
		aw := AccountWire{Action: "failed", Status: "rejected", Errors: []outcome.Error{e}}
		// An entry's result names its brand and operator; a settings
		// update names them inside its account reference.
		named := entry
		if _, ok := entry["brand"]; !ok {
			_ = json.Unmarshal(entry["account"], &named)
		}
		var brand BrandWire
		if json.Unmarshal(named["brand"], &brand) == nil && brand.Domain != "" {
			aw.Brand = &brand
		}
		_ = json.Unmarshal(named["operator"], &aw.Operator)
		if aw.Brand == nil || aw.Operator == "" {
			// A result without them is not a valid answer, so an entry
			// that names neither fails the request.
			return AccountWire{}, entryError{e}
		}
		return aw, nil
	}
	failed := func(code adcp.Code, field, msg string) (AccountWire, error) { return failedWith(code, field, msg, nil) }
	if _, ok := entry["account"]; ok {
		return failed(adcp.UnsupportedProvisioning, "account", "settings-update entries are not supported by this seller: send brand, operator and billing")
	}
	for _, f := range []string{"operator_unit", "notification_configs", "billing_entity", "preferred_reporting_protocol"} {
		if raw, ok := entry[f]; ok && string(raw) != "null" {
			return failed(adcp.UnsupportedFeature, f, f+" is not supported by this seller")
		}
	}
	var e struct {
		Brand        json.RawMessage `json:"brand"`
		Operator     json.RawMessage `json:"operator"`
		Billing      string          `json:"billing"`
		PaymentTerms string          `json:"payment_terms"`
		Sandbox      bool            `json:"sandbox"`
		Timezone     *string         `json:"timezone"`
		Currency     *string         `json:"currency"`
	}
	raw, _ := json.Marshal(entry)
	if err := json.Unmarshal(raw, &e); err != nil {
		return failed(adcp.InvalidRequest, "", "the entry has a field of the wrong type")
	}
	ref := map[string]json.RawMessage{"brand": e.Brand, "operator": e.Operator}
	if e.Sandbox {
		ref["sandbox"] = json.RawMessage("true")
	}
	refJSON, _ := json.Marshal(ref)
	req, err := products.DecodeRequest([]byte(`{"account":` + string(refJSON) + `}`))
	switch {
	case err != nil || req.Account == nil || req.Account.Brand == nil:
		msg := "brand.domain and operator are required, as lower-case domain names"
		var re *products.RequestError
		if errors.As(err, &re) && len(re.Problems) > 0 {
			msg = re.Problems[0].Detail
		}
		return failed(adcp.InvalidRequest, "brand", msg)
	case e.Billing == "":
		return failed(adcp.InvalidRequest, "billing", "billing is required")
	case !slices.Contains(SupportedBilling, e.Billing):
		// The seller-wide gate (error-details/billing-not-supported.json).
		return failedWith(adcp.BillingNotSupported, "billing", "this seller invoices the operator only: send billing operator",
			&outcome.Details{BillingScope: &outcome.BillingScope{Scope: "capability", SupportedBilling: SupportedBilling}})
	case e.PaymentTerms != "" && !slices.Contains(paymentTerms, e.PaymentTerms):
		return failed(adcp.PaymentTermsNotSupported, "payment_terms", "payment_terms must be one of net_15, net_30, net_45, net_60, net_90 or prepay")
	case e.Timezone != nil:
		return failed(adcp.ValidationError, "timezone", "this seller assigns each account's timezone: omit timezone")
	case e.Currency != nil:
		return failed(adcp.ValidationError, "currency", "accounts here take each media buy's currency: omit currency")
	}
	p := c.Principal
	if !p.Sandbox && req.Account.Operator != p.Operator {
		return failed(adcp.PermissionDenied, "operator", "these credentials do not act for that operator")
	}
	terms := e.PaymentTerms
	if terms == "" {
		terms = DefaultPaymentTerms
	}
	sandbox := req.Account.Sandbox || p.Sandbox
	probe := store.Account{Operator: req.Account.Operator, BrandDomain: req.Account.Brand.Domain, BrandID: req.Account.Brand.BrandID, Sandbox: sandbox}
	existing, err := s.Store.AccountByKey(ctx, c.Publisher, probe.NaturalKey())
	isNew := errors.Is(err, store.ErrNotFound)
	if err != nil && !isNew {
		return AccountWire{}, err
	}
	aw := AccountWire{
		Brand: &BrandWire{Domain: probe.BrandDomain, BrandID: probe.BrandID}, Operator: probe.Operator,
		Status: "active", Timezone: s.timezone(), Billing: e.Billing, PaymentTerms: terms,
		AccountScope: "operator_brand", Sandbox: sandbox,
	}
	aw.Name = accountName(probe)
	if dryRun {
		aw.Action = "created"
		if !isNew {
			aw.AccountID, aw.Action = existing.ID, "unchanged"
		}
		return aw, nil
	}
	acct, err := s.Accounts.Resolve(ctx, c.Publisher, p, req.Account)
	if errors.Is(err, products.ErrAccountNotFound) {
		return failed(adcp.PermissionDenied, "operator", "these credentials may not use that account")
	}
	if err != nil {
		return AccountWire{}, err
	}
	aw.AccountID = acct.Key
	prev, err := s.Store.AccountTerms(ctx, c.Publisher, acct.Key)
	if err == nil {
		// The status is the seller's (credit, billing): a sync does not
		// change it.
		aw.Status = prev.Status
	}
	switch {
	case errors.Is(err, store.ErrNotFound):
		aw.Action, aw.Revision = "created", 1
		if !isNew {
			// The account existed (a buyer used it before syncing):
			// its terms are recorded now.
			aw.Action = "updated"
		}
	case err != nil:
		return AccountWire{}, err
	case prev.Billing == e.Billing && prev.PaymentTerms == terms:
		aw.Action, aw.Revision = "unchanged", prev.Revision
		return aw, nil
	default:
		aw.Action, aw.Revision = "updated", prev.Revision+1
	}
	err = s.Store.PutAccountTerms(ctx, c.Publisher, store.AccountTerms{Account: acct.Key, Billing: e.Billing, PaymentTerms: terms,
		Timezone: s.timezone(), Status: aw.Status, Revision: aw.Revision, UpdatedAt: s.now()})
	return aw, err
}

func accountName(a store.Account) string {
	name := a.BrandDomain + " via " + a.Operator
	if a.Sandbox {
		name += " (sandbox)"
	}
	return name
}

// ListAccounts runs list_accounts: the accounts these credentials may use.
func (s *Service) ListAccounts(ctx context.Context, c products.Call) outcome.Sent {
	var w struct {
		mediabuy.Envelope
		Account    json.RawMessage `json:"account"`
		Status     string          `json:"status"`
		Sandbox    *bool           `json:"sandbox"`
		Pagination *struct {
			MaxResults *int   `json:"max_results"`
			Cursor     string `json:"cursor"`
		} `json:"pagination"`
	}
	decodeErr := json.Unmarshal(c.Args, &w)
	a, verr := s.begin(c, "list_accounts", w.Envelope)
	if verr != nil {
		return a.fail(ctx, false, *verr)
	}
	if decodeErr != nil {
		return a.fail(ctx, false, errorOf(sanitize.Vendor(), adcp.InvalidRequest, "", "the request is not a valid list_accounts request", nil))
	}
	if c.Principal.Anonymous() {
		return a.fail(ctx, false, errorOf(sanitize.Vendor(), adcp.AuthMissing, "", "this task needs credentials: send an Authorization: Bearer header", nil))
	}
	var candidates []store.Account
	if len(w.Account) > 0 && string(w.Account) != "null" {
		req, err := products.DecodeRequest([]byte(`{"account":` + string(w.Account) + `}`))
		if err != nil || req.Account == nil {
			return a.fail(ctx, false, errorOf(sanitize.Vendor(), adcp.InvalidRequest, "account", "account must be an account reference", nil))
		}
		acct, e := a.account(ctx, req.Account, true)
		if e != nil {
			return a.fail(ctx, false, *e)
		}
		one, err := s.Store.AccountByID(ctx, c.Publisher, acct.Key)
		if err != nil {
			return a.fail(ctx, false, unavailable)
		}
		candidates = []store.Account{one}
	} else {
		all, err := s.Store.ListAccounts(ctx, c.Publisher)
		if err != nil {
			return a.fail(ctx, false, unavailable)
		}
		for _, acct := range all {
			if access.Listed(c.Principal, acct) {
				candidates = append(candidates, acct)
			}
		}
	}
	out := struct {
		Status      string          `json:"status"`
		AdcpVersion string          `json:"adcp_version"`
		Accounts    []AccountWire   `json:"accounts"`
		Pagination  *outcome.Page   `json:"pagination,omitempty"`
		Context     json.RawMessage `json:"context,omitempty"`
	}{Status: "completed", AdcpVersion: a.env.Version.String(), Accounts: []AccountWire{}, Context: a.env.Context}
	size := mediabuy.DefaultPageSize
	cursor := ""
	if w.Pagination != nil {
		if w.Pagination.MaxResults != nil {
			size = *w.Pagination.MaxResults
		}
		cursor = w.Pagination.Cursor
	}
	if size < 1 || size > mediabuy.MaxPageSize {
		return a.fail(ctx, false, errorOf(sanitize.Vendor(), adcp.ValidationError, "pagination.max_results",
			fmt.Sprintf("max_results is 1 to %d", mediabuy.MaxPageSize), nil))
	}
	slices.SortFunc(candidates, func(x, y store.Account) int { return strings.Compare(x.ID, y.ID) })
	var match []AccountWire
	for _, acct := range candidates {
		aw, err := s.accountWire(ctx, c.Publisher, acct)
		if err != nil {
			return a.fail(ctx, false, unavailable)
		}
		if (w.Status != "" && aw.Status != w.Status) || (w.Sandbox != nil && aw.Sandbox != *w.Sandbox) {
			continue
		}
		match = append(match, aw)
	}
	offset, ok := cursorOffset("ac:", cursor, len(match))
	if !ok {
		return a.fail(ctx, false, errorOf(sanitize.Vendor(), adcp.InvalidRequest, "pagination.cursor", "the cursor is not one this seller issued for this query", nil))
	}
	end := min(offset+size, len(match))
	out.Accounts = append(out.Accounts, match[offset:end]...)
	total := len(match)
	out.Pagination = &outcome.Page{HasMore: end < total, Total: &total}
	if end < total {
		out.Pagination.Cursor = cursorAt("ac:", end)
	}
	payload, err := encode(out)
	if err != nil {
		return a.internal(err)
	}
	return outcome.Sent{Payload: payload}
}

func (s *Service) accountWire(ctx context.Context, publisher string, acct store.Account) (AccountWire, error) {
	aw := AccountWire{AccountID: acct.ID, Name: accountName(acct), Brand: &BrandWire{Domain: acct.BrandDomain, BrandID: acct.BrandID},
		Operator: acct.Operator, Status: "active", Timezone: s.timezone(), Billing: SupportedBilling[0],
		PaymentTerms: DefaultPaymentTerms, AccountScope: "operator_brand", Sandbox: acct.Sandbox}
	t, err := s.Store.AccountTerms(ctx, publisher, acct.ID)
	switch {
	case errors.Is(err, store.ErrNotFound):
	case err != nil:
		return aw, err
	default:
		aw.Status, aw.Timezone, aw.Billing, aw.PaymentTerms, aw.Revision = t.Status, t.Timezone, t.Billing, t.PaymentTerms, t.Revision
	}
	return aw, nil
}
