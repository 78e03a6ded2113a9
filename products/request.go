package products

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"slices"
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
func DecodeRequest(args []byte) (req *Request, err error) { return decodeRequest(args, nil) }

// decodeRequest is DecodeRequest of args that doc, when not nil, is
// jsonfield.Parse's reading of.
func decodeRequest(args []byte, doc *jsonfield.Value) (req *Request, err error) {
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
	var perr error
	if doc == nil {
		var d jsonfield.Value
		d, perr = jsonfield.Parse(args)
		doc = &d
	}
	if perr != nil || !doc.IsObject() {
		msg := "the request must be a JSON object"
		if perr != nil {
			msg = "the request is not valid JSON"
		}
		return nil, &RequestError{Problems: jsonfield.Invalid{jsonfield.Fault(adcp.InvalidRequest, "", msg)}}
	}
	d := jsonfield.NewReader(jsonfield.Requests, MaxProblems)
	// Text first, from the raw bytes: once decoded, invalid UTF-8 reads
	// as U+FFFD and could be served as if the buyer had sent it.
	for _, f := range TextProblems(args, false) {
		d.Add(f)
	}
	r := &Request{}
	o, _ := d.Object(*doc, "")
	r.AdcpVersion = o.Str("adcp_version")
	r.AdcpMajorVersion = o.Int("adcp_major_version")
	r.IdempotencyKey = o.Str("idempotency_key")
	if r.IdempotencyKey != "" && !idempotencyKeyRE.MatchString(r.IdempotencyKey) {
		invalid(d, "idempotency_key", "idempotency_key must be 16 to 255 characters of A-Z, a-z, 0-9, _ . : -")
	}
	r.BuyingMode = o.Str("buying_mode")
	modeGiven := o.Has("buying_mode")
	if b, ok := o.OptStr("brief"); ok {
		r.Brief = &b
		if n := len([]rune(b)); n > MaxBriefChars {
			invalid(d, "brief", fmt.Sprintf("brief is %d characters; the limit is %d", n, MaxBriefChars))
		}
	}
	r.Refine = decodeRefine(o)
	if b, ok := o.Obj("brand"); ok {
		r.Brand = decodeBrand(b)
	}
	if a, ok := o.Obj("account"); ok {
		r.Account = decodeAccount(a)
	}
	if f, ok := o.Obj("filters"); ok {
		r.Filters = decodeFilters(f)
	}
	if t, ok := o.Obj("targeting_overlay"); ok {
		r.GeoCountries = countryList(t, "geo_countries")
	}
	r.Fields = strList(o, "fields")
	for i, f := range r.Fields {
		if !adcp.IsProductField(f) {
			invalid(d, fmt.Sprintf("fields[%d]", i), fmt.Sprintf("%q is not a product field", f))
		}
	}
	if o.Has("fields") && r.Fields != nil && len(r.Fields) == 0 {
		invalid(d, "fields", "fields must list at least one field")
	}
	r.Pagination = PageRequest{MaxResults: DefaultPageSize}
	if p, ok := o.Obj("pagination"); ok {
		p.Only("max_results", "cursor")
		if p.Has("max_results") {
			r.Pagination.MaxResults = p.Int("max_results")
			if r.Pagination.MaxResults < 1 || r.Pagination.MaxResults > MaxPageSize {
				invalid(d, "pagination.max_results", fmt.Sprintf("max_results must be between 1 and %d", MaxPageSize))
			}
		}
		r.Pagination.Cursor = p.Str("cursor")
	}
	// push_notification_config and context are kept as sent, besides
	// being read; ext is the buyer's own.
	if v, ok := o.Member("push_notification_config"); ok && !v.IsNull() {
		if p, ok := o.Obj("push_notification_config"); ok {
			r.PushNotification = slices.Clone(v.Raw())
			r.Push = decodePush(p)
		}
	}
	if v, ok := o.Member("context"); ok && !v.IsNull() {
		switch {
		case !v.IsObject():
			invalid(d, "context", "context must be an object")
		case Echoable(v.Raw()):
			r.Context = slices.Clone(v.Raw())
		}
	}
	if v, ok := o.Member("ext"); ok && !v.IsNull() && !v.IsObject() {
		invalid(d, "ext", "ext must be an object")
	}
	validateMode(d, r, modeGiven)
	if bad := d.Faults(); len(bad) > 0 {
		return r, &RequestError{Problems: bad}
	}
	return r, nil
}

// MaxProblems is how many faults a refusal names at most, on every task.
const MaxProblems = 20

// invalid records an INVALID_REQUEST fault at path.
func invalid(d *jsonfield.Reader, path, msg string) {
	d.Add(jsonfield.Fault(adcp.InvalidRequest, path, msg))
}

func validateMode(d *jsonfield.Reader, r *Request, modeGiven bool) {
	if !modeGiven {
		// Pre-v3 clients send no buying_mode; the spec says to treat
		// them as briefs.
		r.BuyingMode = "brief"
	}
	switch r.BuyingMode {
	case "brief":
		if modeGiven && (r.Brief == nil || strings.TrimSpace(*r.Brief) == "") {
			invalid(d, "brief", "brief is required when buying_mode is brief")
		}
		if r.Refine != nil {
			invalid(d, "refine", "refine is only valid when buying_mode is refine")
		}
	case "wholesale":
		if r.Brief != nil {
			invalid(d, "brief", "brief must not be provided when buying_mode is wholesale")
		}
		if r.Refine != nil {
			invalid(d, "refine", "refine is only valid when buying_mode is refine")
		}
	case "refine":
		if r.Brief != nil {
			invalid(d, "brief", "brief must not be provided when buying_mode is refine")
		}
		if len(r.Refine) == 0 {
			invalid(d, "refine", "refine must list at least one change request when buying_mode is refine")
		}
	default:
		if r.BuyingMode != "" || modeGiven {
			invalid(d, "buying_mode", fmt.Sprintf("buying_mode must be brief, wholesale or refine, not %q", r.BuyingMode))
		}
	}
	f := r.Filters
	if f.Budget != nil && f.Budget.Min != nil && f.Budget.Max != nil && *f.Budget.Min > *f.Budget.Max {
		d.Add(jsonfield.Fault(adcp.ValidationError, "filters.budget_range", "budget_range.min is greater than budget_range.max"))
	}
	if !f.StartDate.IsZero() && !f.EndDate.IsZero() && f.EndDate.Before(f.StartDate) {
		d.Add(jsonfield.Fault(adcp.ValidationError, "filters.end_date", "end_date is before start_date"))
	}
	if len(f.Countries) > 0 && len(r.GeoCountries) > 0 && !sameSet(f.Countries, r.GeoCountries) {
		invalid(d, "filters.countries", "filters.countries contradicts targeting_overlay.geo_countries; send one of them")
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

func decodeRefine(o jsonfield.Object) []RefineEntry {
	raws, ok := o.List("refine")
	if !ok {
		return nil
	}
	if len(raws) > MaxRefine {
		invalid(o.Reader, "refine", fmt.Sprintf("refine lists %d entries; the limit is %d", len(raws), MaxRefine))
		return nil
	}
	out := make([]RefineEntry, 0, len(raws))
	finalize := -1
	other := -1
	for i, raw := range raws {
		path := fmt.Sprintf("refine[%d]", i)
		e, ok := o.Reader.Object(raw, path)
		if !ok {
			out = append(out, RefineEntry{})
			continue
		}
		var re RefineEntry
		re.Scope = e.Str("scope")
		switch re.Scope {
		case "request":
			e.Only("scope", "ask")
			re.Ask = e.Str("ask")
			if strings.TrimSpace(re.Ask) == "" {
				invalid(o.Reader, path+".ask", "a request-scoped change needs an ask")
			}
		case "product":
			e.Only("scope", "product_id", "action", "ask")
			re.ProductID = e.Str("product_id")
			re.Action = e.Str("action")
			re.Ask = e.Str("ask")
			if re.ProductID == "" {
				invalid(o.Reader, path+".product_id", "a product-scoped change needs a product_id")
			}
			if re.Action == "" {
				re.Action = "include"
			}
			if !oneOf([]string{"include", "omit", "more_like_this"}, re.Action) {
				invalid(o.Reader, path+".action", "a product-scoped action must be include, omit or more_like_this")
			}
		case "proposal":
			e.Only("scope", "proposal_id", "action", "ask")
			re.ProposalID = e.Str("proposal_id")
			re.Action = e.Str("action")
			re.Ask = e.Str("ask")
			if re.ProposalID == "" {
				invalid(o.Reader, path+".proposal_id", "a proposal-scoped change needs a proposal_id")
			}
			if re.Action == "" {
				re.Action = "include"
			}
			if !oneOf([]string{"include", "omit", "finalize"}, re.Action) {
				invalid(o.Reader, path+".action", "a proposal-scoped action must be include, omit or finalize")
			}
		case "":
			invalid(o.Reader, path+".scope", "scope is required (request, product or proposal)")
		default:
			invalid(o.Reader, path+".scope", fmt.Sprintf("scope must be request, product or proposal, not %q", re.Scope))
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
		invalid(o.Reader, fmt.Sprintf("refine[%d]", at), "a finalize entry cannot be mixed with other change requests; every entry must be a proposal finalize")
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

func decodePush(o jsonfield.Object) *PushConfig {
	p := &PushConfig{URL: o.Str("url"), OperationID: o.Str("operation_id"), Token: o.Str("token")}
	const path = "push_notification_config"
	if p.URL == "" {
		invalid(o.Reader, path+".url", "push_notification_config.url is required")
	} else if u, err := url.Parse(p.URL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		invalid(o.Reader, path+".url", "push_notification_config.url must be an absolute http(s) URL")
	}
	if p.OperationID != "" && !operationIDRE.MatchString(p.OperationID) {
		invalid(o.Reader, path+".operation_id", "operation_id must be 1 to 255 characters of A-Z, a-z, 0-9, _ . : -")
	}
	if p.Token != "" && (len(p.Token) < 16 || len(p.Token) > 4096) {
		invalid(o.Reader, path+".token", "token must be 16 to 4096 characters")
	}
	if a, ok := o.Obj("authentication"); ok {
		a.Only("schemes", "credentials")
		schemes := strList(a, "schemes")
		if len(schemes) != 1 || (schemes[0] != "Bearer" && schemes[0] != "HMAC-SHA256") {
			invalid(o.Reader, path+".authentication.schemes", "schemes must hold exactly one of Bearer or HMAC-SHA256")
		} else {
			p.Scheme = schemes[0]
		}
		p.Credentials = a.Str("credentials")
		if len(p.Credentials) < 32 {
			invalid(o.Reader, path+".authentication.credentials", "credentials must be at least 32 characters")
		}
	}
	return p
}

// maxIdentifier is the longest identifier a request may name.
const maxIdentifier = 255

// checkIdentifier refuses an identifier longer than maxIdentifier
// characters. (What it may hold is checked with every other string of the
// request: TextProblems.)
func checkIdentifier(d *jsonfield.Reader, field, what, v string) {
	if utf8.RuneCountInString(v) > maxIdentifier {
		invalid(d, field, fmt.Sprintf("%s is longer than %d characters", what, maxIdentifier))
	}
}

func decodeBrand(o jsonfield.Object) *BrandRef {
	b := &BrandRef{Domain: o.Str("domain"), BrandID: o.Str("brand_id"), Industries: strList(o, "industries")}
	if b.BrandID != "" {
		checkIdentifier(o.Reader, o.Path+".brand_id", "brand_id", b.BrandID)
	}
	if b.Domain == "" {
		invalid(o.Reader, o.Path+".domain", "brand.domain is required")
	} else if !adcp.IsDomain(b.Domain) {
		invalid(o.Reader, o.Path+".domain", "brand.domain must be a lower-case domain name")
	}
	countryList(o, "countries")
	return b
}

func decodeAccount(o jsonfield.Object) *AccountRef {
	a := &AccountRef{}
	if o.Has("account_id") {
		o.Only("account_id")
		a.AccountID = o.Str("account_id")
		if a.AccountID == "" {
			invalid(o.Reader, "account.account_id", "account_id must not be empty")
		} else {
			checkIdentifier(o.Reader, "account.account_id", "account_id", a.AccountID)
		}
		return a
	}
	o.Only("brand", "operator", "operator_unit", "currency", "timezone", "sandbox")
	if b, ok := o.Obj("brand"); ok {
		a.Brand = decodeBrand(b)
	} else {
		invalid(o.Reader, "account", "an account needs account_id, or brand and operator")
		return nil
	}
	a.Operator = o.Str("operator")
	if a.Operator == "" {
		invalid(o.Reader, "account.operator", "account.operator is required with account.brand")
	} else if !adcp.IsDomain(a.Operator) {
		invalid(o.Reader, "account.operator", "account.operator must be a lower-case domain name")
	}
	a.Sandbox = o.Bool("sandbox")
	if c := o.Str("currency"); c != "" && !adcp.IsCurrency(c) {
		invalid(o.Reader, "account.currency", "account.currency must be an ISO 4217 code")
	}
	return a
}

func decodeFilters(o jsonfield.Object) Filters {
	var f Filters
	f.Channels = enumList(o, "channels", adcp.IsChannel, "an AdCP channel")
	f.FormatKinds = enumList(o, "format_kinds", adcp.IsFormatKind, "a canonical format kind")
	if dt := o.Str("delivery_type"); dt != "" {
		if !adcp.IsDeliveryType(dt) {
			invalid(o.Reader, "filters.delivery_type", "delivery_type must be guaranteed or non_guaranteed")
		}
		f.DeliveryType = dt
	}
	if b, ok := o.Obj("budget_range"); ok {
		br := &BudgetRange{Currency: b.Str("currency")}
		if b.Has("min") {
			v := b.Number("min")
			br.Min = &v
		}
		if b.Has("max") {
			v := b.Number("max")
			br.Max = &v
		}
		switch {
		case br.Currency == "":
			invalid(o.Reader, "filters.budget_range.currency", "budget_range.currency is required")
		case !adcp.IsCurrency(br.Currency):
			invalid(o.Reader, "filters.budget_range.currency", "budget_range.currency must be an ISO 4217 code such as USD")
		}
		if br.Min == nil && br.Max == nil {
			invalid(o.Reader, "filters.budget_range", "budget_range needs min or max")
		}
		// A slice, not a map: problems are reported in a fixed order, so
		// the same request always gets the same answer.
		for _, b := range []struct {
			name string
			v    *float64
		}{{"min", br.Min}, {"max", br.Max}} {
			if b.v != nil && *b.v < 0 {
				invalid(o.Reader, "filters.budget_range."+b.name, "budget_range."+b.name+" must not be negative")
			}
		}
		f.Budget = br
	}
	f.StartDate = date(o, "start_date")
	f.EndDate = date(o, "end_date")
	f.PricingCurrencies = enumList(o, "pricing_currencies", adcp.IsCurrency, "an ISO 4217 currency code")
	f.Countries = countryList(o, "countries")
	if o.Has("is_fixed_price") {
		v := o.Bool("is_fixed_price")
		f.IsFixedPrice = &v
	}
	f.PricingStructures = enumList(o, "pricing_structures", func(s string) bool { return oneOf([]string{"fixed", "auction", "contingent"}, s) }, "a pricing structure (fixed, auction, contingent)")
	if ex := o.Str("exclusivity"); ex != "" {
		if !oneOf(exclusivities, ex) {
			invalid(o.Reader, "filters.exclusivity", "exclusivity must be none, category or exclusive")
		}
		f.Exclusivity = ex
	}
	f.VideoPlacementTypes = enumList(o, "video_placement_types", func(s string) bool { return oneOf(videoPlacementTypes, s) }, "a video placement type")
	f.AudioDistributionTypes = enumList(o, "audio_distribution_types", func(s string) bool { return oneOf(audioDistribution, s) }, "an audio distribution type")
	f.RequiredMetrics = enumList(o, "required_metrics", func(s string) bool { return oneOf(availableMetrics, s) }, "an AdCP metric")
	f.StandardFormatsOnly = o.Bool("standard_formats_only")
	f.FormatOptionRefs = decodeFormatOptionRefs(o)
	f.FormatIDs = decodeFormatRefs(o)
	f.Unmodelled = o.Others(modelledFilters)
	return f
}

// strList is the list of strings at k, of at most MaxListItems.
func strList(o jsonfield.Object, k string) []string {
	items, ok := o.List(k)
	if !ok {
		return nil
	}
	at := o.At(k)
	if len(items) > MaxListItems {
		invalid(o.Reader, at, fmt.Sprintf("%s lists %d items; the limit is %d", at, len(items), MaxListItems))
		return nil
	}
	out := make([]string, 0, len(items))
	for i, item := range items {
		if item.IsNull() {
			// A null member is an absent one; a null item is a fault.
			p := fmt.Sprintf("%s[%d]", at, i)
			invalid(o.Reader, p, p+" must be a string, not null")
			continue
		}
		if s, ok := o.Reader.StringAt(item, at, i); ok {
			out = append(out, s)
		}
	}
	return out
}

// enumList is the list at k, of at least one value, each one that ok
// accepts.
func enumList(o jsonfield.Object, k string, ok func(string) bool, what string) []string {
	l := strList(o, k)
	if l != nil && len(l) == 0 {
		invalid(o.Reader, o.At(k), o.At(k)+" must not be empty")
	}
	for i, s := range l {
		if !ok(s) {
			invalid(o.Reader, fmt.Sprintf("%s[%d]", o.At(k), i), fmt.Sprintf("%q is not %s", s, what))
		}
	}
	return l
}

func countryList(o jsonfield.Object, k string) []string {
	return enumList(o, k, adcp.IsCountry, "an ISO 3166-1 alpha-2 country code")
}

func date(o jsonfield.Object, k string) adcp.Date {
	s, ok := o.OptStr(k)
	if !ok {
		return adcp.Date{}
	}
	d, err := adcp.ParseDate(s)
	if err != nil {
		invalid(o.Reader, o.At(k), o.At(k)+" must be a date in YYYY-MM-DD form")
	}
	return d
}
