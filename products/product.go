package products

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/storefront/storefront/adcp"
	"github.com/storefront/storefront/field"
	"github.com/storefront/storefront/jsonfield"
)

// Product is one catalogue entry: the AdCP product fields plus the
// catalogue-only fields at the end.
type Product struct {
	ProductID              string                `json:"product_id"`
	Name                   string                `json:"name"`
	Description            string                `json:"description"`
	PublisherProperties    []PublisherProperty   `json:"publisher_properties"`
	Channels               []string              `json:"channels"`
	FormatOptions          []FormatOption        `json:"format_options"`
	DeliveryType           string                `json:"delivery_type"`
	PricingOptions         []PricingOption       `json:"pricing_options"`
	ReportingCapabilities  ReportingCapabilities `json:"reporting_capabilities"`
	VideoPlacementTypes    []string              `json:"video_placement_types,omitempty"`
	AudioDistributionTypes []string              `json:"audio_distribution_types,omitempty"`
	Exclusivity            string                `json:"exclusivity,omitempty"`
	// Signal targeting: the signals a package may select and their
	// product-scoped charges (signals.go).
	SignalTargetingAllowed bool           `json:"signal_targeting_allowed,omitempty"`
	SignalTargetingOptions []SignalOption `json:"signal_targeting_options,omitempty"`
	SignalTargetingRules   *SignalRules   `json:"signal_targeting_rules,omitempty"`
	// MetricOptimization declares the metric goals the product can be
	// optimised for (core/product.json metric_optimization); absent means
	// none. Every value is a schema enum or a number, never free text.
	MetricOptimization *MetricOptimization `json:"metric_optimization,omitempty"`

	// Countries are the markets the product delivers in (ISO 3166-1
	// alpha-2). Catalogue-only.
	Countries []string `json:"countries"`
	// Availability lists the windows the product can be booked in. No
	// windows means always bookable. Catalogue-only.
	Availability []adcp.DateRange `json:"availability,omitempty"`
	// Keywords are extra terms brief ranking matches on. Catalogue-only.
	Keywords []string `json:"keywords,omitempty"`
	// InternalRef is the publisher's internal id for the product, such as
	// an ad-server line item. Confidential: it is on the deny-list.
	InternalRef string `json:"internal_ref,omitempty"`
}

// PublisherProperty selects properties from a publisher's adagents.json
// (core/publisher-property-selector.json, single-publisher forms).
type PublisherProperty struct {
	PublisherDomain string   `json:"publisher_domain"`
	SelectionType   string   `json:"selection_type"`
	PropertyIDs     []string `json:"property_ids,omitempty"`
	PropertyTags    []string `json:"property_tags,omitempty"`
}

// FormatOption is an inline format declaration
// (core/product-format-declaration.json).
type FormatOption struct {
	FormatOptionID string          `json:"format_option_id,omitempty"`
	FormatKind     string          `json:"format_kind"`
	Params         json.RawMessage `json:"params"`
}

// PricingOption is a CPM or viewable-CPM pricing option, fixed or auction
// (pricing-options/cpm-option.json, vcpm-option.json: the same shape).
type PricingOption struct {
	PricingOptionID    string         `json:"pricing_option_id"`
	PricingModel       string         `json:"pricing_model"`
	Currency           string         `json:"currency"`
	FixedPrice         *float64       `json:"fixed_price,omitempty"`
	FloorPrice         *float64       `json:"floor_price,omitempty"`
	PriceGuidance      *PriceGuidance `json:"price_guidance,omitempty"`
	MinSpendPerPackage *float64       `json:"min_spend_per_package,omitempty"`
}

// PriceGuidance is auction price guidance.
type PriceGuidance struct {
	P25 *float64 `json:"p25,omitempty"`
	P50 *float64 `json:"p50,omitempty"`
	P75 *float64 `json:"p75,omitempty"`
	P90 *float64 `json:"p90,omitempty"`
}

// ReportingCapabilities is core/reporting-capabilities.json.
type ReportingCapabilities struct {
	AvailableReportingFrequencies []string `json:"available_reporting_frequencies"`
	ExpectedDelayMinutes          int      `json:"expected_delay_minutes"`
	Timezone                      string   `json:"timezone"`
	SupportsWebhooks              bool     `json:"supports_webhooks"`
	AvailableMetrics              []string `json:"available_metrics"`
	DateRangeSupport              string   `json:"date_range_support"`
}

var (
	reportingFrequencies = []string{"hourly", "daily", "weekly", "monthly", "quarterly", "post_campaign"}
	availableMetrics     = []string{"impressions", "spend", "clicks", "ctr", "views", "completed_views", "completion_rate", "conversions", "conversion_value", "commissionable_value", "roas", "cost_per_acquisition", "new_to_brand_rate", "leads", "reach", "frequency", "grps", "engagements", "engagement_rate", "follows", "saves", "profile_visits", "viewability", "quartile_data", "dooh_metrics", "cost_per_click", "cost_per_completed_view", "cpm", "downloads", "units_sold", "new_to_brand_units", "plays", "incremental_sales_lift", "brand_lift", "foot_traffic", "conversion_lift", "brand_search_lift"}
	videoPlacementTypes  = []string{"instream", "accompanying_content", "interstitial", "standalone"}
	audioDistribution    = []string{"music_streaming_service", "fm_am_broadcast", "podcast", "catch_up_radio", "web_radio", "video_game", "text_to_speech"}
	exclusivities        = []string{"none", "category", "exclusive"}
)

func oneOf(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// FormatKinds returns the distinct format kinds the product accepts.
func (p *Product) FormatKinds() []string {
	var out []string
	for _, f := range p.FormatOptions {
		if !oneOf(out, f.FormatKind) {
			out = append(out, f.FormatKind)
		}
	}
	return out
}

// Validate checks a product and returns every failure with a JSON pointer
// relative to the product.
func (p *Product) Validate() error {
	var v jsonfield.Invalid
	req := func(ptr, what, s string, max int) {
		if strings.TrimSpace(s) == "" {
			v.Add(ptr, "%s is required", what)
		} else if n := len([]rune(s)); n > max {
			v.Add(ptr, "%s is %d characters; the limit is %d", what, n, max)
		}
	}
	req("/product_id", "product_id", p.ProductID, 128)
	req("/name", "name", p.Name, 200)
	req("/description", "description", p.Description, 2000)
	// Every string is text a store keeps and a buyer can read; the id
	// and the name are one line.
	text := field.Value(p)
	v.Faults("", text)
	if len(text) == 0 {
		v.Check("/product_id", field.Text(p.ProductID, false))
		v.Check("/name", field.Text(p.Name, false))
	}
	if len(p.PublisherProperties) == 0 {
		v.Add("/publisher_properties", "at least one publisher property is required")
	}
	for i, pp := range p.PublisherProperties {
		ptr := jsonfield.Pointer("publisher_properties", i)
		if !adcp.IsDomain(pp.PublisherDomain) {
			v.Add(ptr+"/publisher_domain", "%q is not a lower-case domain name", pp.PublisherDomain)
		}
		switch pp.SelectionType {
		case "all":
		case "by_id":
			if len(pp.PropertyIDs) == 0 {
				v.Add(ptr+"/property_ids", "selection by_id needs property_ids")
			}
		case "by_tag":
			if len(pp.PropertyTags) == 0 {
				v.Add(ptr+"/property_tags", "selection by_tag needs property_tags")
			}
		default:
			v.Add(ptr+"/selection_type", "selection_type must be all, by_id or by_tag")
		}
	}
	if len(p.Channels) == 0 {
		v.Add("/channels", "at least one channel is required")
	}
	for i, ch := range p.Channels {
		if !adcp.IsChannel(ch) {
			v.Add(jsonfield.Pointer("channels", i), "%q is not an AdCP channel", ch)
		}
	}
	if len(p.FormatOptions) == 0 {
		v.Add("/format_options", "at least one format option is required")
	}
	ids := map[string]bool{}
	for i, f := range p.FormatOptions {
		ptr := jsonfield.Pointer("format_options", i)
		if !adcp.IsFormatKind(f.FormatKind) || f.FormatKind == "custom" {
			v.Add(ptr+"/format_kind", "%q is not a canonical format kind the catalogue accepts", f.FormatKind)
		}
		if f.FormatOptionID != "" {
			if ids[f.FormatOptionID] {
				v.Add(ptr+"/format_option_id", "format_option_id %q is used twice", f.FormatOptionID)
			}
			ids[f.FormatOptionID] = true
		}
		var params map[string]any
		if len(f.Params) == 0 || json.Unmarshal(f.Params, &params) != nil || params == nil {
			v.Add(ptr+"/params", "params must be a JSON object")
		}
	}
	if !adcp.IsDeliveryType(p.DeliveryType) {
		v.Add("/delivery_type", "delivery_type must be guaranteed or non_guaranteed")
	}
	if len(p.PricingOptions) == 0 {
		v.Add("/pricing_options", "at least one pricing option is required")
	}
	pids := map[string]bool{}
	for i, po := range p.PricingOptions {
		ptr := jsonfield.Pointer("pricing_options", i)
		if strings.TrimSpace(po.PricingOptionID) == "" {
			v.Add(ptr+"/pricing_option_id", "pricing_option_id is required")
		} else if pids[po.PricingOptionID] {
			v.Add(ptr+"/pricing_option_id", "pricing_option_id %q is used twice", po.PricingOptionID)
		}
		pids[po.PricingOptionID] = true
		if po.PricingModel != "cpm" && po.PricingModel != "vcpm" {
			v.Add(ptr+"/pricing_model", "pricing_model must be cpm or vcpm")
		}
		if !adcp.IsCurrency(po.Currency) {
			v.Add(ptr+"/currency", "currency must be an ISO 4217 code such as USD")
		}
		switch {
		case po.FixedPrice == nil && po.FloorPrice == nil:
			v.Add(ptr, "a pricing option needs fixed_price or floor_price")
		case po.FixedPrice != nil && po.FloorPrice != nil:
			v.Add(ptr+"/floor_price", "fixed_price and floor_price are mutually exclusive")
		}
		// In a fixed order, so the same product always gets the same
		// problems in the same order.
		for _, f := range []struct {
			name string
			x    *float64
		}{{"fixed_price", po.FixedPrice}, {"floor_price", po.FloorPrice}, {"min_spend_per_package", po.MinSpendPerPackage}} {
			if f.x != nil && *f.x < 0 {
				v.Add(ptr+"/"+f.name, "%s must not be negative", f.name)
			}
		}
	}
	if mo := p.MetricOptimization; mo != nil {
		mo.validate(&v)
	}
	rc := p.ReportingCapabilities
	if len(rc.AvailableReportingFrequencies) == 0 {
		v.Add("/reporting_capabilities/available_reporting_frequencies", "at least one reporting frequency is required")
	}
	for i, f := range rc.AvailableReportingFrequencies {
		if !oneOf(reportingFrequencies, f) {
			v.Add(jsonfield.Pointer("reporting_capabilities", "available_reporting_frequencies", i), "%q is not a reporting frequency", f)
		}
	}
	for i, m := range rc.AvailableMetrics {
		if !oneOf(availableMetrics, m) {
			v.Add(jsonfield.Pointer("reporting_capabilities", "available_metrics", i), "%q is not an AdCP metric", m)
		}
	}
	if rc.Timezone == "" {
		v.Add("/reporting_capabilities/timezone", "timezone is required")
	}
	if rc.ExpectedDelayMinutes < 0 {
		v.Add("/reporting_capabilities/expected_delay_minutes", "expected_delay_minutes must not be negative")
	}
	if rc.DateRangeSupport != "date_range" && rc.DateRangeSupport != "lifetime_only" {
		v.Add("/reporting_capabilities/date_range_support", "date_range_support must be date_range or lifetime_only")
	}
	for i, t := range p.VideoPlacementTypes {
		if !oneOf(videoPlacementTypes, t) {
			v.Add(jsonfield.Pointer("video_placement_types", i), "%q is not a video placement type", t)
		}
	}
	for i, t := range p.AudioDistributionTypes {
		if !oneOf(audioDistribution, t) {
			v.Add(jsonfield.Pointer("audio_distribution_types", i), "%q is not an audio distribution type", t)
		}
	}
	if p.Exclusivity != "" && !oneOf(exclusivities, p.Exclusivity) {
		v.Add("/exclusivity", "exclusivity must be none, category or exclusive")
	}
	p.validateSignals(&v)
	if len(p.Countries) == 0 {
		v.Add("/countries", "at least one market is required")
	}
	for i, c := range p.Countries {
		if !adcp.IsCountry(c) {
			v.Add(jsonfield.Pointer("countries", i), "%q is not an ISO 3166-1 alpha-2 country code", c)
		}
	}
	for i, w := range p.Availability {
		ptr := jsonfield.Pointer("availability", i)
		if w.Start.IsZero() || w.End.IsZero() {
			v.Add(ptr, "an availability window needs start and end")
		} else if w.End.Before(w.Start) {
			v.Add(ptr+"/end", "end date %s is before start date %s", w.End, w.Start)
		}
	}
	if n := len([]rune(p.InternalRef)); n > 200 {
		v.Add("/internal_ref", "internal_ref is %d characters; the limit is 200", n)
	}
	return v.Err()
}

// MinSpend returns the lowest minimum spend among the product's pricing
// options in currency, and whether the product can be bought in currency
// at all. A pricing option with no minimum has minimum zero.
func (p *Product) MinSpend(currency string) (float64, bool) {
	found := false
	min := 0.0
	for _, po := range p.PricingOptions {
		if po.Currency != currency {
			continue
		}
		m := 0.0
		if po.MinSpendPerPackage != nil {
			m = *po.MinSpendPerPackage
		}
		if !found || m < min {
			min = m
		}
		found = true
	}
	return min, found
}

func (p *Product) String() string { return fmt.Sprintf("product %s", p.ProductID) }

// MetricOptimization is a product's metric-goal capability: the metric
// kinds it optimises for natively and, per kind, the units, view
// durations and target kinds a goal may name.
type MetricOptimization struct {
	SupportedMetrics       []string  `json:"supported_metrics"`
	SupportedReachUnits    []string  `json:"supported_reach_units,omitempty"`
	SupportedViewDurations []float64 `json:"supported_view_durations,omitempty"`
	SupportedTargets       []string  `json:"supported_targets,omitempty"`
}

// The enums of core/product.json metric_optimization and
// enums/reach-unit.json (TestMetricOptimizationEnums pins them to the
// schemas).
var (
	optimizationMetrics = []string{"clicks", "views", "completed_views", "viewed_seconds", "attention_seconds",
		"attention_score", "engagements", "follows", "saves", "profile_visits", "reach"}
	reachUnits          = []string{"individuals", "households", "devices", "accounts", "cookies", "custom"}
	optimizationTargets = []string{"cost_per", "threshold_rate"}
)

func (mo *MetricOptimization) validate(v *jsonfield.Invalid) {
	const at = "/metric_optimization"
	enum := func(field string, values, allowed []string) {
		for i, x := range values {
			if !slices.Contains(allowed, x) {
				v.Add(jsonfield.Pointer("metric_optimization", field, i), "%q is not one of %s", x, strings.Join(allowed, ", "))
			}
		}
	}
	if len(mo.SupportedMetrics) == 0 {
		v.Add(at+"/supported_metrics", "at least one metric is required")
	}
	enum("supported_metrics", mo.SupportedMetrics, optimizationMetrics)
	enum("supported_reach_units", mo.SupportedReachUnits, reachUnits)
	enum("supported_targets", mo.SupportedTargets, optimizationTargets)
	if slices.Contains(mo.SupportedMetrics, "reach") && len(mo.SupportedReachUnits) == 0 {
		v.Add(at+"/supported_reach_units", "supported_reach_units is required when supported_metrics includes reach")
	}
	for i, d := range mo.SupportedViewDurations {
		if !(d > 0) {
			v.Add(jsonfield.Pointer("metric_optimization", "supported_view_durations", i), "a view duration must be more than 0 seconds")
		}
	}
}
