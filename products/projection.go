package products

// keptFields are the product fields every projection keeps, whatever
// fields asks for: those core/product.json requires, and the formats (it
// requires format_options or, for 3.0 and 3.1 readers, format_ids). A
// projection without them would not be a valid product.
var keptFields = map[string]bool{
	"product_id": true, "name": true, "description": true, "publisher_properties": true,
	"format_options": true, "format_ids": true, "delivery_type": true,
	"pricing_options": true, "reporting_capabilities": true,
}

// projects reports whether a product answer for fields (every field when
// empty) carries the field name.
func projects(fields []string, name string) bool {
	if len(fields) == 0 || keptFields[name] || oneOf(fields, name) {
		return true
	}
	// core/product.json: signal targeting options or rules require
	// signal_targeting_allowed beside them.
	return name == "signal_targeting_allowed" && (oneOf(fields, "signal_targeting_options") || oneOf(fields, "signal_targeting_rules"))
}
