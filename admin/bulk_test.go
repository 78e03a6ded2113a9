package admin_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/storefront/storefront/bulk"
	"github.com/storefront/storefront/demo"
	"github.com/storefront/storefront/internal/traffic"
	"github.com/storefront/storefront/products"
	"github.com/storefront/storefront/store"
	"github.com/storefront/storefront/store/memstore"
	"github.com/storefront/storefront/store/pgstore/pgtest"
)

// bothStores runs fn against the admin API over each store.
func bothStores(t *testing.T, fn func(t *testing.T, c client, h storeHandle)) {
	for _, name := range []string{"memory", "postgres"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var s store.Store = memstore.New()
			if name == "postgres" {
				s = pgtest.Open(t)
			}
			clock := &traffic.Clock{T: time.Date(2031, 3, 2, 9, 0, 0, 0, time.UTC)}
			c, h := serve(t, s, clock)
			fn(t, c, storeHandle{s, h.Snaps, clock})
		})
	}
}

type storeHandle struct {
	store store.Store
	snaps *store.Snapshots
	clock *traffic.Clock
}

func (c client) version(t testing.TB) string {
	t.Helper()
	r := c.do("GET", pub+"/products?limit=1", "")
	if r.Status != 200 {
		t.Fatalf("GET /products?limit=1 = %d %s", r.Status, r.Body)
	}
	return r.Header.Get("ETag")
}

func (c client) upload(path, contentType, body string, headers ...string) response {
	c.t.Helper()
	return c.send("POST", path, contentType, body, headers...)
}

func jsonl(ps ...products.Product) string {
	var b strings.Builder
	for _, p := range ps {
		b.Write(bulk.EncodeProduct(p))
	}
	return b.String()
}

// catalogue is the demo catalogue, decoded once.
var catalogue = demo.Products()

// fresh is the ith imported product. Its id and name count in the letters
// j, q, x and z (imported-jjjjjj, imported-jjjjjq, ...): a number of four
// digits in a product's public text may be one a confidential id of the
// demo holds (its rule ids and tickets do), and letters of the whole
// alphabet spell vendors' names (DFP), both of which the admin API
// refuses to serve.
func fresh(i int) products.Product {
	p := catalogue[i%len(catalogue)]
	p.ProductID = "imported-" + letters(i)
	p.Name = "Imported product " + letters(i)
	p.InternalRef = ""
	return p
}

// letters spells i in base 4 with the letters j, q, x and z, six of them.
func letters(i int) string {
	const digits = "jqxz"
	out := make([]byte, 6)
	for k := len(out) - 1; k >= 0; k-- {
		out[k] = digits[i%4]
		i /= 4
	}
	return string(out)
}

// TestImportAndExport: a file is imported whole as one version, refused
// whole with every bad line named, saved without its bad lines when the
// caller asks, streamed with progress, and exported back in both formats.
func TestImportAndExport(t *testing.T) {
	bothStores(t, func(t *testing.T, c client, h storeHandle) {
		const path = pub + "/catalogue/import"
		demoCount := len(demo.Products())

		// Export, in both formats, reads back as the catalogue.
		r := c.do("GET", pub+"/catalogue/export", "")
		if r.Status != 200 || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/x-ndjson") || strings.Count(string(r.Body), "\n") != demoCount {
			t.Fatalf("export jsonl = %d %s, %d lines", r.Status, r.Header.Get("Content-Type"), strings.Count(string(r.Body), "\n"))
		}
		exported := string(r.Body)
		r = c.do("GET", pub+"/catalogue/export?format=csv", "")
		recs, err := csv.NewReader(bytes.NewReader(r.Body)).ReadAll()
		if err != nil || len(recs) != demoCount+1 || strings.Join(recs[0], ",") != strings.Join(bulk.Columns(), ",") {
			t.Fatalf("export csv = %d, %d records, %v", r.Status, len(recs), err)
		}
		exportedCSV := string(r.Body)

		// Bad lines refuse the file, and each is named.
		v := c.version(t)
		bad := fresh(2)
		bad.Channels = []string{"telepathy"}
		file := jsonl(fresh(1)) + "{not json}\n" + jsonl(bad, fresh(3))
		r = c.upload(path, "application/x-ndjson", file, "If-Match", v)
		p := wantProblem(t, r, http.StatusUnprocessableEntity, "")
		lines := asList(p["bad_lines"])
		if len(lines) != 2 || lines[0].(map[string]any)["line"] != 2.0 || lines[1].(map[string]any)["line"] != 3.0 ||
			asList(lines[1].(map[string]any)["errors"])[0].(map[string]any)["pointer"] != "/channels/0" {
			t.Fatalf("bad lines = %s", r.Body)
		}
		if got := c.version(t); got != v {
			t.Fatalf("a refused import moved the catalogue from %s to %s", v, got)
		}

		// The same file with skip_bad_lines saves the good lines.
		r = c.upload(path+"?skip_bad_lines=true", "application/x-ndjson", file, "If-Match", v, "X-Change-Note", "feed of the 2nd")
		var rep struct {
			Saved    bool                   `json:"saved"`
			Version  store.CatalogueVersion `json:"version"`
			Lines    int64                  `json:"lines"`
			Products int64                  `json:"products"`
			BadLines int64                  `json:"bad_lines"`
		}
		if r.Status != 200 || json.Unmarshal(r.Body, &rep) != nil || !rep.Saved || rep.Lines != 4 || rep.Products != 2 || rep.BadLines != 2 || rep.Version.Put != 2 {
			t.Fatalf("import skipping bad lines = %d %s", r.Status, r.Body)
		}
		if rep.Version.Author != "tester" || rep.Version.Note != "feed of the 2nd" {
			t.Errorf("the import's version = %+v, want the token's name and the note", rep.Version)
		}
		// Stale and missing If-Match.
		wantProblem(t, c.upload(path, "application/x-ndjson", jsonl(fresh(4)), "If-Match", v), http.StatusPreconditionFailed, "")
		wantProblem(t, c.upload(path, "application/x-ndjson", jsonl(fresh(4))), http.StatusPreconditionRequired, "")
		wantProblem(t, c.upload(path+"?mode=sideways", "application/x-ndjson", jsonl(fresh(4)), "If-Match", c.version(t)), http.StatusBadRequest, "")
		wantProblem(t, c.upload(path, "text/csv", "product_id,colour\n", "If-Match", c.version(t)), http.StatusUnprocessableEntity, "")

		// Streamed: progress, each bad line, then the report.
		var stream strings.Builder
		for i := range 3000 {
			if i == 1500 {
				stream.WriteString(`{"product_id":"half"}` + "\n")
				continue
			}
			stream.Write(bulk.EncodeProduct(fresh(10 + i)))
		}
		r = c.upload(path+"?skip_bad_lines=true", "application/x-ndjson", stream.String(), "If-Match", c.version(t), "Accept", "application/x-ndjson")
		events := map[string]int{}
		var done map[string]any
		sc := bufio.NewScanner(bytes.NewReader(r.Body))
		for sc.Scan() {
			var ev map[string]any
			if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
				t.Fatalf("stream line %q: %v", sc.Text(), err)
			}
			events[ev["event"].(string)]++
			if ev["event"] == "done" {
				done = ev["report"].(map[string]any)
			}
			if ev["event"] == "bad_line" && ev["line"].(map[string]any)["line"] != 1501.0 {
				t.Errorf("the bad line is reported as %v, want line 1501", ev["line"])
			}
		}
		if events["progress"] < 1 || events["bad_line"] != 1 || done == nil || done["products"] != 2999.0 || done["saved"] != true {
			t.Fatalf("streamed import: events %v, report %v", events, done)
		}

		// Replace with the exported file: back to the demo catalogue, one
		// version, products not in the file deleted.
		r = c.upload(path+"?mode=replace", "application/x-ndjson", exported, "If-Match", c.version(t))
		if r.Status != 200 || json.Unmarshal(r.Body, &rep) != nil || rep.Version.Deleted != 2+2999 || rep.Version.Put != 0 {
			t.Fatalf("replace with the export = %d %s", r.Status, r.Body)
		}
		// The CSV export imports to no change.
		r = c.upload(path+"?mode=replace&format=csv", "application/octet-stream", exportedCSV, "If-Match", c.version(t))
		if r.Status != 200 || json.Unmarshal(r.Body, &rep) != nil || rep.Version.Put != 0 || rep.Version.Deleted != 0 {
			t.Fatalf("re-importing the CSV export = %d %s", r.Status, r.Body)
		}

		// Decisions export, filtered as the table is.
		if _, err := traffic.Record(context.Background(), traffic.Service(h.store, h.snaps, h.clock), h.clock, 3, 2, 30); err != nil {
			t.Fatal(err)
		}
		table := c.do("GET", pub+"/decisions?arm=rejected&limit=1000", "").json(t)
		want := len(asList(table["decisions"]))
		r = c.do("GET", pub+"/decisions/export?format=csv&arm=rejected", "")
		recs, err = csv.NewReader(bytes.NewReader(r.Body)).ReadAll()
		if err != nil || len(recs) != want+1 || want == 0 {
			t.Fatalf("decisions export = %d records, want %d and a header (%v)", len(recs), want, err)
		}
		for _, rec := range recs[1:] {
			if rec[2] != "get_products" || rec[3] != "rejected" || rec[13] == "" {
				t.Fatalf("an exported decision is %v", rec)
			}
		}
		r = c.do("GET", pub+"/decisions/export?since=2031-03-03T09:00:00Z", "")
		if n := strings.Count(string(r.Body), "\n"); n != 30 {
			t.Errorf("decisions since the second day = %d lines, want 30", n)
		}
		wantProblem(t, c.do("GET", pub+"/decisions/export?arm=maybe", ""), http.StatusBadRequest, "/arm")
	})
}

// TestCatalogueHistoryAPI: a product saved through the API is a version
// by the token's holder with its note; the diff names the fields that
// changed; rollback restores an earlier version as a new one; a stale
// rollback is refused; the catalogue can be searched a page at a time.
func TestCatalogueHistoryAPI(t *testing.T) {
	bothStores(t, func(t *testing.T, c client, h storeHandle) {
		p := demo.Products()[0]
		v0 := c.version(t)
		p.Name = "Renamed in the console"
		p.InternalRef = "LI-0001-RENAMED"
		body, _ := json.Marshal(p)
		r := c.do("PUT", pub+"/products/"+p.ProductID, string(body), "If-Match", v0, "X-Change-Note", "rename")
		if r.Status != 200 {
			t.Fatalf("PUT product = %d %s", r.Status, r.Body)
		}
		v1 := r.Header.Get("ETag")
		vs := c.do("GET", pub+"/catalogue/versions?limit=2", "").json(t)
		newest := asList(vs["versions"])[0].(map[string]any)
		if newest["author"] != "tester" || newest["note"] != "rename" || newest["products_put"] != 1.0 || `"`+fmt.Sprint(vs["current"])+`"` != v1 {
			t.Fatalf("versions = %v", vs)
		}
		r = c.do("GET", pub+"/catalogue/diff?from="+strings.Trim(v0, `"`)+"&to="+strings.Trim(v1, `"`), "")
		d := r.json(t)
		ch := asList(d["changes"])
		if r.Status != 200 || len(ch) != 1 {
			t.Fatalf("diff = %d %s", r.Status, r.Body)
		}
		paths := map[string]bool{}
		for _, fc := range asList(ch[0].(map[string]any)["changes"]) {
			paths[fc.(map[string]any)["path"].(string)] = true
		}
		if !paths["/name"] || !paths["/internal_ref"] || len(paths) != 2 {
			t.Errorf("the diff's fields = %v, want /name and /internal_ref", paths)
		}

		// Roll back to the first version: a new version, the old name.
		wantProblem(t, c.do("POST", pub+"/catalogue/rollback", `{"version":`+strings.Trim(v0, `"`)+`}`, "If-Match", v0), http.StatusPreconditionFailed, "")
		wantProblem(t, c.do("POST", pub+"/catalogue/rollback", `{"version":999}`, "If-Match", v1), http.StatusUnprocessableEntity, "/version")
		r = c.do("POST", pub+"/catalogue/rollback", `{"version":`+strings.Trim(v0, `"`)+`}`, "If-Match", v1)
		if r.Status != 200 || r.json(t)["note"] != "rollback to version "+strings.Trim(v0, `"`) {
			t.Fatalf("rollback = %d %s", r.Status, r.Body)
		}
		got := c.do("GET", pub+"/products/"+p.ProductID, "").json(t)
		if got["name"] != demo.Products()[0].Name {
			t.Errorf("after the rollback the product is named %v", got["name"])
		}

		// Search, filter and page.
		page := c.do("GET", pub+"/products?channel=ctv&limit=2", "").json(t)
		if int(page["total"].(float64)) < 2 || len(asList(page["products"])) != 2 {
			t.Fatalf("ctv page = %v", page)
		}
		for _, x := range asList(page["products"]) {
			if !strings.Contains(fmt.Sprint(x.(map[string]any)["channels"]), "ctv") {
				t.Errorf("the ctv filter let through %v", x)
			}
		}
		next := c.do("GET", pub+"/products?channel=ctv&limit=2&offset=2", "").json(t)
		if next["total"] != page["total"] || next["offset"] != 2.0 {
			t.Errorf("the second page = %v", next)
		}
		q := c.do("GET", pub+"/products?q="+strings.ToUpper(demo.Products()[1].Name[:6]), "").json(t)
		if q["total"].(float64) < 1 {
			t.Errorf("searching for %q finds nothing", demo.Products()[1].Name[:6])
		}
		wantProblem(t, c.do("GET", pub+"/products?limit=0", ""), http.StatusBadRequest, "/limit")
	})
}
