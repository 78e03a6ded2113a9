package products

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/storefront/storefront/adcp"
	"github.com/storefront/storefront/jsonfield"
)

// Limits on what a request may carry. They bound work per request; a
// request past one is refused, never truncated.
const (
	MaxArgsBytes    = 256 << 10
	MaxBriefChars   = 10000
	MaxRefine       = 50
	MaxListItems    = 100
	DefaultPageSize = 50
	MaxPageSize     = 100
)

// Request is a decoded get_products request.
type Request struct {
	AdcpVersion      string
	AdcpMajorVersion int
	IdempotencyKey   string
	BuyingMode       string
	Brief            *string
	Refine           []RefineEntry
	Brand            *BrandRef
	Account          *AccountRef
	Filters          Filters
	GeoCountries     []string
	Fields           []string
	Pagination       PageRequest
	// PushNotification is the raw push_notification_config, if any.
	PushNotification json.RawMessage
	// Push is the decoded push_notification_config, if any.
	Push *PushConfig
	// Context is the buyer's context object, echoed unchanged.
	Context json.RawMessage
}

// BrandRef is core/brand-ref.json.
type BrandRef struct {
	Domain     string
	BrandID    string
	Industries []string
}

// AccountRef is core/account-ref.json: a seller-assigned id or the natural
// key of brand and operator.
type AccountRef struct {
	AccountID string
	Brand     *BrandRef
	Operator  string
	Sandbox   bool
}

// Key is a stable string for the account, for the ledger and for scoping.
func (a *AccountRef) Key() string {
	switch {
	case a == nil:
		return ""
	case a.AccountID != "":
		return "id:" + a.AccountID
	case a.Brand == nil:
		// Neither an id nor a natural key: what a refused request decodes
		// to (an empty or non-string account_id), which names no account.
		return ""
	}
	k := "nk:" + a.Operator + "/" + a.Brand.Domain
	if a.Brand.BrandID != "" {
		k += "#" + a.Brand.BrandID
	}
	if a.Sandbox {
		k += "+sandbox"
	}
	return k
}

// Filters are the structured filters the storefront applies.
type Filters struct {
	Channels               []string
	FormatKinds            []string
	DeliveryType           string
	Budget                 *BudgetRange
	StartDate, EndDate     adcp.Date
	PricingCurrencies      []string
	Countries              []string
	IsFixedPrice           *bool
	PricingStructures      []string
	Exclusivity            string
	VideoPlacementTypes    []string
	AudioDistributionTypes []string
	RequiredMetrics        []string
	StandardFormatsOnly    bool
	// The format filters are left out of a cursor's fingerprint when
	// absent (omitempty), so cursors issued before they existed still hold.
	FormatOptionRefs []FormatOptionRef `json:",omitempty"`
	FormatIDs        []FormatRef       `json:",omitempty"`
	// Unmodelled names filters the request set that the catalogue holds
	// no data for. No product can be shown to satisfy them, so they
	// exclude every product.
	Unmodelled []string
}

// BudgetRange is filters.budget_range.
type BudgetRange struct {
	Min, Max *float64
	Currency string
}

// RefineEntry is one refine change request.
type RefineEntry struct {
	Scope      string
	Ask        string
	ProductID  string
	ProposalID string
	Action     string
}

// PageRequest is the pagination request.
type PageRequest struct {
	MaxResults int
	Cursor     string
}

// RequestError is a request the storefront will not act on. Each of its
// problems carries its AdCP code and the field as AdCP names it (Path).
type RequestError struct{ Problems jsonfield.Invalid }

func (e *RequestError) Error() string {
	parts := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		parts[i] = p.Path + ": " + p.Detail
	}
	return "invalid get_products request: " + strings.Join(parts, "; ")
}

var idempotencyKeyRE = regexp.MustCompile(`^[A-Za-z0-9_.:-]{16,255}$`)

// The filters the catalogue can evaluate, and those it knows it cannot.
var (
	modelledFilters = map[string]bool{
		"channels": true, "format_kinds": true, "delivery_type": true, "budget_range": true,
		"start_date": true, "end_date": true, "pricing_currencies": true, "countries": true,
		"is_fixed_price": true, "pricing_structures": true, "exclusivity": true,
		"video_placement_types": true, "audio_distribution_types": true,
		"required_metrics": true, "standard_formats_only": true, "ext": true,
		"format_option_refs": true, "format_ids": true,
	}
)

// DecodeRequest parses and validates get_products arguments. It returns a
// *RequestError naming every field at fault; it never panics.
func DecodeRequest(args []byte) (req *Request, err error) {
	d := &decoder{}
	defer func() {
		if p := recover(); p != nil {
			req, err = nil, &RequestError{Problems: jsonfield.Invalid{jsonfield.Fault(adcp.InvalidRequest, "", "the request could not be decoded")}}
		}
	}()
	if len(args) > MaxArgsBytes {
		return nil, &RequestError{Problems: jsonfield.Invalid{jsonfield.Fault(adcp.InvalidRequest, "", fmt.Sprintf("the request is larger than %d bytes", MaxArgsBytes))}}
	}
	args = bytes.TrimSpace(args)
	if len(args) == 0 {
		args = []byte("{}")
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(args, &top); err != nil || top == nil {
		msg := "the request must be a JSON object"
		var se *json.SyntaxError
		if errors.As(err, &se) {
			msg = "the request is not valid JSON"
		}
		return nil, &RequestError{Problems: jsonfield.Invalid{jsonfield.Fault(adcp.InvalidRequest, "", msg)}}
	}
	// Text first, from the raw bytes: once decoded, invalid UTF-8 reads
	// as U+FFFD and could be served as if the buyer had sent it.
	for _, f := range TextProblems(args, false) {
		d.fault(f)
	}
	r := &Request{}
	o := object{d: d, path: "", m: top}
	r.AdcpVersion = o.str("adcp_version")
	r.AdcpMajorVersion = o.integer("adcp_major_version")
	r.IdempotencyKey = o.str("idempotency_key")
	if r.IdempotencyKey != "" && !idempotencyKeyRE.MatchString(r.IdempotencyKey) {
		d.invalid("idempotency_key", "idempotency_key must be 16 to 255 characters of A-Z, a-z, 0-9, _ . : -")
	}
	r.BuyingMode = o.str("buying_mode")
	modeGiven := o.has("buying_mode")
	if b, ok := o.optStr("brief"); ok {
		r.Brief = &b
		if n := len([]rune(b)); n > MaxBriefChars {
			d.invalid("brief", fmt.Sprintf("brief is %d characters; the limit is %d", n, MaxBriefChars))
		}
	}
	r.Refine = decodeRefine(o)
	if b := o.obj("brand"); b != nil {
		r.Brand = decodeBrand(*b)
	}
	if a := o.obj("account"); a != nil {
		r.Account = decodeAccount(*a)
	}
	if f := o.obj("filters"); f != nil {
		r.Filters = decodeFilters(*f)
	}
	if t := o.obj("targeting_overlay"); t != nil {
		r.GeoCountries = t.countryList("geo_countries")
	}
	r.Fields = o.strList("fields")
	for i, f := range r.Fields {
		if !adcp.IsProductField(f) {
			d.invalid(fmt.Sprintf("fields[%d]", i), fmt.Sprintf("%q is not a product field", f))
		}
	}
	if o.has("fields") && r.Fields != nil && len(r.Fields) == 0 {
		d.invalid("fields", "fields must list at least one field")
	}
	r.Pagination = PageRequest{MaxResults: DefaultPageSize}
	if p := o.obj("pagination"); p != nil {
		p.only("pagination", "max_results", "cursor")
		if p.has("max_results") {
			r.Pagination.MaxResults = p.integer("max_results")
			if r.Pagination.MaxResults < 1 || r.Pagination.MaxResults > MaxPageSize {
				d.invalid("pagination.max_results", fmt.Sprintf("max_results must be between 1 and %d", MaxPageSize))
			}
		}
		r.Pagination.Cursor = p.str("cursor")
	}
	if raw, ok := top["push_notification_config"]; ok && !isNull(raw) {
		if !isObject(raw) {
			d.invalid("push_notification_config", "push_notification_config must be an object")
		} else {
			r.PushNotification = raw
			if p := o.obj("push_notification_config"); p != nil {
				r.Push = decodePush(*p)
			}
		}
	}
	if raw, ok := top["context"]; ok && !isNull(raw) {
		switch {
		case !isObject(raw):
			d.invalid("context", "context must be an object")
		case Echoable(raw):
			r.Context = raw
		}
	}
	if raw, ok := top["ext"]; ok && !isNull(raw) && !isObject(raw) {
		d.invalid("ext", "ext must be an object")
	}
	validateMode(d, r, modeGiven)
	if len(d.errs) > 0 {
		return r, &RequestError{Problems: d.errs}
	}
	return r, nil
}

func validateMode(d *decoder, r *Request, modeGiven bool) {
	if !modeGiven {
		// Pre-v3 clients send no buying_mode; the spec says to treat
		// them as briefs.
		r.BuyingMode = "brief"
	}
	switch r.BuyingMode {
	case "brief":
		if modeGiven && (r.Brief == nil || strings.TrimSpace(*r.Brief) == "") {
			d.invalid("brief", "brief is required when buying_mode is brief")
		}
		if r.Refine != nil {
			d.invalid("refine", "refine is only valid when buying_mode is refine")
		}
	case "wholesale":
		if r.Brief != nil {
			d.invalid("brief", "brief must not be provided when buying_mode is wholesale")
		}
		if r.Refine != nil {
			d.invalid("refine", "refine is only valid when buying_mode is refine")
		}
	case "refine":
		if r.Brief != nil {
			d.invalid("brief", "brief must not be provided when buying_mode is refine")
		}
		if len(r.Refine) == 0 {
			d.invalid("refine", "refine must list at least one change request when buying_mode is refine")
		}
	default:
		if r.BuyingMode != "" || modeGiven {
			d.invalid("buying_mode", fmt.Sprintf("buying_mode must be brief, wholesale or refine, not %q", r.BuyingMode))
		}
	}
	f := r.Filters
	if f.Budget != nil && f.Budget.Min != nil && f.Budget.Max != nil && *f.Budget.Min > *f.Budget.Max {
		d.add(adcp.ValidationError, "filters.budget_range", "budget_range.min is greater than budget_range.max")
	}
	if !f.StartDate.IsZero() && !f.EndDate.IsZero() && f.EndDate.Before(f.StartDate) {
		d.add(adcp.ValidationError, "filters.end_date", "end_date is before start_date")
	}
	if len(f.Countries) > 0 && len(r.GeoCountries) > 0 && !sameSet(f.Countries, r.GeoCountries) {
		d.invalid("filters.countries", "filters.countries contradicts targeting_overlay.geo_countries; send one of them")
	}
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for _, x := range a {
		if !oneOf(b, x) {
			return false
		}
	}
	return true
}

func decodeRefine(o object) []RefineEntry {
	raws, ok := o.list("refine")
	if !ok {
		return nil
	}
	if len(raws) > MaxRefine {
		o.d.invalid("refine", fmt.Sprintf("refine lists %d entries; the limit is %d", len(raws), MaxRefine))
		return nil
	}
	out := make([]RefineEntry, 0, len(raws))
	finalize := -1
	other := -1
	for i, raw := range raws {
		path := fmt.Sprintf("refine[%d]", i)
		e, ok := o.d.objectAt(raw, path)
		if !ok {
			out = append(out, RefineEntry{})
			continue
		}
		var re RefineEntry
		re.Scope = e.str("scope")
		switch re.Scope {
		case "request":
			e.only(path, "scope", "ask")
			re.Ask = e.str("ask")
			if strings.TrimSpace(re.Ask) == "" {
				o.d.invalid(path+".ask", "a request-scoped change needs an ask")
			}
		case "product":
			e.only(path, "scope", "product_id", "action", "ask")
			re.ProductID = e.str("product_id")
			re.Action = e.str("action")
			re.Ask = e.str("ask")
			if re.ProductID == "" {
				o.d.invalid(path+".product_id", "a product-scoped change needs a product_id")
			}
			if re.Action == "" {
				re.Action = "include"
			}
			if !oneOf([]string{"include", "omit", "more_like_this"}, re.Action) {
				o.d.invalid(path+".action", "a product-scoped action must be include, omit or more_like_this")
			}
		case "proposal":
			e.only(path, "scope", "proposal_id", "action", "ask")
			re.ProposalID = e.str("proposal_id")
			re.Action = e.str("action")
			re.Ask = e.str("ask")
			if re.ProposalID == "" {
				o.d.invalid(path+".proposal_id", "a proposal-scoped change needs a proposal_id")
			}
			if re.Action == "" {
				re.Action = "include"
			}
			if !oneOf([]string{"include", "omit", "finalize"}, re.Action) {
				o.d.invalid(path+".action", "a proposal-scoped action must be include, omit or finalize")
			}
		case "":
			o.d.invalid(path+".scope", "scope is required (request, product or proposal)")
		default:
			o.d.invalid(path+".scope", fmt.Sprintf("scope must be request, product or proposal, not %q", re.Scope))
		}
		if re.Action == "finalize" {
			if finalize < 0 {
				finalize = i
			}
		} else if other < 0 {
			other = i
		}
		out = append(out, re)
	}
	if finalize >= 0 && other >= 0 {
		at := other
		if at < finalize {
			at = finalize
		}
		o.d.invalid(fmt.Sprintf("refine[%d]", at), "a finalize entry cannot be mixed with other change requests; every entry must be a proposal finalize")
	}
	return out
}

// PushConfig is a decoded push_notification_config: where a task's
// terminal notification goes.
type PushConfig struct {
	URL         string
	OperationID string
	Token       string
	// Scheme and Credentials are the deprecated authentication block:
	// "Bearer" or "HMAC-SHA256", or "" when absent.
	Scheme      string
	Credentials string
}

var operationIDRE = regexp.MustCompile(`^[A-Za-z0-9_.:-]{1,255}$`)

// redactedSecret stands in for a webhook secret in a kept request: as long
// as the shortest token or credentials a request may carry, so that the
// kept request decodes as the original did.
const redactedSecret = "redacted-by-the-storefront-00000"

// KeptRequest is a request as the storefront keeps it at rest and digests
// it for the ledger: the webhook secrets of its push_notification_config
// (token, authentication.credentials) replaced by a placeholder. The
// storefront keeps those only sealed, with the task's webhook, so that no
// copy of the request holds them in plaintext. A request without a push
// config is returned byte for byte; one with it is re-encoded (from its
// decoded form, in which a member given twice is the last one given, as
// DecodeRequest reads it).
func KeptRequest(args []byte) []byte {
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	var m map[string]any
	if dec.Decode(&m) != nil {
		return args
	}
	push, ok := m["push_notification_config"]
	if !ok {
		return args
	}
	if p, ok := push.(map[string]any); ok {
		if _, ok := p["token"].(string); ok {
			p["token"] = redactedSecret
		}
		if a, ok := p["authentication"].(map[string]any); ok {
			if _, ok := a["credentials"].(string); ok {
				a["credentials"] = redactedSecret
			}
		}
	}
	out, err := json.Marshal(m)
	if err != nil {
		return args
	}
	return out
}

func decodePush(o object) *PushConfig {
	p := &PushConfig{URL: o.str("url"), OperationID: o.str("operation_id"), Token: o.str("token")}
	const path = "push_notification_config"
	if p.URL == "" {
		o.d.invalid(path+".url", "push_notification_config.url is required")
	} else if u, err := url.Parse(p.URL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		o.d.invalid(path+".url", "push_notification_config.url must be an absolute http(s) URL")
	}
	if p.OperationID != "" && !operationIDRE.MatchString(p.OperationID) {
		o.d.invalid(path+".operation_id", "operation_id must be 1 to 255 characters of A-Z, a-z, 0-9, _ . : -")
	}
	if p.Token != "" && (len(p.Token) < 16 || len(p.Token) > 4096) {
		o.d.invalid(path+".token", "token must be 16 to 4096 characters")
	}
	if a := o.obj("authentication"); a != nil {
		a.only(path+".authentication", "schemes", "credentials")
		schemes := a.strList("schemes")
		if len(schemes) != 1 || (schemes[0] != "Bearer" && schemes[0] != "HMAC-SHA256") {
			o.d.invalid(path+".authentication.schemes", "schemes must hold exactly one of Bearer or HMAC-SHA256")
		} else {
			p.Scheme = schemes[0]
		}
		p.Credentials = a.str("credentials")
		if len(p.Credentials) < 32 {
			o.d.invalid(path+".authentication.credentials", "credentials must be at least 32 characters")
		}
	}
	return p
}

// maxIdentifier is the longest identifier a request may name.
const maxIdentifier = 255

// checkIdentifier refuses an identifier longer than maxIdentifier
// characters. (What it may hold is checked with every other string of the
// request: TextProblems.)
func checkIdentifier(d *decoder, field, what, v string) {
	if utf8.RuneCountInString(v) > maxIdentifier {
		d.invalid(field, fmt.Sprintf("%s is longer than %d characters", what, maxIdentifier))
	}
}

func decodeBrand(o object) *BrandRef {
	b := &BrandRef{Domain: o.str("domain"), BrandID: o.str("brand_id"), Industries: o.strList("industries")}
	if b.BrandID != "" {
		checkIdentifier(o.d, o.path+".brand_id", "brand_id", b.BrandID)
	}
	if b.Domain == "" {
		o.d.invalid(o.path+".domain", "brand.domain is required")
	} else if !adcp.IsDomain(b.Domain) {
		o.d.invalid(o.path+".domain", "brand.domain must be a lower-case domain name")
	}
	o.countryList("countries")
	return b
}

func decodeAccount(o object) *AccountRef {
	a := &AccountRef{}
	if o.has("account_id") {
		o.only("account", "account_id")
		a.AccountID = o.str("account_id")
		if a.AccountID == "" {
			o.d.invalid("account.account_id", "account_id must not be empty")
		} else {
			checkIdentifier(o.d, "account.account_id", "account_id", a.AccountID)
		}
		return a
	}
	o.only("account", "brand", "operator", "operator_unit", "currency", "timezone", "sandbox")
	if b := o.obj("brand"); b != nil {
		a.Brand = decodeBrand(*b)
	} else {
		o.d.invalid("account", "an account needs account_id, or brand and operator")
		return nil
	}
	a.Operator = o.str("operator")
	if a.Operator == "" {
		o.d.invalid("account.operator", "account.operator is required with account.brand")
	} else if !adcp.IsDomain(a.Operator) {
		o.d.invalid("account.operator", "account.operator must be a lower-case domain name")
	}
	a.Sandbox = o.boolean("sandbox")
	if c := o.str("currency"); c != "" && !adcp.IsCurrency(c) {
		o.d.invalid("account.currency", "account.currency must be an ISO 4217 code")
	}
	return a
}

func decodeFilters(o object) Filters {
	var f Filters
	f.Channels = o.enumList("channels", adcp.IsChannel, "an AdCP channel")
	f.FormatKinds = o.enumList("format_kinds", adcp.IsFormatKind, "a canonical format kind")
	if dt := o.str("delivery_type"); dt != "" {
		if !adcp.IsDeliveryType(dt) {
			o.d.invalid("filters.delivery_type", "delivery_type must be guaranteed or non_guaranteed")
		}
		f.DeliveryType = dt
	}
	if b := o.obj("budget_range"); b != nil {
		br := &BudgetRange{Currency: b.str("currency")}
		if b.has("min") {
			v := b.number("min")
			br.Min = &v
		}
		if b.has("max") {
			v := b.number("max")
			br.Max = &v
		}
		switch {
		case br.Currency == "":
			o.d.invalid("filters.budget_range.currency", "budget_range.currency is required")
		case !adcp.IsCurrency(br.Currency):
			o.d.invalid("filters.budget_range.currency", "budget_range.currency must be an ISO 4217 code such as USD")
		}
		if br.Min == nil && br.Max == nil {
			o.d.invalid("filters.budget_range", "budget_range needs min or max")
		}
		// A slice, not a map: problems are reported in a fixed order, so
		// the same request always gets the same answer.
		for _, b := range []struct {
			name string
			v    *float64
		}{{"min", br.Min}, {"max", br.Max}} {
			if b.v != nil && *b.v < 0 {
				o.d.invalid("filters.budget_range."+b.name, "budget_range."+b.name+" must not be negative")
			}
		}
		f.Budget = br
	}
	f.StartDate = o.date("start_date")
	f.EndDate = o.date("end_date")
	f.PricingCurrencies = o.enumList("pricing_currencies", adcp.IsCurrency, "an ISO 4217 currency code")
	f.Countries = o.countryList("countries")
	if o.has("is_fixed_price") {
		v := o.boolean("is_fixed_price")
		f.IsFixedPrice = &v
	}
	f.PricingStructures = o.enumList("pricing_structures", func(s string) bool { return oneOf([]string{"fixed", "auction", "contingent"}, s) }, "a pricing structure (fixed, auction, contingent)")
	if ex := o.str("exclusivity"); ex != "" {
		if !oneOf(exclusivities, ex) {
			o.d.invalid("filters.exclusivity", "exclusivity must be none, category or exclusive")
		}
		f.Exclusivity = ex
	}
	f.VideoPlacementTypes = o.enumList("video_placement_types", func(s string) bool { return oneOf(videoPlacementTypes, s) }, "a video placement type")
	f.AudioDistributionTypes = o.enumList("audio_distribution_types", func(s string) bool { return oneOf(audioDistribution, s) }, "an audio distribution type")
	f.RequiredMetrics = o.enumList("required_metrics", func(s string) bool { return oneOf(availableMetrics, s) }, "an AdCP metric")
	f.StandardFormatsOnly = o.boolean("standard_formats_only")
	f.FormatOptionRefs = decodeFormatOptionRefs(o)
	f.FormatIDs = decodeFormatRefs(o)
	for _, k := range o.keys() {
		if !modelledFilters[k] && !isNull(o.m[k]) {
			f.Unmodelled = append(f.Unmodelled, k)
		}
	}
	return f
}

// decoder collects a request's faults, the first 20 of them.
type decoder struct{ errs jsonfield.Invalid }

func (d *decoder) fault(f jsonfield.Field) {
	if len(d.errs) < 20 {
		d.errs = append(d.errs, f)
	}
}

func (d *decoder) add(code adcp.Code, field, msg string) { d.fault(jsonfield.Fault(code, field, msg)) }

func (d *decoder) invalid(field, msg string) { d.add(adcp.InvalidRequest, field, msg) }

func (d *decoder) objectAt(raw json.RawMessage, path string) (object, bool) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		d.invalid(path, path+" must be an object")
		return object{}, false
	}
	return object{d: d, path: path, m: m}, true
}

// object is one JSON object being decoded.
type object struct {
	d    *decoder
	path string
	m    map[string]json.RawMessage
}

func (o object) at(k string) string {
	if o.path == "" {
		return k
	}
	return o.path + "." + k
}

func (o object) has(k string) bool {
	raw, ok := o.m[k]
	return ok && !isNull(raw)
}

func (o object) keys() []string {
	out := make([]string, 0, len(o.m))
	for k := range o.m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// only refuses keys outside allowed, for objects the schema closes.
func (o object) only(path string, allowed ...string) {
	for _, k := range o.keys() {
		if !oneOf(allowed, k) {
			o.d.invalid(path+"."+k, fmt.Sprintf("%s is not allowed here (allowed: %s)", k, strings.Join(allowed, ", ")))
		}
	}
}

func (o object) optStr(k string) (string, bool) {
	raw, ok := o.m[k]
	if !ok || isNull(raw) {
		return "", false
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		o.d.invalid(o.at(k), o.at(k)+" must be a string")
		return "", false
	}
	return s, true
}

func (o object) str(k string) string {
	s, _ := o.optStr(k)
	return s
}

func (o object) number(k string) float64 {
	raw, ok := o.m[k]
	if !ok || isNull(raw) {
		return 0
	}
	var f float64
	if err := json.Unmarshal(raw, &f); err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		o.d.invalid(o.at(k), o.at(k)+" must be a number")
		return 0
	}
	return f
}

func (o object) integer(k string) int {
	raw, ok := o.m[k]
	if !ok || isNull(raw) {
		return 0
	}
	n, err := strconv.ParseInt(string(bytes.TrimSpace(raw)), 10, 32)
	if err != nil {
		o.d.invalid(o.at(k), o.at(k)+" must be an integer")
		return 0
	}
	return int(n)
}

func (o object) boolean(k string) bool {
	raw, ok := o.m[k]
	if !ok || isNull(raw) {
		return false
	}
	var b bool
	if err := json.Unmarshal(raw, &b); err != nil {
		o.d.invalid(o.at(k), o.at(k)+" must be true or false")
	}
	return b
}

func (o object) obj(k string) *object {
	raw, ok := o.m[k]
	if !ok || isNull(raw) {
		return nil
	}
	c, ok := o.d.objectAt(raw, o.at(k))
	if !ok {
		return nil
	}
	return &c
}

func (o object) list(k string) ([]json.RawMessage, bool) {
	raw, ok := o.m[k]
	if !ok || isNull(raw) {
		return nil, false
	}
	var l []json.RawMessage
	if err := json.Unmarshal(raw, &l); err != nil || l == nil {
		o.d.invalid(o.at(k), o.at(k)+" must be an array")
		return nil, false
	}
	return l, true
}

func (o object) strList(k string) []string {
	raws, ok := o.list(k)
	if !ok {
		return nil
	}
	if len(raws) > MaxListItems {
		o.d.invalid(o.at(k), fmt.Sprintf("%s lists %d items; the limit is %d", o.at(k), len(raws), MaxListItems))
		return nil
	}
	out := make([]string, 0, len(raws))
	for i, raw := range raws {
		var s string
		if isNull(raw) {
			// json.Unmarshal would read it as "".
			o.d.invalid(fmt.Sprintf("%s[%d]", o.at(k), i), fmt.Sprintf("%s[%d] must be a string, not null", o.at(k), i))
			continue
		}
		if err := json.Unmarshal(raw, &s); err != nil {
			o.d.invalid(fmt.Sprintf("%s[%d]", o.at(k), i), fmt.Sprintf("%s[%d] must be a string", o.at(k), i))
			continue
		}
		out = append(out, s)
	}
	return out
}

func (o object) enumList(k string, ok func(string) bool, what string) []string {
	l := o.strList(k)
	if l != nil && len(l) == 0 {
		o.d.invalid(o.at(k), o.at(k)+" must not be empty")
	}
	for i, s := range l {
		if !ok(s) {
			o.d.invalid(fmt.Sprintf("%s[%d]", o.at(k), i), fmt.Sprintf("%q is not %s", s, what))
		}
	}
	return l
}

func (o object) countryList(k string) []string {
	return o.enumList(k, adcp.IsCountry, "an ISO 3166-1 alpha-2 country code")
}

func (o object) date(k string) adcp.Date {
	s, ok := o.optStr(k)
	if !ok {
		return adcp.Date{}
	}
	d, err := adcp.ParseDate(s)
	if err != nil {
		o.d.invalid(o.at(k), o.at(k)+" must be a date in YYYY-MM-DD form")
	}
	return d
}

func isNull(raw json.RawMessage) bool { return bytes.Equal(bytes.TrimSpace(raw), []byte("null")) }

func isObject(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) > 0 && t[0] == '{'
}
