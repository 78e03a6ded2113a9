package bulk

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/storefront/storefront/adcp"
	"github.com/storefront/storefront/jsonfield"
	"github.com/storefront/storefront/products"
)

// A column of the CSV format: a product field, how a cell becomes the
// field and back. Lists of words are separated by ";"; objects and lists
// of objects are JSON in their cell.
type column struct {
	name     string
	required bool
	decode   func(cell string, p *products.Product) error
	encode   func(p products.Product) string
}

// ListSeparator separates the items of a list cell.
const ListSeparator = ";"

func list(cell string) []string {
	var out []string
	for _, s := range strings.Split(cell, ListSeparator) {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

func text(name string, required bool, field func(*products.Product) *string) column {
	return column{name: name, required: required,
		decode: func(cell string, p *products.Product) error { *field(p) = cell; return nil },
		encode: func(p products.Product) string { return *field(&p) }}
}

func words(name string, required bool, field func(*products.Product) *[]string) column {
	return column{name: name, required: required,
		decode: func(cell string, p *products.Product) error { *field(p) = list(cell); return nil },
		encode: func(p products.Product) string { return strings.Join(*field(&p), ListSeparator) }}
}

func object[T any](name string, required bool, field func(*products.Product) *T) column {
	return column{name: name, required: required,
		decode: func(cell string, p *products.Product) error {
			if strings.TrimSpace(cell) == "" {
				return nil
			}
			return jsonCell(cell, field(p))
		},
		encode: func(p products.Product) string {
			v := field(&p)
			if s := encode(v); s != "null" && s != "[]" {
				return s
			}
			return ""
		}}
}

// columns are the CSV format's columns, in the order export writes them.
var columns = []column{
	text("product_id", true, func(p *products.Product) *string { return &p.ProductID }),
	text("name", true, func(p *products.Product) *string { return &p.Name }),
	text("description", true, func(p *products.Product) *string { return &p.Description }),
	text("delivery_type", true, func(p *products.Product) *string { return &p.DeliveryType }),
	words("channels", true, func(p *products.Product) *[]string { return &p.Channels }),
	words("countries", true, func(p *products.Product) *[]string { return &p.Countries }),
	object("format_options", true, func(p *products.Product) *[]products.FormatOption { return &p.FormatOptions }),
	object("pricing_options", true, func(p *products.Product) *[]products.PricingOption { return &p.PricingOptions }),
	object("publisher_properties", true, func(p *products.Product) *[]products.PublisherProperty { return &p.PublisherProperties }),
	object("reporting_capabilities", true, func(p *products.Product) *products.ReportingCapabilities { return &p.ReportingCapabilities }),
	object("availability", false, func(p *products.Product) *[]adcp.DateRange { return &p.Availability }),
	words("keywords", false, func(p *products.Product) *[]string { return &p.Keywords }),
	words("video_placement_types", false, func(p *products.Product) *[]string { return &p.VideoPlacementTypes }),
	words("audio_distribution_types", false, func(p *products.Product) *[]string { return &p.AudioDistributionTypes }),
	text("exclusivity", false, func(p *products.Product) *string { return &p.Exclusivity }),
	text("internal_ref", false, func(p *products.Product) *string { return &p.InternalRef }),
}

// Columns names the CSV format's columns, in order.
func Columns() []string {
	out := make([]string, len(columns))
	for i, c := range columns {
		out[i] = c.name
	}
	return out
}

// columnsOf maps a header row onto the columns, refusing unknown and
// repeated names and a missing required column.
func columnsOf(header []string) ([]column, error) {
	byName := map[string]column{}
	for _, c := range columns {
		byName[c.name] = c
	}
	out := make([]column, len(header))
	seen := map[string]bool{}
	for i, h := range header {
		h = strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))
		c, ok := byName[h]
		switch {
		case !ok:
			return nil, fmt.Errorf("column %d of the header, %q, is not a product field (the columns are %s)", i+1, h, strings.Join(Columns(), ", "))
		case seen[h]:
			return nil, fmt.Errorf("column %q is named twice in the header", h)
		}
		seen[h] = true
		out[i] = c
	}
	var missing []string
	for _, c := range columns {
		if c.required && !seen[c.name] {
			missing = append(missing, c.name)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("the header lacks the column(s) %s", strings.Join(missing, ", "))
	}
	return out, nil
}

// decodeRecord fills p from a record, returning the cells that cannot be
// read, each pointing at its field.
func (r *Reader) decodeRecord(rec []string, p *products.Product) jsonfield.Invalid {
	var bad jsonfield.Invalid
	for i, cell := range rec {
		c := r.cols[i]
		if err := c.decode(cell, p); err != nil {
			bad = append(bad, invalidOf(err, "/"+c.name)...)
		}
	}
	return bad
}

// ProductRow is a product as a CSV record in Columns order.
func ProductRow(p products.Product) []string {
	out := make([]string, len(columns))
	for i, c := range columns {
		out[i] = c.encode(p)
	}
	return out
}

// Cell renders a list of words as a CSV cell.
func Cell(items []string) string { return strings.Join(items, ListSeparator) }

// Bool renders a flag as a CSV cell.
func Bool(b bool) string { return strconv.FormatBool(b) }
