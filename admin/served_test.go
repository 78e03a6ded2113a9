package admin_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/storefront/storefront/internal/testenv"
)

// What the admin API stores is what is served: each write of text a buyer
// reads is refused, naming the field, when the serving screen would change
// it. The demo rulebook's confidential parts are the secrets here: the
// rule id MR-2291-CTV-FLOOR, "Project Lighthouse", "Acme Retail Group",
// the vendor FreeWheel, and product references such as GAM-LI-88213.

// demoProduct reads the first demo product as a document and its etag.
func demoProduct(t *testing.T, c client) (map[string]any, string) {
	t.Helper()
	list := c.do("GET", pub+"/products", "")
	if list.Status != 200 {
		t.Fatalf("list: %d %s", list.Status, list.Body)
	}
	return asList(list.json(t)["products"])[0].(map[string]any), list.Header.Get("ETag")
}

func cloneDoc(t *testing.T, m map[string]any) map[string]any {
	t.Helper()
	var out map[string]any
	if err := json.Unmarshal(mustMarshal(m), &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestProductTextServedAsSaved(t *testing.T) {
	env := testenv.Start(t)
	c := client{t, env.BaseURL, env.AdminToken}
	base, etag := demoProduct(t, c)
	id := base["product_id"].(string)
	for _, test := range []struct {
		name    string
		mutate  func(p map[string]any)
		pointer string
	}{
		{"name", func(p map[string]any) { p["name"] = "MREC for Acme Retail Group" }, "/name"},
		{"description", func(p map[string]any) { p["description"] = "Great reach. Sold under MR-2291-CTV-FLOOR." }, "/description"},
		{"markup in description", func(p map[string]any) { p["description"] = "Great <b>reach</b>." }, "/description"},
		{"params value", func(p map[string]any) {
			p["format_options"].([]any)[0].(map[string]any)["params"] = map[string]any{"width": 300, "height": 250, "note": "via FreeWheel"}
		}, "/format_options/0/params/note"},
		{"params member", func(p map[string]any) {
			p["format_options"].([]any)[0].(map[string]any)["params"] = map[string]any{"width": 300, "height": 250, "project_lighthouse": true}
		}, "/format_options/0/params/project_lighthouse"},
		{"pricing option id", func(p map[string]any) {
			p["pricing_options"].([]any)[0].(map[string]any)["pricing_option_id"] = "cpm_gam-li-88213"
		}, "/pricing_options/0/pricing_option_id"},
		{"format option id", func(p map[string]any) {
			p["format_options"].([]any)[0].(map[string]any)["format_option_id"] = "lighthouse_mrec_acme_retail_group"
		}, "/format_options/0/format_option_id"},
		{"new reference used by another product", func(p map[string]any) { p["internal_ref"] = "Northwind Kitchen" }, "/internal_ref"},
	} {
		t.Run(test.name, func(t *testing.T) {
			p := cloneDoc(t, base)
			test.mutate(p)
			r := c.do("PUT", pub+"/products/"+id, string(mustMarshal(p)), "If-Match", etag)
			wantProblem(t, r, http.StatusUnprocessableEntity, test.pointer)
			if now := c.do("GET", pub+"/products", "").Header.Get("ETag"); now != etag {
				t.Errorf("a refused product was saved: %s -> %s", etag, now)
			}
		})
	}
	// Text the screen leaves alone is saved and served byte for byte.
	p := cloneDoc(t, base)
	p["name"] = "MREC for outdoor brands"
	if r := c.do("PUT", pub+"/products/"+id, string(mustMarshal(p)), "If-Match", etag); r.Status != 200 {
		t.Fatalf("a clean product was refused: %d %s", r.Status, r.Body)
	}
	if got, _ := mcpCall(t, env.BaseURL, `{"adcp_version":"3.2-beta.5","buying_mode":"wholesale"}`); !strings.Contains(got, `"name":"MREC for outdoor brands"`) {
		t.Errorf("the saved name is not served as saved")
	}
}

func TestRulebookTextServedAsSaved(t *testing.T) {
	env := testenv.Start(t)
	c := client{t, env.BaseURL, env.AdminToken}
	cur := c.do("GET", pub+"/rulebook", "").json(t)["rulebook"].(map[string]any)
	for _, test := range []struct {
		name    string
		mutate  func(rb map[string]any)
		pointer string
	}{
		{"template names a product reference", func(rb map[string]any) {
			rb["voice"].(map[string]any)["templates"] = map[string]any{"geo_not_served": "Line item GAM-LI-88213 covers {{markets}} only."}
		}, "/voice/templates/geo_not_served"},
		{"template names a vendor", func(rb map[string]any) {
			rb["voice"].(map[string]any)["templates"] = map[string]any{"geo_not_served": "Our FreeWheel setup serves {{markets}}."}
		}, "/voice/templates/geo_not_served"},
		{"seller name", func(rb map[string]any) {
			rb["voice"].(map[string]any)["seller_name"] = "Northwind for Acme Retail Group"
		}, "/voice/seller_name"},
		{"new term in served product text", func(rb map[string]any) {
			r0 := rb["rules"].([]any)[0].(map[string]any)
			r0["confidential_terms"] = append(asList(r0["confidential_terms"]), "Northwind Kitchen")
		}, "/rules/0/confidential_terms/1"},
	} {
		t.Run(test.name, func(t *testing.T) {
			rb := cloneDoc(t, cur)
			test.mutate(rb)
			wantProblem(t, c.do("PUT", pub+"/rulebook", string(mustMarshal(rb)), "If-Match", `"1"`), 422, test.pointer)
			wantProblem(t, c.do("POST", pub+"/rulebook/validate", string(mustMarshal(rb))), 422, test.pointer)
			if v := c.do("GET", pub+"/rulebook", "").Header.Get("ETag"); v != `"1"` {
				t.Errorf("a refused rulebook was saved: version %s", v)
			}
		})
	}
	wantProblem(t, c.do("PUT", pub+"/voice", `{"seller_name":"Northwind (Project Lighthouse)","tone":"warm"}`, "If-Match", `"1"`), 422, "/seller_name")
	wantProblem(t, c.do("PUT", pub, `{"name":"Northwind Media for Acme Retail Group","domain":"northwind.example"}`), 422, "/name")
}

func TestImportRefusesTextTheScreenWouldChange(t *testing.T) {
	env := testenv.Start(t)
	c := client{t, env.BaseURL, env.AdminToken}
	base, etag := demoProduct(t, c)
	p := cloneDoc(t, base)
	p["product_id"] = "imported_one"
	p["description"] = "Booked through Project Lighthouse."
	r := c.send("POST", pub+"/catalogue/import", "application/x-ndjson", string(mustMarshal(p))+"\n", "If-Match", etag)
	m := wantProblem(t, r, http.StatusUnprocessableEntity, "")
	if m["pointer"] != "/description" {
		t.Errorf("the refused line does not point at /description: %s", r.Body)
	}
}
