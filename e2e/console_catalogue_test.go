package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/storefront/storefront/internal/testenv"
)

// signIn opens the console and signs in with the demo admin token.
func signIn(t *testing.T, sf *Storefront) (*browser, string) {
	t.Helper()
	token := adminToken(t, sf)
	b := openBrowser(t)
	b.do(chromedp.Navigate(sf.BaseURL+"/console/"), chromedp.WaitVisible(chromedp.ID("token")))
	b.do(chromedp.SendKeys(chromedp.ID("token"), token), chromedp.Click(chromedp.ID("signin-button")))
	b.waitFor("the rulebook editor", `document.getElementById("rule-0") !== null`)
	return b, token
}

// product reads one product through the admin API.
func (a adminAPI) product(id string) (map[string]any, string) {
	a.t.Helper()
	status, h, body := a.do("GET", "/products/"+id, "")
	if status != 200 {
		a.t.Fatalf("GET /products/%s = %d %s", id, status, body)
	}
	var p map[string]any
	if err := json.Unmarshal(body, &p); err != nil {
		a.t.Fatal(err)
	}
	return p, h.Get("ETag")
}

// TestConsoleProducts is a sales team's catalogue work in the browser:
// find a product, edit it, see the API's error next to its field, save it
// as a catalogue version, see the change on the History page and roll it
// back, have a stale save refused, create a product and delete it.
func TestConsoleProducts(t *testing.T) {
	sf := Start(t, nil)
	b, token := signIn(t, sf)
	api := adminAPI{t, sf.BaseURL, token}

	b.do(chromedp.Navigate(sf.BaseURL + "/console/products.html"))
	b.waitFor("the product list", `document.body.dataset.loaded === "true"`)
	if n := evalJS[int](b, `document.querySelectorAll("#product-list tbody tr").length`); n < 10 {
		t.Fatalf("the list shows %d products", n)
	}
	// Search and filter.
	b.typeInto("#q", "homepage")
	b.do(chromedp.Click(chromedp.ID("apply")))
	b.waitFor("the search", `document.querySelectorAll("#product-list tbody tr").length === 1`)
	b.do(chromedp.Click(chromedp.ID("reset")))
	b.do(chromedp.SetValue(chromedp.ID("f-channel"), "ctv"), chromedp.Click(chromedp.ID("apply")))
	b.waitFor("the channel filter", `[...document.querySelectorAll("#product-list tbody tr")].every(r => r.children[1].textContent.includes("ctv"))`)
	b.do(chromedp.Click(chromedp.ID("reset")))
	b.waitFor("the whole list again", `document.querySelectorAll("#product-list tbody tr").length > 10`)

	// Open the first product; its internal reference is in a box marked
	// internal.
	const id = "nw_display_ros_mrec"
	b.do(chromedp.Click(chromedp.CSS(`#product-list tr[data-id="` + id + `"] button.open-product`)))
	b.waitFor("the editor", `document.querySelector('input[name="/name"]')?.value === "Run-of-Site MREC"`)
	if got := b.text("fieldset.internal"); !strings.Contains(got, "Internal") || !strings.Contains(got, "never shown to buyers") {
		t.Errorf("the internal box reads %q", got)
	}
	if got := evalJS[string](b, `document.querySelector('fieldset.internal input[name="/internal_ref"]').value`); got != "GAM-LI-88213" {
		t.Errorf("the internal reference field shows %q", got)
	}

	// An invalid currency: refused, shown next to its field, nothing saved.
	_, before := api.product(id)
	b.typeInto(`input[name="/name"]`, "Run-of-Site MREC (refreshed)")
	b.typeInto(`input[name="/pricing_options/0/currency"]`, "dollars")
	b.do(chromedp.Click(chromedp.ID("save")))
	b.waitFor("the refusal", `document.getElementById("messages").textContent.includes("Not saved: the product has problems")`)
	b.waitFor("the error next to the currency",
		`document.querySelector('[data-pointer="/pricing_options/0/currency"] > .field-error').textContent.includes("ISO 4217")`)
	b.screenshot("products-errors.png", false)
	if _, etag := api.product(id); etag != before {
		t.Fatalf("a refused save moved the catalogue from %s to %s", before, etag)
	}
	b.typeInto(`input[name="/pricing_options/0/currency"]`, "USD")
	b.typeInto("#note", "Refresh the name")
	b.do(chromedp.Click(chromedp.ID("save")))
	b.waitFor("the save", `document.getElementById("messages").textContent.includes("Saved as catalogue version")`)
	saved, after := api.product(id)
	if saved["name"] != "Run-of-Site MREC (refreshed)" || after == before {
		t.Fatalf("after saving: %v at %s", saved["name"], after)
	}
	b.screenshot("products.png", false)

	// A stale save: someone else changes the catalogue meanwhile.
	other, _ := api.product("nw_olv_news_preroll")
	other["name"] = "News Pre-roll (edited elsewhere)"
	body, _ := json.Marshal(other)
	if status, _, resp := api.do("PUT", "/products/nw_olv_news_preroll", string(body), "If-Match", after); status != 200 {
		t.Fatalf("the other edit: %d %s", status, resp)
	}
	b.typeInto(`input[name="/name"]`, "Never saved")
	b.do(chromedp.Click(chromedp.ID("save")))
	b.waitFor("the stale save to be refused", `document.getElementById("messages").textContent.includes("the catalogue changed to version")`)
	if p, _ := api.product(id); p["name"] != "Run-of-Site MREC (refreshed)" {
		t.Errorf("the stale save reached the catalogue: %v", p["name"])
	}
	b.do(chromedp.Click(chromedp.ID("reload-stale")))
	b.waitFor("the product again", `document.querySelector('input[name="/name"]')?.value === "Run-of-Site MREC (refreshed)"`)

	// History: the catalogue version with its note, the field that
	// changed, and rollback.
	b.do(chromedp.Navigate(sf.BaseURL + "/console/history.html"))
	b.waitFor("the catalogue history", `document.body.dataset.catalogueLoaded === "true"`)
	if got := b.text("#cat-versions"); !strings.Contains(got, "Refresh the name") {
		t.Errorf("the catalogue history lacks the note: %s", got)
	}
	version := strings.Trim(after, `"`)
	prior := fmt.Sprint(mustInt(t, version) - 1)
	b.do(chromedp.Click(chromedp.CSS(`input[name="cat-from"][value="`+prior+`"]`)), chromedp.Click(chromedp.CSS(`input[name="cat-to"][value="`+version+`"]`)))
	b.waitFor("the catalogue diff", `document.getElementById("cat-changes")?.dataset.from === `+js(prior)+` && document.getElementById("cat-changes").dataset.to === `+js(version))
	if got := b.text("#cat-changes"); !strings.Contains(got, id) || !strings.Contains(got, "Run-of-Site MREC (refreshed)") {
		t.Errorf("the catalogue diff = %s", got)
	}
	if evalJS[string](b, `getComputedStyle(document.getElementById("confirm")).display`) != "none" ||
		evalJS[string](b, `getComputedStyle(document.getElementById("cat-confirm")).display`) != "none" {
		t.Error("an empty confirmation bar shows on the History page")
	}
	b.do(chromedp.Click(chromedp.CSS(`button.cat-rollback[data-version="`+prior+`"]`)), chromedp.WaitVisible(chromedp.ID("cat-confirm-rollback")))
	b.screenshot("catalogue-history.png", false)
	b.do(chromedp.Click(chromedp.ID("cat-confirm-rollback")))
	b.waitFor("the rollback", `document.getElementById("cat-messages").textContent.includes("Rolled back")`)
	if p, _ := api.product(id); p["name"] != "Run-of-Site MREC" {
		t.Errorf("after the rollback the product is named %v", p["name"])
	}

	// A new product, then deleted.
	b.do(chromedp.Navigate(sf.BaseURL + "/console/products.html"))
	b.waitFor("the product list", `document.body.dataset.loaded === "true"`)
	b.do(chromedp.Click(chromedp.ID("new-product")))
	b.waitFor("the new product form", `document.querySelector('input[name="/product_id"]') !== null`)
	b.typeInto(`input[name="/product_id"]`, "nw_display_weather")
	b.typeInto(`input[name="/name"]`, "Weather Display")
	b.typeInto(`textarea[name="/description"]`, "Banners on the weather pages.")
	b.do(chromedp.Click(chromedp.CSS(`input[name="/channels"][value="display"]`)))
	b.typeInto(`input[name="/countries"]`, "US, CA")
	b.do(chromedp.Click(chromedp.ID("save")))
	b.waitFor("the new product saved", `document.getElementById("messages").textContent.includes("Saved as catalogue version")`)
	if p, _ := api.product("nw_display_weather"); p["name"] != "Weather Display" {
		t.Fatalf("the new product = %v", p)
	}
	b.do(chromedp.Click(chromedp.ID("delete")), chromedp.WaitVisible(chromedp.ID("confirm-delete")))
	b.do(chromedp.Click(chromedp.ID("confirm-delete")))
	b.waitFor("the deletion", `document.getElementById("list-messages").textContent.includes("Deleted nw_display_weather")`)
	if status, _, _ := api.do("GET", "/products/nw_display_weather", ""); status != http.StatusNotFound {
		t.Errorf("the deleted product answers %d", status)
	}
	b.clean(token)
}

func mustInt(t *testing.T, s string) int {
	t.Helper()
	var n int
	if _, err := fmt.Sscan(s, &n); err != nil {
		t.Fatalf("%q is not a version: %v", s, err)
	}
	return n
}

// TestConsoleBacktest runs a backtest of a draft from the editor, beside
// the preview: after buyers' briefs, raising the display floor shows the
// display briefs that would now be declined, with the same counts the API
// gives for the same draft.
func TestConsoleBacktest(t *testing.T) {
	sf := Start(t, nil)
	b, token := signIn(t, sf)
	api := adminAPI{t, sf.BaseURL, token}
	acct := `"account":{"brand":{"domain":"acme-coffee.example"},"operator":"pinnacle-agency.example"}`
	for _, args := range []string{
		displayBrief, displayBrief,
		`{"adcp_version":"3.2-beta.5","buying_mode":"brief","brief":"Display for a coffee launch",` + acct + `,"filters":{"channels":["display"],"budget_range":{"max":4000,"currency":"USD"}}}`,
		`{"adcp_version":"3.1","buying_mode":"brief","brief":"Display for a bakery","filters":{"channels":["display"],"budget_range":{"max":2000,"currency":"USD"}}}`,
		`{"adcp_version":"3.2-beta.5","buying_mode":"brief","brief":"Billboards","filters":{"channels":["dooh"]}}`,
		`{"adcp_version":"3.2-beta.5","buying_mode":"brief","brief":"CTV for a car","filters":{"channels":["ctv"],"budget_range":{"max":60000,"currency":"USD"}}}`,
	} {
		getProducts(t, sf.BaseURL, sf.BuyerToken, args)
	}

	b.typeInto(floorInput, "5000")
	b.waitFor("the draft preview to turn rejected", `document.getElementById("buyer-status")?.textContent === "rejected"`)
	b.scrollTo(".backtest")
	b.do(chromedp.Click(chromedp.ID("bt-run")))
	b.waitFor("the backtest report", `document.getElementById("bt-summary") !== null`)
	b.scrollTo("#backtest-title")
	b.screenshot("backtest.png", false)

	rb, _ := api.rulebook()
	rb["rules"].([]any)[0].(map[string]any)["when"].(map[string]any)["budget_below"].(map[string]any)["per_channel"].(map[string]any)["display"] = 5000
	draft, _ := json.Marshal(map[string]any{"rulebook": rb, "days": 30})
	status, _, body := api.do("POST", "/backtest", string(draft))
	if status != 200 {
		t.Fatalf("POST /backtest = %d %s", status, body)
	}
	var rep struct {
		Replayed int `json:"replayed"`
		Flips    struct {
			NewlyDeclined int `json:"newly_declined"`
		} `json:"flips"`
	}
	if err := json.Unmarshal(body, &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Flips.NewlyDeclined != 4 || rep.Replayed != 6 {
		t.Errorf("the API's backtest: %d replayed, %d newly declined; want 6 and the 4 display briefs under 5,000 USD", rep.Replayed, rep.Flips.NewlyDeclined)
	}
	if got := b.text("#bt-replayed"); got != fmt.Sprint(rep.Replayed) {
		t.Errorf("the console says %s replayed, the API %d", got, rep.Replayed)
	}
	if got := b.text("#bt-summary"); !strings.Contains(got, fmt.Sprintf("%d newly declined", rep.Flips.NewlyDeclined)) {
		t.Errorf("the console's summary = %q, want %d newly declined", got, rep.Flips.NewlyDeclined)
	}
	row := b.text(`#bt-by-slug tr[data-key="budget_below_minimum"]`)
	if !strings.Contains(row, "4") || !strings.Contains(row, "USD") {
		t.Errorf("the budget_below_minimum row = %q", row)
	}
	if got := b.text("#bt-by-account"); !strings.Contains(got, "acme-coffee.example") {
		t.Errorf("the accounts table does not name the brand: %q", got)
	}
	if got := b.text("#bt-examples"); !strings.Contains(got, "Display campaign for a coffee brand launch") {
		t.Errorf("the examples lack the briefs: %q", got)
	}

	// The decisions page downloads the ledger as filtered.
	b.do(chromedp.Navigate(sf.BaseURL + "/console/decisions.html"))
	b.waitFor("the decisions page", `document.body.dataset.loaded === "true"`)
	b.do(chromedp.SetValue(chromedp.ID("f-arm"), "completed"), chromedp.Click(chromedp.ID("export-csv")))
	b.waitFor("the export request", `performance.getEntriesByType("resource").some(e => e.name.includes("/decisions/export?arm=completed") && e.name.includes("format=csv"))`)
	b.clean(token)
}

// layoutProblems lists what overflows sideways or is cut off on the page:
// the page wider than the window, an element sticking out of it (outside
// the boxes meant to scroll), or a placeholder wider than its field.
const layoutProblems = `(() => {
  const out = [];
  if (document.documentElement.scrollWidth > innerWidth + 1) out.push("the page is " + document.documentElement.scrollWidth + " px wide");
  for (const e of document.querySelectorAll("body *")) {
    if (e.closest(".scroll, [hidden], details:not([open])")) continue;
    const r = e.getBoundingClientRect();
    if (r.width > 0 && r.right > innerWidth + 1) out.push(e.tagName + (e.id ? "#" + e.id : "") + " ends at " + Math.round(r.right));
  }
  const ctx = document.createElement("canvas").getContext("2d");
  for (const e of document.querySelectorAll("input[placeholder], textarea[placeholder]")) {
    if (e.closest("[hidden], details:not([open])") || e.offsetWidth === 0) continue;
    const cs = getComputedStyle(e);
    ctx.font = cs.font;
    const room = e.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight);
    if (ctx.measureText(e.placeholder).width > room + 1) out.push("the placeholder of " + (e.id || e.name) + " is cut: " + JSON.stringify(e.placeholder));
  }
  return out.slice(0, 10);
})()`

// TestConsoleLayout: at phone width (390 px) and at 1280 px no page
// overflows sideways or cuts a placeholder off; the History page shows no
// empty confirmation bar; the sold-out sample brief takes its dates from
// the publisher's rulebook.
func TestConsoleLayout(t *testing.T) {
	sf := Start(t, nil)
	b, token := signIn(t, sf)
	// The order desk with something on it: a buy and an order waiting,
	// whose decline form carries the page's placeholder.
	start, end := time.Now().UTC().AddDate(0, 0, 2).Format("2006-01-02"), time.Now().UTC().AddDate(0, 0, 40).Format("2006-01-02")
	for i, budget := range []string{"5000", "120000"} {
		res, failed := testenv.CallTool(t, sf.BaseURL, sf.BuyerToken, "create_media_buy", `{"adcp_version":"3.2-beta.5","idempotency_key":"layout-order-00000`+fmt.Sprint(i)+`",`+
			`"account":{"brand":{"domain":"acme.example"},"operator":"pinnacle-agency.example"},"brand":{"domain":"acme.example"},`+
			`"start_time":"`+start+`T00:00:00Z","end_time":"`+end+`T00:00:00Z","packages":[{"product_id":"nw_display_ros_mrec","pricing_option_id":"cpm_usd_floor_ros","budget":`+budget+`}]}`)
		if failed || (res["media_buy_id"] == nil && res["status"] != "submitted") {
			t.Fatalf("create_media_buy with %s USD = %v", budget, res)
		}
	}
	for _, width := range []int64{390, 1280} {
		for _, page := range []string{"rulebook", "products", "history", "decisions", "orders", "tokens", "audit"} {
			b.do(chromedp.EmulateViewport(width, 900), chromedp.Navigate(sf.BaseURL+"/console/"+page+".html"))
			switch page {
			case "rulebook":
				b.waitFor("the preview", `document.getElementById("buyer-status") !== null`)
			case "products":
				b.waitFor("the list", `document.body.dataset.loaded === "true"`)
				b.do(chromedp.Click(chromedp.CSS("button.open-product")))
				b.waitFor("the editor", `document.querySelector('input[name="/name"]') !== null`)
			case "history":
				b.waitFor("the histories", `document.body.dataset.catalogueLoaded === "true" && document.getElementById("versions").querySelector("tbody tr") !== null`)
			case "decisions", "tokens", "audit":
				b.waitFor("the "+page, `document.body.dataset.loaded === "true"`)
			case "orders":
				// The desk stamps each load it draws.
				b.waitFor("the orders", `document.body.dataset.loaded !== undefined && document.querySelector("#queue form.decline") !== null && document.querySelector("#buys tr[data-buy]") !== null`)
			}
			if problems := evalJS[[]string](b, layoutProblems); len(problems) > 0 {
				t.Errorf("%s at %d px: %v", page, width, problems)
			}
			if page == "history" && evalJS[string](b, `getComputedStyle(document.getElementById("confirm")).display`) != "none" {
				t.Errorf("the History page at %d px shows an empty confirmation bar", width)
			}
			if width == 390 && page == "products" {
				b.screenshot("products-phone.png", false)
			}
		}
	}

	// The sold-out sample: the demo rulebook's holiday window, not a date
	// written into the console.
	b.do(chromedp.EmulateViewport(1600, 1000), chromedp.Navigate(sf.BaseURL+"/console/rulebook.html"))
	b.waitFor("the samples", `document.querySelectorAll("#sample option").length > 5`)
	var rb struct {
		Rulebook struct {
			Rules []struct {
				When struct {
					SoldOut []struct{ Start, End string } `json:"sold_out"`
				} `json:"when"`
			} `json:"rules"`
		} `json:"rulebook"`
	}
	_, _, raw := adminAPI{t, sf.BaseURL, token}.do("GET", "/rulebook", "")
	if err := json.Unmarshal(raw, &rb); err != nil {
		t.Fatal(err)
	}
	var window struct{ Start, End string }
	for _, r := range rb.Rulebook.Rules {
		if len(r.When.SoldOut) > 0 {
			window = r.When.SoldOut[0]
			break
		}
	}
	idx := evalJS[int](b, `[...document.querySelectorAll("#sample option")].findIndex(o => o.textContent.startsWith("A flight in a sold-out window"))`)
	if idx < 0 || window.Start == "" {
		t.Fatalf("no sold-out sample (window %v)", window)
	}
	b.do(chromedp.SetValue(chromedp.ID("sample"), fmt.Sprint(idx)), chromedp.Evaluate[chromedp.Void](`document.getElementById("sample").dispatchEvent(new Event("change"))`))
	b.waitFor("the sample's dates", `document.getElementById("start").value === `+js(window.Start)+` && document.getElementById("end").value === `+js(window.End))
	b.clean(token)
}
