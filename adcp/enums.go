package adcp

import (
	"slices"

	"github.com/storefront/storefront/field"
)

var channels = []string{
	"display", "olv", "social", "search", "ctv", "linear_tv", "radio",
	"streaming_audio", "podcast", "dooh", "ooh", "print", "cinema", "email",
	"gaming", "retail_media", "influencer", "affiliate", "product_placement",
	"sponsored_intelligence",
}

var formatKinds = []string{
	"image", "html5", "display_tag", "image_carousel", "video_hosted",
	"video_vast", "audio_hosted", "audio_daast", "sponsored_placement",
	"native_in_feed", "responsive_creative", "agent_placement", "custom",
}

var deliveryTypes = []string{"guaranteed", "non_guaranteed"}

var buyingModes = []string{"brief", "wholesale", "refine"}

var productFields = []string{
	"product_id", "name", "description", "publisher_properties", "channels",
	"video_placement_types", "audio_distribution_types",
	"sponsored_placement_types", "social_placement_surfaces", "format_ids",
	"format_options", "placements", "delivery_type", "exclusivity",
	"pricing_options", "forecast", "outcome_measurement",
	"delivery_measurement", "reporting_capabilities", "creative_policy",
	"catalog_types", "metric_optimization", "conversion_tracking",
	"data_provider_signals", "included_signals", "signal_targeting_allowed",
	"signal_targeting_options", "signal_targeting_rules",
	"demographic_targeting", "overlay_support", "targeting_resolution",
	"audience_evidence", "audience_evidence_selections",
	"max_optimization_goals", "catalog_match", "collections",
	"collection_targeting_allowed", "installments", "brief_relevance",
	"is_custom", "expires_at", "product_card", "product_card_detailed",
	"enforced_policies", "trusted_match",
}

// IsChannel reports whether s is an AdCP channel.
func IsChannel(s string) bool { return slices.Contains(channels, s) }

// IsFormatKind reports whether s is a canonical format kind.
func IsFormatKind(s string) bool { return slices.Contains(formatKinds, s) }

// IsDeliveryType reports whether s is an AdCP delivery type.
func IsDeliveryType(s string) bool { return slices.Contains(deliveryTypes, s) }

// IsCurrency reports whether s has the ISO 4217 shape AdCP requires,
// ^[A-Z]{3}$.
func IsCurrency(s string) bool { return capitals(s, 3) }

// IsCountry reports whether s has the ISO 3166-1 alpha-2 shape AdCP
// requires, ^[A-Z]{2}$.
func IsCountry(s string) bool { return capitals(s, 2) }

// capitals reports whether s is n ASCII capital letters: a byte loop, for
// a check every request's filters make several times.
func capitals(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for i := 0; i < n; i++ {
		if s[i] < 'A' || s[i] > 'Z' {
			return false
		}
	}
	return true
}

// IsDomain reports whether s is a lower-case domain name as AdCP writes
// them: a hostname, as field.Hostname checks one.
func IsDomain(s string) bool { return field.Hostname(s) == nil }

// Channels returns the AdCP channels enumeration (enums/channels.json).
func Channels() []string { return slices.Clone(channels) }

// FormatKinds returns the canonical format kind enumeration
// (core/canonical-format-kind.json).
func FormatKinds() []string { return slices.Clone(formatKinds) }

// DeliveryTypes returns the delivery type enumeration
// (enums/delivery-type.json).
func DeliveryTypes() []string { return slices.Clone(deliveryTypes) }

// BuyingModes returns the get_products buying modes.
func BuyingModes() []string { return slices.Clone(buyingModes) }

// ProductFields returns the names a get_products request may list in
// `fields`.
func ProductFields() []string { return slices.Clone(productFields) }

// IsProductField reports whether s is a name a get_products request may
// list in `fields`.
func IsProductField(s string) bool { return slices.Contains(productFields, s) }
