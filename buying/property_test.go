package buying_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"

	"pgregory.net/rapid"

	"github.com/storefront/storefront/adcp"
	"github.com/storefront/storefront/demo"
	"github.com/storefront/storefront/merch"
	"github.com/storefront/storefront/products"
	"github.com/storefront/storefront/vocab"
)

// genRulebook draws a rulebook of decline rules over every predicate a
// package's terms touch: budget floors, channels, sold-out windows, lead
// times, markets, format kinds, industries, brand domains, currencies and
// delivery types. It is stored as drawn: evaluation must cope with any.
func genRulebook(t *rapid.T) merch.Rulebook {
	rb := demo.Rulebook()
	rb.Rules = nil
	rb.Orders = nil
	n := rapid.IntRange(1, 6).Draw(t, "rules")
	for i := range n {
		var c merch.Condition
		var slug vocab.Slug
		switch rapid.IntRange(0, 9).Draw(t, fmt.Sprint("kind", i)) {
		case 0:
			per := map[string]float64{}
			for _, ch := range []string{"display", "olv", "ctv", "streaming_audio"} {
				if rapid.Bool().Draw(t, fmt.Sprint("per", i, ch)) {
					per[ch] = float64(rapid.IntRange(0, 60000).Draw(t, fmt.Sprint("min", i, ch)))
				}
			}
			c.BudgetBelow = &merch.BudgetFloor{Currency: "USD", Minimum: float64(rapid.IntRange(0, 40000).Draw(t, fmt.Sprint("floor", i))), PerChannel: per}
			slug = vocab.BudgetBelowMinimum
		case 1:
			c.ChannelsOffered = rapid.SliceOfNDistinct(rapid.SampledFrom([]string{"display", "olv", "ctv", "streaming_audio", "dooh"}), 1, 3, rapid.ID[string]).Draw(t, fmt.Sprint("channels", i))
			slug = vocab.ChannelNotOffered
		case 2:
			s := adcp.MustDate("2026-11-29").AddDays(rapid.IntRange(0, 90).Draw(t, fmt.Sprint("soldfrom", i)))
			c.SoldOut = []merch.Window{{Start: s, End: s.AddDays(rapid.IntRange(0, 20).Draw(t, fmt.Sprint("soldlen", i)))}}
			slug = vocab.FlightUnavailable
		case 3:
			d := rapid.IntRange(0, 10).Draw(t, fmt.Sprint("lead", i))
			c.LeadTimeDays = &d
			slug = vocab.LeadTimeTooShort
		case 4:
			c.CountriesServed = rapid.SliceOfNDistinct(rapid.SampledFrom([]string{"US", "CA", "GB", "FR"}), 1, 2, rapid.ID[string]).Draw(t, fmt.Sprint("countries", i))
			slug = vocab.GeoNotServed
		case 5:
			c.FormatKindsOffered = rapid.SliceOfNDistinct(rapid.SampledFrom([]string{"image", "video_hosted", "video_vast", "audio_hosted", "html5"}), 1, 3, rapid.ID[string]).Draw(t, fmt.Sprint("kinds", i))
			slug = vocab.FormatNotOffered
		case 6:
			c.Industries = []string{rapid.SampledFrom([]string{"gambling_betting", "cannabis", "automotive"}).Draw(t, fmt.Sprint("industry", i))}
			slug = vocab.CategoryNotAccepted
		case 7:
			c.BrandDomains = []string{rapid.SampledFrom([]string{"acme.example", "bet.example"}).Draw(t, fmt.Sprint("domain", i))}
			slug = vocab.CommerciallyDeclined
		case 8:
			c.CurrenciesAccepted = []string{rapid.SampledFrom([]string{"USD", "GBP", "EUR"}).Draw(t, fmt.Sprint("currency", i))}
			slug = vocab.CommerciallyDeclined
		case 9:
			c.DeliveryTypesOffered = []string{rapid.SampledFrom(adcp.DeliveryTypes()).Draw(t, fmt.Sprint("delivery", i))}
			slug = vocab.CommerciallyDeclined
		}
		if rapid.Bool().Draw(t, fmt.Sprint("scoped", i)) {
			c.Channels = []string{rapid.SampledFrom([]string{"display", "olv", "ctv"}).Draw(t, fmt.Sprint("scope", i))}
		}
		rb.Rules = append(rb.Rules, merch.Rule{ID: fmt.Sprintf("R-%d", i), Name: fmt.Sprintf("rule %d", i), When: c,
			Decline: merch.Action{Slug: slug, Disclosure: vocab.Exact}})
	}
	return rb
}

// terms is a package a buyer might want: a product and pricing option of
// the demo catalogue, a budget, a flight, markets, a format and a brand.
type terms struct {
	product    products.Product
	option     products.PricingOption
	budget     int
	start, end adcp.Date
	countries  []string
	formatKind string
	brand      string
	industries []string
}

func genTerms(t *rapid.T) terms {
	p := rapid.SampledFrom(demo.Products()).Draw(t, "product")
	tm := terms{product: p, option: rapid.SampledFrom(p.PricingOptions).Draw(t, "option")}
	tm.budget = rapid.IntRange(100, 200000).Draw(t, "budget")
	tm.start = adcp.MustDate("2026-11-29").AddDays(rapid.IntRange(0, 60).Draw(t, "start"))
	tm.end = tm.start.AddDays(rapid.IntRange(0, 90).Draw(t, "length"))
	tm.countries = rapid.SliceOfDistinct(rapid.SampledFrom([]string{"US", "CA", "GB", "FR"}), rapid.ID[string]).Draw(t, "countries")
	if rapid.Bool().Draw(t, "pick format") {
		tm.formatKind = rapid.SampledFrom(p.FormatKinds()).Draw(t, "format")
	}
	tm.brand = rapid.SampledFrom([]string{"acme.example", "bet.example", "plain.example"}).Draw(t, "brand")
	tm.industries = rapid.SliceOfDistinct(rapid.SampledFrom([]string{"gambling_betting.casino", "automotive", "food_beverage"}), rapid.ID[string]).Draw(t, "industries")
	return tm
}

// brief is the get_products request for the terms.
func (tm terms) brief() []byte {
	filters := obj{"channels": tm.product.Channels, "delivery_type": tm.product.DeliveryType,
		"budget_range": obj{"max": tm.budget, "currency": tm.option.Currency},
		"start_date":   tm.start.String(), "end_date": tm.end.String()}
	if tm.formatKind != "" {
		filters["format_kinds"] = []string{tm.formatKind}
	}
	req := obj{"adcp_version": "3.2-beta.5", "buying_mode": "brief", "brief": "a campaign", "account": account(tm.brand),
		"brand": obj{"domain": tm.brand, "industries": tm.industries}, "filters": filters, "pagination": obj{"max_results": 100}}
	if len(tm.countries) > 0 {
		req["targeting_overlay"] = obj{"geo_countries": tm.countries}
	}
	b, _ := json.Marshal(req)
	return b
}

// buy is the create_media_buy request for the terms, with budget.
func (tm terms) buy(budget int) obj {
	pkg := obj{"product_id": tm.product.ProductID, "pricing_option_id": tm.option.PricingOptionID, "budget": budget}
	if len(tm.countries) > 0 {
		pkg["targeting_overlay"] = obj{"geo_countries": tm.countries}
	}
	if tm.formatKind != "" {
		pkg["format_kind"] = tm.formatKind
	}
	return obj{"adcp_version": "3.2-beta.5", "idempotency_key": key(), "account": account(tm.brand),
		"brand":      obj{"domain": tm.brand, "industries": tm.industries},
		"start_time": tm.start.String() + "T00:00:00Z", "end_time": tm.end.AddDays(1).String() + "T00:00:00Z",
		"packages": []obj{pkg}}
}

// offered reports whether get_products completed with the terms' product.
func offered(t *rapid.T, e *env, tm terms) bool {
	res := e.products.GetProducts(context.Background(), products.Call{Publisher: demo.PublisherID, Principal: buyer, Args: tm.brief()})
	var got struct {
		Status   string `json:"status"`
		Products []struct {
			ProductID string `json:"product_id"`
		} `json:"products"`
	}
	if err := json.Unmarshal(res.Payload, &got); err != nil {
		t.Fatalf("get_products answer: %v", err)
	}
	for _, p := range got.Products {
		if got.Status == "completed" && p.ProductID == tm.product.ProductID {
			return true
		}
	}
	return false
}

// givenChecks is -rapid.checks as given on the command line, if it was.
var givenChecks = sync.OnceValue(func() string {
	if f := flag.Lookup("rapid.checks"); f != nil && f.Value.String() != f.DefValue {
		return f.Value.String()
	}
	return ""
})

// setChecks sets how many cases rapid runs: STOREFRONT_BUY_CASES, else
// -rapid.checks, else n.
func setChecks(t *testing.T, n int) {
	v := os.Getenv("STOREFRONT_BUY_CASES")
	if v == "" {
		v = givenChecks()
	}
	if v == "" {
		v = strconv.Itoa(n)
	}
	if err := flag.Set("rapid.checks", v); err != nil {
		t.Fatalf("rapid.checks=%q: %v", v, err)
	}
}

// draw sets up one case: a fresh demo publisher with a generated
// rulebook, and generated terms, and whether get_products offered them.
func draw(t *rapid.T, outer *testing.T) (*env, terms, bool) {
	e := newEnv(outer)
	if _, err := e.store.SaveRulebook(context.Background(), demo.PublisherID, genRulebook(t), 1, "test", "generated"); err != nil {
		t.Fatal(err)
	}
	tm := genTerms(t)
	return e, tm, offered(t, e, tm)
}

// TestSameTermsAreNeverRefused is the promise that ties the two tasks
// together: for any rulebook and any terms, when get_products completes a
// brief with a product, buying that product on the same terms is never
// refused — by a rule or otherwise. STOREFRONT_BUY_CASES sets the number of
// cases.
func TestSameTermsAreNeverRefused(t *testing.T) {
	setChecks(t, 200)
	offeredCases := 0
	rapid.Check(t, func(rt *rapid.T) {
		e, tm, ok := draw(rt, t)
		if !ok {
			return
		}
		offeredCases++
		res := e.svc.Create(context.Background(), e.call(buyer, tm.buy(tm.budget)))
		if res.Failed {
			rt.Fatalf("get_products offered %s on these terms, but buying them was refused:\nbrief %s\nbuy %s", tm.product.ProductID, tm.brief(), res.Payload)
		}
	})
	if offeredCases == 0 {
		t.Error("no generated brief was ever offered its product: the property was never exercised")
	}
	t.Logf("%d offered cases bought", offeredCases)
}

// TestSameTermsControl runs the same generator but buys at a tenth of the
// budget the brief named: the property test's check must be able to see a
// refusal, or it would pass for nothing.
func TestSameTermsControl(t *testing.T) {
	setChecks(t, 300)
	refused := false
	rapid.Check(t, func(rt *rapid.T) {
		e, tm, ok := draw(rt, t)
		if refused || !ok {
			return
		}
		if res := e.svc.Create(context.Background(), e.call(buyer, tm.buy(tm.budget/10+1))); res.Failed {
			refused = true
		}
	})
	if !refused {
		t.Error("buying at a tenth of the offered budget was never refused: the property test could not see a refusal")
	}
}
