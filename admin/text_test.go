package admin_test

import (
	"encoding/csv"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/storefront/storefront/bulk"
)

// TestBadTextRefused: whatever text an admin write or query carries, both
// stores answer alike: a problem+json naming the field, never a 500 (as
// PostgreSQL answered a NUL or invalid UTF-8), and nothing is saved (as
// the memory store saved it).
func TestBadTextRefused(t *testing.T) {
	bothStores(t, func(t *testing.T, c client, _ storeHandle) {
		before := c.do("GET", pub, "")
		var current struct {
			Rulebook json.RawMessage `json:"rulebook"`
		}
		if r := c.do("GET", pub+"/rulebook", ""); r.Status != 200 || json.Unmarshal(r.Body, &current) != nil {
			t.Fatalf("GET /rulebook = %d %s", r.Status, r.Body)
		}
		rulebook := string(current.Rulebook)
		for _, test := range []struct {
			name, method, path, body string
			headers                  []string
			status                   int
			pointer                  string
		}{
			{"NUL in a publisher name", "PUT", pub, `{"name":"North\u0000wind","domain":"northwind.example"}`, nil, 422, "/name"},
			{"invalid UTF-8 in a publisher name", "PUT", pub, "{\"name\":\"North\xffwind\",\"domain\":\"northwind.example\"}", nil, 422, "/name"},
			{"a line break in a publisher name", "PUT", pub, `{"name":"North\nwind","domain":"northwind.example"}`, nil, 422, "/name"},
			{"a publisher domain that is not one", "PUT", pub, `{"name":"Northwind","domain":"not a domain <script>"}`, nil, 422, "/domain"},
			{"a Unicode publisher domain", "PUT", pub, `{"name":"Northwind","domain":"nörthwind.example"}`, nil, 422, "/domain"},
			{"NUL in an account id", "PUT", pub + "/accounts/acct%00x", `{"operator":"op.example","brand_domain":"brand.example"}`, nil, 422, "/account_id"},
			{"invalid UTF-8 in an account id", "PUT", pub + "/accounts/acct%FFx", `{"operator":"op.example","brand_domain":"brand.example"}`, nil, 422, "/account_id"},
			{"a space in an account id", "PUT", pub + "/accounts/acct%20x", `{"operator":"op.example","brand_domain":"brand.example"}`, nil, 422, "/account_id"},
			{"NUL in a brand id", "PUT", pub + "/accounts/acct_x", `{"operator":"op.example","brand_domain":"brand.example","brand_id":"b\u0000"}`, nil, 422, "/brand_id"},
			{"NUL in a buyer-token id", "POST", pub + "/buyer-tokens", `{"id":"agency\u0000","operator":"agency.example"}`, nil, 422, "/id"},
			{"invalid UTF-8 in a buyer-token id", "POST", pub + "/buyer-tokens", "{\"id\":\"agency\xe9\",\"operator\":\"agency.example\"}", nil, 422, "/id"},
			{"NUL in a buyer-token account", "POST", pub + "/buyer-tokens", `{"id":"agency","operator":"agency.example","accounts":["a\u0000"]}`, nil, 422, "/accounts/0"},
			{"null in a buyer-token's accounts", "POST", pub + "/buyer-tokens", `{"id":"agency","operator":"agency.example","accounts":[null]}`, nil, 422, "/accounts/0"},
			{"NUL in a token name", "POST", pub + "/tokens", `{"kind":"admin","name":"ops\u0000"}`, nil, 422, "/name"},
			{"invalid UTF-8 in a token name", "POST", pub + "/tokens", "{\"kind\":\"admin\",\"name\":\"op\xffs\"}", nil, 422, "/name"},
			{"a control character in a buyer's name", "POST", pub + "/tokens", `{"kind":"buyer","name":"x","buyer":{"id":"b\u001b","operator":"agency.example"}}`, nil, 422, "/buyer/id"},
			{"a null voice", "PUT", pub + "/voice", `null`, []string{"If-Match", `"1"`}, 422, ""},
			{"NUL in the voice", "PUT", pub + "/voice", `{"seller_name":"North\u0000wind","tone":"formal"}`, []string{"If-Match", `"1"`}, 422, "/seller_name"},
			{"a null rulebook", "PUT", pub + "/rulebook", `null`, []string{"If-Match", `"1"`}, 422, ""},
			{"a C1 control in a change note", "PUT", pub + "/rulebook", rulebook, []string{"If-Match", `"1"`, "X-Change-Note", "why\x85"}, 422, ""},
			{"a tab in a change note", "PUT", pub + "/rulebook", rulebook, []string{"If-Match", `"1"`, "X-Change-Note", "why\tnot"}, 422, ""},
			{"NUL in decisions?account=", "GET", pub + "/decisions?account=%00unknown", "", nil, 400, "/account"},
			{"invalid UTF-8 in decisions?account=", "GET", pub + "/decisions?account=%FF", "", nil, 400, "/account"},
			{"NUL in media-buys?account=", "GET", pub + "/media-buys?account=a%00", "", nil, 400, "/account"},
			{"NUL in audit?token=", "GET", pub + "/audit?token=%00", "", nil, 400, "/token"},
			{"NUL in a product search", "GET", pub + "/products?q=%00", "", nil, 400, "/q"},
			{"a NUL token id", "GET", pub + "/tokens/tok%00", "", nil, 404, ""},
			{"a NUL token id to revoke", "POST", pub + "/tokens/tok%00/revoke", "", nil, 404, ""},
			{"a NUL product id", "DELETE", pub + "/products/p%00", "", []string{"If-Match", `"1"`}, 422, ""},
			{"a NUL delivery row", "POST", pub + "/delivery", `{"rows":[{"media_buy_id":"mb\u0000","package_id":"p","date":"2031-03-01","impressions":1,"spend":1}]}`, nil, 422, "/rows/0/media_buy_id"},
		} {
			t.Run(test.name, func(t *testing.T) {
				wantProblem(t, c.do(test.method, test.path, test.body, test.headers...), test.status, test.pointer)
			})
		}
		if after := c.do("GET", pub, ""); string(after.Body) != string(before.Body) {
			t.Errorf("the publisher changed under refused writes: %s, was %s", after.Body, before.Body)
		}
		if r := c.do("GET", pub+"/accounts", ""); strings.Contains(string(r.Body), "acct") {
			t.Errorf("a refused account was stored: %s", r.Body)
		}
		r := c.do("GET", pub+"/tokens", "")
		var toks struct {
			Tokens []struct {
				Name string `json:"name"`
			} `json:"tokens"`
		}
		if err := json.Unmarshal(r.Body, &toks); err != nil || len(toks.Tokens) != 1 {
			t.Errorf("tokens after refused creates = %s, want the one admin token", r.Body)
		}
		if v := c.do("GET", pub+"/voice", ""); v.Status != 200 || !strings.Contains(string(v.Body), `"seller_name"`) || v.Header.Get("ETag") != `"1"` {
			t.Errorf("the voice after refused puts = %d %s (ETag %s), want version 1 as it was", v.Status, v.Body, v.Header.Get("ETag"))
		}

		// A browser sends a header's accented letters as ISO-8859-1 bytes;
		// the note is read as such and kept as UTF-8.
		ok := c.do("PUT", pub+"/rulebook", rulebook, "If-Match", `"1"`, "X-Change-Note", "caf\xe9 cr\xe8me")
		if ok.Status != 200 {
			t.Fatalf("PUT /rulebook with a Latin-1 note = %d %s", ok.Status, ok.Body)
		}
		var saved struct {
			Note string `json:"note"`
		}
		if err := json.Unmarshal(ok.Body, &saved); err != nil || saved.Note != "café crème" {
			t.Errorf("the saved note = %q, %v, want \"café crème\"", saved.Note, err)
		}

		// An import names each bad line's field; nothing is saved.
		v := c.version(t)
		bad := fresh(1)
		bad.Description = "fine\u0000"
		csvBad := fresh(2)
		csvBad.Name = "caf\xe9"
		for _, file := range []struct{ name, contentType, body, pointer string }{
			{"jsonl", "application/x-ndjson", jsonl(fresh(0), bad), "/description"},
			{"jsonl with invalid UTF-8", "application/x-ndjson", jsonl(fresh(0)) + strings.Replace(jsonl(fresh(3)), "Imported", "Imp\xffrted", 1), "/name"},
			{"csv", "text/csv", csvOf(t, [][]string{bulk.Columns(), bulk.ProductRow(fresh(0)), bulk.ProductRow(csvBad)}), "/name"},
		} {
			r := c.upload(pub+"/catalogue/import", file.contentType, file.body, "If-Match", v)
			p := wantProblem(t, r, http.StatusUnprocessableEntity, "")
			if p["pointer"] != file.pointer {
				t.Errorf("import %s: pointer = %v, want %s: %s", file.name, p["pointer"], file.pointer, r.Body)
			}
		}
		if got := c.version(t); got != v {
			t.Errorf("refused imports moved the catalogue from %s to %s", v, got)
		}
	})
}

func csvOf(t *testing.T, records [][]string) string {
	t.Helper()
	var b strings.Builder
	if err := csv.NewWriter(&b).WriteAll(records); err != nil {
		t.Fatal(err)
	}
	return b.String()
}
