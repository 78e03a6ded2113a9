package products

import (
	"errors"
	"slices"
	"testing"

	"github.com/storefront/storefront/adcp"
	"github.com/storefront/storefront/jsonfield"
)

func TestProductValidate(t *testing.T) {
	valid := func() Product { return testCatalogue()[1] }
	for _, test := range []struct {
		name string
		edit func(*Product)
		want []string
	}{
		{"valid", func(*Product) {}, nil},
		{"missing id and name", func(p *Product) { p.ProductID, p.Name = "", " " }, []string{"/product_id", "/name"}},
		{"bad publisher domain", func(p *Product) { p.PublisherProperties[0].PublisherDomain = "Pub.Example" }, []string{"/publisher_properties/0/publisher_domain"}},
		{"by_id without ids", func(p *Product) { p.PublisherProperties[0].SelectionType = "by_id" }, []string{"/publisher_properties/0/property_ids"}},
		{"unknown channel", func(p *Product) { p.Channels = []string{"olv", "cable"} }, []string{"/channels/1"}},
		{"custom format kind", func(p *Product) { p.FormatOptions[0].FormatKind = "custom" }, []string{"/format_options/0/format_kind"}},
		{"params not an object", func(p *Product) { p.FormatOptions[0].Params = []byte(`[]`) }, []string{"/format_options/0/params"}},
		{"delivery type", func(p *Product) { p.DeliveryType = "programmatic" }, []string{"/delivery_type"}},
		{"duplicate pricing option id", func(p *Product) { p.PricingOptions[1].PricingOptionID = p.PricingOptions[0].PricingOptionID }, []string{"/pricing_options/1/pricing_option_id"}},
		{"both prices", func(p *Product) { p.PricingOptions[0].FloorPrice = num(1) }, []string{"/pricing_options/0/floor_price"}},
		{"no price", func(p *Product) { p.PricingOptions[0].FixedPrice = nil }, []string{"/pricing_options/0"}},
		// Every negative figure is reported, always in the same order.
		{"negative figures", func(p *Product) {
			p.PricingOptions[0].FixedPrice = num(-1)
			p.PricingOptions[0].MinSpendPerPackage = num(-1)
		}, []string{"/pricing_options/0/fixed_price", "/pricing_options/0/min_spend_per_package"}},
		{"currency", func(p *Product) { p.PricingOptions[0].Currency = "usd" }, []string{"/pricing_options/0/currency"}},
		{"metric", func(p *Product) { p.ReportingCapabilities.AvailableMetrics = []string{"vibes"} }, []string{"/reporting_capabilities/available_metrics/0"}},
		{"no markets", func(p *Product) { p.Countries = nil }, []string{"/countries"}},
		{"availability backwards", func(p *Product) {
			p.Availability = []adcp.DateRange{{Start: adcp.MustDate("2027-01-10"), End: adcp.MustDate("2027-01-01")}}
		}, []string{"/availability/0/end"}},
		{"exclusivity", func(p *Product) { p.Exclusivity = "total" }, []string{"/exclusivity"}},
	} {
		t.Run(test.name, func(t *testing.T) {
			p := valid()
			test.edit(&p)
			var got []string
			if err := p.Validate(); err != nil {
				var inv jsonfield.Invalid
				if !errors.As(err, &inv) {
					t.Fatalf("Validate() error is %T", err)
				}
				for _, f := range inv {
					got = append(got, f.Pointer)
				}
			}
			if !slices.Equal(got, test.want) {
				t.Errorf("Validate() pointers = %q, want %q", got, test.want)
			}
		})
	}
}

func TestMinSpend(t *testing.T) {
	p := testCatalogue()[1]
	for _, test := range []struct {
		currency string
		want     float64
		wantOK   bool
	}{{"USD", 5000, true}, {"EUR", 4000, true}, {"GBP", 0, false}} {
		got, ok := p.MinSpend(test.currency)
		if got != test.want || ok != test.wantOK {
			t.Errorf("MinSpend(%s) = %v, %v, want %v, %v", test.currency, got, ok, test.want, test.wantOK)
		}
	}
	d := testCatalogue()[0]
	if got, ok := d.MinSpend("USD"); got != 0 || !ok {
		t.Errorf("MinSpend with no minimum = %v, %v, want 0, true", got, ok)
	}
}
