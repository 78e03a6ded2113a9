package mediabuy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/storefront/storefront/adcp"
	"github.com/storefront/storefront/jsonfield"
	"github.com/storefront/storefront/products"
)

// Requests are answered with products.RequestError, whose faults are
// jsonfield.Field: one field-error type for every task.
type RequestError = products.RequestError

// Envelope is what every request carries besides its task's fields.
type Envelope struct {
	AdcpVersion      string          `json:"adcp_version"`
	AdcpMajorVersion int             `json:"adcp_major_version"`
	IdempotencyKey   string          `json:"idempotency_key"`
	Context          json.RawMessage `json:"context"`
}

// errs collects field errors.
type errs struct{ list jsonfield.Invalid }

func (e *errs) add(code adcp.Code, field, format string, args ...any) {
	e.list = append(e.list, jsonfield.Fault(code, field, fmt.Sprintf(format, args...)))
}
func (e *errs) invalid(field, format string, args ...any) {
	e.add(adcp.InvalidRequest, field, format, args...)
}
func (e *errs) err() error {
	if len(e.list) == 0 {
		return nil
	}
	return &RequestError{Problems: e.list}
}

var idempotencyKeyRE = regexp.MustCompile(`^[A-Za-z0-9_.:-]{16,255}$`)

// unmarshal decodes args into v with the one strict reader every task
// reads its request with (jsonfield.Reader, as get_products does): a
// member fills a field only under its exact name, every value of another
// type is a field error naming its place ("packages[1].budget must be a
// number"), up to products.MaxProblems of them, and v is written only when
// there is none. Members v does not name are accepted, as the AdCP schemas
// allow.
func unmarshal(args []byte, v any, e *errs) bool {
	if len(args) > products.MaxArgsBytes {
		e.invalid("", "the request is larger than %d bytes", products.MaxArgsBytes)
		return false
	}
	args = bytes.TrimSpace(args)
	if len(args) == 0 {
		args = []byte("{}")
	}
	doc, err := jsonfield.Parse(args)
	switch {
	case err != nil:
		e.invalid("", "the request is not valid JSON")
		return false
	case !doc.IsObject():
		e.invalid("", "the request must be a JSON object")
		return false
	}
	// Text and nulls from the raw bytes: decoded, invalid UTF-8 reads as
	// U+FFFD and a null array element as a zero value.
	if problems := products.TextProblems(args, true); len(problems) > 0 {
		e.list = append(e.list, problems...)
		return false
	}
	r := jsonfield.NewReader(jsonfield.Requests, products.MaxProblems)
	if !r.Unmarshal(doc, v, jsonfield.Open) {
		e.list = append(e.list, r.Faults()...)
		return false
	}
	return true
}

// read decodes raw, a member the strict pass kept as sent, into v with the
// same strict reader: exact member names, no value of another type. It
// reports whether raw reads; the caller words the fault.
func read(raw json.RawMessage, v any) bool {
	doc, err := jsonfield.Parse(raw)
	if err != nil {
		return false
	}
	return jsonfield.NewReader(jsonfield.Requests, 1).Unmarshal(doc, v, jsonfield.Open)
}

func present(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) > 0 && string(t) != "null"
}

func isObject(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) > 0 && t[0] == '{'
}

// checkEnvelope validates the envelope fields; a mutating task needs an
// idempotency key.
func checkEnvelope(env *Envelope, e *errs, mutating bool) {
	switch {
	case env.IdempotencyKey == "" && mutating:
		e.invalid("idempotency_key", "idempotency_key is required on this task: send a fresh UUID for each request")
	case env.IdempotencyKey != "" && !idempotencyKeyRE.MatchString(env.IdempotencyKey):
		e.invalid("idempotency_key", "idempotency_key must be 16 to 255 characters of A-Z, a-z, 0-9, _ . : -")
	}
	if present(env.Context) && !isObject(env.Context) {
		e.invalid("context", "context must be an object")
	}
	if !present(env.Context) {
		env.Context = nil
	}
}

// refs decodes an account reference, a brand and a push configuration with
// get_products's own decoder, so every task reads them alike.
func refs(account, brand, push json.RawMessage, e *errs) (*products.AccountRef, *products.BrandRef, *products.PushConfig) {
	doc := map[string]json.RawMessage{}
	if present(account) {
		doc["account"] = account
	}
	if present(brand) {
		doc["brand"] = brand
	}
	if present(push) {
		doc["push_notification_config"] = push
	}
	if len(doc) == 0 {
		return nil, nil, nil
	}
	b, _ := json.Marshal(doc)
	req, err := products.DecodeRequest(b)
	var re *RequestError
	if errors.As(err, &re) {
		e.list = append(e.list, re.Problems...)
	} else if err != nil {
		e.invalid("", "the request could not be read")
	}
	if req == nil {
		return nil, nil, nil
	}
	return req.Account, req.Brand, req.Push
}

// Total is a total_budget object.
type Total struct {
	Amount   float64 `json:"amount"`
	Currency string  `json:"currency"`
}

// CreateRequest is a decoded create_media_buy request.
type CreateRequest struct {
	Envelope
	Account            *products.AccountRef
	Brand              *products.BrandRef
	Push               *products.PushConfig
	Name               string
	PONumber           string
	AdvertiserIndustry string
	Pacing             string
	// ASAP is start_time "asap"; otherwise Start is the requested start.
	ASAP        bool
	Start, End  time.Time
	Paused      bool
	TotalBudget *Total
	Packages    []PackageRequest
	// GovernanceContext is the opaque authorization the buyer's approved
	// intent check issued; PlanID the deprecated plan identifier some
	// buyers still send beside it. Both are forwarded to the account's
	// governance agent, never interpreted.
	GovernanceContext string
	PlanID            string
}

// PackageRequest is one requested package.
type PackageRequest struct {
	ProductID, PricingOptionID string
	Budget                     *float64
	BidPrice                   *float64
	Impressions                *float64
	Pacing                     string
	Start, End                 time.Time
	Paused                     bool
	FormatOptionRefs           json.RawMessage
	FormatKind                 string
	Params                     json.RawMessage
	FormatIDs                  json.RawMessage
	Countries                  []string
	Assignments                []Assignment
	OptimizationGoals          json.RawMessage
	Context                    json.RawMessage
}

type createWire struct {
	Envelope
	Account                json.RawMessage `json:"account"`
	Brand                  json.RawMessage `json:"brand"`
	Push                   json.RawMessage `json:"push_notification_config"`
	Name                   *string         `json:"name"`
	PONumber               string          `json:"po_number"`
	AdvertiserIndustry     string          `json:"advertiser_industry"`
	Pacing                 string          `json:"pacing"`
	StartTime              json.RawMessage `json:"start_time"`
	EndTime                *string         `json:"end_time"`
	Paused                 bool            `json:"paused"`
	TotalBudget            *Total          `json:"total_budget"`
	BudgetAllocation       json.RawMessage `json:"budget_allocation"`
	Packages               []packageWire   `json:"packages"`
	ProposalID             string          `json:"proposal_id"`
	DailyBudgetCap         json.RawMessage `json:"daily_budget_cap"`
	BudgetCapTimezone      json.RawMessage `json:"budget_cap_timezone"`
	Bidding                json.RawMessage `json:"bidding"`
	ReportingWebhook       json.RawMessage `json:"reporting_webhook"`
	ArtifactWebhook        json.RawMessage `json:"artifact_webhook"`
	InvoiceRecipient       json.RawMessage `json:"invoice_recipient"`
	GovernanceContext      *string         `json:"governance_context"`
	Opportunity            json.RawMessage `json:"opportunity"`
	AgencyEstimateNumber   string          `json:"agency_estimate_number"`
	IOAcceptance           json.RawMessage `json:"io_acceptance"`
	PlanID                 *string         `json:"plan_id"`
	AudienceEvidencePolicy json.RawMessage `json:"audience_evidence_requirements"`
}

type packageWire struct {
	ProductID            string                     `json:"product_id"`
	PricingOptionID      string                     `json:"pricing_option_id"`
	Budget               *float64                   `json:"budget"`
	MinSpendTarget       json.RawMessage            `json:"min_spend_target"`
	BidPrice             *float64                   `json:"bid_price"`
	Bidding              json.RawMessage            `json:"bidding"`
	Impressions          *float64                   `json:"impressions"`
	DailyBudgetCap       json.RawMessage            `json:"daily_budget_cap"`
	Pacing               string                     `json:"pacing"`
	StartTime            *string                    `json:"start_time"`
	EndTime              *string                    `json:"end_time"`
	Paused               bool                       `json:"paused"`
	FormatOptionRefs     json.RawMessage            `json:"format_option_refs"`
	FormatKind           string                     `json:"format_kind"`
	Params               json.RawMessage            `json:"params"`
	FormatIDs            json.RawMessage            `json:"format_ids"`
	TargetingOverlay     map[string]json.RawMessage `json:"targeting_overlay"`
	CreativeAssignments  []assignmentWire           `json:"creative_assignments"`
	Creatives            json.RawMessage            `json:"creatives"`
	Catalogs             json.RawMessage            `json:"catalogs"`
	OptimizationGoals    json.RawMessage            `json:"optimization_goals"`
	MeasurementTerms     json.RawMessage            `json:"measurement_terms"`
	PerformanceStandards json.RawMessage            `json:"performance_standards"`
	CommittedMetrics     json.RawMessage            `json:"committed_metrics"`
	EvidenceRequirements json.RawMessage            `json:"audience_evidence_requirements"`
	EvidencePins         json.RawMessage            `json:"audience_evidence_pins"`
	Context              json.RawMessage            `json:"context"`
}

type assignmentWire struct {
	CreativeID       string          `json:"creative_id"`
	Weight           *float64        `json:"weight"`
	RotationMode     string          `json:"rotation_mode"`
	GroupID          json.RawMessage `json:"group_id"`
	SequencePosition json.RawMessage `json:"sequence_position"`
	PlacementRefs    json.RawMessage `json:"placement_refs"`
	PlacementIDs     json.RawMessage `json:"placement_ids"`
}

// Limits on a create request.
const (
	MaxPackages    = 50
	MaxAssignments = 100
	maxName        = 255
	maxIdentifier  = 255
)

var pacings = []string{"even", "asap", "front_loaded"}

// unsupported refuses fields this seller does not honour, naming each,
// rather than accepting and ignoring them.
func unsupported(e *errs, prefix string, fields map[string]json.RawMessage) {
	for _, name := range slices.Sorted(maps.Keys(fields)) {
		if present(fields[name]) {
			e.add(adcp.UnsupportedFeature, prefix+name, "%s is not supported by this seller", prefix+name)
		}
	}
}

// governanceContextRE is the envelope's governance_context: printable
// ASCII, of 1 to 4096 characters (checked apart: RE2 repeats stop at 1000).
var governanceContextRE = regexp.MustCompile(`^[\x20-\x7E]+$`)

// governanceFields checks governance_context and the deprecated plan_id.
func governanceFields(e *errs, gc, plan *string) (string, string) {
	var context, planID string
	if gc != nil {
		if len(*gc) > 4096 || !governanceContextRE.MatchString(*gc) {
			e.invalid("governance_context", "governance_context must be 1 to 4096 printable ASCII characters, as the governance agent issued it")
		} else {
			context = *gc
		}
	}
	if plan != nil {
		if *plan == "" || len(*plan) > 255 {
			e.invalid("plan_id", "plan_id must be 1 to 255 characters")
		} else {
			planID = *plan
		}
	}
	return context, planID
}

// DecodeCreate parses and validates create_media_buy arguments at now. It
// checks the request's own shape; the catalogue and the rulebook judge the
// packages later.
func DecodeCreate(args []byte, now time.Time) (*CreateRequest, error) {
	var w createWire
	var e errs
	if !unmarshal(args, &w, &e) {
		return &CreateRequest{Envelope: envelopeOnly(args)}, e.err()
	}
	r := &CreateRequest{Envelope: w.Envelope, PONumber: w.PONumber, AdvertiserIndustry: w.AdvertiserIndustry, Paused: w.Paused}
	checkEnvelope(&r.Envelope, &e, true)
	r.Account, r.Brand, r.Push = refs(w.Account, w.Brand, w.Push, &e)
	if r.Account == nil && !present(w.Account) {
		e.invalid("account", "account is required")
	}
	if r.Brand == nil && !present(w.Brand) {
		e.invalid("brand", "brand is required")
	}
	if w.Name != nil {
		r.Name = *w.Name
		if strings.TrimSpace(r.Name) == "" || len([]rune(r.Name)) > maxName {
			e.invalid("name", "name must be 1 to %d characters and not only spaces", maxName)
		}
	}
	checkText(&e, "po_number", r.PONumber)
	r.Pacing = w.Pacing
	if r.Pacing != "" && !contains(pacings, r.Pacing) {
		e.invalid("pacing", "pacing must be even, asap or front_loaded")
	}
	if w.ProposalID != "" {
		e.add(adcp.ProposalNotFound, "proposal_id", "proposal %s was not issued by this seller: it issues no proposals; send packages", w.ProposalID)
	}
	if present(w.BudgetAllocation) {
		var ba struct {
			Mode string `json:"mode"`
		}
		if !read(w.BudgetAllocation, &ba) || ba.Mode != "fixed" {
			e.add(adcp.UnsupportedFeature, "budget_allocation", "only fixed budget allocation is supported: every package carries its own budget")
		}
	}
	unsupported(&e, "", map[string]json.RawMessage{
		"daily_budget_cap": w.DailyBudgetCap, "budget_cap_timezone": w.BudgetCapTimezone, "bidding": w.Bidding,
		"reporting_webhook": w.ReportingWebhook, "artifact_webhook": w.ArtifactWebhook, "invoice_recipient": w.InvoiceRecipient,
		"opportunity": w.Opportunity, "io_acceptance": w.IOAcceptance,
		"audience_evidence_requirements": w.AudienceEvidencePolicy,
	})
	r.GovernanceContext, r.PlanID = governanceFields(&e, w.GovernanceContext, w.PlanID)
	r.ASAP, r.Start, r.End = flight(&e, "", w.StartTime, w.EndTime, now, true)
	if w.TotalBudget != nil {
		r.TotalBudget = w.TotalBudget
		if !adcp.IsCurrency(w.TotalBudget.Currency) {
			e.invalid("total_budget.currency", "total_budget.currency must be an ISO 4217 code")
		}
	}
	switch {
	case w.Packages == nil && w.ProposalID == "":
		e.invalid("packages", "packages is required")
	case len(w.Packages) == 0 && w.ProposalID == "":
		e.invalid("packages", "packages must list at least one package")
	case len(w.Packages) > MaxPackages:
		e.invalid("packages", "packages lists %d packages; the limit is %d", len(w.Packages), MaxPackages)
	}
	for i := range w.Packages {
		if len(w.Packages) > MaxPackages {
			break
		}
		r.Packages = append(r.Packages, decodePackage(&e, fmt.Sprintf("packages[%d]", i), &w.Packages[i], r, now))
	}
	return r, e.err()
}

// envelopeOnly reads the envelope of a request whose body failed to decode,
// so that the answer can still echo its context and version.
func envelopeOnly(args []byte) Envelope {
	var top map[string]json.RawMessage
	var env Envelope
	if !read(args, &top) {
		return env
	}
	_ = read(top["adcp_version"], &env.AdcpVersion)
	_ = read(top["adcp_major_version"], &env.AdcpMajorVersion)
	if isObject(top["context"]) && products.Echoable(top["context"]) {
		env.Context = top["context"]
	}
	return env
}

func decodePackage(e *errs, path string, w *packageWire, r *CreateRequest, now time.Time) PackageRequest {
	p := PackageRequest{
		ProductID: w.ProductID, PricingOptionID: w.PricingOptionID, Budget: w.Budget, BidPrice: w.BidPrice,
		Impressions: w.Impressions, Pacing: w.Pacing, Paused: w.Paused, FormatKind: w.FormatKind,
	}
	if p.ProductID == "" {
		e.invalid(path+".product_id", "product_id is required")
	}
	checkID(e, path+".product_id", p.ProductID)
	if p.PricingOptionID == "" {
		e.invalid(path+".pricing_option_id", "pricing_option_id is required")
	}
	checkID(e, path+".pricing_option_id", p.PricingOptionID)
	switch {
	case p.Budget == nil:
		e.invalid(path+".budget", "budget is required: every package of a fixed-allocation buy carries its own budget")
	case *p.Budget <= 0:
		e.add(adcp.ValidationError, path+".budget", "budget must be greater than zero")
	}
	if p.BidPrice != nil && *p.BidPrice <= 0 {
		e.add(adcp.ValidationError, path+".bid_price", "bid_price must be greater than zero")
	}
	if p.Impressions != nil && *p.Impressions < 0 {
		e.add(adcp.ValidationError, path+".impressions", "impressions must not be negative")
	}
	if p.Pacing != "" && !contains(pacings, p.Pacing) {
		e.invalid(path+".pacing", "pacing must be even, asap or front_loaded")
	}
	if present(w.MinSpendTarget) {
		e.add(adcp.ValidationError, path+".min_spend_target", "min_spend_target is valid only with seller-optimized allocation, which this seller does not offer")
	}
	unsupported(e, path+".", map[string]json.RawMessage{
		"bidding": w.Bidding, "daily_budget_cap": w.DailyBudgetCap, "creatives": w.Creatives, "catalogs": w.Catalogs,
		"audience_evidence_requirements": w.EvidenceRequirements, "audience_evidence_pins": w.EvidencePins,
	})
	for name, raw := range map[string]json.RawMessage{"measurement_terms": w.MeasurementTerms, "performance_standards": w.PerformanceStandards, "committed_metrics": w.CommittedMetrics} {
		if present(raw) {
			e.add(adcp.TermsRejected, path+"."+name, "this seller does not accept buyer-proposed %s: omit it to accept the product's terms", name)
		}
	}
	if w.StartTime != nil || w.EndTime != nil {
		var start json.RawMessage
		if w.StartTime != nil {
			start, _ = json.Marshal(*w.StartTime)
		}
		_, p.Start, p.End = flight(e, path+".", start, w.EndTime, now, false)
		if !p.Start.IsZero() && !r.Start.IsZero() && p.Start.Before(r.Start) {
			e.add(adcp.ValidationError, path+".start_time", "a package's start_time must fall within the media buy's flight")
		}
		if !p.End.IsZero() && !r.End.IsZero() && p.End.After(r.End) {
			e.add(adcp.ValidationError, path+".end_time", "a package's end_time must fall within the media buy's flight")
		}
	}
	decodeFormats(e, path, w, &p)
	if w.TargetingOverlay != nil {
		p.Countries = overlayCountries(e, path+".targeting_overlay", w.TargetingOverlay)
	}
	p.Assignments = decodeAssignments(e, path+".creative_assignments", w.CreativeAssignments)
	if present(w.OptimizationGoals) {
		var goals []map[string]json.RawMessage
		if !read(w.OptimizationGoals, &goals) || len(goals) == 0 {
			e.invalid(path+".optimization_goals", "optimization_goals must be a non-empty array of goal objects")
		} else {
			p.OptimizationGoals = w.OptimizationGoals
		}
	}
	if present(w.Context) {
		if !isObject(w.Context) {
			e.invalid(path+".context", "context must be an object")
		} else {
			p.Context = w.Context
		}
	}
	return p
}

// overlayCountries reads a targeting overlay, of which the storefront takes
// the countries only; any other targeting is refused, naming it.
func overlayCountries(e *errs, path string, overlay map[string]json.RawMessage) []string {
	countries := []string{}
	for _, k := range slices.Sorted(maps.Keys(overlay)) {
		raw := overlay[k]
		if k != "geo_countries" {
			if present(raw) {
				e.add(adcp.UnsupportedFeature, path+"."+k, "%s.%s is not supported by this seller: it targets by country only", path, k)
			}
			continue
		}
		if !read(raw, &countries) {
			e.invalid(path+".geo_countries", "geo_countries must be an array of ISO 3166-1 alpha-2 codes")
			continue
		}
		for j, c := range countries {
			if !adcp.IsCountry(c) {
				e.invalid(fmt.Sprintf("%s.geo_countries[%d]", path, j), "%q is not an ISO 3166-1 alpha-2 code", c)
			}
		}
	}
	return countries
}

func decodeFormats(e *errs, path string, w *packageWire, p *PackageRequest) {
	routes := 0
	if present(w.FormatOptionRefs) {
		routes++
		var refs []struct {
			Scope          string `json:"scope"`
			FormatOptionID string `json:"format_option_id"`
		}
		if !read(w.FormatOptionRefs, &refs) || len(refs) == 0 {
			e.invalid(path+".format_option_refs", "format_option_refs must be a non-empty array of {scope, format_option_id}")
		} else {
			p.FormatOptionRefs = w.FormatOptionRefs
		}
	}
	if p.FormatKind != "" {
		routes++
		if !adcp.IsFormatKind(p.FormatKind) {
			e.invalid(path+".format_kind", "%q is not a canonical format kind", p.FormatKind)
		}
		if present(w.Params) {
			if !isObject(w.Params) {
				e.invalid(path+".params", "params must be an object")
			} else {
				p.Params = w.Params
			}
		}
	} else if present(w.Params) {
		e.invalid(path+".params", "params needs format_kind")
	}
	if present(w.FormatIDs) {
		routes++
		var ids []struct {
			ID string `json:"id"`
		}
		if !read(w.FormatIDs, &ids) || len(ids) == 0 {
			e.invalid(path+".format_ids", "format_ids must be a non-empty array of format references")
		} else {
			p.FormatIDs = w.FormatIDs
		}
	}
	if routes > 1 {
		e.invalid(path, "select formats one way: format_option_refs, format_kind or format_ids")
	}
}

func decodeAssignments(e *errs, path string, in []assignmentWire) []Assignment {
	if len(in) > MaxAssignments {
		e.invalid(path, "at most %d creative assignments per package", MaxAssignments)
		return nil
	}
	var out []Assignment
	seen := map[string]bool{}
	for i, a := range in {
		f := fmt.Sprintf("%s[%d]", path, i)
		if a.CreativeID == "" {
			e.invalid(f+".creative_id", "creative_id is required")
			continue
		}
		checkID(e, f+".creative_id", a.CreativeID)
		if seen[a.CreativeID] {
			e.invalid(f+".creative_id", "creative %s is assigned twice", a.CreativeID)
		}
		seen[a.CreativeID] = true
		if a.Weight != nil && (*a.Weight < 0 || *a.Weight > 100) {
			e.add(adcp.ValidationError, f+".weight", "weight must be between 0 and 100")
		}
		if a.RotationMode != "" && a.RotationMode != "weighted" {
			e.add(adcp.UnsupportedFeature, f+".rotation_mode", "only weighted rotation is supported by this seller")
		}
		unsupported(e, f+".", map[string]json.RawMessage{"group_id": a.GroupID, "sequence_position": a.SequencePosition,
			"placement_refs": a.PlacementRefs, "placement_ids": a.PlacementIDs})
		out = append(out, Assignment{CreativeID: a.CreativeID, Weight: a.Weight})
	}
	return out
}

// flight reads start_time and end_time. A start of "asap" is allowed only
// on the buy; a start earlier today is served from now, and one on an
// earlier day is refused.
func flight(e *errs, prefix string, rawStart json.RawMessage, rawEnd *string, now time.Time, required bool) (asap bool, start, end time.Time) {
	switch {
	case !present(rawStart):
		if required {
			e.invalid(prefix+"start_time", "start_time is required: \"asap\" or an ISO 8601 date-time")
		}
	default:
		var s string
		if !read(rawStart, &s) {
			e.invalid(prefix+"start_time", "start_time must be \"asap\" or an ISO 8601 date-time")
			break
		}
		if s == "asap" && required {
			asap, start = true, now.UTC()
			break
		}
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			e.invalid(prefix+"start_time", "start_time must be \"asap\" or an ISO 8601 date-time with a timezone")
			break
		}
		start = t.UTC()
		if adcp.DateOf(start).Before(adcp.DateOf(now)) {
			e.invalid(prefix+"start_time", "start_time is in the past: a flight starts today or later")
		} else if start.Before(now) {
			start = now.UTC()
		}
	}
	switch {
	case rawEnd == nil:
		if required {
			e.invalid(prefix+"end_time", "end_time is required")
		}
	default:
		t, err := time.Parse(time.RFC3339Nano, *rawEnd)
		if err != nil {
			e.invalid(prefix+"end_time", "end_time must be an ISO 8601 date-time with a timezone")
			break
		}
		end = t.UTC()
		if !start.IsZero() && !end.After(start) {
			e.add(adcp.ValidationError, prefix+"end_time", "end_time must be after start_time")
		}
	}
	return asap, start, end
}

func checkID(e *errs, field, v string) {
	if len([]rune(v)) > maxIdentifier {
		e.invalid(field, "%s is longer than %d characters", field, maxIdentifier)
		return
	}
	checkText(e, field, v)
}

// checkText refuses control characters, which no field has a use for and
// PostgreSQL text cannot hold (NUL).
func checkText(e *errs, field, v string) {
	if strings.IndexFunc(v, func(r rune) bool { return r < 0x20 || r == 0x7f }) >= 0 {
		e.invalid(field, "%s must not contain control characters", field)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
