package products

import (
	"github.com/storefront/storefront/merch"
	"github.com/storefront/storefront/vocab"
)

// CheapestFit is the smallest budget in currency at which the catalogue
// has a product for f and geo, whatever budget they name, and false when no
// product passing them can be bought in currency at all.
func (c *Catalogue) CheapestFit(f Filters, geo []string, currency string) (float64, bool) {
	f.Budget = nil
	pass := c.passing(c.filters(f, geo, nil), nil, nil)
	l := c.index.budget[currency]
	if l == nil {
		return 0, false
	}
	for _, s := range l.byMin {
		if pass.has(s.pos) {
			return s.min, true
		}
	}
	return 0, false
}

// DeclineGrounds are d's grounds with each budget minimum raised to the
// smallest budget the catalogue serves the request at, when that is more:
// a rule's own minimum below every product's minimum spend is a figure at
// which nothing would be served. Minimum spends are public terms of the
// products, and the level still words the figure. A media buy's refusal
// composes from them too.
func DeclineGrounds(snap *Snapshot, req *Request, d merch.Decision) []vocab.Grounds {
	gs := d.Grounds()
	for i := range gs {
		f := &gs[i].Facts
		if gs[i].Slug != vocab.BudgetBelowMinimum || f.Minimum <= 0 || f.Currency == "" {
			continue
		}
		if min, ok := snap.Catalogue.CheapestFit(req.Filters, req.GeoCountries, f.Currency); ok && min > f.Minimum {
			f.Minimum = min
		}
	}
	return gs
}
