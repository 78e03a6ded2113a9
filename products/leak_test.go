package products_test

// The leak test. A publisher's rulebook and catalogue carry confidential
// strings (rule ids, names, notes, partner names, ad-server references),
// and the same strings also turn up, disguised, in places the storefront
// does show: the voice templates, product names and descriptions, and the
// buyers' own briefs. Many requests covering every arm and every slug run
// through the real Service; no buyer-visible string may carry any
// confidential term in any disguise.

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/storefront/storefront/adcp"
	"github.com/storefront/storefront/demo"
	"github.com/storefront/storefront/internal/spectest"
	"github.com/storefront/storefront/merch"
	"github.com/storefront/storefront/products"
	"github.com/storefront/storefront/sanitize"
	"github.com/storefront/storefront/store"
	"github.com/storefront/storefront/vocab"
)

const lakeside = "lakeside"

// secrets are the confidential strings, listed by hand rather than taken
// from products.DenyTerms: the test must not trust the code it checks to
// say what is secret.
var secrets = []string{
	// rule ids
	"ZX-4471-HOLIDAY-FLOOR", "ZX-1187-CHAN", "ZX-3310-SELLOUT", "ZX-0412-LEAD", "ZX-5120-GEO",
	"ZX-6001-FMT", "ZX-7007-CAT", "ZX-8080-CUR", "ZX-7010-KW",
	// rule names
	"Orchid floor after the Kestrel upfront", "Channel carriage (Project Lighthouse)",
	"Holiday sellout to Acme Retail Group", "Trafficking lead via Magnite sync",
	"Brightline licence territories", "Renderable kinds until Celtra ships",
	"Standards bans held by Marta Okafor", "Settlement currencies per Osprey Treasury",
	"Trust screen (TS-INTAKE)",
	// confidential terms and what the notes name
	"Halcyon Partners", "Brightline Studios", "Dana Whitfield", "Kestrel", "YLD-4471",
	"Project Lighthouse", "Orbital Outdoor", "Acme Retail Group", "55-1029", "OPS-77",
	"ENG-2210", "Marta Okafor", "Osprey Treasury", "TS-INTAKE",
	// vendors the notes and templates mention
	"Magnite", "Celtra", "FreeWheel",
}

// internalRefs are the catalogue's confidential references.
func internalRefs() []string {
	var out []string
	for _, p := range demo.Products() {
		out = append(out, p.InternalRef)
	}
	return out
}

func lakesideRulebook() merch.Rulebook {
	lead := 3
	return merch.Rulebook{
		Format: merch.Format,
		Voice: vocab.Voice{
			SellerName: "Lakeside Media",
			Tone:       vocab.Formal,
			Templates: map[vocab.Slug]string{
				// Publishers paste their own working notes into templates.
				vocab.BudgetBelowMinimum:   "Under ｚｘ－４４７１－ｈｏｌｉｄａｙ－ｆｌｏｏｒ the floor is {{minimum}}. Budgets of {{minimum}} or more fit this inventory.",
				vocab.ChannelNotOffered:    "{{seller}} carries {{channels}}. The rest went with P r o j e c t  L i g h t h o u s e.",
				vocab.FlightUnavailable:    "Those dates went to Ａｃｍｅ Ｒｅｔａｉｌ Ｇｒｏｕｐ. An open flight runs {{open_flight}}.",
				vocab.LeadTimeTooShort:     "Trafficking needs {{lead_time}} through M\u200ba\u200bg\u200bn\u200bi\u200bt\u200be. Start on or after {{earliest_start}}.",
				vocab.GeoNotServed:         "Brightline Stud\u0456os licences cover {{markets}} only.",
				vocab.FormatNotOffered:     "Only {{formats}} render until \u0421\u0435ltra ships (eng 2210).",
				vocab.CategoryNotAccepted:  "Blocked by zx.7007.cat; ask M.a.r.t.a O.k.a.f.o.r.",
				vocab.CommerciallyDeclined: "Settlement runs only through osprey\u00adtreasury for {{seller}}.",
			},
		},
		Rules: []merch.Rule{
			{ID: "ZX-4471-HOLIDAY-FLOOR", Name: "Orchid floor after the Kestrel upfront",
				Notes:             "Protects the Kestrel guaranteed deals agreed with Dana Whitfield. Ticket YLD-4471.",
				ConfidentialTerms: []string{"Halcyon Partners"},
				When: merch.Condition{BudgetBelow: &merch.BudgetFloor{Currency: "USD", Minimum: 1000,
					PerChannel: map[string]float64{"display": 1000, "olv": 2500, "streaming_audio": 2000, "ctv": 25000}}},
				Decline: merch.Action{Slug: vocab.BudgetBelowMinimum, Disclosure: vocab.Range, Suggest: []vocab.SuggestionKind{vocab.RaiseBudget, vocab.SwitchChannel}}},
			{ID: "ZX-1187-CHAN", Name: "Channel carriage (Project Lighthouse)",
				Notes:   "Linear and podcast deals were exited; Orbital Outdoor holds the panels now.",
				When:    merch.Condition{ChannelsOffered: []string{"display", "olv", "ctv", "streaming_audio"}},
				Decline: merch.Action{Slug: vocab.ChannelNotOffered, Disclosure: vocab.Category, Suggest: []vocab.SuggestionKind{vocab.SwitchChannel}}},
			{ID: "ZX-3310-SELLOUT", Name: "Holiday sellout to Acme Retail Group",
				Notes:   "Sold in the upfront (IO 55-1029). Do not disclose the advertiser.",
				When:    merch.Condition{Channels: []string{"ctv"}, SoldOut: []merch.Window{{Start: adcp.MustDate("2026-12-18"), End: adcp.MustDate("2027-01-02")}}},
				Decline: merch.Action{Slug: vocab.FlightUnavailable, Disclosure: vocab.Exact, Suggest: []vocab.SuggestionKind{vocab.MoveFlight}}},
			{ID: "ZX-0412-LEAD", Name: "Trafficking lead via Magnite sync",
				Notes:   "Ad ops needs three days; see runbook OPS-77.",
				When:    merch.Condition{LeadTimeDays: &lead},
				Decline: merch.Action{Slug: vocab.LeadTimeTooShort, Disclosure: vocab.Exact, Suggest: []vocab.SuggestionKind{vocab.LaterStart}}},
			{ID: "ZX-5120-GEO", Name: "Brightline licence territories",
				ConfidentialTerms: []string{"Brightline Studios"},
				When:              merch.Condition{CountriesServed: []string{"US", "CA", "GB"}},
				Decline:           merch.Action{Slug: vocab.GeoNotServed, Disclosure: vocab.Range, Suggest: []vocab.SuggestionKind{vocab.TargetMarket}}},
			{ID: "ZX-6001-FMT", Name: "Renderable kinds until Celtra ships",
				Notes:   "ENG-2210 tracks the rich media work.",
				When:    merch.Condition{FormatKindsOffered: []string{"image", "video_hosted", "video_vast", "audio_hosted"}},
				Decline: merch.Action{Slug: vocab.FormatNotOffered, Disclosure: vocab.Category, Suggest: []vocab.SuggestionKind{vocab.ChangeFormat}}},
			{ID: "ZX-7007-CAT", Name: "Standards bans held by Marta Okafor",
				When:    merch.Condition{Industries: []string{"gambling_betting"}},
				Decline: merch.Action{Slug: vocab.CategoryNotAccepted, Disclosure: vocab.Category}},
			{ID: "ZX-8080-CUR", Name: "Settlement currencies per Osprey Treasury",
				When:    merch.Condition{CurrenciesAccepted: []string{"USD", "GBP", "CAD", "EUR"}},
				Decline: merch.Action{Slug: vocab.CommerciallyDeclined, Disclosure: vocab.Category}},
			{ID: "ZX-7010-KW", Name: "Trust screen (TS-INTAKE)",
				When:    merch.Condition{Keywords: []string{"casino"}},
				Decline: merch.Action{Slug: vocab.CategoryNotAccepted, Disclosure: vocab.None}},
		},
	}
}

// lakesideCatalogue is the demo catalogue with confidential strings
// disguised in some names and descriptions, and one in a ranking keyword.
func lakesideCatalogue() []products.Product {
	ps := demo.Products()
	for i := range ps {
		for j := range ps[i].PublisherProperties {
			ps[i].PublisherProperties[j].PublisherDomain = strings.ReplaceAll(ps[i].PublisherProperties[j].PublisherDomain, "northwind", "lakeside")
		}
	}
	ps[0].Name = "Run-of-Site MREC (ｇａｍ-ｌｉ-８８２１３)"
	ps[0].Description = "Medium rectangles sitewide. Line item G A M L I 8 8 2 1 3 in the ad server."
	ps[1].Description = "Homepage takeover priced per the zx\u20114471 holiday floor. Full-day exclusivity."
	ps[6].Name = "News Pre-roll via F r e e W h e e l"
	ps[6].Description = "Pre-roll on news clips. Reserved for the K\u200cestrel upfront."
	ps[11].Description = "Premium series held for Acme\u200dRetail\u200dGroup. Drama and sport."
	ps[16].Name = "Music Streams (Вrightline Studios)" // Cyrillic В
	ps[16].Keywords = append(ps[16].Keywords, "kestrel", "whitfield")
	ps[20].Description = "Travel stories. Booked through TRITON ST 5850 by halcyon-partners."
	return ps
}

// briefs the buyers send: some repeat, disguised, what they have heard.
var leakBriefs = []string{
	"Kestrel music for Dana Whitfield fans",
	"We heard the ｚｘ-４４７１ floor was waived by Halcyon Partners",
	"A c m e Retail Group sports video, like Project Lighthouse",
}

// leakCase is one request of the sweep.
type leakCase struct {
	name      string
	principal products.Principal
	args      string
}

func leakCases() []leakCase {
	ctx := `"context":{"note":"ZX-4471-HOLIDAY-FLOOR for Dana Whitfield"}`
	var out []leakCase
	add := func(name string, p products.Principal, body string) {
		out = append(out, leakCase{name, p, "{" + body + "," + ctx + "}"})
	}
	declines := []struct{ name, body string }{
		{"budget", `"filters":{"channels":["ctv"],"budget_range":{"max":10000,"currency":"USD"}}`},
		{"channel", `"filters":{"channels":["podcast"]}`},
		{"flight", `"filters":{"channels":["ctv"],"start_date":"2026-12-20","end_date":"2026-12-27"}`},
		{"lead", `"filters":{"start_date":"2026-11-29","end_date":"2026-12-06"}`},
		{"geo", `"targeting_overlay":{"geo_countries":["DE","FR"]}`},
		{"format", `"filters":{"format_kinds":["html5"]}`},
		{"category", `"brand":{"domain":"bet.example","industries":["gambling_betting.casino"]}`},
		{"currency", `"filters":{"pricing_currencies":["JPY"]}`},
		{"keywords", `"filters":{"channels":["display"]},"refine":null`},
		{"compound", `"filters":{"channels":["ctv"],"budget_range":{"max":10000,"currency":"USD"},"start_date":"2026-11-30","end_date":"2026-12-06"}`},
		{"everything at once", `"filters":{"channels":["podcast"],"format_kinds":["html5"],"pricing_currencies":["JPY"],"budget_range":{"max":10,"currency":"USD"},"start_date":"2026-11-30","end_date":"2026-12-06"},"targeting_overlay":{"geo_countries":["DE"]},"brand":{"domain":"bet.example","industries":["gambling_betting"]}`},
	}
	for _, version := range []string{"3.2-beta.5", "3.2-beta.4", "3.1", "3.0"} {
		for i, d := range declines {
			brief := leakBriefs[i%len(leakBriefs)]
			if d.name == "keywords" {
				brief = "Kestrel casino night for Okafor"
			}
			add(version+" decline "+d.name, anonymous, fmt.Sprintf(`"adcp_version":%q,"brief":%q,%s`, version, brief, d.body))
		}
		for i, b := range leakBriefs {
			add(fmt.Sprintf("%s completed %d", version, i), anonymous, fmt.Sprintf(`"adcp_version":%q,"brief":%q`, version, b))
		}
	}
	add("wholesale", anonymous, `"adcp_version":"3.2-beta.5","buying_mode":"wholesale","pagination":{"max_results":100}`)
	add("brief relevance", anonymous, `"adcp_version":"3.2-beta.5","brief":"kestrel whitfield music streams","fields":["brief_relevance"]`)
	add("refine", anonymous, `"adcp_version":"3.2-beta.5","buying_mode":"refine","refine":[{"scope":"request","ask":"more Kestrel and Halcyon Partners"},{"scope":"product","product_id":"nw_display_ros_mrec","action":"more_like_this","ask":"like GAM-LI-88213"},{"scope":"proposal","proposal_id":"ZX-4471","action":"include"}]`)
	add("account", agency, `"adcp_version":"3.2-beta.5","brief":"Kestrel video","account":{"brand":{"domain":"acme.example"},"operator":"agency.example"}`)
	add("account decline", agency, `"adcp_version":"3.2-beta.5","brief":"Dana Whitfield CTV","filters":{"channels":["ctv"],"budget_range":{"max":100,"currency":"USD"}},"account":{"brand":{"domain":"acme.example"},"operator":"agency.example"}`)
	// Failures. The values at fault are not secret (a buyer's own input
	// is echoed, and echoing it cannot disclose anything), but the briefs
	// around them are.
	add("invalid", anonymous, `"adcp_version":"3.2-beta.5","buying_mode":"brief","brief":"","filters":{"channels":["tv"]}`)
	add("invalid with a brief", anonymous, `"adcp_version":"3.2-beta.5","brief":"Kestrel for Dana Whitfield","filters":{"delivery_type":"programmatic"}`)
	add("unsupported version", anonymous, `"adcp_version":"4.0","brief":"Kestrel for Dana Whitfield"`)
	add("auth missing", anonymous, `"adcp_version":"3.2-beta.5","brief":"Kestrel","account":{"brand":{"domain":"acme.example"},"operator":"agency.example"}`)
	add("forged cursor", anonymous, `"adcp_version":"3.2-beta.5","brief":"Kestrel","pagination":{"cursor":"WlgtNDQ3MQ"}`)
	add("finalize", anonymous, `"adcp_version":"3.2-beta.5","buying_mode":"refine","refine":[{"scope":"proposal","proposal_id":"prop_1","action":"finalize"}]`)
	// Compliance directives: forced text is screened as the caller's own.
	forced := `"adcp_version":"3.2-beta.5","brief":"Kestrel","account":{"brand":{"domain":"kit.example"},"operator":"agency.example","sandbox":true}`
	add("forced rejection", agency, forced)
	add("forced submission", agency, forced)
	add("forced legacy rejection", agency, strings.Replace(forced, "3.2-beta.5", "3.1", 1))
	return out
}

// leak is one confidential term found in a buyer-visible string.
type leak struct {
	path, value, term string
}

// findLeaks walks a payload and reports every string (and key) outside
// the echoed context whose skeleton contains a secret's skeleton.
func findLeaks(payload []byte, terms []string) []leak {
	var v any
	if err := json.Unmarshal(payload, &v); err != nil {
		return []leak{{"", string(payload), "payload is not JSON"}}
	}
	var out []leak
	check := func(path, s string) {
		sk := sanitize.Skeleton(s)
		for _, term := range terms {
			if ts := sanitize.Skeleton(term); ts != "" && strings.Contains(sk, ts) {
				out = append(out, leak{path, s, term})
			}
		}
	}
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, c := range x {
				if path == "" && k == "context" {
					continue // the buyer's own object, echoed unchanged
				}
				check(path+"/"+k+" (key)", k)
				walk(path+"/"+k, c)
			}
		case []any:
			for i, c := range x {
				walk(fmt.Sprintf("%s/%d", path, i), c)
			}
		case string:
			check(path, x)
		}
	}
	walk("", v)
	return out
}

// leakEnv serves the lakeside publisher and returns the id of the
// agency's sandbox account, which compliance directives are armed for.
func leakEnv(t *testing.T) (*env, string) {
	t.Helper()
	rb := lakesideRulebook()
	if err := rb.Validate(); err != nil {
		t.Fatalf("the leak test's rulebook must be valid, or every answer is an outage: %v", err)
	}
	for _, p := range lakesideCatalogue() {
		if err := p.Validate(); err != nil {
			t.Fatalf("product %s: %v", p.ProductID, err)
		}
	}
	e := newEnv(t)
	e.publisher(t, lakeside, lakesideCatalogue(), &rb)
	acct, err := e.store.EnsureAccount(context.Background(), lakeside, store.Account{
		Operator: "agency.example", BrandDomain: "kit.example", Sandbox: true, Disclosure: vocab.Exact,
	})
	if err != nil {
		t.Fatal(err)
	}
	return e, acct.ID
}

// directive arms a compliance directive whose text is full of what a
// seller's answer must never carry and a caller might type: vendor names,
// disguised, and markup. The caller's own words are never matched against
// the publisher's deny-list (that would confirm guesses: see
// TestForcedTextIsNoOracle), so the publisher's secrets are not typed here.
func directive(t *testing.T, e *env, acctID string, arm string) {
	t.Helper()
	d := products.Directive{
		Arm:         arm,
		Reason:      "Forced by the <b>Magnite</b> sync. The brief was declined.",
		Suggestions: []string{"Ask Ｃｅｌｔｒａ.", "Call Free\u200bWheel.", "Raise the budget."},
		TaskID:      "task_lakeside_1",
		Message:     "Queued for <i>FreeWheel</i> review.",
	}
	if err := e.store.SetDirective(context.Background(), lakeside, acctID, agency.ID, d); err != nil {
		t.Fatal(err)
	}
}

func TestLeak(t *testing.T) {
	e, acctID := leakEnv(t)
	terms := append(append([]string(nil), secrets...), internalRefs()...)

	arms := map[string]int{}
	slugs := map[string]bool{}
	forcedRejections := 0
	for _, c := range leakCases() {
		switch c.name {
		case "forced rejection", "forced legacy rejection":
			directive(t, e, acctID, "rejected")
		case "forced submission":
			directive(t, e, acctID, "submitted")
		}
		r, m := e.get(t, lakeside, c.principal, c.args)
		status, _ := m["status"].(string)
		// A fields projection leaves out product properties the official
		// response schema requires, so only full answers are validated.
		if !strings.Contains(c.args, `"fields"`) {
			spectest.GetProducts(t, r.Payload)
		}
		arms[status]++
		for _, l := range findLeaks(r.Payload, terms) {
			t.Errorf("%s: %s = %q carries %q", c.name, l.path, l.value, l.term)
		}
		if strings.HasPrefix(c.name, "forced") && strings.HasSuffix(c.name, "rejection") && r.Trace.Forced {
			forcedRejections++
		}
		if status == "rejected" {
			slugs[string(r.Outcome.Slug())] = true
		}
		for _, e := range r.Outcome.Errors() {
			if s := e.DeclineSlug(); s != "" {
				slugs[string(s)] = true
			}
		}
		if status == "completed" {
			for _, p := range productsOf(t, m) {
				if n, _ := p["name"].(string); n == "" {
					t.Errorf("%s: product %v has no name", c.name, p["product_id"])
				}
			}
		}
	}

	// The sweep is only worth something if it reached every arm and every
	// slug.
	for _, arm := range []string{"completed", "rejected", "failed", "submitted"} {
		if arms[arm] == 0 {
			t.Errorf("no case produced a %s answer (arms: %v)", arm, arms)
		}
	}
	if forcedRejections != 2 {
		t.Errorf("%d forced rejections, want 2: the directive path was not exercised", forcedRejections)
	}
	for _, s := range vocab.Slugs() {
		if !slugs[s] {
			t.Errorf("no case declined with %s (slugs: %v)", s, keys(slugs))
		}
	}
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// TestLeakDisguisesAreReal checks the fixture: every template, every
// planted product string and every brief really carries a secret, in a
// form that differs from the secret as written, so the sweep above tests
// the screen and not a typo.
func TestLeakDisguisesAreReal(t *testing.T) {
	terms := append(append([]string(nil), secrets...), internalRefs()...)
	carries := func(s string) string {
		for _, term := range terms {
			if strings.Contains(sanitize.Skeleton(s), sanitize.Skeleton(term)) {
				return term
			}
		}
		return ""
	}
	var planted []string
	for _, tmpl := range lakesideRulebook().Voice.Templates {
		planted = append(planted, tmpl)
	}
	ps := lakesideCatalogue()
	planted = append(planted, ps[0].Name, ps[0].Description, ps[1].Description, ps[6].Name, ps[6].Description, ps[11].Description, ps[16].Name, ps[20].Description)
	planted = append(planted, leakBriefs...)
	for _, s := range planted {
		term := carries(s)
		if term == "" {
			t.Errorf("%q carries no secret", s)
			continue
		}
		if strings.Contains(s, term) {
			// Plain copies are fine for briefs; templates and products
			// must disguise what they carry.
			if !slicesContains(leakBriefs, s) {
				t.Errorf("%q carries %q undisguised", s, term)
			}
		}
	}
}

func slicesContains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestLeakWithoutScreen shows the sweep can fail: with the screen
// replaced by one that has an empty deny-list, the same requests leak.
func TestLeakWithoutScreen(t *testing.T) {
	e, _ := leakEnv(t)
	terms := append(append([]string(nil), secrets...), internalRefs()...)
	real, err := e.snaps.Snapshot(context.Background(), lakeside)
	if err != nil {
		t.Fatal(err)
	}
	bypassed := *real
	bypassed.Screen = sanitize.New(nil)

	preview := func(snap *products.Snapshot, args string) []leak {
		r := e.svc.Preview(context.Background(), products.Call{Publisher: lakeside, Args: []byte(args)}, snap)
		return findLeaks(r.Payload, terms)
	}
	budget := `{"adcp_version":"3.2-beta.5","brief":"CTV","filters":{"channels":["ctv"],"budget_range":{"max":10000,"currency":"USD"}}}`
	if l := preview(real, budget); len(l) != 0 {
		t.Errorf("through the real screen: %v", l)
	}
	l := preview(&bypassed, budget)
	if len(l) == 0 {
		t.Fatal("without the screen the budget decline leaked nothing: the sweep could not catch a bypass")
	}
	if l[0].term != "ZX-4471-HOLIDAY-FLOOR" || l[0].path != "/reason" {
		t.Errorf("without the screen: %+v, want the rule id in /reason", l[0])
	}

	total := 0
	for _, c := range leakCases() {
		if c.principal.ID != "" {
			continue
		}
		total += len(preview(&bypassed, c.args))
	}
	if total < 10 {
		t.Errorf("without the screen the sweep found %d leaks, want many", total)
	}
}
