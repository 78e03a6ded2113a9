package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/storefront/storefront/internal/required"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/storefront/storefront/internal/testenv"
)

// The console's browser tests drive headless Chromium against the real
// binary. They skip when Chromium is not installed, except under CI=true,
// where they fail: scripts/test.sh installs it. Each run writes a
// screenshot of every console page into a folder: e2e/screenshots
// (ignored by git), or the folder STOREFRONT_SCREENSHOTS names. The README's
// pictures are refreshed with STOREFRONT_SCREENSHOTS=docs/screenshots.

// screenshots is where the tests write the console's screenshots.
var screenshots = func() string {
	if dir := os.Getenv("STOREFRONT_SCREENSHOTS"); dir != "" {
		if filepath.IsAbs(dir) {
			return dir
		}
		// Relative to the repository root, the directory tests run from.
		return filepath.Join("..", dir)
	}
	return "screenshots"
}()

func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	required.Missing(t, "Chromium is not installed; scripts/test.sh installs the Debian package chromium (apt-get install -y chromium)")
	return ""
}

// browser is one headless Chromium tab. It records every request URL and
// every console error, uncaught exception and security message, so that a
// test can assert that none happened (a Content-Security-Policy or Trusted
// Types violation shows up as one).
type browser struct {
	t   *testing.T
	ctx context.Context

	mu       sync.Mutex
	urls     []string
	problems []string
}

func openBrowser(t *testing.T) *browser {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromiumPath(t)),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("force-color-profile", "srgb"),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1600, 1000),
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(allocCtx)
	t.Cleanup(func() {
		cancelCtx()
		cancelAlloc()
	})
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1600, 1000)); err != nil {
		t.Fatalf("starting Chromium: %v", err)
	}
	b := &browser{t: t, ctx: ctx}
	messages := chromedp.Console(ctx)
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			// Failed fetches the tests cause on purpose (401, 412, 422)
			// are network log entries; anything else at error level, and
			// anything from the security source, is a problem.
			if m.IsException() || (m.Type == chromedp.ConsoleError && m.Source != "network") || m.Source == "security" {
				b.mu.Lock()
				b.problems = append(b.problems, fmt.Sprintf("%s %s (%s:%d)", m.Type, m.Text, m.URL, m.Line+1))
				b.mu.Unlock()
			}
		}
	}()
	requests := chromedp.Events(ctx, network.RequestWillBeSent)
	go func() {
		for ev, err := range requests {
			if err != nil {
				return
			}
			b.mu.Lock()
			b.urls = append(b.urls, ev.Request.URL)
			b.mu.Unlock()
		}
	}()
	// Leaving a page with unsaved edits asks first; the tests always leave.
	dialogs := chromedp.Events(ctx, page.JavascriptDialogOpening)
	go func() {
		for _, err := range dialogs {
			if err != nil {
				return
			}
			_, _ = chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: true})
		}
	}()
	return b
}

// do runs actions with a timeout.
func (b *browser) do(actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		b.t.Fatalf("browser: %v\npage:\n%s", err, b.pageText())
	}
}

// waitFor polls a JavaScript condition until it holds. Errors while a
// page is being replaced (by a navigation) count as "not yet".
func (b *browser) waitFor(what, expr string) {
	b.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	var last error
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`Boolean(`+expr+`)`))
		cancel()
		if err == nil && ok {
			return
		}
		last = err
		time.Sleep(50 * time.Millisecond)
	}
	b.t.Fatalf("waiting for %s (last error: %v)\ncondition: %s\npage:\n%s", what, last, expr, b.pageText())
}

func evalJS[T any](b *browser, expr string) T {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		b.t.Fatalf("evaluating %s: %v", expr, err)
	}
	return v
}

// text is the textContent of the first element matching a CSS selector.
func (b *browser) text(sel string) string {
	b.t.Helper()
	return evalJS[string](b, `document.querySelector(`+js(sel)+`)?.textContent ?? ""`)
}

func (b *browser) pageText() string {
	ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
	defer cancel()
	s, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText : ""`))
	return s
}

// typeInto replaces a field's value by typing, as a person would.
func (b *browser) typeInto(sel, text string) {
	b.t.Helper()
	// SetValue cannot set an empty value, so the field is emptied here
	// and then typed into.
	b.do(chromedp.Evaluate[chromedp.Void](`document.querySelector(`+js(sel)+`).value = ""`),
		chromedp.SendKeys(chromedp.CSS(sel), text))
}

// scrollTo scrolls an element to the top of the page, below the sticky
// editor bar.
func (b *browser) scrollTo(sel string) {
	b.t.Helper()
	b.do(chromedp.Evaluate[chromedp.Void](`document.querySelector(` + js(sel) + `).scrollIntoView({block: "start"})`))
}

// screenshot writes the viewport, or the whole page, into screenshots.
func (b *browser) screenshot(name string, full bool) {
	b.t.Helper()
	b.do(chromedp.Evaluate[chromedp.Void](`document.activeElement && document.activeElement.blur()`))
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	action := chromedp.CaptureScreenshot()
	if full {
		action = chromedp.FullScreenshot(100)
	}
	png, err := chromedp.Run(ctx, action)
	if err != nil {
		b.t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.MkdirAll(screenshots, 0o755); err != nil {
		b.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(screenshots, name), png, 0o644); err != nil {
		b.t.Fatal(err)
	}
}

// clean fails the test if the page logged an error or an exception, or
// if any request carried the token in its URL.
func (b *browser) clean(token string) {
	b.t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, p := range b.problems {
		b.t.Errorf("the console logged: %s", p)
	}
	for _, u := range b.urls {
		if strings.Contains(u, token) {
			b.t.Errorf("a request put the token in its URL: %s", u)
		}
	}
	if len(b.urls) == 0 {
		b.t.Error("no request was recorded; the request log is not working")
	}
}

func js(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// adminAPI calls the admin API directly, as another member of the sales
// team (or a script) would.
type adminAPI struct {
	t     *testing.T
	base  string
	token string
}

func (a adminAPI) do(method, path, body string, headers ...string) (int, http.Header, []byte) {
	a.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, a.base+"/admin/v1/publishers/northwind"+path, rd)
	if err != nil {
		a.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+a.token)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		a.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, b
}

// rulebook reads the rulebook in force and its version.
func (a adminAPI) rulebook() (map[string]any, string) {
	a.t.Helper()
	status, h, body := a.do("GET", "/rulebook", "")
	if status != 200 {
		a.t.Fatalf("GET /rulebook = %d %s", status, body)
	}
	var v struct {
		Rulebook map[string]any `json:"rulebook"`
	}
	if err := json.Unmarshal(body, &v); err != nil {
		a.t.Fatal(err)
	}
	return v.Rulebook, h.Get("ETag")
}

func adminToken(t *testing.T, sf *Storefront) string {
	t.Helper()
	m := regexp.MustCompile(`demo admin token[^:]*: (\S+)`).FindStringSubmatch(sf.Output())
	if m == nil {
		t.Fatalf("the storefront printed no demo admin token:\n%s", sf.Output())
	}
	return m[1]
}

// getProducts is a buyer agent's get_products call over MCP with the MCP
// Go SDK client; token may be empty for anonymous discovery.
func getProducts(t *testing.T, base, token, args string) (map[string]any, bool) {
	t.Helper()
	return testenv.CallTool(t, base, token, "get_products", args)
}

// receipt is the ledger sequence number a response carries.
func receipt(m map[string]any) int64 {
	ext, _ := m["ext"].(map[string]any)
	ns, _ := ext["io.github.storefront"].(map[string]any)
	r, _ := ns["receipt"].(map[string]any)
	n, _ := r["sequence"].(float64)
	return int64(n)
}

// The brief the console's first sample sends: display, 3,000 USD.
const displayBrief = `{"adcp_version":"3.2-beta.5","buying_mode":"brief","brief":"Display campaign for a coffee brand launch","filters":{"budget_range":{"max":3000,"currency":"USD"},"channels":["display"]}}`

const floorInput = `input[name="/rules/0/when/budget_below/per_channel/display"]`

// TestConsole is a sales team's day in the console, in a real browser
// against the real binary: sign in, raise the display floor, watch the
// draft preview turn a brief from completed to rejected, save, see a
// buyer's get_products over MCP get the rejected arm, roll back, and find
// the decision in the ledger table. A stale save is refused, never
// overwriting.
func TestConsole(t *testing.T) {
	sf := Start(t, nil)
	token := adminToken(t, sf)
	api := adminAPI{t, sf.BaseURL, token}
	b := openBrowser(t)

	// Sign in. A wrong token is refused on the page.
	b.do(chromedp.Navigate(sf.BaseURL+"/console/"), chromedp.WaitVisible(chromedp.ID("token")))
	b.screenshot("signin.png", false)
	b.do(chromedp.SendKeys(chromedp.ID("token"), "sf_admin_wrong"), chromedp.Click(chromedp.ID("signin-button")))
	b.waitFor("the wrong token to be refused", `document.getElementById("signin-error").textContent.includes("not accepted")`)
	b.typeInto("#token", token)
	b.do(chromedp.Click(chromedp.ID("signin-button")))
	b.waitFor("the rulebook editor", `location.pathname === "/console/rulebook.html" && document.getElementById("rule-0") !== null`)
	if got := evalJS[string](b, `document.cookie + JSON.stringify(localStorage)`); strings.Contains(got, token) {
		t.Errorf("the token is in a cookie or localStorage: %s", got)
	}

	// The first sample brief is answered with products under version 1.
	b.waitFor("the saved version's preview", `document.getElementById("compare-saved")?.textContent === "completed"`)
	b.waitFor("the draft preview", `document.getElementById("buyer-status")?.textContent === "completed"`)
	if got := b.text("#version-status"); !strings.HasPrefix(got, "Version 1 ") {
		t.Errorf("version status = %q, want version 1", got)
	}

	// Raise the display floor from 1,000 to 5,000 USD: the draft preview
	// turns the same brief down before anything is saved.
	if got := evalJS[string](b, `document.querySelector(`+js(floorInput)+`).value`); got != "1000" {
		t.Fatalf("the display floor field shows %q, want 1000", got)
	}
	b.typeInto(floorInput, "5000")
	b.waitFor("the draft preview to turn rejected", `document.getElementById("buyer-status")?.textContent === "rejected"`)
	if got := b.text("#compare-saved"); got != "completed" {
		t.Errorf("the saved version's preview = %q, want completed", got)
	}
	if got := b.text("#dirty"); got != "Unsaved changes" || evalJS[bool](b, `document.getElementById("dirty").hidden`) {
		t.Error("the editor does not say there are unsaved changes")
	}
	internal := b.text("#rules-fired")
	for _, want := range []string{"MR-2291-CTV-FLOOR", "Premium floor after Q4 upfront", "budget_below_minimum"} {
		if !strings.Contains(internal, want) {
			t.Errorf("the internal pane lacks %q: %s", want, internal)
		}
	}
	buyerPane := b.text("#buyer")
	if !strings.Contains(buyerPane, "budget_below_minimum") || !strings.Contains(b.text("#buyer-reason"), "5,000 USD") {
		t.Errorf("the buyer pane does not show the decline: %s", buyerPane)
	}
	for _, secret := range []string{"MR-2291", "Premium floor", "Whitfield", "YLD-4471"} {
		if strings.Contains(buyerPane, secret) {
			t.Errorf("the buyer pane shows internal %q: %s", secret, buyerPane)
		}
	}
	b.scrollTo("#rule-0")
	b.screenshot("rulebook.png", false)

	// A field the API refuses is marked where it is, and nothing is saved.
	b.typeInto(`input[name="/rules/0/when/budget_below/currency"]`, "usd")
	b.do(chromedp.Click(chromedp.ID("save")))
	b.waitFor("the save to be refused", `document.getElementById("messages").textContent.includes("Not saved: the rulebook has problems")`)
	b.waitFor("the error next to the currency field",
		`document.querySelector('[data-pointer="/rules/0/when/budget_below/currency"] > .field-error').textContent.includes("ISO 4217")`)
	b.waitFor("the draft preview to say the draft is not valid", `document.getElementById("compare-draft")?.textContent === "not valid"`)
	b.scrollTo("#rule-0")
	b.screenshot("rulebook-errors.png", false)
	if _, etag := api.rulebook(); etag != `"1"` {
		t.Fatalf("a refused save changed the rulebook to %s", etag)
	}
	b.typeInto(`input[name="/rules/0/when/budget_below/currency"]`, "USD")
	b.waitFor("the error to clear", `document.getElementById("errors-summary").hidden && document.getElementById("buyer-status")?.textContent === "rejected"`)

	// Save: version 2.
	b.typeInto("#note", "Raise the display floor")
	b.do(chromedp.Click(chromedp.ID("save")))
	b.waitFor("the save", `document.getElementById("messages").textContent.includes("Saved as version 2")`)
	rb, etag := api.rulebook()
	if etag != `"2"` {
		t.Fatalf("after saving, the rulebook is at %s, want \"2\"", etag)
	}
	floor := rb["rules"].([]any)[0].(map[string]any)["when"].(map[string]any)["budget_below"].(map[string]any)
	if got := floor["per_channel"].(map[string]any)["display"]; got != 5000.0 {
		t.Errorf("saved display floor = %v, want 5000", got)
	}
	if floor["currency"] != "USD" || floor["minimum"] != 1000.0 {
		t.Errorf("the save changed more than the display floor: %v", floor)
	}

	// A buyer agent's get_products over MCP now gets the rejected arm.
	got, isErr := getProducts(t, sf.BaseURL, "", displayBrief)
	if got["status"] != "rejected" || isErr {
		t.Fatalf("after the save, the buyer got %v (isError %v), want the rejected arm", got, isErr)
	}
	rejectedSeq := receipt(got)
	if reason, _ := got["reason"].(string); !strings.Contains(reason, "5,000 USD") || strings.Contains(reason, "MR-2291") {
		t.Errorf("the buyer's reason = %q", reason)
	}

	// The raw view shows the saved document.
	b.do(chromedp.Click(chromedp.ID("view-raw")), chromedp.WaitVisible(chromedp.ID("raw")))
	if raw := evalJS[string](b, `document.getElementById("raw").value`); !strings.Contains(raw, `"display": 5000`) {
		t.Errorf("the raw view does not show the saved floor:\n%s", raw)
	}
	b.screenshot("rulebook-raw.png", false)
	b.do(chromedp.Click(chromedp.ID("view-form")), chromedp.WaitVisible(chromedp.ID("rule-0")))

	// History: the diff from 1 to 2 is the floor; roll back to 1.
	b.do(chromedp.Navigate(sf.BaseURL + "/console/history.html"))
	b.waitFor("the diff", `document.getElementById("changes") !== null`)
	diff := b.text("#changes")
	if !strings.Contains(diff, "/rules/MR-2291-CTV-FLOOR/when/budget_below/per_channel/display") ||
		!strings.Contains(diff, "1000") || !strings.Contains(diff, "5000") {
		t.Errorf("the diff from 1 to 2 = %s", diff)
	}
	b.do(chromedp.Click(chromedp.CSS(`button.rollback[data-version="1"]`)), chromedp.WaitVisible(chromedp.ID("confirm-rollback")))
	b.screenshot("history.png", false)
	b.do(chromedp.Click(chromedp.ID("confirm-rollback")))
	b.waitFor("the rollback", `document.getElementById("messages").textContent.includes("Rolled back: version 3 is a copy of version 1")`)
	b.waitFor("version 3 in force", `document.querySelector("#version-3 .badge-current") !== null`)
	if _, etag := api.rulebook(); etag != `"3"` {
		t.Fatalf("after the rollback the rulebook is at %s, want \"3\"", etag)
	}
	if got, _ := getProducts(t, sf.BaseURL, "", displayBrief); got["status"] != "completed" {
		t.Errorf("after the rollback the buyer got %v, want completed", got["status"])
	}

	// More traffic for the charts: an account declined for a fixable
	// reason that comes back with a brief that fits, a category decline
	// and a market decline.
	acct := `"account":{"brand":{"domain":"acme-coffee.example"},"operator":"pinnacle-agency.example"}`
	for _, args := range []string{
		`{"adcp_version":"3.2-beta.5","buying_mode":"brief","brief":"Billboards for a coffee launch",` + acct + `,"filters":{"channels":["dooh"]}}`,
		`{"adcp_version":"3.2-beta.5","buying_mode":"brief","brief":"Display for a coffee launch",` + acct + `,"filters":{"channels":["display"],"budget_range":{"max":6000,"currency":"USD"}}}`,
		`{"adcp_version":"3.2-beta.5","buying_mode":"brief","brief":"Promote our online casino"}`,
		`{"adcp_version":"3.2-beta.5","buying_mode":"brief","brief":"Display for a bank","targeting_overlay":{"geo_countries":["DE"]}}`,
	} {
		getProducts(t, sf.BaseURL, sf.BuyerToken, args)
	}

	// Decisions: the buyer's rejected call is in the table, with the rule
	// that fired; the filter narrows to rejections; the charts render and
	// the chain verifies.
	b.do(chromedp.Navigate(sf.BaseURL + "/console/decisions.html"))
	b.waitFor("the decisions page", `document.body.dataset.loaded === "true"`)
	row := fmt.Sprintf(`#decisions tr[data-sequence="%d"]`, rejectedSeq)
	rowText := b.text(row)
	for _, want := range []string{"rejected", "budget_below_minimum", "MR-2291-CTV-FLOOR", "v2"} {
		if !strings.Contains(rowText, want) {
			t.Errorf("the row for the buyer's call (sequence %d) lacks %q: %q", rejectedSeq, want, rowText)
		}
	}
	if got := b.text("#verify"); !strings.Contains(got, "Ledger verified") {
		t.Errorf("verification status = %q", got)
	}
	b.waitFor("the charts", `[...document.querySelectorAll(".chart img")].every(i => i.complete && i.naturalWidth > 0 && i.src.startsWith("blob:"))`)
	if got := b.text("#costing"); !strings.Contains(got, "channel_not_offered") || !strings.Contains(got, "budget_below_minimum") {
		t.Errorf("the declines-by-slug table = %q", got)
	}
	b.screenshot("decisions.png", true)
	b.do(chromedp.SetValue(chromedp.ID("f-arm"), "rejected"), chromedp.Click(chromedp.ID("apply")))
	b.waitFor("the arm filter", `[...document.querySelectorAll("#decisions tbody tr")].every(r => r.classList.contains("arm-rejected"))`)
	if n := evalJS[int](b, `document.querySelectorAll("#decisions tbody tr").length`); n != 4 {
		t.Errorf("rejected rows = %d, want 4", n)
	}

	// A stale edit: someone else saves while this page holds version 3.
	b.do(chromedp.Navigate(sf.BaseURL + "/console/rulebook.html"))
	b.waitFor("the editor at version 3", `document.getElementById("version-status").textContent.startsWith("Version 3 ")`)
	if status, _, body := api.do("PUT", "/voice", `{"seller_name":"Northwind Media","tone":"formal"}`, "If-Match", `"3"`); status != 200 {
		t.Fatalf("the other edit: %d %s", status, body)
	}
	b.typeInto(floorInput, "4000")
	b.do(chromedp.Click(chromedp.ID("save")))
	b.waitFor("the stale save to be refused",
		`document.getElementById("messages").textContent.includes("someone else saved version 4 since you loaded version 3; reload to see their changes")`)
	b.waitFor("the draft preview of the refused edit", `document.getElementById("compare-draft")?.textContent === "rejected"`)
	b.scrollTo("#rule-0")
	b.screenshot("rulebook-stale.png", false)
	rb, etag = api.rulebook()
	if etag != `"4"` || rb["voice"].(map[string]any)["tone"] != "formal" {
		t.Errorf("the other edit was overwritten: %s %v", etag, rb["voice"])
	}
	if got := rb["rules"].([]any)[0].(map[string]any)["when"].(map[string]any)["budget_below"].(map[string]any)["per_channel"].(map[string]any)["display"]; got != 1000.0 {
		t.Errorf("the stale edit reached the rulebook: display floor %v", got)
	}
	if got := evalJS[string](b, `document.querySelector(`+js(floorInput)+`).value`); got != "4000" {
		t.Errorf("the refused edit was thrown away from the page: the field shows %q", got)
	}
	b.do(chromedp.Click(chromedp.ID("reload-stale")))
	b.waitFor("their version", `document.getElementById("version-status").textContent.startsWith("Version 4 ") && document.getElementById("dirty").hidden`)

	b.clean(token)
}

// TestConsoleRendersUntrustedTextAsText plants script and attribute
// injections in a rule name and in a buyer's brief, and shows that every
// console page renders them as text: no script runs, no element gains a
// handler, and the exact characters are on the page.
func TestConsoleRendersUntrustedTextAsText(t *testing.T) {
	sf := Start(t, nil)
	token := adminToken(t, sf)
	api := adminAPI{t, sf.BaseURL, token}
	const payload = `<script>window.__xss=1</script><img src=x onerror="window.__xss=2">"onmouseover="window.__xss=3" x="`

	rb, _ := api.rulebook()
	hostile := map[string]any{
		"id": "MR-XSS-1", "name": payload, "notes": payload,
		"when":    map[string]any{"keywords": []string{"xss-probe"}},
		"decline": map[string]any{"slug": "category_not_accepted", "disclosure": "category"},
	}
	rb["rules"] = append([]any{hostile}, rb["rules"].([]any)...)
	doc, _ := json.Marshal(rb)
	if status, _, body := api.do("PUT", "/rulebook", string(doc), "If-Match", `"1"`); status != 200 {
		t.Fatalf("planting the rule: %d %s", status, body)
	}
	brief := payload + " xss-probe"
	// The same brief from a buyer, so it is in the ledger too.
	getProducts(t, sf.BaseURL, "", `{"adcp_version":"3.2-beta.5","buying_mode":"brief","brief":`+js(brief)+`}`)

	b := openBrowser(t)
	b.do(chromedp.Navigate(sf.BaseURL+"/console/"), chromedp.WaitVisible(chromedp.ID("token")))
	b.do(chromedp.SendKeys(chromedp.ID("token"), token), chromedp.Click(chromedp.ID("signin-button")))
	b.waitFor("the editor", `document.getElementById("rule-0") !== null`)

	// In the editor: the card title and the name field.
	if got := b.text("#rule-0 .rule-title"); got != payload {
		t.Errorf("the rule title renders as %q, want the payload as text", got)
	}
	if got := evalJS[string](b, `document.querySelector('input[name="/rules/0/name"]').value`); got != payload {
		t.Errorf("the name field holds %q", got)
	}

	// In the preview: the brief, typed by a person, and the rule name in
	// the internal pane.
	b.typeInto("#brief", brief)
	b.waitFor("the preview of the hostile brief", `document.getElementById("decision-brief")?.textContent === `+js(brief))
	b.waitFor("the hostile rule to fire", `document.querySelector("#rules-fired .rule-name")?.textContent === `+js(payload))
	// Hover over every place the payload shows, to give an injected
	// handler its chance.
	for _, sel := range []string{"#decision-brief", "#rules-fired .rule-name", "#rule-0 .rule-title"} {
		box := evalJS[[]float64](b, `(() => { const r = document.querySelector(`+js(sel)+`).getBoundingClientRect(); return [r.x + r.width/2, r.y + r.height/2]; })()`)
		b.do(chromedp.MouseEvent("mouseMoved", box[0], box[1]))
	}
	b.screenshot("xss-as-text.png", false)
	b.assertInert()

	// In the history diff and the ledger table.
	b.do(chromedp.Navigate(sf.BaseURL + "/console/history.html"))
	b.waitFor("the diff", `document.getElementById("changes") !== null`)
	if got := b.text("#changes"); !strings.Contains(got, `<script>window.__xss=1</script>`) {
		t.Errorf("the diff does not show the payload as text: %s", got)
	}
	b.assertInert()
	b.do(chromedp.Navigate(sf.BaseURL + "/console/decisions.html"))
	b.waitFor("the decisions page", `document.body.dataset.loaded === "true"`)
	if got := b.text("#decisions"); !strings.Contains(got, "MR-XSS-1") {
		t.Errorf("the ledger table lacks the hostile rule's decision: %s", got)
	}
	b.assertInert()
	b.clean(token)
}

// assertInert checks that nothing injected ran or attached itself.
func (b *browser) assertInert() {
	b.t.Helper()
	if v := evalJS[string](b, `String(window.__xss)`); v != "undefined" {
		b.t.Errorf("injected script ran: window.__xss = %s", v)
	}
	if n := evalJS[int](b, `document.querySelectorAll("[onmouseover], [onerror], img[src=x]").length`); n != 0 {
		b.t.Errorf("%d elements carry injected attributes", n)
	}
	scripts := evalJS[[]string](b, `[...document.scripts].map(s => s.src ? new URL(s.src).pathname : "inline:" + s.textContent)`)
	for _, s := range scripts {
		if !strings.HasPrefix(s, "/console/") || !strings.HasSuffix(s, ".js") {
			b.t.Errorf("the page has a script that is not the console's own: %q", s)
		}
	}
}
