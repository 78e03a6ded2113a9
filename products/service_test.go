package products_test

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/storefront/storefront/adcp"
	"github.com/storefront/storefront/decline"
	"github.com/storefront/storefront/demo"
	"github.com/storefront/storefront/internal/spectest"
	"github.com/storefront/storefront/ledger"
	"github.com/storefront/storefront/merch"
	"github.com/storefront/storefront/outcome"
	"github.com/storefront/storefront/products"
	"github.com/storefront/storefront/sanitize"
	"github.com/storefront/storefront/store"
	"github.com/storefront/storefront/vocab"
)

const nw = demo.PublisherID

func TestServiceCompleted(t *testing.T) {
	e := demoEnv(t)
	args := `{"adcp_version":"3.2-beta.5","brief":"Pre-roll video for sports fans","context":{"trace":"t-1","n":[1,2]}}`
	r, m := e.get(t, nw, anonymous, args)
	if got := spectest.GetProducts(t, r.Payload); got != "completed" {
		t.Fatalf("status = %q, want completed: %s", got, r.Payload)
	}
	if !r.Outcome.OK() || r.Outcome.Arm() != outcome.Completed {
		t.Errorf("Outcome = %v, OK %v", r.Outcome.Arm(), r.Outcome.OK())
	}
	ps := productsOf(t, m)
	if len(ps) == 0 {
		t.Fatal("no products for a brief the catalogue carries")
	}
	if got := ids(ps)[0]; got != "nw_olv_sports_highlights" {
		t.Errorf("top product = %q, want nw_olv_sports_highlights (name and keywords match the brief)", got)
	}
	if m["cache_scope"] != "public" {
		t.Errorf("cache_scope = %v, want public", m["cache_scope"])
	}
	if diff := cmp.Diff(map[string]any{"trace": "t-1", "n": []any{1.0, 2.0}}, m["context"]); diff != "" {
		t.Errorf("context not echoed (-want +got):\n%s", diff)
	}
	for _, p := range ps {
		if _, ok := p["internal_ref"]; ok {
			t.Errorf("product %v carries internal_ref", p["product_id"])
		}
		for _, k := range []string{"countries", "availability", "keywords"} {
			if _, ok := p[k]; ok {
				t.Errorf("product %v carries the catalogue-only field %q", p["product_id"], k)
			}
		}
	}
	if e.ledgerLen(t, nw) != 1 {
		t.Errorf("ledger has %d entries, want 1", e.ledgerLen(t, nw))
	}
	entry := e.lastEntry(t, nw)
	if entry.Arm != "completed" || entry.ResponseDigest != ledger.Digest(r.Payload) || entry.RequestDigest != ledger.Digest([]byte(args)) || len(entry.RuleIDs) != 0 {
		t.Errorf("ledger entry = %+v", entry)
	}

	// Ranking is deterministic: the same call gives the same bytes.
	r2, _ := e.get(t, nw, anonymous, args)
	if string(r2.Payload) != string(r.Payload) {
		t.Errorf("second call differs:\n%s\n%s", r.Payload, r2.Payload)
	}
}

func TestServiceNoMatchIsNotADecline(t *testing.T) {
	e := demoEnv(t)
	r, m := e.get(t, nw, anonymous, `{"adcp_version":"3.2-beta.5","brief":"x","filters":{"channels":["ctv"],"delivery_type":"non_guaranteed","countries":["GB"]}}`)
	if got := spectest.GetProducts(t, r.Payload); got != "completed" {
		t.Fatalf("status = %q, want completed: %s", got, r.Payload)
	}
	if ps := productsOf(t, m); len(ps) != 0 {
		t.Errorf("products = %v, want none", ids(ps))
	}
	if m["cache_scope"] != "public" || m["filter_diagnostics"] == nil {
		t.Errorf("no-match payload = %s, want cache_scope and filter_diagnostics", r.Payload)
	}
}

// declineCases are briefs the demo rulebook declines, one per slug, with
// the suggestion kinds the decline should carry.
var declineCases = []struct {
	name      string
	args      string
	slug      vocab.Slug
	ruleID    string
	wantKinds []vocab.SuggestionKind
}{
	{"budget", `{"brief":"CTV","filters":{"channels":["ctv"],"budget_range":{"max":10000,"currency":"USD"}}}`,
		vocab.BudgetBelowMinimum, "MR-2291-CTV-FLOOR", []vocab.SuggestionKind{vocab.RaiseBudget, vocab.SwitchChannel}},
	{"channel", `{"brief":"podcast listeners","filters":{"channels":["podcast"]}}`,
		vocab.ChannelNotOffered, "MR-1187-CHANNELS", []vocab.SuggestionKind{vocab.SwitchChannel}},
	{"flight", `{"brief":"holiday CTV","filters":{"channels":["ctv"],"start_date":"2026-12-20","end_date":"2026-12-27"}}`,
		vocab.FlightUnavailable, "MR-3310-HOLIDAY-SELLOUT", []vocab.SuggestionKind{vocab.MoveFlight}},
	{"lead time", `{"brief":"display soon","filters":{"start_date":"2026-11-29","end_date":"2026-12-06"}}`,
		vocab.LeadTimeTooShort, "MR-0412-LEADTIME", []vocab.SuggestionKind{vocab.LaterStart}},
	{"geo", `{"brief":"video in Germany","targeting_overlay":{"geo_countries":["DE"]}}`,
		vocab.GeoNotServed, "MR-5120-GEO", []vocab.SuggestionKind{vocab.TargetMarket}},
	{"format", `{"brief":"rich media","filters":{"format_kinds":["html5"]}}`,
		vocab.FormatNotOffered, "MR-6001-FORMATS", []vocab.SuggestionKind{vocab.ChangeFormat}},
	{"category", `{"brief":"bets","brand":{"domain":"bet.example","industries":["gambling_betting.casino"]}}`,
		vocab.CategoryNotAccepted, "MR-7007-S&P-CATEGORIES", nil},
	{"keywords at level none", `{"brief":"launch our new casino app"}`,
		vocab.CommerciallyDeclined, "MR-7010-TS-KEYWORDS", nil},
}

// withVersion sets adcp_version on a JSON object literal.
func withVersion(args, version string) string {
	return `{"adcp_version":"` + version + `",` + strings.TrimPrefix(args, "{")
}

func TestServiceRejected(t *testing.T) {
	for _, test := range declineCases {
		t.Run(test.name, func(t *testing.T) {
			e := demoEnv(t)
			r, m := e.get(t, nw, anonymous, withVersion(test.args, "3.2-beta.5"))
			if got := spectest.GetProducts(t, r.Payload); got != "rejected" {
				t.Fatalf("status = %q, want rejected: %s", got, r.Payload)
			}
			if !r.Outcome.OK() {
				t.Error("a rejection is not OK")
			}
			ext := m["ext"].(map[string]any)[outcome.Namespace].(map[string]any)
			dec := ext["decline"].(map[string]any)
			if dec["slug"] != string(test.slug) {
				t.Errorf("slug = %v, want %s", dec["slug"], test.slug)
			}
			entry, _ := vocab.Lookup(test.slug)
			fixable := len(test.wantKinds) > 0
			if dec["fixable"] != fixable || (fixable && !entry.Fixable) {
				t.Errorf("fixable = %v, want %v", dec["fixable"], fixable)
			}
			sugg, _ := m["suggestions"].([]any)
			if fixable != (len(sugg) > 0) {
				t.Errorf("suggestions = %v, want some: %v", sugg, fixable)
			}
			var kinds []vocab.SuggestionKind
			for _, s := range r.Trace.Suggestions {
				for _, k := range s.Kinds {
					if !slices.Contains(kinds, vocab.SuggestionKind(k)) {
						kinds = append(kinds, vocab.SuggestionKind(k))
					}
				}
			}
			if !slices.Equal(kinds, test.wantKinds) {
				t.Errorf("suggestion kinds = %v, want %v", kinds, test.wantKinds)
			}
			reason, _ := m["reason"].(string)
			if reason == "" || strings.Contains(reason, test.ruleID) {
				t.Errorf("reason = %q", reason)
			}

			// The decision is in the ledger, with the rule that fired, and
			// the receipt names that entry.
			le := e.lastEntry(t, nw)
			if le.Arm != "rejected" || le.Slug != test.slug || !slices.Contains(le.RuleIDs, test.ruleID) {
				t.Errorf("ledger entry = %+v", le)
			}
			rc := ext["receipt"].(map[string]any)
			if rc["sequence"] != float64(le.Sequence) || rc["entry_hash"] != le.Hash {
				t.Errorf("receipt = %v, ledger entry %d %s", rc, le.Sequence, le.Hash)
			}
		})
	}
}

// TestServiceSuggestionsHold applies each suggestion of each demo decline
// to the request, as a buyer would, and checks the changed request is then
// served with products: a suggestion the storefront makes is true.
func TestServiceSuggestionsHold(t *testing.T) {
	covered := map[vocab.SuggestionKind]bool{}
	for _, test := range declineCases {
		t.Run(test.name, func(t *testing.T) {
			e := demoEnv(t)
			args := withVersion(test.args, "3.2-beta.5")
			r, _ := e.get(t, nw, anonymous, args)
			if len(r.Trace.Suggestions) == 0 && len(test.wantKinds) > 0 {
				t.Fatalf("no suggestions: %s", r.Payload)
			}
			for _, s := range r.Trace.Suggestions {
				changed := applySuggestion(t, args, s)
				r2, m2 := e.get(t, nw, anonymous, changed)
				if m2["status"] != "completed" || len(productsOf(t, m2)) == 0 {
					t.Errorf("after %q:\n%s\nanswer %s", s.Text, changed, r2.Payload)
				}
				for _, k := range s.Kinds {
					covered[vocab.SuggestionKind(k)] = true
				}
			}
		})
	}
	for _, k := range vocab.SuggestionKinds() {
		if !covered[k] {
			t.Errorf("no demo decline suggested %s", k)
		}
	}
}

var (
	budgetRE = regexp.MustCompile(`budget of (?:at least )?([0-9,.]+) ([A-Z]{3})`)
	flightRE = regexp.MustCompile(`from (\d{4}-\d\d-\d\d) to (\d{4}-\d\d-\d\d)`)
	afterRE  = regexp.MustCompile(`on or after (\d{4}-\d\d-\d\d)`)
	markets  = map[string]string{"the United States": "US", "Canada": "CA", "the United Kingdom": "GB"}
)

// applySuggestion edits a request as the suggestion's words say.
func applySuggestion(t *testing.T, args string, s products.TracedChange) string {
	t.Helper()
	var req map[string]any
	if err := json.Unmarshal([]byte(args), &req); err != nil {
		t.Fatal(err)
	}
	filters, _ := req["filters"].(map[string]any)
	if filters == nil {
		filters = map[string]any{}
		req["filters"] = filters
	}
	text := strings.TrimSuffix(s.Text, " would fit this brief.")
	if len(s.Kinds) != 1 {
		t.Fatalf("compound suggestion %q: apply it by hand", s.Text)
	}
	switch vocab.SuggestionKind(s.Kinds[0]) {
	case vocab.RaiseBudget:
		m := budgetRE.FindStringSubmatch(s.Text)
		if m == nil {
			t.Fatalf("cannot read a budget in %q", s.Text)
		}
		v, err := strconv.ParseFloat(strings.ReplaceAll(m[1], ",", ""), 64)
		if err != nil {
			t.Fatal(err)
		}
		filters["budget_range"] = map[string]any{"max": v, "currency": m[2]}
	case vocab.SwitchChannel:
		label := strings.TrimSuffix(strings.ToLower(text[:1])+text[1:], " inventory")
		ch := ""
		for k, l := range decline.ChannelLabels() {
			if l == label {
				ch = k
			}
		}
		if ch == "" {
			t.Fatalf("cannot read a channel in %q", s.Text)
		}
		filters["channels"] = []string{ch}
	case vocab.MoveFlight:
		m := flightRE.FindStringSubmatch(s.Text)
		if m == nil {
			t.Fatalf("cannot read a flight in %q", s.Text)
		}
		filters["start_date"], filters["end_date"] = m[1], m[2]
	case vocab.LaterStart:
		m := afterRE.FindStringSubmatch(s.Text)
		if m == nil {
			t.Fatalf("cannot read a start in %q", s.Text)
		}
		// Keep the flight's length: move the end by as much as the start.
		oldStart := adcp.MustDate(filters["start_date"].(string))
		newStart := adcp.MustDate(m[1])
		filters["start_date"] = newStart.String()
		if end, ok := filters["end_date"].(string); ok {
			filters["end_date"] = adcp.MustDate(end).AddDays(oldStart.DaysUntil(newStart)).String()
		}
	case vocab.TargetMarket:
		code := markets[strings.TrimPrefix(text, "Targeting ")]
		if code == "" {
			t.Fatalf("cannot read a market in %q", s.Text)
		}
		req["targeting_overlay"] = map[string]any{"geo_countries": []string{code}}
		delete(filters, "countries")
	case vocab.ChangeFormat:
		label := strings.TrimSuffix(text, " creative")
		kind := ""
		for k, l := range decline.FormatLabels() {
			if strings.EqualFold(l, label) {
				kind = k
			}
		}
		if kind == "" {
			t.Fatalf("cannot read a format kind in %q", s.Text)
		}
		filters["format_kinds"] = []string{kind}
	default:
		t.Fatalf("unknown suggestion kind %v", s.Kinds)
	}
	b, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestServiceLegacyDecline: a buyer on 3.0 or 3.1 cannot read the rejected
// arm, so a decline becomes a typed, correctable error carrying the same
// screened text. It is never an empty product list.
func TestServiceLegacyDecline(t *testing.T) {
	for _, version := range []string{"3.1", "3.0", ""} {
		for _, test := range declineCases {
			t.Run(version+"/"+test.name, func(t *testing.T) {
				e := demoEnv(t)
				args := test.args
				if version != "" {
					args = withVersion(args, version)
				}
				r, m := e.get(t, nw, anonymous, args)
				spectest.GetProducts(t, r.Payload)
				want := "3.1"
				if version != "" {
					want = version
				}
				if m["adcp_version"] != want {
					t.Errorf("adcp_version = %v, want %s", m["adcp_version"], want)
				}
				first := firstError(t, m)
				entry, _ := vocab.Lookup(test.slug)
				if first["code"] != string(entry.LegacyCode) || first["recovery"] != "correctable" {
					t.Errorf("error = %v, want %s correctable", first, entry.LegacyCode)
				}
				if _, ok := m["products"]; ok {
					t.Error("a legacy decline carries products")
				}
				det := first["details"].(map[string]any)["decline"].(map[string]any)
				if det["slug"] != string(test.slug) {
					t.Errorf("details.decline = %v", det)
				}

				// The same text as the 3.2 rejection.
				_, m32 := e.get(t, nw, anonymous, withVersion(test.args, "3.2-beta.5"))
				if first["message"] != m32["reason"] {
					t.Errorf("legacy message %q differs from the 3.2 reason %q", first["message"], m32["reason"])
				}
				if s, ok := m32["suggestions"].([]any); ok && first["suggestion"] != s[0] {
					t.Errorf("legacy suggestion %v, 3.2 suggestions %v", first["suggestion"], s)
				}
				es, _ := e.store.Decisions(context.Background(), nw, store.DecisionFilter{Arm: "failed"})
				if len(es) != 1 || es[0].Slug != test.slug || !slices.Contains(es[0].RuleIDs, test.ruleID) {
					t.Errorf("legacy decline ledger entries = %+v, want one failed entry with slug %s", es, test.slug)
				}
			})
		}
	}
}

func TestServiceNoRulebook(t *testing.T) {
	invalid := demo.Rulebook()
	invalid.Rules[0].ID = "" // stored without validation: corrupt
	for _, test := range []struct {
		name string
		rb   *merch.Rulebook
	}{
		{"missing", nil},
		{"corrupt", &invalid},
	} {
		t.Run(test.name, func(t *testing.T) {
			e := newEnv(t)
			e.publisher(t, "p", demo.Products(), test.rb)
			for _, args := range []string{
				`{"adcp_version":"3.2-beta.5","brief":"video for sports fans"}`,
				`{"adcp_version":"3.2-beta.5","buying_mode":"wholesale"}`,
				`{"adcp_version":"3.1","brief":"casino"}`,
			} {
				r, m := e.get(t, "p", anonymous, args)
				spectest.GetProducts(t, r.Payload)
				first := firstError(t, m)
				if first["code"] != "SERVICE_UNAVAILABLE" || first["recovery"] != "transient" {
					t.Errorf("%s: error = %v, want SERVICE_UNAVAILABLE transient", args, first)
				}
				if _, ok := m["products"]; ok || r.Outcome.ProductCount() != 0 || r.Outcome.OK() {
					t.Errorf("%s: answered with products without a rulebook: %s", args, r.Payload)
				}
			}
		})
	}
}

func TestServiceLedgerFailure(t *testing.T) {
	for _, args := range []string{
		`{"adcp_version":"3.2-beta.5","brief":"video for sports fans"}`,                                                            // completed
		`{"adcp_version":"3.2-beta.5","brief":"CTV","filters":{"channels":["ctv"],"budget_range":{"max":10000,"currency":"USD"}}}`, // rejected
		`{"adcp_version":"3.1","brief":"CTV","filters":{"channels":["ctv"],"budget_range":{"max":10000,"currency":"USD"}}}`,        // legacy decline
	} {
		e := demoEnv(t)
		fl := &failingLedger{}
		e.svc.Ledger = fl
		r, m := e.get(t, nw, anonymous, args)
		spectest.GetProducts(t, r.Payload)
		first := firstError(t, m)
		if first["code"] != "SERVICE_UNAVAILABLE" || first["recovery"] != "transient" {
			t.Errorf("%s: error = %v, want SERVICE_UNAVAILABLE", args, first)
		}
		if first["message"] != sanitize.Unavailable.String() {
			t.Errorf("%s: message = %v, want the fixed unavailable line", args, first["message"])
		}
		for _, k := range []string{"products", "reason", "suggestions", "ext"} {
			if _, ok := m[k]; ok {
				t.Errorf("%s: an unrecorded answer leaked %q: %s", args, k, r.Payload)
			}
		}
		if fl.calls == 0 {
			t.Errorf("%s: the ledger was never asked", args)
		}
		if !strings.Contains(r.Trace.Error, "ledger") {
			t.Errorf("%s: trace error = %q", args, r.Trace.Error)
		}
	}
}

func TestServiceLedgerChain(t *testing.T) {
	e := demoEnv(t)
	for _, args := range []string{
		`{"adcp_version":"3.2-beta.5","brief":"video"}`,
		`{"adcp_version":"3.2-beta.5","brief":"casino"}`,
		`{"adcp_version":"9.0"}`,
		`{"adcp_version":"3.2-beta.5","buying_mode":"nope"}`,
		`{"adcp_version":"3.1","brief":"podcast","filters":{"channels":["podcast"]}}`,
	} {
		e.get(t, nw, anonymous, args)
	}
	var v ledger.Verifier
	err := e.store.WalkLedger(context.Background(), nw, v.Check)
	if err != nil || v.Checked() != 5 {
		t.Errorf("ledger verify = %v after %d entries, want 5 verified", err, v.Checked())
	}
}

func TestServicePreview(t *testing.T) {
	e := demoEnv(t)
	snap, err := e.snaps.Snapshot(context.Background(), nw)
	if err != nil {
		t.Fatal(err)
	}
	r := e.svc.Preview(context.Background(), products.Call{Publisher: nw, Args: []byte(`{"adcp_version":"3.2-beta.5","brief":"CTV","filters":{"channels":["ctv"],"budget_range":{"max":10000,"currency":"USD"}}}`)}, snap)
	if r.Outcome.Arm() != outcome.Rejected {
		t.Fatalf("preview = %s", r.Payload)
	}
	if len(r.Trace.Fired) != 1 || r.Trace.Fired[0].ID != "MR-2291-CTV-FLOOR" || r.Trace.Fired[0].Name == "" {
		t.Errorf("trace fired = %+v", r.Trace.Fired)
	}
	if strings.Contains(string(r.Payload), "receipt") {
		t.Error("a preview carries a ledger receipt")
	}
	if e.ledgerLen(t, nw) != 0 {
		t.Errorf("preview wrote %d ledger entries", e.ledgerLen(t, nw))
	}
}

func TestServiceFailures(t *testing.T) {
	for _, test := range []struct {
		name      string
		principal products.Principal
		args      string
		wantCode  string
		wantField string
	}{
		{"other major", anonymous, `{"adcp_version":"4.0","brief":"x"}`, "VERSION_UNSUPPORTED", "adcp_version"},
		{"other major only", anonymous, `{"adcp_major_version":2,"brief":"x"}`, "VERSION_UNSUPPORTED", "adcp_major_version"},
		{"unknown pre-release", anonymous, `{"adcp_version":"3.2-rc.8","brief":"x"}`, "VERSION_UNSUPPORTED", "adcp_version"},
		{"invalid request", anonymous, `{"adcp_version":"3.2-beta.5","buying_mode":"brief"}`, "INVALID_REQUEST", "brief"},
		{"validation error", anonymous, `{"adcp_version":"3.2-beta.5","brief":"x","filters":{"start_date":"2027-01-10","end_date":"2027-01-01"}}`, "VALIDATION_ERROR", "filters.end_date"},
		{"not JSON", anonymous, `{"adcp_version":`, "INVALID_REQUEST", ""},
		{"account without credentials", anonymous, `{"adcp_version":"3.2-beta.5","brief":"x","account":{"brand":{"domain":"acme.example"},"operator":"agency.example"}}`, "AUTH_MISSING", "account"},
		{"account of another operator", agency, `{"adcp_version":"3.2-beta.5","brief":"x","account":{"brand":{"domain":"acme.example"},"operator":"other.example"}}`, "ACCOUNT_NOT_FOUND", "account"},
		{"unknown account id", agency, `{"adcp_version":"3.2-beta.5","brief":"x","account":{"account_id":"acct_nope"}}`, "ACCOUNT_NOT_FOUND", "account"},
		// A refused account was once keyed for the ledger as if it were a
		// natural key, dereferencing the brand it does not have.
		{"empty account id", anonymous, `{"adcp_version":"3.2-beta.5","brief":"x","account":{"account_id":""}}`, "INVALID_REQUEST", "account.account_id"},
		{"empty account id with credentials", agency, `{"adcp_version":"3.2-beta.5","brief":"x","account":{"account_id":""}}`, "INVALID_REQUEST", "account.account_id"},
		{"account id not a string", agency, `{"adcp_version":"3.2-beta.5","brief":"x","account":{"account_id":42}}`, "INVALID_REQUEST", "account.account_id"},
		{"account id null", anonymous, `{"adcp_version":"3.2-beta.5","brief":"x","account":{"account_id":null}}`, "INVALID_REQUEST", "account.account_id"},
		{"account brand not an object", agency, `{"adcp_version":"3.2-beta.5","brief":"x","account":{"brand":"acme.example","operator":"agency.example"}}`, "INVALID_REQUEST", "account.brand"},
		{"forged cursor", anonymous, `{"adcp_version":"3.2-beta.5","buying_mode":"wholesale","pagination":{"max_results":5,"cursor":"AAAAAAAAAAAAAAAA"}}`, "INVALID_REQUEST", "pagination.cursor"},
		{"finalize an unknown proposal", anonymous, `{"adcp_version":"3.2-beta.5","buying_mode":"refine","refine":[{"scope":"proposal","proposal_id":"prop_1","action":"finalize"}]}`, "PROPOSAL_NOT_FOUND", "refine[0].proposal_id"},
	} {
		t.Run(test.name, func(t *testing.T) {
			e := demoEnv(t)
			r, m := e.get(t, nw, test.principal, test.args)
			spectest.GetProducts(t, r.Payload)
			first := firstError(t, m)
			if first["code"] != test.wantCode {
				t.Errorf("code = %v, want %s", first["code"], test.wantCode)
			}
			if f, _ := first["field"].(string); f != test.wantField {
				t.Errorf("field = %q, want %q", f, test.wantField)
			}
			// Every message survives the screen whole: the screen strips
			// anything that reads as markup, such as "<token>".
			if msg, _ := first["message"].(string); msg == "" || strings.HasSuffix(msg, "Bearer") {
				t.Errorf("message = %q", msg)
			}
			if r.Outcome.OK() {
				t.Error("a failure is OK")
			}
			if test.wantCode == "VERSION_UNSUPPORTED" {
				det, _ := first["details"].(map[string]any)
				if fmt.Sprint(det["supported_versions"]) != fmt.Sprint(adcp.SupportedStrings()) || m["adcp_version"] != adcp.Default().String() {
					t.Errorf("version error = %v, served %v", first, m["adcp_version"])
				}
			}
		})
	}
}

func TestServiceAnonymousDiscoveryOff(t *testing.T) {
	e := demoEnv(t)
	p := demo.Publisher()
	p.AnonymousDiscovery = false
	if err := e.store.PutPublisher(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	e.snaps.Invalidate(nw)
	_, m := e.get(t, nw, anonymous, `{"adcp_version":"3.2-beta.5","brief":"video"}`)
	if first := firstError(t, m); first["code"] != "AUTH_MISSING" || first["message"] != "this seller requires credentials: send an Authorization: Bearer header" {
		t.Errorf("error = %v, want AUTH_MISSING saying how to authenticate", first)
	}
	_, m = e.get(t, nw, agency, `{"adcp_version":"3.2-beta.5","brief":"video"}`)
	if m["status"] != "completed" {
		t.Errorf("authenticated call = %v", m)
	}
}

func TestServiceCacheScope(t *testing.T) {
	e := demoEnv(t)
	_, m := e.get(t, nw, agency, `{"adcp_version":"3.2-beta.5","brief":"video"}`)
	if m["cache_scope"] != "public" {
		t.Errorf("cache_scope without account = %v, want public", m["cache_scope"])
	}
	_, m = e.get(t, nw, agency, `{"adcp_version":"3.2-beta.5","brief":"video","account":{"brand":{"domain":"acme.example"},"operator":"agency.example"}}`)
	if m["cache_scope"] != "account" {
		t.Errorf("cache_scope with account = %v, want account", m["cache_scope"])
	}
	le := e.lastEntry(t, nw)
	if le.Account == "" || le.Principal != agency.ID {
		t.Errorf("ledger entry account %q principal %q", le.Account, le.Principal)
	}
}

func TestServicePagination(t *testing.T) {
	e := demoEnv(t)
	base := `{"adcp_version":"3.2-beta.5","buying_mode":"wholesale","pagination":{"max_results":8%s}}`
	var all []string
	cursor := ""
	for page := 0; page < 5; page++ {
		c := ""
		if cursor != "" {
			c = `,"cursor":"` + cursor + `"`
		}
		r, m := e.get(t, nw, anonymous, fmt.Sprintf(base, c))
		spectest.GetProducts(t, r.Payload)
		ps := productsOf(t, m)
		all = append(all, ids(ps)...)
		pg := m["pagination"].(map[string]any)
		if pg["total_count"] != 22.0 {
			t.Errorf("total_count = %v, want 22", pg["total_count"])
		}
		if pg["has_more"] == false {
			if _, ok := pg["cursor"]; ok {
				t.Error("last page carries a cursor")
			}
			break
		}
		if len(ps) != 8 {
			t.Errorf("page %d has %d products, want 8", page, len(ps))
		}
		cursor = pg["cursor"].(string)
	}
	want := ids(productsOf(t, must(e.get(t, nw, anonymous, `{"adcp_version":"3.2-beta.5","buying_mode":"wholesale","pagination":{"max_results":100}}`))))
	if !slices.Equal(all, want) || len(all) != 22 {
		t.Errorf("paged products = %v, want %v", all, want)
	}

	// A cursor is bound to its query: another page size, other filters or
	// an edited cursor are refused.
	_, first := e.get(t, nw, anonymous, fmt.Sprintf(base, ""))
	cur := first["pagination"].(map[string]any)["cursor"].(string)
	for _, args := range []string{
		`{"adcp_version":"3.2-beta.5","buying_mode":"wholesale","pagination":{"max_results":9,"cursor":"` + cur + `"}}`,
		`{"adcp_version":"3.2-beta.5","buying_mode":"wholesale","filters":{"channels":["display"]},"pagination":{"max_results":8,"cursor":"` + cur + `"}}`,
		`{"adcp_version":"3.2-beta.5","brief":"video","pagination":{"max_results":8,"cursor":"` + cur + `"}}`,
		`{"adcp_version":"3.2-beta.5","buying_mode":"wholesale","pagination":{"max_results":8,"cursor":"` + flipLast(cur) + `"}}`,
		`{"adcp_version":"3.2-beta.5","buying_mode":"wholesale","pagination":{"max_results":8,"cursor":"not base64!"}}`,
		`{"adcp_version":"3.2-beta.5","buying_mode":"wholesale","pagination":{"max_results":8,"cursor":"` + cur + cur + `"}}`,
	} {
		_, m := e.get(t, nw, anonymous, args)
		first := firstError(t, m)
		if first["code"] != "INVALID_REQUEST" || first["field"] != "pagination.cursor" {
			t.Errorf("%s: error = %v, want INVALID_REQUEST at pagination.cursor", args, first)
		}
	}

	// A cursor does not survive a catalogue edit.
	ps := demo.Products()
	ps[0].Description = "Edited."
	if _, err := e.store.PutProduct(context.Background(), nw, ps[0], 0); err != nil {
		t.Fatal(err)
	}
	_, m := e.get(t, nw, anonymous, fmt.Sprintf(base, `,"cursor":"`+cur+`"`))
	if first := firstError(t, m); first["field"] != "pagination.cursor" {
		t.Errorf("cursor after an edit: %v", first)
	}
}

func must(_ products.Result, m map[string]any) map[string]any { return m }

// flipLast changes the cursor's last character to another valid one.
func flipLast(s string) string {
	last := s[len(s)-1]
	repl := byte('A')
	if last == 'A' {
		repl = 'B'
	}
	return s[:len(s)-1] + string(repl)
}

// TestServiceProjection: fields narrows each product to what was asked
// for plus the fields core/product.json requires, so every projection is
// still a valid product (pricing_currency_filter caught answers without
// them).
func TestServiceProjection(t *testing.T) {
	e := demoEnv(t)
	// Every demo product publishes legacy format_ids beside its options.
	required := []string{"delivery_type", "description", "format_ids", "format_options", "name", "pricing_options", "product_id", "publisher_properties", "reporting_capabilities"}
	with := func(extra ...string) []string {
		out := append(slices.Clone(required), extra...)
		slices.Sort(out)
		return slices.Compact(out)
	}
	for _, test := range []struct {
		name string
		args string
		want []string // keys of every product, sorted
	}{
		{"one field", `{"adcp_version":"3.2-beta.5","buying_mode":"wholesale","fields":["channels"]}`, with("channels")},
		{"a required field", `{"adcp_version":"3.2-beta.5","buying_mode":"wholesale","fields":["delivery_type"]}`, with()},
		{"brief_relevance on request", `{"adcp_version":"3.2-beta.5","brief":"sports video highlights","fields":["brief_relevance"]}`, with("brief_relevance")},
		{"only names", `{"adcp_version":"3.2-beta.5","buying_mode":"wholesale","fields":["name"]}`, with()},
		{"signal fields the catalogue has none of", `{"adcp_version":"3.2-beta.5","buying_mode":"wholesale","fields":["product_id","signal_targeting_options"]}`, with()},
		{"a 3.1 buyer", `{"adcp_version":"3.1","buying_mode":"wholesale","fields":["exclusivity"]}`, nil},
	} {
		t.Run(test.name, func(t *testing.T) {
			r, m := e.get(t, nw, anonymous, test.args)
			if got := spectest.GetProducts(t, r.Payload); got != "completed" {
				t.Fatalf("status = %q: %s", got, r.Payload)
			}
			ps := productsOf(t, m)
			if len(ps) == 0 {
				t.Fatalf("no products: %s", r.Payload)
			}
			if test.want == nil {
				return
			}
			for _, p := range ps {
				var keys []string
				for k := range p {
					keys = append(keys, k)
				}
				slices.Sort(keys)
				if test.name == "brief_relevance on request" && !slices.Contains(keys, "brief_relevance") {
					keys = append(keys, "brief_relevance") // a product that matched no brief term has no relevance line
					slices.Sort(keys)
				}
				if !slices.Equal(keys, test.want) {
					t.Errorf("product %v keys = %q, want %q", p["product_id"], keys, test.want)
				}
			}
		})
	}

	// Without fields, the full product with brief_relevance where the brief
	// matched.
	r, m := e.get(t, nw, anonymous, `{"adcp_version":"3.2-beta.5","brief":"sports video highlights"}`)
	top := productsOf(t, m)[0]
	if rel, _ := top["brief_relevance"].(string); !strings.Contains(rel, "highlights") {
		t.Errorf("brief_relevance = %q: %s", rel, r.Payload)
	}
}

func TestServicePricingCurrencies(t *testing.T) {
	e := demoEnv(t)
	r, m := e.get(t, nw, anonymous, `{"adcp_version":"3.2-beta.5","buying_mode":"wholesale","filters":{"pricing_currencies":["GBP"]}}`)
	ps := productsOf(t, m)
	if len(ps) == 0 {
		t.Fatalf("no GBP products: %s", r.Payload)
	}
	for _, p := range ps {
		pos := p["pricing_options"].([]any)
		if len(pos) == 0 {
			t.Errorf("product %v has no pricing options", p["product_id"])
		}
		for _, po := range pos {
			if c := po.(map[string]any)["currency"]; c != "GBP" {
				t.Errorf("product %v offers %v pricing", p["product_id"], c)
			}
		}
	}
	// Every demo product with a GBP option, and only those.
	var want []string
	for _, p := range demo.Products() {
		for _, po := range p.PricingOptions {
			if po.Currency == "GBP" {
				want = append(want, p.ProductID)
				break
			}
		}
	}
	if got := ids(ps); !sameMembers(got, want) {
		t.Errorf("GBP products = %v, want %v", got, want)
	}
}

func sameMembers(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// TestServiceSameSuggestionFromTwoRules: a budget rule and a channel rule
// that both suggest display must not trip the service; each suggestion is
// traced once, with its kind.
func TestServiceSameSuggestionFromTwoRules(t *testing.T) {
	rb := &merch.Rulebook{Format: merch.Format, Rules: []merch.Rule{
		{ID: "B-1", Name: "Budget floor", When: merch.Condition{BudgetBelow: &merch.BudgetFloor{Currency: "USD", Minimum: 5000, PerChannel: map[string]float64{"display": 1000}}},
			Decline: merch.Action{Slug: vocab.BudgetBelowMinimum, Disclosure: vocab.Range, Suggest: []vocab.SuggestionKind{vocab.SwitchChannel}}},
		{ID: "C-1", Name: "Carried channels", When: merch.Condition{ChannelsOffered: []string{"display", "olv"}},
			Decline: merch.Action{Slug: vocab.ChannelNotOffered, Disclosure: vocab.Category, Suggest: []vocab.SuggestionKind{vocab.SwitchChannel}}},
	}}
	if err := rb.Validate(); err != nil {
		t.Fatal(err)
	}
	e := newEnv(t)
	e.publisher(t, "p", demo.Products(), rb)
	r, m := e.get(t, "p", anonymous, `{"adcp_version":"3.2-beta.5","brief":"x","filters":{"channels":["podcast"],"budget_range":{"max":2000,"currency":"USD"}}}`)
	if m["status"] != "rejected" {
		t.Fatalf("status = %v: %s", m["status"], r.Payload)
	}
	sugg := m["suggestions"].([]any)
	if len(r.Trace.Suggestions) != len(sugg) {
		t.Errorf("trace has %d suggestions for %d sent", len(r.Trace.Suggestions), len(sugg))
	}
	seen := map[string]bool{}
	for i, s := range sugg {
		if seen[s.(string)] {
			t.Errorf("suggestion %q sent twice", s)
		}
		seen[s.(string)] = true
		if r.Trace.Suggestions[i].Text != s {
			t.Errorf("trace suggestion %d = %q, sent %q", i, r.Trace.Suggestions[i].Text, s)
		}
	}
	if !seen["Display inventory would fit this brief."] {
		t.Errorf("suggestions = %v, want display among them", sugg)
	}
}

func TestServiceRefine(t *testing.T) {
	e := demoEnv(t)
	r, m := e.get(t, nw, anonymous, `{"adcp_version":"3.2-beta.5","buying_mode":"refine","refine":[
		{"scope":"request","ask":"more audio"},
		{"scope":"product","product_id":"nw_audio_music_streams","action":"omit"},
		{"scope":"proposal","proposal_id":"prop_1","action":"include"}]}`)
	spectest.GetProducts(t, r.Payload)
	got := ids(productsOf(t, m))
	if slices.Contains(got, "nw_audio_music_streams") {
		t.Errorf("omitted product is still offered: %v", got)
	}
	if len(got) == 0 || !strings.HasPrefix(got[0], "nw_audio_") {
		t.Errorf("products = %v, want audio first", got)
	}
	ra := m["refinement_applied"].([]any)
	if len(ra) != 3 || ra[2].(map[string]any)["status"] != "unable" || ra[0].(map[string]any)["status"] != "applied" {
		t.Errorf("refinement_applied = %v", ra)
	}
}

func TestServiceDirectives(t *testing.T) {
	e := demoEnv(t)
	ctx := context.Background()
	acct, err := e.store.EnsureAccount(ctx, nw, store.Account{Operator: "agency.example", BrandDomain: "acme.example", Sandbox: true, Disclosure: vocab.Exact})
	if err != nil {
		t.Fatal(err)
	}
	// The agency's own sandbox account, named by its natural key.
	args := `{"adcp_version":"3.2-beta.5","brief":"video","account":{"brand":{"domain":"acme.example"},"operator":"agency.example","sandbox":true}}`
	p := agency
	// The forced text is the caller's own: markup and vendors go, the
	// publisher's deny-list is never applied (it would confirm guesses).
	if err := e.store.SetDirective(ctx, nw, acct.ID, p.ID, products.Directive{Arm: "rejected", Reason: "<b>Forced</b> by test. MR-2291-CTV-FLOOR fired. Magnite said so.", Suggestions: []string{"Try display.", "See MR-2291-CTV-FLOOR.", "Ask FreeWheel."}}); err != nil {
		t.Fatal(err)
	}
	r, m := e.get(t, nw, p, args)
	spectest.GetProducts(t, r.Payload)
	if m["status"] != "rejected" || m["reason"] != "Forced by test. MR-2291-CTV-FLOOR fired." {
		t.Errorf("forced = %s", r.Payload)
	}
	if diff := cmp.Diff([]any{"Try display.", "See MR-2291-CTV-FLOOR."}, m["suggestions"]); diff != "" {
		t.Errorf("forced suggestions (-want +got):\n%s", diff)
	}
	if le := e.lastEntry(t, nw); !le.Forced || !le.Sandbox {
		t.Errorf("ledger entry = %+v, want forced and sandbox", le)
	}
	// One-shot: the next call is decided normally.
	_, m = e.get(t, nw, p, args)
	if m["status"] != "completed" {
		t.Errorf("second call = %v, want completed", m["status"])
	}

	// A test-kit principal has one sandbox: its directive, kept under no
	// account, is consumed by its next brief whatever account it names.
	kit := products.Principal{ID: "demo-kit-v1", Sandbox: true}
	if err := e.store.SetDirective(ctx, nw, "", kit.ID, products.Directive{Arm: "rejected", Reason: "Kit decline."}); err != nil {
		t.Fatal(err)
	}
	kitArgs := `{"adcp_version":"3.2-beta.5","buying_mode":"brief","brief":"video","account":{"brand":{"domain":"other.example"},"operator":"other.example"}}`
	if _, m := e.get(t, nw, kit, kitArgs); m["status"] != "rejected" || m["reason"] != "Kit decline." {
		t.Errorf("test-kit directive not consumed: %v", m)
	}
	if _, m := e.get(t, nw, kit, kitArgs); m["status"] != "completed" {
		t.Errorf("test-kit directive consumed twice: %v", m["status"])
	}

	// A submitted directive answers with the task, its message screened.
	if err := e.store.SetDirective(ctx, nw, acct.ID, p.ID, products.Directive{Arm: "submitted", TaskID: "task_1", Message: "Queued for <i>review</i> with DoubleVerify."}); err != nil {
		t.Fatal(err)
	}
	r, m = e.get(t, nw, p, args)
	spectest.GetProducts(t, r.Payload)
	if m["status"] != "submitted" || m["task_id"] != "task_1" || !r.Outcome.OK() {
		t.Errorf("submitted = %s", r.Payload)
	}
	if _, ok := m["message"]; ok {
		t.Errorf("a message naming a vendor was sent: %v", m["message"])
	}
	if le := e.lastEntry(t, nw); le.Arm != "submitted" || !le.Forced {
		t.Errorf("ledger entry = %+v, want a forced submitted entry", le)
	}
	if err := e.store.SetDirective(ctx, nw, acct.ID, p.ID, products.Directive{Arm: "submitted", TaskID: "task_2", Message: "Queued for <i>review</i>."}); err != nil {
		t.Fatal(err)
	}
	if _, m = e.get(t, nw, p, args); m["message"] != "Queued for review." {
		t.Errorf("submitted message = %v, want %q", m["message"], "Queued for review.")
	}
}
