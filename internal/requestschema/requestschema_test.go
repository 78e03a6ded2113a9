package requestschema

import (
	"strings"
	"testing"
)

func official(t *testing.T) *Set {
	t.Helper()
	s, err := Official()
	if err != nil {
		t.Fatalf("the embedded schemas do not compile: %v", err)
	}
	return s
}

// TestCheck: a request its schema refuses gets one issue per fault, with
// the pointer, keyword and sentence of the schema; a valid one gets none.
func TestCheck(t *testing.T) {
	s := official(t)
	for _, test := range checkCases {
		t.Run(test.name, func(t *testing.T) {
			got := s.Check(test.task, AsBuild, []byte(test.args))
			if len(got) != len(test.want) {
				t.Fatalf("Check(%s, %s) = %+v, want %+v", test.task, test.args, got, test.want)
			}
			for i := range got {
				if got[i] != test.want[i] {
					t.Errorf("Check(%s, %s)[%d] = %+v, want %+v", test.task, test.args, i, got[i], test.want[i])
				}
			}
		})
	}
}

// checkCases are TestCheck's requests and the issues each gets.
var checkCases = []struct {
	name, task, args string
	want             []Issue
}{
	{"valid", "get_products", `{"buying_mode":"brief","brief":"coffee","filters":{"channels":["display"]}}`, nil},
	{"the empty request of a task that needs nothing", "list_accounts", ``, nil},
	{"a wrong type", "get_products", `{"buying_mode":"brief","brief":5}`,
		[]Issue{{"/brief", "type", "brief must be a string"}}},
	{"a missing member", "get_products", `{"brief":"coffee"}`,
		[]Issue{{"/buying_mode", "required", "buying_mode is required"}}},
	{"out of range, deep", "get_products", `{"buying_mode":"brief","filters":{"budget_range":{"min":-1,"currency":"USD"}}}`,
		[]Issue{{"/filters/budget_range/min", "minimum", "filters.budget_range.min must be at least 0"}}},
	{"an enum", "get_products", `{"buying_mode":"sideways"}`,
		[]Issue{{"/buying_mode", "enum", "buying_mode must be one of: brief, wholesale, refine"}}},
	{"an array item", "get_media_buys", `{"media_buy_ids":["mb_1",7]}`,
		[]Issue{{"/media_buy_ids/1", "type", "media_buy_ids[1] must be a string"}}},
	{"the likeliest form of a oneOf", "get_products", `{"buying_mode":"brief","account":{"brand":{"domain":"acme.example"}}}`,
		[]Issue{{"/account/operator", "required", "account.operator is required"}}},
	{"a value of no form", "get_products", `{"buying_mode":"brief","account":"acct_1"}`,
		[]Issue{{"/account", "type", "account must be an object"}}},
	{"a discriminator no form takes", "get_products", `{"buying_mode":"refine","refine":[{"scope":"everything"}]}`,
		[]Issue{{"/refine/0/scope", "enum", "refine[0].scope must be one of: request, product, proposal"}}},
	{"not an object", "get_products", `[]`, []Issue{{"", "type", "the request must be an object"}}},
	{"not JSON", "get_products", `{`, []Issue{{"", "type", "the request must be a JSON object"}}},
}

// TestCheckNeverEchoes: what an issue says comes from the schema: a
// member name the caller made up is never in a pointer or a message, nor
// is a value the caller sent.
func TestCheckNeverEchoes(t *testing.T) {
	s := official(t)
	const secret = "zq-secret-key-9931"
	for _, args := range []string{
		`{"buying_mode":"brief","pagination":{"` + secret + `":1}}`,
		`{"buying_mode":"` + secret + `"}`,
		`{"buying_mode":"brief","brief":"x","property_list":{"agent_url":"https://a.example","list_id":"l","` + secret + `":{"x":[1]}}}`,
		`{"buying_mode":"brief","ext":{"` + secret + `":{"deep":"` + secret + `"}},"account":{"account_id":"a","` + secret + `":1}}`,
	} {
		issues := s.Check("get_products", AsBuild, []byte(args))
		if len(issues) == 0 {
			t.Errorf("Check(%s) = no issues, want a refusal", args)
		}
		for _, is := range issues {
			if strings.Contains(is.Pointer+is.Message, "zq-secret") {
				t.Errorf("Check(%s) echoes the caller's bytes: %+v", args, is)
			}
		}
	}
}

// TestCheckDeterministic: the same request gets the same issues in the
// same order, whatever order the validator met them in (it walks maps):
// an answer that varied would tell a prober something.
func TestCheckDeterministic(t *testing.T) {
	s := official(t)
	for _, c := range []struct{ task, args string }{
		{"create_media_buy", `{"idempotency_key":"short","account":{"brand":{"domain":5}},"packages":[{"budget":"x"}],"start_time":7,"end_time":[],"brand":1}`},
		// Two dependencies (height and pixel_ratio each need width)
		// refuse the same place with the same keyword: which one is
		// reported must not depend on the validator's order (found by
		// FuzzFastPath, two programs answering differently).
		{"get_products", `{"buying_mode":"wholesale","filters":{"format_ids":[{"agent_url":"https://buyer.example/hook","id":"x","height":10000,"pixel_ratio":100}]}}`},
	} {
		first := s.Check(c.task, AsBuild, []byte(c.args))
		if len(first) == 0 {
			t.Fatalf("Check(%s) = %+v, want issues", c.task, first)
		}
		for range 200 {
			got := s.Check(c.task, AsBuild, []byte(c.args))
			if len(got) != len(first) {
				t.Fatalf("Check varies: %+v then %+v", first, got)
			}
			for i := range got {
				if got[i] != first[i] {
					t.Fatalf("Check varies: %+v then %+v", first, got)
				}
			}
		}
	}
}

// TestLegacyShapes: what 3.0 allows and 3.2 refuses is admitted for a
// request served as 3.0 or 3.1, and only that.
func TestLegacyShapes(t *testing.T) {
	s := official(t)
	for _, test := range []struct {
		name, task, args string
	}{
		{"video_completions", "create_media_buy", `{"reporting_webhook":{"requested_metrics":["video_completions"]}}`},
		{"governance categories", "sync_governance", `{"accounts":[{"governance_agents":[{"categories":["budget"]}]}]}`},
	} {
		t.Run(test.name, func(t *testing.T) {
			at := func(sh Shapes) map[string]bool {
				out := map[string]bool{}
				for _, is := range s.Check(test.task, sh, []byte(test.args)) {
					out[is.Pointer+" "+is.Keyword] = true
				}
				return out
			}
			build, legacy := at(AsBuild), at(Legacy)
			var dropped []string
			for k := range build {
				if !legacy[k] {
					dropped = append(dropped, k)
				}
			}
			if len(dropped) != 1 {
				t.Errorf("legacy shapes admit %v of %v, want exactly the one 3.0 allows", dropped, build)
			}
			for k := range legacy {
				if !build[k] {
					t.Errorf("legacy shapes refuse %s, which the build admits", k)
				}
			}
		})
	}
	if is := s.Check("create_media_buy", Legacy, []byte(`{"reporting_webhook":{"requested_metrics":["not_a_metric"]}}`)); !hasPointer(is, "/reporting_webhook/requested_metrics/0") {
		t.Errorf("legacy shapes admit a metric no release has: %+v", is)
	}
}

func hasPointer(is []Issue, p string) bool {
	for _, i := range is {
		if i.Pointer == p {
			return true
		}
	}
	return false
}

// TestFieldOf translates pointers into JSONPath-lite.
func TestFieldOf(t *testing.T) {
	for p, want := range map[string]string{"": "", "/brief": "brief", "/packages/0/budget": "packages[0].budget",
		"/a~1b/0/0": "a/b[0][0]", "/filters/budget_range/max": "filters.budget_range.max"} {
		if got := FieldOf(p); got != want {
			t.Errorf("FieldOf(%q) = %q, want %q", p, got, want)
		}
	}
}

// BenchmarkCheck is the door's cost on a typical get_products request.
func BenchmarkCheck(b *testing.B) {
	s, err := Official()
	if err != nil {
		b.Fatal(err)
	}
	args := []byte(benchArgs)
	b.ReportAllocs()
	for b.Loop() {
		if is := s.Check("get_products", AsBuild, args); len(is) != 0 {
			b.Fatal(is)
		}
	}
}

// benchArgs is a typical get_products request.
const benchArgs = `{"adcp_version":"3.2-beta.5","buying_mode":"brief","brief":"Display for a coffee brand launch",` +
	`"brand":{"domain":"acme.example"},"account":{"brand":{"domain":"acme.example"},"operator":"pinnacle-agency.example"},` +
	`"filters":{"channels":["display","olv"],"budget_range":{"max":5000,"currency":"USD"},"start_date":"2027-01-02","end_date":"2027-02-01"},` +
	`"pagination":{"max_results":10},"context":{"correlation_id":"c-1"}}`
