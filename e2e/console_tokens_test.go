package e2e

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestConsoleTokens is a publisher shutting the door on a leaked token in
// a real browser against the real binary: the tokens page lists every
// token with its prefix, last use, expiry and state and never a secret;
// a buyer token is made (its secret shown once), rotated with an overlap,
// and a leaked admin token revoked, refused at once; the audit page shows
// the revocation and what the leaked token did, and says the trail
// verifies. Rotating the session's own token keeps the session signed in.
func TestConsoleTokens(t *testing.T) {
	sf := Start(t, nil)
	token := adminToken(t, sf)
	api := adminAPI{t, sf.BaseURL, token}

	// A second admin token, which will leak, and one thing it does.
	status, _, body := api.do("POST", "/tokens", `{"kind":"admin","name":"agency desk"}`)
	if status != http.StatusCreated {
		t.Fatalf("creating the agency token: %d %s", status, body)
	}
	var leaked struct {
		Token  string `json:"token"`
		Record struct {
			ID     string `json:"id"`
			Prefix string `json:"prefix"`
		} `json:"record"`
	}
	if err := json.Unmarshal(body, &leaked); err != nil {
		t.Fatal(err)
	}
	leakedAPI := adminAPI{t, sf.BaseURL, leaked.Token}
	if status, _, body := leakedAPI.do("PUT", "/voice", `{"seller_name":"Northwind Media","tone":"formal"}`, "If-Match", `"1"`); status != 200 {
		t.Fatalf("the agency token's edit: %d %s", status, body)
	}

	b := openBrowser(t)
	b.do(chromedp.Navigate(sf.BaseURL+"/console/"), chromedp.WaitVisible(chromedp.ID("token")))
	b.do(chromedp.SendKeys(chromedp.ID("token"), token), chromedp.Click(chromedp.ID("signin-button")))
	b.waitFor("the rulebook editor", `location.pathname === "/console/rulebook.html"`)
	b.do(chromedp.Navigate(sf.BaseURL + "/console/tokens.html"))
	b.waitFor("the tokens page", `document.body.dataset.loaded === "true"`)
	row := `#token-` + leaked.Record.ID
	for _, want := range []string{"agency desk", "admin", leaked.Record.Prefix, "admin API of northwind", "active"} {
		if got := b.text(row); !strings.Contains(got, want) {
			t.Errorf("the agency token's row lacks %q: %q", want, got)
		}
	}
	if got := b.text(row + " .last-used"); got == "never" || got == "" {
		t.Errorf("the agency token's last use = %q, want the time of its edit", got)
	}
	if n := evalJS[int](b, `document.querySelectorAll("#tokens tbody tr").length`); n != 3 {
		t.Errorf("the tokens table has %d rows, want the demo admin and buyer tokens and the agency token", n)
	}
	if strings.Contains(b.text("#tokens"), "this session") == false {
		t.Error("the session's own token is not marked")
	}
	for _, secret := range []string{token, leaked.Token, sf.BuyerToken} {
		if strings.Contains(b.pageText(), secret) {
			t.Error("the tokens page shows a secret")
		}
	}

	// A form error is shown at its field; then a buyer token is made.
	b.do(chromedp.SetValue(chromedp.ID("c-kind"), "buyer"))
	b.typeInto("#c-buyer", "agency-7")
	b.typeInto("#c-operator", "Not A Domain")
	b.do(chromedp.Click(chromedp.ID("create-button")))
	b.waitFor("the operator error", `document.querySelector('[data-pointer="/buyer/operator"] .field-error').textContent.includes("domain")`)
	b.typeInto("#c-operator", "agency.example")
	b.do(chromedp.Click(chromedp.ID("create-button")))
	b.waitFor("the new secret", `!document.getElementById("new-secret").hidden && document.getElementById("secret-value").value.startsWith("sf_buyer_")`)
	buyer := evalJS[string](b, `document.getElementById("secret-value").value`)
	b.screenshot("tokens-new.png", false)
	if got, _ := getProducts(t, sf.BaseURL, buyer, `{"buying_mode":"brief","brief":"coffee","account":{"brand":{"domain":"brand.example"},"operator":"agency.example"}}`); got["status"] != "completed" {
		t.Errorf("the new buyer token's get_products: %v", got)
	}
	b.do(chromedp.Click(chromedp.ID("secret-done")))
	if evalJS[string](b, `document.getElementById("secret-value").value`) != "" {
		t.Error("the secret stays on the page after it was copied")
	}
	b.waitFor("the new token listed", `[...document.querySelectorAll("#tokens tbody tr")].some(r => r.textContent.includes("buyer agency-7 for agency.example"))`)

	// Rotate it with an hour's overlap: both secrets work.
	b.do(chromedp.Evaluate[chromedp.Void](`[...document.querySelectorAll("#tokens tbody tr")].find(r => r.textContent.includes("agency-7")).querySelector("button.rotate").click()`))
	b.do(chromedp.SetValue(chromedp.ID("rotate-overlap"), "1h"), chromedp.Click(chromedp.ID("confirm-rotate")))
	b.waitFor("the rotated secret", `!document.getElementById("new-secret").hidden && document.getElementById("messages").textContent.includes("the old token works until")`)
	rotated := evalJS[string](b, `document.getElementById("secret-value").value`)
	b.do(chromedp.Click(chromedp.ID("secret-done")))
	b.waitFor("the old buyer token shown as rotated", `document.querySelector('#tokens tr[data-status="rotated"]') !== null`)
	for _, s := range []string{buyer, rotated} {
		if got, _ := getProducts(t, sf.BaseURL, s, `{"buying_mode":"brief","brief":"coffee","account":{"brand":{"domain":"brand.example"},"operator":"agency.example"}}`); got["status"] != "completed" {
			t.Errorf("during the overlap a buyer token was refused: %v", got)
		}
	}

	// Revoke the leaked admin token: refused from the next request.
	b.do(chromedp.Click(chromedp.CSS(row+" button.revoke")), chromedp.WaitVisible(chromedp.ID("confirm-revoke")))
	b.screenshot("tokens-revoke.png", false)
	b.do(chromedp.Click(chromedp.ID("confirm-revoke")))
	b.waitFor("the revocation", `document.querySelector(`+js(row)+`)?.dataset.status === "revoked"`)
	if status, _, _ := leakedAPI.do("GET", "", ""); status != http.StatusUnauthorized {
		t.Errorf("the revoked token's next request = %d, want 401", status)
	}
	b.screenshot("tokens.png", true)

	// Its audit trail: the revocation, its edit, its creation.
	b.do(chromedp.Click(chromedp.CSS(row + " button.trail")))
	b.waitFor("the audit page", `location.pathname === "/console/audit.html" && document.body.dataset.loaded === "true"`)
	actions := evalJS[[]string](b, `[...document.querySelectorAll("#audit tbody tr")].map(r => r.dataset.action)`)
	if strings.Join(actions, " ") != "token.revoke voice.save token.create" {
		t.Errorf("the agency token's audit trail = %v, want its revocation, its edit and its creation", actions)
	}
	if got := b.text("#audit tbody tr:nth-child(2)"); !strings.Contains(got, "agency desk") || !strings.Contains(got, "127.0.0.1") {
		t.Errorf("the edit's row does not say who and from where: %q", got)
	}
	if got := b.text("#verify"); !strings.Contains(got, "Audit trail verified") {
		t.Errorf("verification status = %q", got)
	}
	b.do(chromedp.Evaluate[chromedp.Void](`document.getElementById("a-token").value = ""`), chromedp.Click(chromedp.ID("apply")))
	b.waitFor("the whole trail", `document.querySelectorAll("#audit tbody tr").length >= 7`)
	b.screenshot("audit.png", true)

	// Rotating the session's own token, without overlap, keeps the
	// session signed in on the successor.
	b.do(chromedp.Navigate(sf.BaseURL + "/console/tokens.html"))
	b.waitFor("the tokens page", `document.body.dataset.loaded === "true"`)
	b.do(chromedp.Evaluate[chromedp.Void](`[...document.querySelectorAll("#tokens tbody tr")].find(r => r.textContent.includes("this session")).querySelector("button.rotate").click()`))
	b.do(chromedp.SetValue(chromedp.ID("rotate-overlap"), "0s"), chromedp.Click(chromedp.ID("confirm-rotate")))
	b.waitFor("the rotation", `document.getElementById("messages").textContent.includes("is refused from now on")`)
	b.do(chromedp.Click(chromedp.ID("secret-done")))
	if status, _, _ := api.do("GET", "", ""); status != http.StatusUnauthorized {
		t.Errorf("the session's old token after a rotation without overlap = %d, want 401", status)
	}
	b.do(chromedp.Navigate(sf.BaseURL + "/console/audit.html"))
	b.waitFor("the audit page, still signed in", `location.pathname === "/console/audit.html" && document.body.dataset.loaded === "true"`)
	if n := evalJS[int](b, `document.querySelectorAll("#audit tbody tr[data-action='token.rotate']").length`); n != 2 {
		t.Errorf("the audit page shows %d rotations, want 2", n)
	}
	b.clean(token)
}
