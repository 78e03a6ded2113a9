package mediabuy

import (
	"fmt"
	"time"

	"github.com/storefront/storefront/adcp"
	"github.com/storefront/storefront/outcome"
	"github.com/storefront/storefront/products"
)

// Product finds a product in a catalogue.
func Product(c *products.Catalogue, id string) (products.Product, bool) {
	for _, p := range c.Products() {
		if p.ProductID == id {
			return p, true
		}
	}
	return products.Product{}, false
}

// Resolve checks requested packages against the catalogue and returns the
// packages they become, with ids assigned by newID, and the buy's currency.
// It refuses, naming the field, a product or pricing option the catalogue
// does not have, a budget under the option's minimum spend, a format the
// product does not accept and packages in more than one currency.
func Resolve(c *products.Catalogue, req []PackageRequest, newID func(int) string) ([]Package, string, *Refusal) {
	out := make([]Package, 0, len(req))
	currency := ""
	for i, pr := range req {
		path := fmt.Sprintf("packages[%d]", i)
		prod, ok := Product(c, pr.ProductID)
		if !ok {
			return nil, "", refuse(adcp.ProductNotFound, path+".product_id", "product %s is not offered by this seller: rediscover with get_products", pr.ProductID)
		}
		var opt *products.PricingOption
		for j := range prod.PricingOptions {
			if prod.PricingOptions[j].PricingOptionID == pr.PricingOptionID {
				opt = &prod.PricingOptions[j]
			}
		}
		if opt == nil {
			return nil, "", refuse(adcp.InvalidRequest, path+".pricing_option_id", "product %s has no pricing option %s", pr.ProductID, pr.PricingOptionID)
		}
		if currency == "" {
			currency = opt.Currency
		} else if opt.Currency != currency {
			return nil, "", refuse(adcp.ValidationError, path+".pricing_option_id", "every package of a media buy must be in one currency: this option is in %s, an earlier one in %s", opt.Currency, currency)
		}
		budget := Round(*pr.Budget)
		if opt.MinSpendPerPackage != nil && budget < *opt.MinSpendPerPackage {
			r := refuse(adcp.BudgetTooLow, path+".budget", "this pricing option needs at least %s %s per package", money(*opt.MinSpendPerPackage), opt.Currency)
			r.Details = &outcome.Details{MinimumSpend: &outcome.MinimumSpend{MinimumBudget: *opt.MinSpendPerPackage, Currency: opt.Currency}}
			return nil, "", r
		}
		p := Package{
			ID: newID(i), ProductID: prod.ProductID, PricingOptionID: opt.PricingOptionID, PricingModel: opt.PricingModel,
			Budget: budget, Pacing: pr.Pacing, Start: pr.Start, End: pr.End, Held: pr.Paused,
			FormatOptionRefs: pr.FormatOptionRefs, FormatKind: pr.FormatKind, Params: pr.Params, FormatIDs: pr.FormatIDs,
			Countries: pr.Countries, Assignments: pr.Assignments, OptimizationGoals: pr.OptimizationGoals, Context: pr.Context,
		}
		if pr.Impressions != nil {
			v := *pr.Impressions
			p.Impressions = &v
		}
		switch {
		case opt.FixedPrice != nil:
			// A fixed price is not auctioned: a (deprecated) bid_price
			// sent with it changes nothing, and the fixed price is the
			// rate. It is kept as the buyer sent it.
			if pr.BidPrice != nil {
				v := *pr.BidPrice
				p.BidPrice = &v
			}
			p.Rate = *opt.FixedPrice
		case pr.BidPrice != nil:
			if opt.FloorPrice != nil && *pr.BidPrice < *opt.FloorPrice {
				return nil, "", refuse(adcp.ValidationError, path+".bid_price", "bid_price is below the floor of %s %s", money(*opt.FloorPrice), opt.Currency)
			}
			v := *pr.BidPrice
			p.BidPrice, p.Rate = &v, v
		case opt.FloorPrice != nil:
			p.Rate = *opt.FloorPrice
		}
		kinds, r := formatKinds(&prod, pr, path)
		if r != nil {
			return nil, "", r
		}
		p.FormatKinds = kinds
		out = append(out, p)
	}
	return out, currency, nil
}

// formatKinds resolves a package's format selection against the product's
// format options; no selection means the product's formats, unnarrowed.
func formatKinds(prod *products.Product, pr PackageRequest, path string) ([]string, *Refusal) {
	var kinds []string
	add := func(k string) {
		if !contains(kinds, k) {
			kinds = append(kinds, k)
		}
	}
	switch {
	case pr.FormatOptionRefs != nil:
		var refs []struct {
			Scope          string `json:"scope"`
			FormatOptionID string `json:"format_option_id"`
		}
		_ = read(pr.FormatOptionRefs, &refs)
		for j, ref := range refs {
			found := false
			for _, f := range prod.FormatOptions {
				if ref.Scope == "product" && f.FormatOptionID != "" && f.FormatOptionID == ref.FormatOptionID {
					add(f.FormatKind)
					found = true
				}
			}
			if !found {
				return nil, refuse(adcp.ValidationError, fmt.Sprintf("%s.format_option_refs[%d]", path, j), "product %s has no %s-scoped format option %s", prod.ProductID, ref.Scope, ref.FormatOptionID)
			}
		}
	case pr.FormatKind != "":
		if !contains(prod.FormatKinds(), pr.FormatKind) {
			return nil, refuse(adcp.ValidationError, path+".format_kind", "product %s does not accept format kind %s", prod.ProductID, pr.FormatKind)
		}
		add(pr.FormatKind)
	case pr.FormatIDs != nil:
		var ids []struct {
			ID string `json:"id"`
		}
		_ = read(pr.FormatIDs, &ids)
		for j, id := range ids {
			found := false
			for _, f := range prod.FormatOptions {
				one := products.Product{FormatOptions: []products.FormatOption{f}}
				for _, legacy := range one.LegacyFormatIDs() {
					if legacy.ID == id.ID {
						found = true
					}
				}
				if found || (f.FormatOptionID != "" && f.FormatOptionID == id.ID) {
					found = true
					add(f.FormatKind)
					break
				}
			}
			if !found {
				return nil, refuse(adcp.ValidationError, fmt.Sprintf("%s.format_ids[%d]", path, j), "product %s does not accept format %s", prod.ProductID, id.ID)
			}
		}
	}
	return kinds, nil
}

// Terms is the get_products request a buyer would send for a package's
// terms: its product's channels and delivery type, its budget in the buy's
// currency, its flight as UTC dates, its markets, the format kinds it
// selected, and the buy's brand. The rulebook judges a package on the brief
// products.NormaliseBrief builds from this request, which is how
// get_products judges the same terms.
func Terms(b *Buy, p *Package, prod *products.Product) *products.Request {
	start, end := b.Flight(p)
	budget := p.Budget
	brand := &products.BrandRef{Domain: b.BrandDomain, BrandID: b.BrandID, Industries: append([]string(nil), b.Industries...)}
	if b.AdvertiserIndustry != "" && !contains(brand.Industries, b.AdvertiserIndustry) {
		brand.Industries = append(brand.Industries, b.AdvertiserIndustry)
	}
	return &products.Request{
		BuyingMode: "brief",
		Brand:      brand,
		Filters: products.Filters{
			Channels:     append([]string(nil), prod.Channels...),
			FormatKinds:  append([]string(nil), p.FormatKinds...),
			DeliveryType: prod.DeliveryType,
			Budget:       &products.BudgetRange{Max: &budget, Currency: b.Currency},
			StartDate:    adcp.DateOf(start),
			EndDate:      LastDay(end),
		},
		GeoCountries: append([]string(nil), p.Countries...),
	}
}

// LastDay is the UTC date of the last instant before an exclusive end: a
// flight ending at midnight ends the day before.
func LastDay(end time.Time) adcp.Date {
	return adcp.DateOf(end.Add(-time.Nanosecond))
}
