package admin_test

import (
	"encoding/json"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/storefront/storefront/internal/testenv"
)

// buyTool calls a tool as the demo buyer and returns the AdCP object.
func buyTool(t *testing.T, env *testenv.Env, tool, args string) map[string]any {
	t.Helper()
	m, _ := testenv.CallTool(t, env.BaseURL, env.BuyerToken, tool, args)
	return m
}

func buyArgs(key string, budget string) string {
	return `{"adcp_version":"3.2-beta.5","idempotency_key":"` + key + `","account":{"brand":{"domain":"acme.example"},"operator":"pinnacle-agency.example"},` +
		`"brand":{"domain":"acme.example"},"start_time":"` + testenv.Day(8) + `T00:00:00Z","end_time":"` + testenv.Day(63) + `T00:00:00Z",` +
		`"packages":[{"product_id":"nw_display_ros_mrec","pricing_option_id":"cpm_usd_floor_ros","budget":` + budget + `}]}`
}

func TestOrderDeskAPI(t *testing.T) {
	env := testenv.Start(t)
	c := client{t, env.BaseURL, env.AdminToken}
	a := buyTool(t, env, "create_media_buy", buyArgs("admin-order-000000001", "120000"))
	b := buyTool(t, env, "create_media_buy", buyArgs("admin-order-000000002", "130000"))
	if a["status"] != "submitted" || b["status"] != "submitted" {
		t.Fatalf("orders over the review threshold = %v, %v", a, b)
	}
	ta, tb := a["task_id"].(string), b["task_id"].(string)
	queue := c.do("GET", pub+"/orders", "").json(t)
	if n := len(asList(queue["orders"])); n != 2 {
		t.Fatalf("GET /orders = %d orders, want 2", n)
	}
	// Another publisher's token sees nothing of them.
	wantProblem(t, client{t, env.BaseURL, env.AdminToken}.do("GET", "/admin/v1/publishers/other/orders", ""), http.StatusNotFound, "")

	r := c.do("POST", pub+"/orders/"+ta+"/approve", "{}")
	if r.Status != http.StatusOK {
		t.Fatalf("approve = %d %s", r.Status, r.Body)
	}
	id, _ := r.json(t)["media_buy_id"].(string)
	wantProblem(t, c.do("POST", pub+"/orders/"+ta+"/approve", "{}"), http.StatusConflict, "")
	wantProblem(t, c.do("POST", pub+"/orders/"+tb+"/decline", `{"slug":"commercially_declined","reason":"<b>No</b> thanks"}`), http.StatusUnprocessableEntity, "/reason")
	wantProblem(t, c.do("POST", pub+"/orders/"+tb+"/decline", `{"slug":"no_such_slug"}`), http.StatusUnprocessableEntity, "/slug")
	r = c.do("POST", pub+"/orders/"+tb+"/decline", `{"slug":"commercially_declined","reason":"Not this quarter."}`)
	if r.Status != http.StatusOK || !strings.Contains(r.json(t)["reason"].(string), "Not this quarter.") {
		t.Fatalf("decline = %d %s", r.Status, r.Body)
	}
	wantProblem(t, c.do("POST", pub+"/orders/nope/approve", "{}"), http.StatusNotFound, "")

	buys := c.do("GET", pub+"/media-buys", "").json(t)
	if n := len(asList(buys["media_buys"])); n != 1 {
		t.Fatalf("GET /media-buys = %d buys, want the approved one", n)
	}
	pkg := asList(asList(buys["media_buys"])[0].(map[string]any)["packages"])[0].(map[string]any)["package_id"].(string)

	// Delivery: refused whole with a pointer per bad row.
	bad := `{"rows":[{"media_buy_id":"` + id + `","package_id":"` + pkg + `","date":"` + testenv.Day(-1) + `","impressions":10,"spend":1},` +
		`{"media_buy_id":"mb_nope","package_id":"p","date":"` + testenv.Day(-1) + `","impressions":1,"spend":1},` +
		`{"media_buy_id":"` + id + `","package_id":"` + pkg + `","date":"2099-01-01","impressions":1,"spend":1},` +
		`{"media_buy_id":"` + id + `","package_id":"` + pkg + `","date":"` + testenv.Day(-2) + `","impressions":-1,"spend":1}]}`
	p := wantProblem(t, c.do("POST", pub+"/delivery", bad), http.StatusUnprocessableEntity, "/rows/1/media_buy_id")
	if got := len(asList(p["errors"])); got != 3 {
		t.Errorf("problems = %v, want one per bad row", p["errors"])
	}
	got := c.do("GET", pub+"/media-buys/"+id, "").json(t)
	if d := got["delivered"].(map[string]any); d["impressions"] != 0.0 {
		t.Errorf("a refused report stored delivery: %v", d)
	}
	// A corrected report of the same day replaces it.
	for _, body := range []string{
		`{"rows":[{"media_buy_id":"` + id + `","package_id":"` + pkg + `","date":"` + testenv.Day(-1) + `","impressions":900,"spend":2.7}]}`,
		`{"rows":[{"media_buy_id":"` + id + `","package_id":"` + pkg + `","date":"` + testenv.Day(-1) + `","impressions":1000,"spend":3}]}`,
	} {
		if r := c.do("POST", pub+"/delivery", body); r.Status != http.StatusOK {
			t.Fatalf("POST /delivery = %d %s", r.Status, r.Body)
		}
	}
	csv := "media_buy_id,package_id,date,impressions,clicks,spend\n" + id + "," + pkg + "," + testenv.Day(0) + ",500,5,1.5\n"
	if r := c.do("POST", pub+"/delivery", csv, "Content-Type", "text/csv"); r.Status != http.StatusOK {
		t.Fatalf("POST /delivery (CSV) = %d %s", r.Status, r.Body)
	}
	wantProblem(t, c.do("POST", pub+"/delivery", "media_buy_id,date\n", "Content-Type", "text/csv"), http.StatusUnprocessableEntity, "/header")
	wantProblem(t, c.do("POST", pub+"/delivery", "media_buy_id,package_id,date,impressions,spend\n"+id+","+pkg+","+testenv.Day(0)+",lots,1\n", "Content-Type", "text/csv"),
		http.StatusUnprocessableEntity, "/rows/0/impressions")
	got = c.do("GET", pub+"/media-buys/"+id, "").json(t)
	if d := got["delivered"].(map[string]any); d["impressions"] != 1500.0 || d["spend"] != 4.5 {
		t.Errorf("delivered = %v, want the corrected day plus the CSV's: 1500 impressions, 4.5 spent", d)
	}
	if h := asList(got["history"]); len(h) == 0 || !strings.Contains(string(mustMarshal(h)), "approved by the sales desk") {
		t.Errorf("history = %v", got["history"])
	}
	delivery := buyTool(t, env, "get_media_buy_delivery", `{"account":{"brand":{"domain":"acme.example"},"operator":"pinnacle-agency.example"},"media_buy_ids":["`+id+`"]}`)
	if totals := asList(delivery["media_buy_deliveries"])[0].(map[string]any)["totals"].(map[string]any); totals["impressions"] != 1500.0 {
		t.Errorf("the buyer reads %v, want what was reported", totals)
	}
}

// TestOrderDeskJSONShape reads every answer of the order desk's routes, on
// each store, and checks each member is snake_case, documented in
// docs/media-buys.md and none of the store's own: no task owner, no buyer
// principal. A buyer's own objects are the buyer's to name.
func TestOrderDeskJSONShape(t *testing.T) {
	doc, err := os.ReadFile("../docs/media-buys.md")
	if err != nil {
		t.Fatalf("reading the documentation the shape is checked against: %v", err)
	}
	testenv.OnEachStore(t, func(t *testing.T, env *testenv.Env) {
		c := client{t, env.BaseURL, env.AdminToken}
		var answers []response
		read := func(method, path, body string) map[string]any {
			t.Helper()
			r := c.do(method, pub+path, body)
			if r.Status != http.StatusOK {
				t.Fatalf("%s %s = %d %s", method, path, r.Status, r.Body)
			}
			answers = append(answers, r)
			return r.json(t)
		}
		a := buyTool(t, env, "create_media_buy", buyArgs("admin-shape-000000001", "120000"))
		b := buyTool(t, env, "create_media_buy", buyArgs("admin-shape-000000002", "130000"))
		ta, _ := a["task_id"].(string)
		tb, _ := b["task_id"].(string)
		if ta == "" || tb == "" {
			t.Fatalf("orders over the review threshold = %v, %v", a, b)
		}
		pending := read("GET", "/orders", "")
		if o := asList(pending["orders"]); len(o) != 2 || o[0].(map[string]any)["account"] == "" {
			t.Fatalf("GET /orders = %v, want two orders naming their account", pending)
		}
		read("GET", "/orders/"+ta, "")
		id, _ := read("POST", "/orders/"+ta+"/approve", "{}")["media_buy_id"].(string)
		read("POST", "/orders/"+tb+"/decline", `{"slug":"commercially_declined","reason":"Not this quarter."}`)
		read("GET", "/orders?status=all", "")
		read("GET", "/media-buys", "")
		read("GET", "/media-buys/"+id, "")
		for _, r := range answers {
			var v any
			if err := json.Unmarshal(r.Body, &v); err != nil {
				t.Fatal(err)
			}
			walkMembers(v, "", func(path, key string) {
				switch {
				case !snake.MatchString(key):
					t.Errorf("%s: member %q is not snake_case", path, key)
				case key == "owner" || key == "principal":
					t.Errorf("%s: member %q is the store's access key", path, key)
				case !strings.Contains(string(doc), "`"+key+"`"):
					t.Errorf("%s: member %q is not documented in docs/media-buys.md", path, key)
				}
			})
		}
	})
}

var snake = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)

// buyerObjects are members whose value the buyer wrote: their members are
// the buyer's.
var buyerObjects = map[string]bool{"context": true, "ext": true, "params": true, "format_option_refs": true, "format_ids": true, "optimization_goals": true}

// walkMembers calls fn for every object member under v, except inside a
// buyer's objects, and for the delivered_by_package map's keys (package ids).
func walkMembers(v any, path string, fn func(path, key string)) {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			fn(path, k)
			switch {
			case buyerObjects[k]:
			case k == "delivered_by_package":
				for pkg, m := range x.(map[string]any) {
					walkMembers(m, path+"/"+k+"/"+pkg, fn)
				}
			default:
				walkMembers(x, path+"/"+k, fn)
			}
		}
	case []any:
		for i, x := range v {
			walkMembers(x, path+"/"+strconv.Itoa(i), fn)
		}
	}
}
