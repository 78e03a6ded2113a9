package admin_test

import (
	"bytes"
	"encoding/xml"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/storefront/storefront/internal/testenv"
)

func TestCharts(t *testing.T) {
	env := testenv.Start(t)
	c := client{t, env.BaseURL, env.AdminToken}
	mcpCall(t, env.BaseURL, `{"buying_mode":"brief","brief":"coffee video"}`)
	mcpCall(t, env.BaseURL, `{"adcp_version":"3.2-beta.5","buying_mode":"brief","brief":"coffee","filters":{"channels":["dooh"]}}`)
	mcpCall(t, env.BaseURL, `{"adcp_version":"3.2-beta.5","buying_mode":"brief","brief":"coffee","filters":{"budget_range":{"max":10,"currency":"USD"}}}`)

	for _, test := range []struct {
		path string
		want []string
	}{
		{"/charts/declines.svg", []string{"Declines per slug per day, last 30 days", "channel_not_offered (1)", "budget_below_minimum (1)"}},
		{"/charts/declines.svg?days=1", []string{"last 1 day", testenv.Clock.Format("2006-01-02")}},
		{"/charts/arms.svg", []string{"Share of answers by arm", "completed", "1 (33%)", "2 (67%)"}},
		{"/charts/returns.svg", []string{"came back after a fixable decline", "No fixable declines to an account"}},
	} {
		t.Run(test.path, func(t *testing.T) {
			r := c.do("GET", pub+test.path, "")
			if r.Status != 200 {
				t.Fatalf("GET %s = %d %s", test.path, r.Status, r.Body)
			}
			if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "image/svg+xml") {
				t.Errorf("Content-Type = %q", ct)
			}
			if csp := r.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") {
				t.Errorf("Content-Security-Policy = %q", csp)
			}
			dec := xml.NewDecoder(bytes.NewReader(r.Body))
			for {
				_, err := dec.Token()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatalf("%s is not well-formed: %v\n%s", test.path, err, r.Body)
				}
			}
			for _, w := range test.want {
				if !bytes.Contains(r.Body, []byte(w)) {
					t.Errorf("%s lacks %q:\n%s", test.path, w, r.Body)
				}
			}
		})
	}
	wantProblem(t, c.do("GET", pub+"/charts/arms.svg?days=0", ""), 400, "")
	wantProblem(t, client{t, env.BaseURL, ""}.do("GET", pub+"/charts/arms.svg", ""), 401, "")
	wantProblem(t, c.do("GET", "/admin/v1/publishers/acme/charts/arms.svg", ""), 404, "")
}

// TestCrossOriginWritesRefused: a browser request from another site is
// refused before authentication even when it carries a valid token; the
// same request from the API's own origin, or from a client that is not a
// browser, is served.
func TestCrossOriginWritesRefused(t *testing.T) {
	env := testenv.Start(t)
	c := client{t, env.BaseURL, env.AdminToken}
	body := `{"seller_name":"Evil","tone":"warm"}`
	for _, test := range []struct {
		name    string
		headers []string
		want    int
	}{
		{"cross-site fetch", []string{"Sec-Fetch-Site", "cross-site", "Origin", "https://evil.example"}, http.StatusForbidden},
		{"same-site fetch", []string{"Sec-Fetch-Site", "same-site", "Origin", "http://sub.127.0.0.1"}, http.StatusForbidden},
		{"foreign Origin without Sec-Fetch-Site", []string{"Origin", "https://evil.example"}, http.StatusForbidden},
		{"same-origin fetch", []string{"Sec-Fetch-Site", "same-origin", "Origin", env.BaseURL}, http.StatusOK},
		{"no browser headers", nil, http.StatusOK},
	} {
		t.Run(test.name, func(t *testing.T) {
			cur := c.do("GET", pub+"/voice", "").Header.Get("ETag")
			r := c.do("PUT", pub+"/voice", body, append([]string{"If-Match", cur}, test.headers...)...)
			if r.Status != test.want {
				t.Fatalf("PUT /voice with %v = %d %s, want %d", test.headers, r.Status, r.Body, test.want)
			}
			if test.want == http.StatusForbidden {
				wantProblem(t, r, http.StatusForbidden, "")
				if after := c.do("GET", pub+"/voice", "").Header.Get("ETag"); after != cur {
					t.Errorf("a refused write changed the rulebook from %s to %s", cur, after)
				}
			}
		})
	}
	// Reads are not state-changing and stay open to any caller with a token.
	if r := c.do("GET", pub+"/voice", "", "Sec-Fetch-Site", "cross-site"); r.Status != 200 {
		t.Errorf("cross-site GET = %d, want 200", r.Status)
	}
}
