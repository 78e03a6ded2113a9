package buying

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/storefront/storefront/adcp"
	"github.com/storefront/storefront/governance"
	"github.com/storefront/storefront/mediabuy"
	"github.com/storefront/storefront/outcome"
	"github.com/storefront/storefront/products"
	"github.com/storefront/storefront/sanitize"
	"github.com/storefront/storefront/store"
)

// TaskSyncGovernance is sync_governance, as the ledger records it.
const TaskSyncGovernance = "sync_governance"

// Governance is what the media-buy tasks need of governance agents: the
// URL policy registrations are held to, and the check_governance call.
type Governance interface {
	Allowed(url string) error
	Check(ctx context.Context, agent governance.Agent, check governance.Check) (governance.Verdict, error)
}

// minCredentials and maxCredentials bound a governance agent's
// credentials: the protocol's minimum, and what fits in a header.
const (
	minCredentials = 32
	maxCredentials = 4096
)

// bearerScheme is how the storefront authenticates to governance agents:
// the protocol's wire format for calling them is a Bearer token.
const bearerScheme = "Bearer"

type syncGovernanceWire struct {
	mediabuy.Envelope
	Accounts []map[string]json.RawMessage `json:"accounts"`
}

// registration is one validated sync_governance entry.
type registration struct {
	ref   *products.AccountRef
	echo  json.RawMessage
	agent store.GovernanceAgent
}

// govEntryWire is the part of an entry's result the buyer sees.
type govEntryWire struct {
	Account          json.RawMessage `json:"account"`
	Status           string          `json:"status"`
	GovernanceAgents []govAgentWire  `json:"governance_agents,omitempty"`
	Errors           []outcome.Error `json:"errors,omitempty"`
}

type govAgentWire struct {
	URL string `json:"url"`
}

// SyncGovernance runs sync_governance: each entry binds one governance
// agent to an account, replacing the account's previous one. A malformed
// request is refused whole; an account these credentials may not use is
// that entry's failure; every other entry is registered, together.
func (s *Service) SyncGovernance(ctx context.Context, c products.Call) outcome.Sent {
	var w syncGovernanceWire
	decodeErr := json.Unmarshal(c.Args, &w)
	a, verr := s.begin(c, TaskSyncGovernance, w.Envelope)
	if verr != nil {
		return a.fail(ctx, false, *verr)
	}
	var regs []registration
	var errs []outcome.Error
	switch {
	case decodeErr != nil:
		errs = append(errs, errorOf(sanitize.Vendor(), adcp.InvalidRequest, "", "the request must be a JSON object with an accounts array", nil))
	case w.IdempotencyKey == "":
		errs = append(errs, errorOf(sanitize.Vendor(), adcp.InvalidRequest, "idempotency_key", "idempotency_key is required on this task: send a fresh UUID for each request", nil))
	case len(w.Accounts) == 0:
		errs = append(errs, errorOf(sanitize.Vendor(), adcp.InvalidRequest, "accounts", "accounts must list at least one account", nil))
	case len(w.Accounts) > MaxAccounts:
		errs = append(errs, errorOf(sanitize.Vendor(), adcp.InvalidRequest, "accounts", fmt.Sprintf("at most %d accounts per request", MaxAccounts), nil))
	default:
		for i, entry := range w.Accounts {
			r, e := s.registrationOf(fmt.Sprintf("accounts[%d]", i), entry)
			if e != nil {
				errs = append(errs, *e)
				continue
			}
			regs = append(regs, r)
		}
	}
	if len(errs) > 0 {
		return a.fail(ctx, false, errs[0], errs[1:]...)
	}
	if c.Principal.Anonymous() {
		return a.fail(ctx, false, errorOf(sanitize.Vendor(), adcp.AuthMissing, "", "this task needs credentials: send an Authorization: Bearer header", nil))
	}

	now := s.now()
	out := make([]govEntryWire, len(regs))
	var put []store.GovernanceAgent
	seen := map[string]int{}
	for i, r := range regs {
		out[i] = govEntryWire{Account: r.echo}
		acct, err := s.Accounts.Resolve(ctx, c.Publisher, c.Principal, r.ref)
		switch {
		case errors.Is(err, products.ErrAccountNotFound):
			out[i].Status = "failed"
			out[i].Errors = []outcome.Error{errorOf(sanitize.Vendor(), adcp.AccountNotFound, fmt.Sprintf("accounts[%d].account", i),
				"the account does not exist or is not accessible to these credentials", nil)}
			continue
		case err != nil:
			s.log().Error("sync_governance: account lookup failed", "publisher", c.Publisher, "err", err)
			return a.fail(ctx, false, unavailable)
		}
		if first, dup := seen[acct.Key]; dup {
			return a.fail(ctx, false, errorOf(sanitize.Vendor(), adcp.ValidationError, fmt.Sprintf("accounts[%d].account", i),
				fmt.Sprintf("the account is also accounts[%d]: an account binds exactly one governance agent", first), nil))
		}
		seen[acct.Key] = i
		g := r.agent
		g.Account, g.RegisteredBy, g.UpdatedAt = acct.Key, c.Principal.ID, now
		put = append(put, g)
		out[i].Status, out[i].GovernanceAgents = "synced", []govAgentWire{{URL: g.URL}}
		if len(regs) == 1 {
			a.rec.Account, a.rec.Sandbox = acct.Key, acct.Sandbox
		}
	}
	payload, err := encode(struct {
		Status      string          `json:"status"`
		AdcpVersion string          `json:"adcp_version"`
		Accounts    []govEntryWire  `json:"accounts"`
		Context     json.RawMessage `json:"context,omitempty"`
	}{"completed", a.env.Version.String(), out, a.env.Context})
	if err != nil {
		return a.internal(err)
	}
	if len(put) > 0 {
		if err := s.Store.PutGovernanceAgents(ctx, c.Publisher, put); err != nil {
			s.log().Error("sync_governance: storing registrations failed", "publisher", c.Publisher, "err", err)
			return a.fail(ctx, false, unavailable)
		}
	}
	if err := a.record(ctx, "completed", payload); err != nil {
		return a.fail(ctx, false, unavailable)
	}
	return outcome.Sent{Payload: payload}
}

// registrationOf validates one entry against the request schema: an
// account reference and exactly one agent, an https URL the storefront
// may call, with Bearer credentials of 32 characters or more.
func (s *Service) registrationOf(path string, entry map[string]json.RawMessage) (registration, *outcome.Error) {
	bad := func(code adcp.Code, field, msg string) (registration, *outcome.Error) {
		e := errorOf(sanitize.Vendor(), code, path+field, msg, nil)
		return registration{}, &e
	}
	for k := range entry {
		if k != "account" && k != "governance_agents" {
			return bad(adcp.InvalidRequest, "."+k, "an entry has only account and governance_agents")
		}
	}
	if !present(entry["account"]) {
		return bad(adcp.InvalidRequest, ".account", "account is required")
	}
	req, err := products.DecodeRequest([]byte(`{"account":` + string(entry["account"]) + `}`))
	if err != nil || req.Account == nil {
		return bad(adcp.InvalidRequest, ".account", "account must be {account_id} or {brand: {domain}, operator}")
	}
	var agents []map[string]json.RawMessage
	if err := json.Unmarshal(entry["governance_agents"], &agents); err != nil || len(agents) == 0 {
		return bad(adcp.InvalidRequest, ".governance_agents", "governance_agents must list the account's governance agent")
	}
	if len(agents) > 1 {
		return bad(adcp.ValidationError, ".governance_agents",
			"an account binds exactly one governance agent: compose specialist review inside that agent and register it alone")
	}
	ag := agents[0]
	for k := range ag {
		if k != "url" && k != "authentication" {
			return bad(adcp.InvalidRequest, ".governance_agents[0]."+k, "a governance agent has only url and authentication")
		}
	}
	var url string
	if json.Unmarshal(ag["url"], &url) != nil || url == "" {
		return bad(adcp.InvalidRequest, ".governance_agents[0].url", "url is required")
	}
	if s.Governance != nil {
		if err := s.Governance.Allowed(url); err != nil {
			return bad(adcp.InvalidRequest, ".governance_agents[0].url", err.Error())
		}
	}
	var auth struct {
		Schemes     []string `json:"schemes"`
		Credentials string   `json:"credentials"`
	}
	if !present(ag["authentication"]) || json.Unmarshal(ag["authentication"], &auth) != nil {
		return bad(adcp.InvalidRequest, ".governance_agents[0].authentication", "authentication {schemes, credentials} is required")
	}
	switch {
	case len(auth.Schemes) != 1:
		return bad(adcp.InvalidRequest, ".governance_agents[0].authentication.schemes", "schemes must name exactly one scheme")
	case auth.Schemes[0] == "HMAC-SHA256":
		return bad(adcp.UnsupportedFeature, ".governance_agents[0].authentication.schemes",
			"this seller calls governance agents with a Bearer token only")
	case auth.Schemes[0] != bearerScheme:
		return bad(adcp.InvalidRequest, ".governance_agents[0].authentication.schemes", "schemes must be Bearer or HMAC-SHA256")
	case len(auth.Credentials) < minCredentials || len(auth.Credentials) > maxCredentials:
		return bad(adcp.InvalidRequest, ".governance_agents[0].authentication.credentials",
			fmt.Sprintf("credentials must be %d to %d characters", minCredentials, maxCredentials))
	case strings.IndexFunc(auth.Credentials, func(r rune) bool { return r < 0x21 || r > 0x7e }) >= 0:
		return bad(adcp.InvalidRequest, ".governance_agents[0].authentication.credentials",
			"credentials must be printable ASCII without spaces, as a Bearer token is")
	}
	return registration{ref: req.Account, echo: entry["account"],
		agent: store.GovernanceAgent{URL: url, Scheme: auth.Schemes[0], Credentials: auth.Credentials}}, nil
}

// governed asks the account's governance agent, if it has one, to approve
// the buy b before it is committed or queued, and records on b the
// authorization it is made under. Without an agent, a governance_context
// the buyer sent is kept with the buy, as it arrived.
func (s *Service) governed(ctx context.Context, a *answer, snap *products.Snapshot, req *mediabuy.CreateRequest, b *mediabuy.Buy) *outcome.Error {
	if req.GovernanceContext != "" {
		b.Governance = &mediabuy.Governance{Context: req.GovernanceContext}
	}
	if s.Governance == nil || b.Account == "" {
		return nil
	}
	reg, err := s.Store.GovernanceAgent(ctx, a.c.Publisher, b.Account)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil
	case err != nil:
		s.log().Error("reading the account's governance agent failed", "publisher", a.c.Publisher, "err", err)
		return &unavailable
	}
	if req.GovernanceContext == "" {
		e := errorOf(sanitize.Vendor(), adcp.PermissionDenied, "governance_context",
			"this account has a governance agent: send the governance_context its approval of this buy issued", nil)
		return &e
	}
	check := governance.Check{
		Caller: s.caller(a, snap), GovernanceContext: req.GovernanceContext, PlanID: req.PlanID,
		PurchaseType: "media_buy", Phase: "purchase",
		PlannedDelivery:     planned(snap, b),
		ExecutionCommitment: governance.Commitment{Amount: b.TotalBudget(), Currency: b.Currency},
	}
	v, err := s.Governance.Check(ctx, governance.Agent{URL: reg.URL, Scheme: reg.Scheme, Credentials: reg.Credentials}, check)
	if err != nil {
		s.log().Warn("governance check gave no decision: refusing the buy", "publisher", a.c.Publisher, "account", b.Account, "err", err)
		e := errorOf(sanitize.Vendor(), adcp.GovernanceUnavailable, "",
			"the account's governance agent gave no decision on this buy, so it was not made: retry later", nil)
		return &e
	}
	if !v.Approved {
		findings := make([]outcome.Finding, len(v.Findings))
		for i, f := range v.Findings {
			f.Explanation = screened(snap.Screen, f.Explanation)
			f.CategoryID, f.PolicyID, f.Severity = screened(snap.Screen, f.CategoryID), screened(snap.Screen, f.PolicyID), screened(snap.Screen, f.Severity)
			findings[i] = outcome.Finding(f)
		}
		msg := "the account's governance agent denied this buy"
		if v.Explanation != "" {
			msg += ": " + v.Explanation
		}
		e := errorOf(snap.Screen, adcp.GovernanceDenied, "", msg, &outcome.Details{GovernanceDenial: &outcome.GovernanceDenial{CheckID: screened(snap.Screen, v.CheckID), Findings: findings}})
		return &e
	}
	b.Governance = &mediabuy.Governance{Context: req.GovernanceContext, Agent: reg.URL, CheckID: v.CheckID, Approval: v.Context, ExpiresAt: v.ExpiresAt}
	return nil
}

// screened is the governance agent's words as the buyer may see them.
func screened(screen *sanitize.Screen, s string) string {
	t, _ := screen.Line(s, sanitize.MaxMessage)
	return t.String()
}

// caller is the storefront's own agent URL, as the check names it.
func (s *Service) caller(a *answer, snap *products.Snapshot) string {
	if a.c.Caller != "" {
		return a.c.Caller
	}
	return "https://" + snap.Publisher.Domain
}

// planned is what the storefront will deliver for b.
func planned(snap *products.Snapshot, b *mediabuy.Buy) governance.PlannedDelivery {
	var countries, channels []string
	for i := range b.Packages {
		p := &b.Packages[i]
		for _, c := range p.Countries {
			if !slices.Contains(countries, c) {
				countries = append(countries, c)
			}
		}
		if prod, ok := mediabuy.Product(snap.Catalogue, p.ProductID); ok {
			for _, c := range prod.Channels {
				if !slices.Contains(channels, c) {
					channels = append(channels, c)
				}
			}
		}
	}
	pd := governance.PlannedDelivery{Channels: channels, StartTime: b.Start.UTC().Format(time.RFC3339),
		EndTime: b.End.UTC().Format(time.RFC3339), TotalBudget: b.TotalBudget(), Currency: b.Currency, Pacing: b.Pacing}
	if len(countries) > 0 {
		pd.Geo = &governance.Geo{Countries: countries}
	}
	return pd
}
