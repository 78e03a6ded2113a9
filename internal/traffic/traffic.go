// Package traffic records realistic buyer traffic for tests: a
// deterministic mix of briefs (budgets, channels, markets, flights, AdCP
// versions, accounts and public requests, some malformed) sent through the
// real get_products pipeline over days of an injected clock, so that the
// ledger holds decisions, with their requests, spread over those days.
// Nothing here reads today's date.
package traffic

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/storefront/storefront/access"
	"github.com/storefront/storefront/demo"
	"github.com/storefront/storefront/products"
	"github.com/storefront/storefront/store"
)

// Clock is a clock a test moves.
type Clock struct{ T time.Time }

// Now reads the clock.
func (c *Clock) Now() time.Time { return c.T }

// Buyer is the principal the recorded traffic comes from: it acts for the
// demo's agency, so it may use that agency's accounts.
var Buyer = products.Principal{ID: "traffic-buyer", Operator: "pinnacle-agency.example"}

// Brands are the brands the traffic's accounts are for.
var Brands = []string{"acme-coffee.example", "bright-bank.example", "toyland.example", "fresh-foods.example", "roadster.example"}

// Brief makes the i-th request of the mix, for a call made at now.
func Brief(r *rand.Rand, now time.Time) string {
	channels := [][]string{nil, {"display"}, {"olv"}, {"ctv"}, {"streaming_audio"}, {"dooh"}, {"display", "olv"}}
	budgets := []float64{100, 800, 1500, 2000, 3000, 4500, 6000, 12000, 30000, 60000}
	versions := []string{"3.2-beta.5", "3.2-beta.5", "3.2-beta.5", "3.1"}
	markets := [][]string{nil, nil, {"US"}, {"GB"}, {"DE"}, {"CA", "US"}}
	topics := []string{"coffee brand launch", "bank savings offer", "toy retailer holidays", "grocery delivery", "new car model"}

	if r.IntN(40) == 0 {
		// A malformed request: the error arm, never replayed.
		return `{"adcp_version":"3.2-beta.5","buying_mode":"brief","filters":{"budget_range":{"max":"lots"}}}`
	}
	var b strings.Builder
	fmt.Fprintf(&b, `{"adcp_version":%q,"buying_mode":"brief","brief":"Campaign for a %s"`, versions[r.IntN(len(versions))], topics[r.IntN(len(topics))])
	if r.IntN(3) > 0 {
		fmt.Fprintf(&b, `,"account":{"brand":{"domain":%q},"operator":%q}`, Brands[r.IntN(len(Brands))], Buyer.Operator)
	}
	var filters []string
	if ch := channels[r.IntN(len(channels))]; ch != nil {
		filters = append(filters, `"channels":["`+strings.Join(ch, `","`)+`"]`)
	}
	if r.IntN(5) > 0 {
		filters = append(filters, fmt.Sprintf(`"budget_range":{"max":%g,"currency":"USD"}`, budgets[r.IntN(len(budgets))]))
	}
	if r.IntN(2) == 0 {
		start := now.AddDate(0, 0, 1+r.IntN(20))
		filters = append(filters, fmt.Sprintf(`"start_date":%q,"end_date":%q`, start.Format(time.DateOnly), start.AddDate(0, 0, 7+r.IntN(20)).Format(time.DateOnly)))
	}
	if len(filters) > 0 {
		b.WriteString(`,"filters":{` + strings.Join(filters, ",") + `}`)
	}
	if m := markets[r.IntN(len(markets))]; m != nil {
		b.WriteString(`,"targeting_overlay":{"geo_countries":["` + strings.Join(m, `","`) + `"]}`)
	}
	b.WriteString("}")
	return b.String()
}

// Record sends perDay briefs a day for days days, starting at clock's
// time, through svc (live: each decision is on the ledger), spreading them
// over each day. It leaves the clock at the end of the last day. Anonymous
// briefs are public requests; the others come from Buyer.
func Record(ctx context.Context, svc *products.Service, clock *Clock, seed uint64, days, perDay int) (int, error) {
	r := rand.New(rand.NewPCG(seed, 17))
	start := clock.T
	n := 0
	for d := range days {
		for i := range perDay {
			clock.T = start.AddDate(0, 0, d).Add(time.Duration(i) * 24 * time.Hour / time.Duration(perDay))
			args := Brief(r, clock.T)
			p := products.Principal{}
			if strings.Contains(args, `"account"`) {
				p = Buyer
			}
			res := svc.GetProducts(ctx, products.Call{Publisher: demo.PublisherID, Principal: p, Args: []byte(args)})
			if res.Trace.Error != "" && strings.Contains(res.Trace.Error, "ledger") {
				return n, fmt.Errorf("recording brief %d: %s", n, res.Trace.Error)
			}
			n++
		}
	}
	clock.T = start.AddDate(0, 0, days)
	return n, nil
}

// Service is the live pipeline over s on clock, wired as the program wires
// it, keeping requests beside the ledger.
func Service(s store.Store, snaps *store.Snapshots, clock *Clock) *products.Service {
	return &products.Service{
		Snapshots:  snaps,
		Ledger:     store.Ledger{Store: s, KeepRequests: true},
		Accounts:   access.Accounts{Store: s},
		Directives: store.Directives{Store: s},
		Tasks:      store.Tasks{Store: s},
		Now:        clock.Now,
	}
}
