package compliance_test

import (
	"fmt"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/storefront/storefront/internal/kittest"
	"github.com/storefront/storefront/internal/spectest"
	"github.com/storefront/storefront/internal/testenv"
	"github.com/storefront/storefront/store/pgstore/pgtest"
)

// TestSeededBuysPerSandbox: two sandbox principals of one publisher seed a
// media buy under the same fixture id (as two runs of one storyboard do)
// and each gets its own, as with seeded products: neither is refused or
// told the other's exists, each reads, changes and delivers only its own
// under the id it chose, and reseeding replaces only the caller's. On
// both stores.
func TestSeededBuysPerSandbox(t *testing.T) {
	for _, tc := range pgtest.Stores {
		t.Run(tc.Name, func(t *testing.T) {
			env := testenv.Start(t, append([]string{"--sandbox"}, tc.Args(t)...)...)
			a := kittest.Connect(t, env.BaseURL, kittest.Kit)
			b := kittest.Connect(t, env.BaseURL, kittest.OtherKit)
			seed := func(cs *mcp.ClientSession, status string, budget int) map[string]any {
				kittest.MustSucceed(t, kittest.Control(t, cs, "seed_product", `{"product_id":"scope_product","fixture":{"channels":["display"],"format_options":[{"format_option_id":"display_300x250","format_kind":"image","params":{"width":300,"height":250}}]}}`))
				kittest.MustSucceed(t, kittest.Control(t, cs, "seed_pricing_option", `{"product_id":"scope_product","pricing_option_id":"scope_pricing","fixture":{"pricing_model":"cpm","currency":"USD","fixed_price":10}}`))
				return kittest.Control(t, cs, "seed_media_buy", fmt.Sprintf(`{"media_buy_id":"shared_buy","fixture":{"status":%q,"currency":"USD","start_time":"2026-01-01T00:00:00Z","end_time":"2099-12-31T00:00:00Z",`+
					`"packages":[{"package_id":"shared_pkg","product_id":"scope_product","pricing_option_id":"scope_pricing","budget":%d,"creative_assignments":["c1"]}]}}`, status, budget))
			}
			// read returns the caller's buy shared_buy: its status and budget.
			read := func(cs *mcp.ClientSession) (string, float64) {
				t.Helper()
				_, got := kittest.Call(t, cs, "get_media_buys", `{"adcp_version":"3.2-beta.5","account":`+acmeSandbox+`,"media_buy_ids":["shared_buy"]}`)
				spectest.Validate(t, "media-buy/get-media-buys-response.json", got)
				buys, _ := kittest.Decode(t, got)["media_buys"].([]any)
				if len(buys) != 1 {
					t.Fatalf("get_media_buys(shared_buy) = %s, want the caller's one buy", got)
				}
				m := buys[0].(map[string]any)
				if m["media_buy_id"] != "shared_buy" {
					t.Errorf("media_buy_id = %v, want the fixture's id shared_buy", m["media_buy_id"])
				}
				return m["status"].(string), m["packages"].([]any)[0].(map[string]any)["budget"].(float64)
			}
			kittest.MustSucceed(t, seed(a, "active", 1000))
			kittest.MustSucceed(t, seed(b, "active", 2500))
			if s, budget := read(a); s != "active" || budget != 1000 {
				t.Errorf("first principal's buy: %s, %v; want active, 1000", s, budget)
			}
			if s, budget := read(b); s != "active" || budget != 2500 {
				t.Errorf("second principal's buy: %s, %v; want active, 2500", s, budget)
			}
			// Reseeding (the storyboard run again) replaces the caller's only.
			kittest.MustSucceed(t, seed(a, "active", 1500))
			if _, budget := read(a); budget != 1500 {
				t.Errorf("reseeded budget = %v, want 1500", budget)
			}
			if _, budget := read(b); budget != 2500 {
				t.Errorf("the other principal's budget after a reseed = %v, want 2500", budget)
			}
			// A change through the media-buy tasks touches the caller's buy.
			_, paused := kittest.Call(t, b, "update_media_buy", `{"adcp_version":"3.2-beta.5","idempotency_key":"scope-pause-00000001","account":`+acmeSandbox+`,"media_buy_id":"shared_buy","paused":true}`)
			if m := kittest.Decode(t, paused); m["media_buy_id"] != "shared_buy" || m["adcp_error"] != nil {
				t.Errorf("update_media_buy(shared_buy) = %s", paused)
			}
			if s, _ := read(b); s != "paused" {
				t.Errorf("the updated buy is %s, want paused", s)
			}
			if s, _ := read(a); s != "active" {
				t.Errorf("the other principal's buy is %s after the update, want active", s)
			}
			// Delivery simulated for one is reported to it alone.
			kittest.MustSucceed(t, kittest.Control(t, a, "simulate_delivery", `{"media_buy_id":"shared_buy","delivery_date":"2026-11-28","impressions":100,"reported_spend":{"amount":1,"currency":"USD"}}`))
			impressions := func(cs *mcp.ClientSession) float64 {
				_, got := kittest.Call(t, cs, "get_media_buy_delivery", `{"adcp_version":"3.2-beta.5","account":`+acmeSandbox+`,"media_buy_ids":["shared_buy"]}`)
				spectest.Validate(t, "media-buy/get-media-buy-delivery-response.json", got)
				d := kittest.Decode(t, got)["media_buy_deliveries"].([]any)[0].(map[string]any)
				if d["media_buy_id"] != "shared_buy" {
					t.Errorf("delivery media_buy_id = %v, want shared_buy", d["media_buy_id"])
				}
				n, _ := d["totals"].(map[string]any)["impressions"].(float64)
				return n
			}
			if n := impressions(a); n != 100 {
				t.Errorf("simulating principal's impressions = %v, want 100", n)
			}
			if n := impressions(b); n != 0 {
				t.Errorf("the other principal's impressions = %v, want 0", n)
			}
		})
	}
}
