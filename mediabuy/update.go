package mediabuy

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/storefront/storefront/adcp"
	"github.com/storefront/storefront/outcome"
	"github.com/storefront/storefront/products"
)

// UpdateRequest is a decoded update_media_buy request.
type UpdateRequest struct {
	Envelope
	Account    *products.AccountRef
	Push       *products.PushConfig
	MediaBuyID string
	Revision   *int64
	Name       *string
	Paused     *bool
	Canceled   bool
	Reason     string
	// StartSet and EndSet say whether the flight is being changed.
	StartSet, EndSet bool
	Start, End       time.Time
	TotalBudget      *Total
	Pacing           string
	Packages         []PackageUpdate
}

// PackageUpdate is one entry of update_media_buy packages[].
type PackageUpdate struct {
	PackageID   string
	Budget      *float64
	Pacing      string
	Paused      *bool
	Canceled    bool
	Reason      string
	Impressions *float64
	// Countries is set (possibly empty) when targeting_overlay was given.
	Countries *[]string
	// Assignments is set when creative_assignments was given: it
	// replaces the package's assignments.
	Assignments       *[]Assignment
	OptimizationGoals json.RawMessage
	Context           json.RawMessage
}

type updateWire struct {
	Envelope
	Account            json.RawMessage    `json:"account"`
	Push               json.RawMessage    `json:"push_notification_config"`
	MediaBuyID         string             `json:"media_buy_id"`
	Revision           *int64             `json:"revision"`
	Name               *string            `json:"name"`
	Paused             *bool              `json:"paused"`
	Canceled           *bool              `json:"canceled"`
	CancellationReason string             `json:"cancellation_reason"`
	StartTime          json.RawMessage    `json:"start_time"`
	EndTime            *string            `json:"end_time"`
	TotalBudget        *Total             `json:"total_budget"`
	Pacing             string             `json:"pacing"`
	Packages           []packageWireDelta `json:"packages"`
	NewPackages        json.RawMessage    `json:"new_packages"`
	DailyBudgetCap     json.RawMessage    `json:"daily_budget_cap"`
	BudgetCapTimezone  json.RawMessage    `json:"budget_cap_timezone"`
	BudgetAllocation   json.RawMessage    `json:"budget_allocation"`
	Bidding            json.RawMessage    `json:"bidding"`
	InvoiceRecipient   json.RawMessage    `json:"invoice_recipient"`
	ReportingWebhook   json.RawMessage    `json:"reporting_webhook"`
	GovernanceContext  json.RawMessage    `json:"governance_context"`
}

type packageWireDelta struct {
	PackageID          string                     `json:"package_id"`
	Budget             *float64                   `json:"budget"`
	Pacing             string                     `json:"pacing"`
	Paused             *bool                      `json:"paused"`
	Canceled           *bool                      `json:"canceled"`
	CancellationReason string                     `json:"cancellation_reason"`
	Impressions        *float64                   `json:"impressions"`
	TargetingOverlay   map[string]json.RawMessage `json:"targeting_overlay"`
	CreativeAssignment *[]assignmentWire          `json:"creative_assignments"`
	OptimizationGoals  json.RawMessage            `json:"optimization_goals"`
	Context            json.RawMessage            `json:"context"`
	MinSpendTarget     json.RawMessage            `json:"min_spend_target"`
	BidPrice           json.RawMessage            `json:"bid_price"`
	Bidding            json.RawMessage            `json:"bidding"`
	DailyBudgetCap     json.RawMessage            `json:"daily_budget_cap"`
	StartTime          json.RawMessage            `json:"start_time"`
	EndTime            json.RawMessage            `json:"end_time"`
	Catalogs           json.RawMessage            `json:"catalogs"`
	Creatives          json.RawMessage            `json:"creatives"`
	KeywordTargetsAdd  json.RawMessage            `json:"keyword_targets_add"`
	KeywordTargetsDel  json.RawMessage            `json:"keyword_targets_remove"`
	NegativeAdd        json.RawMessage            `json:"negative_keywords_add"`
	NegativeDel        json.RawMessage            `json:"negative_keywords_remove"`
	ProductID          json.RawMessage            `json:"product_id"`
	PricingOptionID    json.RawMessage            `json:"pricing_option_id"`
}

// DecodeUpdate parses and validates update_media_buy arguments.
func DecodeUpdate(args []byte, now time.Time) (*UpdateRequest, error) {
	var w updateWire
	var e errs
	if !unmarshal(args, &w, &e) {
		return &UpdateRequest{Envelope: envelopeOnly(args)}, e.err()
	}
	r := &UpdateRequest{Envelope: w.Envelope, MediaBuyID: w.MediaBuyID, Revision: w.Revision, Name: w.Name,
		Paused: w.Paused, Reason: w.CancellationReason, TotalBudget: w.TotalBudget, Pacing: w.Pacing}
	checkEnvelope(&r.Envelope, &e, true)
	r.Account, _, r.Push = refs(w.Account, nil, w.Push, &e)
	if r.Account == nil && !present(w.Account) {
		e.invalid("account", "account is required")
	}
	if r.MediaBuyID == "" {
		e.invalid("media_buy_id", "media_buy_id is required")
	}
	checkID(&e, "media_buy_id", r.MediaBuyID)
	if r.Revision != nil && *r.Revision < 1 {
		e.invalid("revision", "revision must be 1 or more")
	}
	if r.Name != nil && (strings.TrimSpace(*r.Name) == "" || len([]rune(*r.Name)) > maxName) {
		e.invalid("name", "name must be 1 to %d characters and not only spaces", maxName)
	}
	if w.Canceled != nil {
		if !*w.Canceled {
			e.invalid("canceled", "canceled can only be true: cancellation is irreversible")
		}
		r.Canceled = *w.Canceled
	}
	if len([]rune(r.Reason)) > 500 {
		e.invalid("cancellation_reason", "cancellation_reason is longer than 500 characters")
	}
	checkText(&e, "cancellation_reason", r.Reason)
	if r.Pacing != "" && !contains(pacings, r.Pacing) {
		e.invalid("pacing", "pacing must be even, asap or front_loaded")
	}
	if r.TotalBudget != nil {
		if r.TotalBudget.Amount < 0 {
			e.add(adcp.ValidationError, "total_budget.amount", "total_budget.amount must not be negative")
		}
		if !adcp.IsCurrency(r.TotalBudget.Currency) {
			e.invalid("total_budget.currency", "total_budget.currency must be an ISO 4217 code")
		}
	}
	if present(w.StartTime) || w.EndTime != nil {
		var s string
		if present(w.StartTime) && (!read(w.StartTime, &s) || s == "asap") {
			e.invalid("start_time", "start_time must be an ISO 8601 date-time when updating a flight")
		} else {
			_, r.Start, r.End = flight(&e, "", w.StartTime, w.EndTime, now, false)
			r.StartSet, r.EndSet = present(w.StartTime), w.EndTime != nil
		}
	}
	if present(w.NewPackages) {
		e.add(adcp.UnsupportedFeature, "new_packages", "adding packages to a buy is not supported by this seller: create another media buy")
	}
	unsupported(&e, "", map[string]json.RawMessage{
		"daily_budget_cap": w.DailyBudgetCap, "budget_cap_timezone": w.BudgetCapTimezone, "bidding": w.Bidding,
		"invoice_recipient": w.InvoiceRecipient, "reporting_webhook": w.ReportingWebhook, "governance_context": w.GovernanceContext,
	})
	if present(w.BudgetAllocation) {
		var ba struct {
			Mode string `json:"mode"`
		}
		if !read(w.BudgetAllocation, &ba) || ba.Mode != "fixed" {
			e.add(adcp.UnsupportedFeature, "budget_allocation", "only fixed budget allocation is supported")
		}
	}
	if w.Packages != nil && len(w.Packages) == 0 {
		e.invalid("packages", "packages must list at least one package update")
	}
	seen := map[string]bool{}
	for i, pw := range w.Packages {
		path := fmt.Sprintf("packages[%d]", i)
		if seen[pw.PackageID] && pw.PackageID != "" {
			e.invalid(path+".package_id", "package %s is updated twice", pw.PackageID)
		}
		seen[pw.PackageID] = true
		r.Packages = append(r.Packages, decodePackageUpdate(&e, path, pw))
	}
	return r, e.err()
}

func decodePackageUpdate(e *errs, path string, w packageWireDelta) PackageUpdate {
	u := PackageUpdate{PackageID: w.PackageID, Budget: w.Budget, Pacing: w.Pacing, Paused: w.Paused,
		Reason: w.CancellationReason, Impressions: w.Impressions}
	if u.PackageID == "" {
		e.invalid(path+".package_id", "package_id is required")
	}
	checkID(e, path+".package_id", u.PackageID)
	if u.Budget != nil && *u.Budget <= 0 {
		e.add(adcp.ValidationError, path+".budget", "budget must be greater than zero")
	}
	if u.Pacing != "" && !contains(pacings, u.Pacing) {
		e.invalid(path+".pacing", "pacing must be even, asap or front_loaded")
	}
	if w.Canceled != nil {
		if !*w.Canceled {
			e.invalid(path+".canceled", "canceled can only be true: cancellation is irreversible")
		}
		u.Canceled = *w.Canceled
	}
	checkText(e, path+".cancellation_reason", u.Reason)
	for _, f := range []struct {
		name string
		raw  json.RawMessage
	}{{"product_id", w.ProductID}, {"pricing_option_id", w.PricingOptionID}} {
		if present(f.raw) {
			e.invalid(path+"."+f.name, "%s cannot change on an existing package", f.name)
		}
	}
	if present(w.MinSpendTarget) {
		e.add(adcp.ValidationError, path+".min_spend_target", "min_spend_target is valid only with seller-optimized allocation, which this seller does not offer")
	}
	unsupported(e, path+".", map[string]json.RawMessage{
		"bid_price": w.BidPrice, "bidding": w.Bidding, "daily_budget_cap": w.DailyBudgetCap, "start_time": w.StartTime,
		"end_time": w.EndTime, "catalogs": w.Catalogs, "creatives": w.Creatives, "keyword_targets_add": w.KeywordTargetsAdd,
		"keyword_targets_remove": w.KeywordTargetsDel, "negative_keywords_add": w.NegativeAdd, "negative_keywords_remove": w.NegativeDel,
	})
	if w.TargetingOverlay != nil {
		countries := overlayCountries(e, path+".targeting_overlay", w.TargetingOverlay)
		u.Countries = &countries
	}
	if w.CreativeAssignment != nil {
		a := decodeAssignments(e, path+".creative_assignments", *w.CreativeAssignment)
		if a == nil {
			a = []Assignment{}
		}
		u.Assignments = &a
	}
	if present(w.OptimizationGoals) {
		u.OptimizationGoals = w.OptimizationGoals
	}
	if present(w.Context) {
		if !isObject(w.Context) {
			e.invalid(path+".context", "context must be an object")
		} else {
			u.Context = w.Context
		}
	}
	return u
}

// Change is what an update did to a buy.
type Change struct {
	// Events are the history entries the update adds.
	Events []Event
	// Affected are the ids of the packages the update touched, in buy
	// order.
	Affected []string
	// Rejudge are the ids of live packages whose terms changed (budget,
	// flight, markets): the rulebook must judge them again.
	Rejudge []string
}

// Apply applies an update to b at now on behalf of actor. It changes b only
// when it returns no refusal; a refused update leaves b as it was.
func Apply(b *Buy, u *UpdateRequest, now time.Time, actor string) (Change, *Refusal) {
	var ch Change
	if u.Revision != nil && *u.Revision != b.Revision {
		r := refuse(adcp.Conflict, "revision", "the media buy is at revision %d, not %d: read it again and retry", b.Revision, *u.Revision)
		r.Details = &outcome.Details{BuyRevision: &outcome.BuyRevision{CurrentRevision: b.Revision}}
		return ch, r
	}
	status := b.Status(now)
	if status.Terminal() {
		if u.Canceled {
			return ch, stateRefusal(adcp.NotCancellable, status, "be canceled")
		}
		return ch, stateRefusal(adcp.InvalidState, status, "be updated")
	}
	next := b.clone()
	affected := map[string]bool{}
	rejudge := map[string]bool{}
	event := func(action, pkg, format string, args ...any) {
		ch.Events = append(ch.Events, Event{At: now.UTC(), Actor: actor, Action: action, PackageID: pkg, Summary: fmt.Sprintf(format, args...)})
	}
	for _, pu := range u.Packages {
		if next.Package(pu.PackageID) == nil {
			r := refuse(adcp.PackageNotFound, "packages", "package %s is not part of media buy %s", pu.PackageID, b.ID)
			return Change{}, r
		}
	}
	if u.Canceled {
		next.Canceled = &Cancellation{At: now.UTC(), By: "buyer", Reason: u.Reason}
		event("canceled", "", "canceled by the buyer")
		ch.Events[len(ch.Events)-1].Summary += reasonSuffix(u.Reason)
		*b = *next
		return ch, nil
	}
	if u.Name != nil && *u.Name != next.Name {
		next.Name = *u.Name
		event("renamed", "", "renamed")
	}
	if u.Pacing != "" && u.Pacing != next.Pacing {
		next.Pacing = u.Pacing
		event("pacing_updated", "", "pacing set to %s", u.Pacing)
	}
	if u.Paused != nil {
		if *u.Paused && !next.Held {
			next.Held = true
			event("paused", "", "paused by the buyer")
		} else if !*u.Paused && next.Held {
			next.Held = false
			event("resumed", "", "resumed by the buyer")
		}
	}
	if u.StartSet || u.EndSet {
		if u.StartSet && !now.Before(next.Start) && !u.Start.Equal(next.Start) {
			return Change{}, refuse(adcp.ValidationError, "start_time", "the flight has started: only end_time can change")
		}
		start, end := next.Start, next.End
		if u.StartSet {
			start = u.Start
		}
		if u.EndSet {
			end = u.End
		}
		if !end.After(start) {
			return Change{}, refuse(adcp.ValidationError, "end_time", "end_time must be after start_time")
		}
		if !end.After(now) {
			return Change{}, refuse(adcp.ValidationError, "end_time", "end_time is in the past")
		}
		for i := range next.Packages {
			p := &next.Packages[i]
			if (!p.Start.IsZero() && p.Start.Before(start)) || (!p.End.IsZero() && p.End.After(end)) {
				return Change{}, refuse(adcp.ValidationError, "end_time", "package %s's own flight would fall outside the media buy's", p.ID)
			}
		}
		if !start.Equal(next.Start) || !end.Equal(next.End) {
			next.Start, next.End = start, end
			event("flight_updated", "", "flight set to %s – %s", start.Format(time.RFC3339), end.Format(time.RFC3339))
			for i := range next.Packages {
				if next.Packages[i].Live() {
					rejudge[next.Packages[i].ID] = true
				}
			}
		}
	}
	for _, pu := range u.Packages {
		p := next.Package(pu.PackageID)
		if !p.Live() {
			if pu.Canceled {
				r := refuse(adcp.NotCancellable, "packages", "package %s is already canceled", p.ID)
				return Change{}, r
			}
			return Change{}, refuse(adcp.InvalidState, "packages", "package %s is canceled and cannot be updated", p.ID)
		}
		affected[p.ID] = true
		if pu.Canceled {
			p.Canceled = &Cancellation{At: now.UTC(), By: "buyer", Reason: pu.Reason}
			event("package_canceled", p.ID, "package canceled by the buyer%s", reasonSuffix(pu.Reason))
			continue
		}
		if pu.Budget != nil && Round(*pu.Budget) != p.Budget {
			event("budget_updated", p.ID, "budget %s → %s %s", money(p.Budget), money(*pu.Budget), next.Currency)
			p.Budget = Round(*pu.Budget)
			rejudge[p.ID] = true
		}
		if pu.Pacing != "" && pu.Pacing != p.Pacing {
			p.Pacing = pu.Pacing
			event("pacing_updated", p.ID, "pacing set to %s", pu.Pacing)
		}
		if pu.Paused != nil && *pu.Paused != p.Held {
			p.Held = *pu.Paused
			event(map[bool]string{true: "package_paused", false: "package_resumed"}[p.Held], p.ID, "package %s by the buyer", map[bool]string{true: "paused", false: "resumed"}[p.Held])
		}
		if pu.Impressions != nil {
			v := *pu.Impressions
			p.Impressions = &v
		}
		if pu.Countries != nil {
			p.Countries = append([]string(nil), (*pu.Countries)...)
			event("targeting_updated", p.ID, "markets set to %s", strings.Join(p.Countries, ", "))
			rejudge[p.ID] = true
		}
		if pu.Assignments != nil {
			p.Assignments = append([]Assignment(nil), (*pu.Assignments)...)
			event("creatives_assigned", p.ID, "%d creative(s) assigned", len(p.Assignments))
		}
		if pu.OptimizationGoals != nil {
			p.OptimizationGoals = pu.OptimizationGoals
		}
		if pu.Context != nil {
			p.Context = pu.Context
		}
	}
	if u.TotalBudget != nil {
		if u.TotalBudget.Currency != next.Currency {
			return Change{}, refuse(adcp.ValidationError, "total_budget.currency", "total_budget.currency must be the media buy's currency, %s: an update does not redenominate a buy", next.Currency)
		}
		if len(u.Packages) > 0 {
			if math.Abs(next.TotalBudget()-u.TotalBudget.Amount) > 0.005 {
				return Change{}, refuse(adcp.ValidationError, "total_budget", "total_budget.amount (%s) must equal the sum of the resulting package budgets (%s)", money(u.TotalBudget.Amount), money(next.TotalBudget()))
			}
		} else if r := next.rescale(u.TotalBudget.Amount); r != nil {
			return Change{}, r
		} else {
			event("budget_updated", "", "total budget %s → %s %s, rescaled across packages", money(b.TotalBudget()), money(u.TotalBudget.Amount), next.Currency)
			for i := range next.Packages {
				if next.Packages[i].Live() {
					affected[next.Packages[i].ID] = true
					rejudge[next.Packages[i].ID] = true
				}
			}
		}
	}
	if next.TotalBudget() <= 0 {
		return Change{}, refuse(adcp.ValidationError, "packages", "a media buy needs at least one live package with a budget: cancel the buy instead")
	}
	for i := range next.Packages {
		id := next.Packages[i].ID
		if affected[id] {
			ch.Affected = append(ch.Affected, id)
		}
		if rejudge[id] && next.Packages[i].Live() {
			ch.Rejudge = append(ch.Rejudge, id)
		}
	}
	*b = *next
	return ch, nil
}

// rescale scales every live package's budget so that they sum to total,
// in proportion to their current budgets, in cents; the rounding remainder
// goes to the largest package.
func (b *Buy) rescale(total float64) *Refusal {
	old := b.TotalBudget()
	if old <= 0 || total <= 0 {
		return refuse(adcp.ValidationError, "total_budget.amount", "total_budget.amount must be greater than zero")
	}
	var live []*Package
	for i := range b.Packages {
		if b.Packages[i].Live() {
			live = append(live, &b.Packages[i])
		}
	}
	sum := 0.0
	for _, p := range live {
		p.Budget = Round(p.Budget * total / old)
		sum += p.Budget
	}
	sort.SliceStable(live, func(i, j int) bool { return live[i].Budget > live[j].Budget })
	live[0].Budget = Round(live[0].Budget + Round(total) - Round(sum))
	for _, p := range live {
		if p.Budget <= 0 {
			return refuse(adcp.ValidationError, "total_budget.amount", "total_budget.amount is too small to leave every package a budget")
		}
	}
	return nil
}

func (b *Buy) clone() *Buy {
	c := *b
	c.Packages = make([]Package, len(b.Packages))
	for i, p := range b.Packages {
		p.Assignments = append([]Assignment(nil), p.Assignments...)
		p.Countries = append([]string(nil), p.Countries...)
		p.FormatKinds = append([]string(nil), p.FormatKinds...)
		c.Packages[i] = p
	}
	c.Industries = append([]string(nil), b.Industries...)
	return &c
}

func reasonSuffix(reason string) string {
	if reason == "" {
		return ""
	}
	return ": " + reason
}

func money(v float64) string {
	if v == math.Trunc(v) {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.2f", v)
}
