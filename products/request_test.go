package products

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/storefront/storefront/adcp"
	"github.com/storefront/storefront/jsonfield"
)

// fieldProblem is one expected fault, without its message.
type fieldProblem struct {
	code  adcp.Code
	field string
}

func inv(field string) fieldProblem { return fieldProblem{adcp.InvalidRequest, field} }

func val(field string) fieldProblem { return fieldProblem{adcp.ValidationError, field} }

func problems(err error) ([]fieldProblem, bool) {
	var re *RequestError
	if !errors.As(err, &re) {
		return nil, false
	}
	var out []fieldProblem
	for _, p := range re.Problems {
		out = append(out, fieldProblem{p.Code, p.Path})
	}
	return out, true
}

func TestDecodeRequestErrors(t *testing.T) {
	list := func(n int) string {
		items := make([]string, n)
		for i := range items {
			items[i] = `"display"`
		}
		return "[" + strings.Join(items, ",") + "]"
	}
	refine := func(n int) string {
		items := make([]string, n)
		for i := range items {
			items[i] = `{"scope":"request","ask":"more video"}`
		}
		return "[" + strings.Join(items, ",") + "]"
	}
	for _, test := range []struct {
		name string
		args string
		want []fieldProblem
	}{
		{"not JSON", `{"brief":`, []fieldProblem{inv("")}},
		{"an array", `["brief"]`, []fieldProblem{inv("")}},
		{"a string", `"brief"`, []fieldProblem{inv("")}},
		{"null", `null`, []fieldProblem{inv("")}},
		{"too large", `{"brief":"` + strings.Repeat("x", MaxArgsBytes) + `"}`, []fieldProblem{inv("")}},
		{"adcp_version not a string", `{"adcp_version":3.1}`, []fieldProblem{inv("adcp_version")}},
		{"adcp_major_version not an integer", `{"adcp_major_version":"3"}`, []fieldProblem{inv("adcp_major_version")}},
		{"adcp_major_version fractional", `{"adcp_major_version":3.5}`, []fieldProblem{inv("adcp_major_version")}},
		{"idempotency_key too short", `{"idempotency_key":"short"}`, []fieldProblem{inv("idempotency_key")}},
		{"idempotency_key bad characters", `{"idempotency_key":"` + strings.Repeat("é", 20) + `"}`, []fieldProblem{inv("idempotency_key")}},
		{"buying_mode unknown", `{"buying_mode":"auction"}`, []fieldProblem{inv("buying_mode")}},
		{"account_id with a NUL", `{"account":{"account_id":"acct\u0000x"}}`, []fieldProblem{val("account.account_id")}},
		{"account_id too long", `{"account":{"account_id":"` + strings.Repeat("a", 256) + `"}}`, []fieldProblem{inv("account.account_id")}},
		{"brand_id with a control character", `{"account":{"brand":{"domain":"b.example","brand_id":"x\u001by"},"operator":"o.example"}}`, []fieldProblem{val("account.brand.brand_id")}},
		{"buying_mode empty", `{"buying_mode":""}`, []fieldProblem{inv("buying_mode")}},
		{"buying_mode not a string", `{"buying_mode":1}`, []fieldProblem{inv("buying_mode"), inv("buying_mode")}},
		{"brief mode without brief", `{"buying_mode":"brief"}`, []fieldProblem{inv("brief")}},
		{"brief mode with a blank brief", `{"buying_mode":"brief","brief":"  "}`, []fieldProblem{inv("brief")}},
		{"brief not a string", `{"brief":["a"]}`, []fieldProblem{inv("brief")}},
		{"brief too long", `{"brief":"` + strings.Repeat("b", MaxBriefChars+1) + `"}`, []fieldProblem{inv("brief")}},
		{"brief mode with refine", `{"buying_mode":"brief","brief":"x","refine":[{"scope":"request","ask":"y"}]}`, []fieldProblem{inv("refine")}},
		{"wholesale with a brief", `{"buying_mode":"wholesale","brief":"x"}`, []fieldProblem{inv("brief")}},
		{"wholesale with refine", `{"buying_mode":"wholesale","refine":[{"scope":"request","ask":"y"}]}`, []fieldProblem{inv("refine")}},
		{"refine without entries", `{"buying_mode":"refine","refine":[]}`, []fieldProblem{inv("refine")}},
		{"refine missing", `{"buying_mode":"refine"}`, []fieldProblem{inv("refine")}},
		{"refine with a brief", `{"buying_mode":"refine","brief":"x","refine":[{"scope":"request","ask":"y"}]}`, []fieldProblem{inv("brief")}},
		{"refine not an array", `{"buying_mode":"refine","refine":{"scope":"request"}}`, []fieldProblem{inv("refine"), inv("refine")}},
		{"refine too long", `{"buying_mode":"refine","refine":` + refine(MaxRefine+1) + `}`, []fieldProblem{inv("refine"), inv("refine")}},
		{"refine entry not an object", `{"buying_mode":"refine","refine":["more"]}`, []fieldProblem{inv("refine[0]")}},
		{"refine scope missing", `{"buying_mode":"refine","refine":[{"ask":"more"}]}`, []fieldProblem{inv("refine[0].scope")}},
		{"refine scope unknown", `{"buying_mode":"refine","refine":[{"scope":"campaign"}]}`, []fieldProblem{inv("refine[0].scope")}},
		{"request scope without ask", `{"buying_mode":"refine","refine":[{"scope":"request"}]}`, []fieldProblem{inv("refine[0].ask")}},
		{"request scope with a product id", `{"buying_mode":"refine","refine":[{"scope":"request","ask":"x","product_id":"p"}]}`, []fieldProblem{inv("refine[0].product_id")}},
		{"product scope without product_id", `{"buying_mode":"refine","refine":[{"scope":"product","action":"omit"}]}`, []fieldProblem{inv("refine[0].product_id")}},
		{"product scope bad action", `{"buying_mode":"refine","refine":[{"scope":"product","product_id":"p","action":"finalize"}]}`, []fieldProblem{inv("refine[0].action")}},
		{"proposal scope without proposal_id", `{"buying_mode":"refine","refine":[{"scope":"proposal","action":"finalize"}]}`, []fieldProblem{inv("refine[0].proposal_id")}},
		{"proposal scope bad action", `{"buying_mode":"refine","refine":[{"scope":"proposal","proposal_id":"x","action":"more_like_this"}]}`, []fieldProblem{inv("refine[0].action")}},
		{"finalize mixed with other changes", `{"buying_mode":"refine","refine":[{"scope":"request","ask":"x"},{"scope":"proposal","proposal_id":"p","action":"finalize"}]}`, []fieldProblem{inv("refine[1]")}},
		{"brand without domain", `{"brief":"x","brand":{"brand_id":"b"}}`, []fieldProblem{inv("brand.domain")}},
		{"brand domain upper case", `{"brief":"x","brand":{"domain":"Acme.Example"}}`, []fieldProblem{inv("brand.domain")}},
		{"brand not an object", `{"brief":"x","brand":"acme.example"}`, []fieldProblem{inv("brand")}},
		{"brand industries not strings", `{"brief":"x","brand":{"domain":"acme.example","industries":[1]}}`, []fieldProblem{inv("brand.industries[0]")}},
		{"brand countries", `{"brief":"x","brand":{"domain":"acme.example","countries":["usa"]}}`, []fieldProblem{inv("brand.countries[0]")}},
		{"account_id empty", `{"brief":"x","account":{"account_id":""}}`, []fieldProblem{inv("account.account_id")}},
		{"account_id with brand", `{"brief":"x","account":{"account_id":"a","brand":{"domain":"acme.example"}}}`, []fieldProblem{inv("account.brand")}},
		{"account with neither", `{"brief":"x","account":{"operator":"agency.example"}}`, []fieldProblem{inv("account")}},
		{"account without operator", `{"brief":"x","account":{"brand":{"domain":"acme.example"}}}`, []fieldProblem{inv("account.operator")}},
		{"account operator not a domain", `{"brief":"x","account":{"brand":{"domain":"acme.example"},"operator":"Agency"}}`, []fieldProblem{inv("account.operator")}},
		{"account currency", `{"brief":"x","account":{"brand":{"domain":"acme.example"},"operator":"agency.example","currency":"usd"}}`, []fieldProblem{inv("account.currency")}},
		{"account sandbox not a bool", `{"brief":"x","account":{"brand":{"domain":"acme.example"},"operator":"agency.example","sandbox":"yes"}}`, []fieldProblem{inv("account.sandbox")}},
		{"account unknown key", `{"brief":"x","account":{"brand":{"domain":"acme.example"},"operator":"agency.example","seat":"1"}}`, []fieldProblem{inv("account.seat")}},
		{"account brand without domain", `{"brief":"x","account":{"brand":{},"operator":"agency.example"}}`, []fieldProblem{inv("account.brand.domain")}},
		{"filters not an object", `{"brief":"x","filters":[]}`, []fieldProblem{inv("filters")}},
		{"channel unknown", `{"brief":"x","filters":{"channels":["display","tv"]}}`, []fieldProblem{inv("filters.channels[1]")}},
		{"channels empty", `{"brief":"x","filters":{"channels":[]}}`, []fieldProblem{inv("filters.channels")}},
		{"channels not an array", `{"brief":"x","filters":{"channels":"display"}}`, []fieldProblem{inv("filters.channels")}},
		// The bad item is dropped, which leaves the list empty: both are said.
		{"channel not a string", `{"brief":"x","filters":{"channels":[7]}}`, []fieldProblem{inv("filters.channels[0]"), inv("filters.channels")}},
		{"too many channels", `{"brief":"x","filters":{"channels":` + list(MaxListItems+1) + `}}`, []fieldProblem{inv("filters.channels")}},
		{"format kind unknown", `{"brief":"x","filters":{"format_kinds":["gif"]}}`, []fieldProblem{inv("filters.format_kinds[0]")}},
		{"delivery type unknown", `{"brief":"x","filters":{"delivery_type":"programmatic"}}`, []fieldProblem{inv("filters.delivery_type")}},
		{"budget without currency", `{"brief":"x","filters":{"budget_range":{"max":100}}}`, []fieldProblem{inv("filters.budget_range.currency")}},
		{"budget currency lower case", `{"brief":"x","filters":{"budget_range":{"max":100,"currency":"usd"}}}`, []fieldProblem{inv("filters.budget_range.currency")}},
		{"budget without min or max", `{"brief":"x","filters":{"budget_range":{"currency":"USD"}}}`, []fieldProblem{inv("filters.budget_range")}},
		{"budget negative min", `{"brief":"x","filters":{"budget_range":{"min":-1,"currency":"USD"}}}`, []fieldProblem{inv("filters.budget_range.min")}},
		{"budget negative min and max, in order", `{"brief":"x","filters":{"budget_range":{"min":-2,"max":-1,"currency":"USD"}}}`, []fieldProblem{inv("filters.budget_range.min"), inv("filters.budget_range.max")}},
		{"budget max not a number", `{"brief":"x","filters":{"budget_range":{"max":"lots","currency":"USD"}}}`, []fieldProblem{inv("filters.budget_range.max")}},
		{"budget min above max", `{"brief":"x","filters":{"budget_range":{"min":500,"max":100,"currency":"USD"}}}`, []fieldProblem{{adcp.ValidationError, "filters.budget_range"}}},
		{"start date malformed", `{"brief":"x","filters":{"start_date":"12/01/2026"}}`, []fieldProblem{inv("filters.start_date")}},
		{"end date not a string", `{"brief":"x","filters":{"end_date":20261201}}`, []fieldProblem{inv("filters.end_date")}},
		{"end before start", `{"brief":"x","filters":{"start_date":"2026-12-10","end_date":"2026-12-01"}}`, []fieldProblem{{adcp.ValidationError, "filters.end_date"}}},
		{"pricing currency", `{"brief":"x","filters":{"pricing_currencies":["US"]}}`, []fieldProblem{inv("filters.pricing_currencies[0]")}},
		{"country", `{"brief":"x","filters":{"countries":["gb"]}}`, []fieldProblem{inv("filters.countries[0]")}},
		{"is_fixed_price not a bool", `{"brief":"x","filters":{"is_fixed_price":"true"}}`, []fieldProblem{inv("filters.is_fixed_price")}},
		{"pricing structure", `{"brief":"x","filters":{"pricing_structures":["barter"]}}`, []fieldProblem{inv("filters.pricing_structures[0]")}},
		{"exclusivity", `{"brief":"x","filters":{"exclusivity":"total"}}`, []fieldProblem{inv("filters.exclusivity")}},
		{"video placement type", `{"brief":"x","filters":{"video_placement_types":["outstream"]}}`, []fieldProblem{inv("filters.video_placement_types[0]")}},
		{"audio distribution type", `{"brief":"x","filters":{"audio_distribution_types":["cassette"]}}`, []fieldProblem{inv("filters.audio_distribution_types[0]")}},
		{"required metric", `{"brief":"x","filters":{"required_metrics":["vibes"]}}`, []fieldProblem{inv("filters.required_metrics[0]")}},
		{"standard_formats_only not a bool", `{"brief":"x","filters":{"standard_formats_only":1}}`, []fieldProblem{inv("filters.standard_formats_only")}},
		{"geo country", `{"brief":"x","targeting_overlay":{"geo_countries":["USA"]}}`, []fieldProblem{inv("targeting_overlay.geo_countries[0]")}},
		{"countries contradict geo", `{"brief":"x","filters":{"countries":["US"]},"targeting_overlay":{"geo_countries":["GB"]}}`, []fieldProblem{inv("filters.countries")}},
		{"unknown field name", `{"brief":"x","fields":["product_id","secret"]}`, []fieldProblem{inv("fields[1]")}},
		{"fields empty", `{"brief":"x","fields":[]}`, []fieldProblem{inv("fields")}},
		{"max_results zero", `{"brief":"x","pagination":{"max_results":0}}`, []fieldProblem{inv("pagination.max_results")}},
		{"max_results too large", `{"brief":"x","pagination":{"max_results":101}}`, []fieldProblem{inv("pagination.max_results")}},
		{"max_results not an integer", `{"brief":"x","pagination":{"max_results":"ten"}}`, []fieldProblem{inv("pagination.max_results"), inv("pagination.max_results")}},
		{"pagination unknown key", `{"brief":"x","pagination":{"offset":10}}`, []fieldProblem{inv("pagination.offset")}},
		{"cursor not a string", `{"brief":"x","pagination":{"cursor":5}}`, []fieldProblem{inv("pagination.cursor")}},
		{"push_notification_config not an object", `{"brief":"x","push_notification_config":"https://x"}`, []fieldProblem{inv("push_notification_config")}},
		{"context not an object", `{"brief":"x","context":"abc"}`, []fieldProblem{inv("context")}},
		{"ext not an object", `{"brief":"x","ext":[1]}`, []fieldProblem{inv("ext")}},
		{"every problem is reported", `{"buying_mode":"brief","filters":{"channels":["tv"],"delivery_type":"x"},"fields":["nope"]}`,
			[]fieldProblem{inv("filters.channels[0]"), inv("filters.delivery_type"), inv("fields[0]"), inv("brief")}},
	} {
		t.Run(test.name, func(t *testing.T) {
			_, err := decodeBoth(t, test.args)
			got, ok := problems(err)
			if !ok {
				t.Fatalf("DecodeRequest(%.80s) error = %v, want a *RequestError", test.args, err)
			}
			if diff := cmp.Diff(test.want, got, cmp.AllowUnexported(fieldProblem{})); diff != "" {
				t.Errorf("DecodeRequest(%.80s) problems (-want +got):\n%s", test.args, diff)
			}
			if !strings.HasPrefix(err.Error(), "invalid get_products request: ") {
				t.Errorf("Error() = %q", err.Error())
			}
			var re *RequestError
			errors.As(err, &re)
			for _, p := range re.Problems {
				if p.Detail == "" {
					t.Errorf("problem at %q has no message", p.Path)
				}
			}
		})
	}
}

func TestDecodeRequestProblemCap(t *testing.T) {
	var chs []string
	for i := 0; i < 50; i++ {
		chs = append(chs, fmt.Sprintf("%q", fmt.Sprintf("bad%d", i)))
	}
	_, err := DecodeRequest([]byte(`{"brief":"x","filters":{"channels":[` + strings.Join(chs, ",") + `]}}`))
	got, ok := problems(err)
	if !ok || len(got) != 20 {
		t.Errorf("DecodeRequest(50 bad channels) reported %d problems, want 20", len(got))
	}
}

func TestDecodeRequest(t *testing.T) {
	for _, test := range []struct {
		name  string
		args  string
		check func(*testing.T, *Request)
	}{
		{"empty arguments: a brief request with defaults", ``, func(t *testing.T, r *Request) {
			if r.BuyingMode != "brief" || r.Brief != nil || r.Pagination.MaxResults != DefaultPageSize {
				t.Errorf("defaults = %+v", r)
			}
		}},
		{"empty object", `{}`, func(t *testing.T, r *Request) {
			if r.BuyingMode != "brief" {
				t.Errorf("BuyingMode = %q, want brief", r.BuyingMode)
			}
		}},
		{"buying_mode absent defaults to brief", `{"brief":"video for sports fans"}`, func(t *testing.T, r *Request) {
			if r.BuyingMode != "brief" || r.Brief == nil || *r.Brief != "video for sports fans" {
				t.Errorf("BuyingMode = %q, Brief = %v", r.BuyingMode, r.Brief)
			}
		}},
		{"null is absent", `{"buying_mode":null,"brief":null,"filters":null,"context":null,"brand":null,"account":null,"fields":null,"pagination":null,"refine":null,"ext":null,"push_notification_config":null,"adcp_version":null,"adcp_major_version":null}`, func(t *testing.T, r *Request) {
			if r.BuyingMode != "brief" || r.Brief != nil || r.Context != nil || r.Brand != nil || r.Account != nil || r.Fields != nil || r.Refine != nil || r.AdcpVersion != "" || r.AdcpMajorVersion != 0 {
				t.Errorf("nulls were not treated as absent: %+v", r)
			}
		}},
		{"null inside filters is absent", `{"brief":"x","filters":{"channels":null,"budget_range":null,"start_date":null,"keywords":null}}`, func(t *testing.T, r *Request) {
			if r.Filters.Channels != nil || r.Filters.Budget != nil || !r.Filters.StartDate.IsZero() || r.Filters.Unmodelled != nil {
				t.Errorf("Filters = %+v", r.Filters)
			}
		}},
		{"unknown fields are accepted", `{"brief":"x","future_field":{"a":1},"filters":{"channels":["display"]}}`, func(t *testing.T, r *Request) {
			if len(r.Filters.Channels) != 1 {
				t.Errorf("Filters = %+v", r.Filters)
			}
		}},
		{"unmodelled filters are recorded", `{"brief":"x","filters":{"keywords":["sports"],"postal_areas":{"US":["10001"]},"ext":{"a":1}}}`, func(t *testing.T, r *Request) {
			if !slices.Equal(r.Filters.Unmodelled, []string{"keywords", "postal_areas"}) {
				t.Errorf("Unmodelled = %q, want [keywords postal_areas]", r.Filters.Unmodelled)
			}
		}},
		{"everything", `{
			"adcp_version":"3.2-beta.5","adcp_major_version":3,"idempotency_key":"0123456789abcdef-key",
			"buying_mode":"brief","brief":"Video for sports fans",
			"brand":{"domain":"acme.example","brand_id":"shoes","industries":["retail.footwear"]},
			"account":{"brand":{"domain":"acme.example"},"operator":"agency.example","sandbox":true},
			"filters":{"channels":["olv","ctv"],"format_kinds":["video_vast"],"delivery_type":"guaranteed",
				"budget_range":{"min":1000,"max":50000,"currency":"USD"},"start_date":"2027-01-05","end_date":"2027-01-20",
				"pricing_currencies":["USD"],"countries":["US","CA"],"is_fixed_price":true,"pricing_structures":["fixed"],
				"exclusivity":"none","video_placement_types":["instream"],"required_metrics":["impressions"],"standard_formats_only":true},
			"targeting_overlay":{"geo_countries":["CA","US"]},
			"fields":["name","pricing_options"],
			"pagination":{"max_results":5,"cursor":"abc"},
			"push_notification_config":{"url":"https://buyer.example/hook"},
			"context":{"trace":"t-1"}
		}`, func(t *testing.T, r *Request) {
			min, max := 1000.0, 50000.0
			fixed := true
			want := &Request{
				AdcpVersion: "3.2-beta.5", AdcpMajorVersion: 3, IdempotencyKey: "0123456789abcdef-key",
				BuyingMode: "brief", Brief: ptr("Video for sports fans"),
				Brand:   &BrandRef{Domain: "acme.example", BrandID: "shoes", Industries: []string{"retail.footwear"}},
				Account: &AccountRef{Brand: &BrandRef{Domain: "acme.example"}, Operator: "agency.example", Sandbox: true},
				Filters: Filters{
					Channels: []string{"olv", "ctv"}, FormatKinds: []string{"video_vast"}, DeliveryType: "guaranteed",
					Budget:    &BudgetRange{Min: &min, Max: &max, Currency: "USD"},
					StartDate: adcp.MustDate("2027-01-05"), EndDate: adcp.MustDate("2027-01-20"),
					PricingCurrencies: []string{"USD"}, Countries: []string{"US", "CA"}, IsFixedPrice: &fixed,
					PricingStructures: []string{"fixed"}, Exclusivity: "none", VideoPlacementTypes: []string{"instream"},
					RequiredMetrics: []string{"impressions"}, StandardFormatsOnly: true,
				},
				GeoCountries:     []string{"CA", "US"},
				Fields:           []string{"name", "pricing_options"},
				Pagination:       PageRequest{MaxResults: 5, Cursor: "abc"},
				PushNotification: json.RawMessage(`{"url":"https://buyer.example/hook"}`),
				Context:          json.RawMessage(`{"trace":"t-1"}`),
			}
			// The decoded push configuration belongs to the task feature
			// and is tested with it; here only the raw object matters.
			ignorePush := cmp.FilterPath(func(p cmp.Path) bool {
				sf, ok := p.Last().(cmp.StructField)
				return ok && sf.Name() == "Push"
			}, cmp.Ignore())
			if diff := cmp.Diff(want, r, cmp.Comparer(func(a, b adcp.Date) bool { return a == b }), ignorePush); diff != "" {
				t.Errorf("decoded request (-want +got):\n%s", diff)
			}
			if got := r.Account.Key(); got != "nk:agency.example/acme.example+sandbox" {
				t.Errorf("Account.Key() = %q", got)
			}
		}},
		{"refine entries", `{"buying_mode":"refine","refine":[{"scope":"request","ask":"more video"},{"scope":"product","product_id":"p1","action":"omit"},{"scope":"product","product_id":"p2"},{"scope":"proposal","proposal_id":"x"}]}`, func(t *testing.T, r *Request) {
			want := []RefineEntry{
				{Scope: "request", Ask: "more video"},
				{Scope: "product", ProductID: "p1", Action: "omit"},
				{Scope: "product", ProductID: "p2", Action: "include"},
				{Scope: "proposal", ProposalID: "x", Action: "include"},
			}
			if diff := cmp.Diff(want, r.Refine); diff != "" {
				t.Errorf("Refine (-want +got):\n%s", diff)
			}
		}},
		{"finalize alone", `{"buying_mode":"refine","refine":[{"scope":"proposal","proposal_id":"a","action":"finalize"},{"scope":"proposal","proposal_id":"b","action":"finalize"}]}`, func(t *testing.T, r *Request) {
			if len(r.Refine) != 2 {
				t.Errorf("Refine = %+v", r.Refine)
			}
		}},
		{"wholesale", `{"buying_mode":"wholesale"}`, func(t *testing.T, r *Request) {
			if r.BuyingMode != "wholesale" || r.Brief != nil {
				t.Errorf("request = %+v", r)
			}
		}},
		{"countries agreeing with geo", `{"brief":"x","filters":{"countries":["US","CA"]},"targeting_overlay":{"geo_countries":["CA","US"]}}`, func(t *testing.T, r *Request) {
			if len(r.GeoCountries) != 2 {
				t.Errorf("GeoCountries = %q", r.GeoCountries)
			}
		}},
		{"account by id", `{"brief":"x","account":{"account_id":"acct_1"}}`, func(t *testing.T, r *Request) {
			if r.Account == nil || r.Account.Key() != "id:acct_1" {
				t.Errorf("Account = %+v", r.Account)
			}
		}},
		{"idempotency key at the limits", `{"brief":"x","idempotency_key":"` + strings.Repeat("k", 16) + `"}`, func(t *testing.T, r *Request) {}},
	} {
		t.Run(test.name, func(t *testing.T) {
			r, err := decodeBoth(t, test.args)
			if err != nil {
				t.Fatalf("DecodeRequest(%.80s) = %v", test.args, err)
			}
			test.check(t, r)
		})
	}
}

func ptr[T any](v T) *T { return &v }

func TestAccountRefKey(t *testing.T) {
	var none *AccountRef
	for _, test := range []struct {
		ref  *AccountRef
		want string
	}{
		{none, ""},
		{&AccountRef{AccountID: "a1"}, "id:a1"},
		{&AccountRef{Operator: "agency.example", Brand: &BrandRef{Domain: "acme.example"}}, "nk:agency.example/acme.example"},
		{&AccountRef{Operator: "agency.example", Brand: &BrandRef{Domain: "acme.example", BrandID: "shoes"}, Sandbox: true}, "nk:agency.example/acme.example#shoes+sandbox"},
	} {
		if got := test.ref.Key(); got != test.want {
			t.Errorf("Key(%+v) = %q, want %q", test.ref, got, test.want)
		}
	}
}

// decodeBoth decodes args as DecodeRequest does and, when they parse, as
// the agent's door hands them over, already parsed; the two must agree.
func decodeBoth(t *testing.T, args string) (*Request, error) {
	t.Helper()
	r, err := DecodeRequest([]byte(args))
	if doc, perr := jsonfield.Parse([]byte(args)); perr == nil {
		r2, err2 := decodeRequest([]byte(args), &doc)
		if !reflect.DeepEqual(r, r2) || !reflect.DeepEqual(err, err2) {
			t.Errorf("%s: decoded from its parse, %+v, %v; from its bytes, %+v, %v", args, r2, err2, r, err)
		}
	}
	return r, err
}
