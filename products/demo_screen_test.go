package products_test

import (
	"testing"

	"github.com/storefront/storefront/demo"
	"github.com/storefront/storefront/products"
)

// The demo's notes name "Acme Retail Group" and "North America". Those
// names stay confidential, but their words alone must not silence public
// text: the compliance kit's brand "Acme Outdoor" and every product's
// reporting timezone "America/New_York".
func TestDemoScreenSparesPublicWords(t *testing.T) {
	rb := demo.Rulebook()
	snap := products.NewSnapshot(demo.Publisher(), demo.Products(), 1, &rb, 1)
	for _, public := range []string{"Acme Outdoor trail shoes", "Reported in America/New_York time.", "Outdoor running audiences"} {
		if _, ok := snap.Screen.Line(public, 200); !ok {
			t.Errorf("the demo screen silences %q", public)
		}
	}
	for _, secret := range []string{"Booked for Acme Retail Group", "Sold across North America by the partner"} {
		if _, ok := snap.Screen.Line(secret, 200); ok {
			t.Errorf("the demo screen lets %q through", secret)
		}
	}
}
