package products

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"github.com/storefront/storefront/adcp"
	"github.com/storefront/storefront/jsonfield"
	"github.com/storefront/storefront/sanitize"
)

// SignalOption is a signal the product lets a package select, with its
// product-scoped charges (core/product-signal-targeting-option.json). The
// catalogue models the fields below and refuses the rest.
type SignalOption struct {
	SignalRef   SignalRef `json:"signal_ref"`
	Name        string    `json:"name,omitempty"`
	Description string    `json:"description,omitempty"`
	// ValueType is binary, categorical or numeric.
	ValueType  string       `json:"value_type,omitempty"`
	Categories []string     `json:"categories,omitempty"`
	Range      *SignalRange `json:"range,omitempty"`
	// SignalAgentSegmentID is the activation handle buyers echo.
	SignalAgentSegmentID string `json:"signal_agent_segment_id,omitempty"`
	// ActivationStatus is ready (the default) or requires_activation.
	ActivationStatus      string   `json:"activation_status,omitempty"`
	AllowedTargetingModes []string `json:"allowed_targeting_modes,omitempty"`
	// DefaultSelected: the seller preselects it; under a fixed selection
	// mode the seller applies it whatever the buyer sends.
	DefaultSelected bool   `json:"default_selected,omitempty"`
	SelectionGroup  string `json:"selection_group,omitempty"`
	// PricingOptions are the charges for selecting the signal on this
	// product; none means no incremental price.
	PricingOptions []SignalPrice `json:"pricing_options,omitempty"`
}

// SignalRef names a signal definition (core/signal-ref.json).
type SignalRef struct {
	// Scope is product, data_provider or signal_source.
	Scope              string `json:"scope"`
	SignalID           string `json:"signal_id"`
	DataProviderDomain string `json:"data_provider_domain,omitempty"`
	SignalSourceURL    string `json:"signal_source_url,omitempty"`
}

// SignalRange is a numeric signal's valid range.
type SignalRange struct {
	Min float64 `json:"min"`
	Max float64 `json:"max"`
}

// SignalPrice is one charge for a signal (core/vendor-pricing-option.json)
// in one of the priced models: cpm, percent_of_media, flat_fee or
// per_unit. The custom model is not modelled: its free-form terms name no
// amount a currency filter could judge.
type SignalPrice struct {
	PricingOptionID string   `json:"pricing_option_id"`
	Model           string   `json:"model"`
	CPM             *float64 `json:"cpm,omitempty"`
	Percent         *float64 `json:"percent,omitempty"`
	MaxCPM          *float64 `json:"max_cpm,omitempty"`
	Amount          *float64 `json:"amount,omitempty"`
	Period          string   `json:"period,omitempty"`
	Unit            string   `json:"unit,omitempty"`
	UnitPrice       *float64 `json:"unit_price,omitempty"`
	Currency        string   `json:"currency"`
}

// SignalRules are the product's signal composition rules
// (core/signal-targeting-rules.json).
type SignalRules struct {
	// ResolutionModel is direct_targeting (the default) or seller_planned.
	ResolutionModel string `json:"resolution_model,omitempty"`
	// SelectionMode is optional (the default), required or fixed.
	SelectionMode               string               `json:"selection_mode,omitempty"`
	MinSelectedSignals          *int                 `json:"min_selected_signals,omitempty"`
	MaxSelectedSignals          *int                 `json:"max_selected_signals,omitempty"`
	MaxSelectedPerGroup         *int                 `json:"max_selected_per_group,omitempty"`
	MaxSignalTargetingGroups    *int                 `json:"max_signal_targeting_groups,omitempty"`
	MaxSignalsPerTargetingGroup *int                 `json:"max_signals_per_targeting_group,omitempty"`
	SelectionGroupRules         []SelectionGroupRule `json:"selection_group_rules,omitempty"`
}

// SelectionGroupRule overrides the rules for one selection_group
// (core/signal-selection-group-rule.json).
type SelectionGroupRule struct {
	SelectionGroup     string `json:"selection_group"`
	TargetingMode      string `json:"targeting_mode,omitempty"`
	SelectionMode      string `json:"selection_mode,omitempty"`
	MinSelectedSignals *int   `json:"min_selected_signals,omitempty"`
	MaxSelectedSignals *int   `json:"max_selected_signals,omitempty"`
}

var (
	signalIDRE   = regexp.MustCompile(`^[a-zA-Z0-9_-]+$`)
	signalUnitRE = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)
	valueTypes   = []string{"binary", "categorical", "numeric"}
	periods      = []string{"monthly", "quarterly", "annual", "campaign"}
)

// signalPool is the options one selection rule governs: the product's
// rule or one selection group's.
type signalPool struct {
	ptr     string // the rule's pointer, for validation problems
	mode    string // optional, required or fixed
	min     int    // for required: how many the buyer must select
	options []*SignalOption
}

// signalPools splits the product's signal options by the rule that governs
// each: a selection_group_rules entry that sets a selection mode governs
// its group's options, the product's rules govern the rest.
func (p *Product) signalPools() []signalPool {
	rules := SignalRules{}
	if p.SignalTargetingRules != nil {
		rules = *p.SignalTargetingRules
	}
	product := signalPool{ptr: "/signal_targeting_rules", mode: rules.SelectionMode, min: minSelected(rules.SelectionMode, rules.MinSelectedSignals)}
	var groups []signalPool
	byGroup := map[string]int{}
	for i, g := range rules.SelectionGroupRules {
		if g.SelectionMode == "" {
			continue
		}
		byGroup[g.SelectionGroup] = len(groups)
		groups = append(groups, signalPool{ptr: jsonfield.Pointer("signal_targeting_rules", "selection_group_rules", i), mode: g.SelectionMode, min: minSelected(g.SelectionMode, g.MinSelectedSignals)})
	}
	for i := range p.SignalTargetingOptions {
		o := &p.SignalTargetingOptions[i]
		if gi, ok := byGroup[o.SelectionGroup]; ok && o.SelectionGroup != "" {
			groups[gi].options = append(groups[gi].options, o)
		} else {
			product.options = append(product.options, o)
		}
	}
	return append([]signalPool{product}, groups...)
}

// minSelected is how many signals a pool makes the buyer select: for
// required, min_selected_signals or 1 when it is omitted.
func minSelected(mode string, min *int) int {
	if mode != "required" {
		return 0
	}
	if min == nil {
		return 1
	}
	return *min
}

// mandatory lists the pool's options whose charges a package cannot
// avoid: under fixed, the default-selected ones the seller applies; under
// required, any of the options, of which min must be chosen.
func (sp signalPool) mandatory() bool {
	switch sp.mode {
	case "fixed":
		for _, o := range sp.options {
			if o.DefaultSelected && len(o.PricingOptions) > 0 {
				return true
			}
		}
	case "required":
		return sp.min > 0
	}
	return false
}

// payableIn reports whether the option's charge can be paid in one of
// currencies: it has no incremental price, or a price in one of them.
func (o *SignalOption) payableIn(currencies []string) bool {
	if len(o.PricingOptions) == 0 {
		return true
	}
	for _, sp := range o.PricingOptions {
		if oneOf(currencies, sp.Currency) {
			return true
		}
	}
	return false
}

// hasMandatorySignalCharges reports whether some signal charge of the
// product cannot be avoided by the buyer.
func (p *Product) hasMandatorySignalCharges() bool {
	for _, sp := range p.signalPools() {
		if sp.mandatory() {
			return true
		}
	}
	return false
}

// SignalChargesPayable reports whether every product-scoped signal charge
// a package of this product must carry can be paid in one of currencies,
// as core/product-filters.json asks of pricing_currencies: a fixed pool's
// seller-applied signals must each be payable, and a required pool must
// hold at least its minimum of payable signals to choose from.
func (p *Product) SignalChargesPayable(currencies []string) bool {
	for _, sp := range p.signalPools() {
		switch sp.mode {
		case "fixed":
			for _, o := range sp.options {
				if o.DefaultSelected && !o.payableIn(currencies) {
					return false
				}
			}
		case "required":
			n := 0
			for _, o := range sp.options {
				if o.payableIn(currencies) {
					n++
				}
			}
			if n < sp.min {
				return false
			}
		}
	}
	return true
}

// currencyPass is the products that can be bought in one of currencies:
// a product pricing option in one of them, and every mandatory signal
// charge payable in one of them.
func (c *Catalogue) currencyPass(sc *scratch, currencies []string) bitset {
	x := c.index
	pass := x.any(sc, x.currency, currencies)
	for _, i := range x.signalCharged {
		if pass.has(i) && !c.entries[i].p.SignalChargesPayable(currencies) {
			pass.clear(i)
		}
	}
	return pass
}

// validateSignals checks the signal targeting fields into v.
func (p *Product) validateSignals(v *jsonfield.Invalid) {
	if (len(p.SignalTargetingOptions) > 0 || p.SignalTargetingRules != nil) && !p.SignalTargetingAllowed {
		v.Add("/signal_targeting_allowed", "signal_targeting_allowed must be true when signal_targeting_options or signal_targeting_rules are set")
	}
	seen := map[SignalRef]bool{}
	groups := map[string]bool{}
	for i := range p.SignalTargetingOptions {
		o := &p.SignalTargetingOptions[i]
		ptr := jsonfield.Pointer("signal_targeting_options", i)
		o.validate(v, ptr)
		if seen[o.SignalRef] {
			v.Add(ptr+"/signal_ref", "signal %q is offered twice", o.SignalRef.SignalID)
		}
		seen[o.SignalRef] = true
		if o.SelectionGroup != "" {
			groups[o.SelectionGroup] = true
		}
	}
	if r := p.SignalTargetingRules; r != nil {
		r.validate(v, groups)
	}
	for _, sp := range p.signalPools() {
		if sp.mode == "required" && len(sp.options) < sp.min {
			// This seller serves no get_signals menu: what a buyer must
			// select has to be offered inline.
			v.Add(sp.ptr+"/selection_mode", "selection_mode required needs at least %d inline signal option(s) it governs; it governs %d", sp.min, len(sp.options))
		}
	}
}

func (o *SignalOption) validate(v *jsonfield.Invalid, ptr string) {
	ref := o.SignalRef
	rp := ptr + "/signal_ref"
	if !signalIDRE.MatchString(ref.SignalID) || len(ref.SignalID) > maxIdentifier {
		v.Add(rp+"/signal_id", "signal_id is required: letters, digits, _ and -")
	}
	switch ref.Scope {
	case "product":
		if ref.DataProviderDomain != "" || ref.SignalSourceURL != "" {
			v.Add(rp, "a product-scoped signal names no data_provider_domain or signal_source_url")
		}
		if strings.TrimSpace(o.Name) == "" {
			v.Add(ptr+"/name", "a product-scoped signal needs a name")
		}
		if o.ValueType == "" {
			v.Add(ptr+"/value_type", "a product-scoped signal needs a value_type")
		}
	case "data_provider":
		if !adcp.IsDomain(ref.DataProviderDomain) {
			v.Add(rp+"/data_provider_domain", "a data-provider signal needs data_provider_domain, a lower-case domain name")
		}
		if ref.SignalSourceURL != "" {
			v.Add(rp+"/signal_source_url", "a data-provider signal names no signal_source_url")
		}
	case "signal_source":
		if u, err := url.Parse(ref.SignalSourceURL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			v.Add(rp+"/signal_source_url", "a signal-source signal needs signal_source_url, an absolute http(s) URL")
		}
		if ref.DataProviderDomain != "" {
			v.Add(rp+"/data_provider_domain", "a signal-source signal names no data_provider_domain")
		}
	default:
		v.Add(rp+"/scope", "scope must be product, data_provider or signal_source")
	}
	if n := len([]rune(o.Name)); n > 200 {
		v.Add(ptr+"/name", "name is %d characters; the limit is 200", n)
	}
	if n := len([]rune(o.Description)); n > 2000 {
		v.Add(ptr+"/description", "description is %d characters; the limit is 2000", n)
	}
	if o.ValueType != "" && !oneOf(valueTypes, o.ValueType) {
		v.Add(ptr+"/value_type", "value_type must be binary, categorical or numeric")
	}
	if len(o.Categories) > 0 && o.ValueType != "categorical" {
		v.Add(ptr+"/categories", "categories belong to a categorical signal")
	}
	if o.Range != nil {
		if o.ValueType != "numeric" {
			v.Add(ptr+"/range", "range belongs to a numeric signal")
		} else if o.Range.Min > o.Range.Max {
			v.Add(ptr+"/range", "range.min is greater than range.max")
		}
	}
	switch o.ActivationStatus {
	case "", "ready":
	case "requires_activation":
		if o.SignalAgentSegmentID == "" {
			v.Add(ptr+"/signal_agent_segment_id", "a signal that requires activation needs signal_agent_segment_id")
		}
	default:
		v.Add(ptr+"/activation_status", "activation_status must be ready or requires_activation")
	}
	if o.SignalAgentSegmentID != "" && len(o.SignalAgentSegmentID) > maxIdentifier {
		v.Add(ptr+"/signal_agent_segment_id", "signal_agent_segment_id is longer than %d characters", maxIdentifier)
	}
	if o.AllowedTargetingModes != nil && len(o.AllowedTargetingModes) == 0 {
		v.Add(ptr+"/allowed_targeting_modes", "allowed_targeting_modes must not be empty")
	}
	for i, m := range o.AllowedTargetingModes {
		if (m != "include" && m != "exclude") || oneOf(o.AllowedTargetingModes[:i], m) {
			v.Add(jsonfield.Join(ptr, "allowed_targeting_modes", i), "targeting modes are include or exclude, each once")
		}
	}
	if o.PricingOptions != nil && len(o.PricingOptions) == 0 {
		v.Add(ptr+"/pricing_options", "pricing_options must not be empty; omit it for a signal with no incremental price")
	}
	ids := map[string]bool{}
	for i, sp := range o.PricingOptions {
		pp := jsonfield.Join(ptr, "pricing_options", i)
		if strings.TrimSpace(sp.PricingOptionID) == "" || len(sp.PricingOptionID) > maxIdentifier {
			v.Add(pp+"/pricing_option_id", "pricing_option_id is required")
		} else if ids[sp.PricingOptionID] {
			v.Add(pp+"/pricing_option_id", "pricing_option_id %q is used twice", sp.PricingOptionID)
		}
		ids[sp.PricingOptionID] = true
		sp.validate(v, pp)
	}
}

func (sp SignalPrice) validate(v *jsonfield.Invalid, ptr string) {
	if !adcp.IsCurrency(sp.Currency) {
		v.Add(ptr+"/currency", "currency must be an ISO 4217 code such as USD")
	}
	// Each model has its own amounts; any other model's is refused
	// rather than carried unread.
	amounts := []struct {
		name   string
		set    bool
		models []string
	}{
		{"cpm", sp.CPM != nil, []string{"cpm"}},
		{"percent", sp.Percent != nil, []string{"percent_of_media"}},
		{"max_cpm", sp.MaxCPM != nil, []string{"percent_of_media"}},
		{"amount", sp.Amount != nil, []string{"flat_fee"}},
		{"period", sp.Period != "", []string{"flat_fee"}},
		{"unit", sp.Unit != "", []string{"per_unit"}},
		{"unit_price", sp.UnitPrice != nil, []string{"per_unit"}},
	}
	switch sp.Model {
	case "cpm", "percent_of_media", "flat_fee", "per_unit":
	case "custom":
		v.Add(ptr+"/model", "custom signal pricing is not supported: use cpm, percent_of_media, flat_fee or per_unit")
		return
	default:
		v.Add(ptr+"/model", "model must be cpm, percent_of_media, flat_fee or per_unit")
		return
	}
	for _, a := range amounts {
		if a.set && !oneOf(a.models, sp.Model) {
			v.Add(ptr+"/"+a.name, "%s does not belong to %s pricing", a.name, sp.Model)
		}
	}
	need := func(name string, x *float64, max float64) {
		switch {
		case x == nil:
			v.Add(ptr+"/"+name, "%s pricing needs %s", sp.Model, name)
		case *x < 0:
			v.Add(ptr+"/"+name, "%s must not be negative", name)
		case max > 0 && *x > max:
			v.Add(ptr+"/"+name, "%s must be at most %g", name, max)
		}
	}
	switch sp.Model {
	case "cpm":
		need("cpm", sp.CPM, 0)
	case "percent_of_media":
		need("percent", sp.Percent, 100)
		if sp.MaxCPM != nil && *sp.MaxCPM < 0 {
			v.Add(ptr+"/max_cpm", "max_cpm must not be negative")
		}
	case "flat_fee":
		need("amount", sp.Amount, 0)
		if !oneOf(periods, sp.Period) {
			v.Add(ptr+"/period", "period must be monthly, quarterly, annual or campaign")
		}
	case "per_unit":
		need("unit_price", sp.UnitPrice, 0)
		if !signalUnitRE.MatchString(sp.Unit) {
			v.Add(ptr+"/unit", "unit names what is counted, such as impression or format: lower-case letters, digits and _")
		}
	}
}

func (r *SignalRules) validate(v *jsonfield.Invalid, groups map[string]bool) {
	const ptr = "/signal_targeting_rules"
	if r.ResolutionModel != "" && r.ResolutionModel != "direct_targeting" && r.ResolutionModel != "seller_planned" {
		v.Add(ptr+"/resolution_model", "resolution_model must be direct_targeting or seller_planned")
	}
	validSelection(v, ptr, r.SelectionMode, r.MinSelectedSignals, r.MaxSelectedSignals)
	for _, l := range []struct {
		name string
		n    *int
	}{{"max_selected_per_group", r.MaxSelectedPerGroup}, {"max_signal_targeting_groups", r.MaxSignalTargetingGroups}, {"max_signals_per_targeting_group", r.MaxSignalsPerTargetingGroup}} {
		if l.n != nil && *l.n < 1 {
			v.Add(ptr+"/"+l.name, "%s must be at least 1", l.name)
		}
	}
	if r.SelectionGroupRules != nil && len(r.SelectionGroupRules) == 0 {
		v.Add(ptr+"/selection_group_rules", "selection_group_rules must not be empty")
	}
	seen := map[string]bool{}
	for i, g := range r.SelectionGroupRules {
		gp := jsonfield.Pointer("signal_targeting_rules", "selection_group_rules", i)
		switch {
		case g.SelectionGroup == "":
			v.Add(gp+"/selection_group", "selection_group is required")
		case seen[g.SelectionGroup]:
			v.Add(gp+"/selection_group", "selection_group %q has two rules", g.SelectionGroup)
		case !groups[g.SelectionGroup]:
			v.Add(gp+"/selection_group", "no signal option is in selection_group %q", g.SelectionGroup)
		}
		seen[g.SelectionGroup] = true
		if g.TargetingMode != "" && g.TargetingMode != "include" && g.TargetingMode != "exclude" {
			v.Add(gp+"/targeting_mode", "targeting_mode must be include or exclude")
		}
		validSelection(v, gp, g.SelectionMode, g.MinSelectedSignals, g.MaxSelectedSignals)
	}
}

func validSelection(v *jsonfield.Invalid, ptr, mode string, min, max *int) {
	if mode != "" && mode != "optional" && mode != "required" && mode != "fixed" {
		v.Add(ptr+"/selection_mode", "selection_mode must be optional, required or fixed")
	}
	if min != nil && *min < 0 {
		v.Add(ptr+"/min_selected_signals", "min_selected_signals must not be negative")
	}
	if max != nil && *max < 1 {
		v.Add(ptr+"/max_selected_signals", "max_selected_signals must be at least 1")
	}
	if min != nil && max != nil && *min > *max {
		v.Add(ptr+"/min_selected_signals", "min_selected_signals is greater than max_selected_signals")
	}
}

// wireSignals renders the signal options with their free text screened:
// a name that names a confidential term is replaced by a neutral one, a
// description that does is left out.
func wireSignals(p Product, screen *sanitize.Screen) []SignalOption {
	out := make([]SignalOption, len(p.SignalTargetingOptions))
	for i, o := range p.SignalTargetingOptions {
		if o.Name != "" {
			name, ok := screen.Line(o.Name, 200)
			if !ok {
				name, _ = screen.Line(fmt.Sprintf("Audience signal %d", i+1), 200)
			}
			o.Name = name.String()
		}
		if o.Description != "" {
			o.Description = screen.Prose(o.Description, 2000, sanitize.Text{}).String()
		}
		o.Categories = screenedList(o.Categories, screen)
		out[i] = o
	}
	return out
}

// screenedList keeps the entries of l that pass the screen unchanged; nil
// when none does.
func screenedList(l []string, screen *sanitize.Screen) []string {
	var out []string
	for _, s := range l {
		if t, ok := screen.Line(s, 200); ok && t.String() == s {
			out = append(out, s)
		}
	}
	return out
}
