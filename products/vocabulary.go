package products

// FieldValues are the values the catalogue accepts for the product fields
// that take one of a set, from the lists Validate checks against: what a
// product form offers.
type FieldValues struct {
	ReportingFrequencies   []string `json:"reporting_frequencies"`
	Metrics                []string `json:"metrics"`
	VideoPlacementTypes    []string `json:"video_placement_types"`
	AudioDistributionTypes []string `json:"audio_distribution_types"`
	Exclusivities          []string `json:"exclusivities"`
	SelectionTypes         []string `json:"selection_types"`
	DateRangeSupport       []string `json:"date_range_support"`
	PricingModels          []string `json:"pricing_models"`
}

// Values returns the accepted values, as copies.
func Values() FieldValues {
	c := func(s []string) []string { return append([]string(nil), s...) }
	return FieldValues{
		ReportingFrequencies: c(reportingFrequencies), Metrics: c(availableMetrics),
		VideoPlacementTypes: c(videoPlacementTypes), AudioDistributionTypes: c(audioDistribution),
		Exclusivities: c(exclusivities), SelectionTypes: []string{"all", "by_id", "by_tag"},
		DateRangeSupport: []string{"date_range", "lifetime_only"}, PricingModels: []string{"cpm"},
	}
}
