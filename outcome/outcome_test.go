package outcome_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"

	"github.com/storefront/storefront/adcp"
	"github.com/storefront/storefront/internal/spectest"
	"github.com/storefront/storefront/outcome"
	"github.com/storefront/storefront/sanitize"
	"github.com/storefront/storefront/vocab"
)

var screen = sanitize.New(nil)

func text(t *testing.T, s string) sanitize.Text {
	t.Helper()
	x, ok := screen.Line(s, sanitize.MaxReason)
	if !ok {
		t.Fatalf("Line(%q) was screened out", s)
	}
	return x
}

var env = outcome.Envelope{Version: adcp.Version{Major: 3, Minor: 2, Pre: "beta.5"}, Context: json.RawMessage(`{"trace":"abc","n":[1,2]}`)}

func encode(t *testing.T, o outcome.Outcome) map[string]any {
	t.Helper()
	b, err := o.Encode()
	if err != nil {
		t.Fatalf("Encode() error: %v", err)
	}
	again, _ := o.Encode()
	if string(again) != string(b) {
		t.Errorf("Encode() is not deterministic:\n%s\n%s", b, again)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("Encode() = %s, not a JSON object: %v", b, err)
	}
	return m
}

func keys(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func TestCompleted(t *testing.T) {
	o := outcome.NewCompleted(env, outcome.CompletedBody{})
	if o.Arm() != outcome.Completed || !o.OK() || o.ProductCount() != 0 || o.Slug() != "" || o.Errors() != nil {
		t.Errorf("NewCompleted: Arm %v OK %v ProductCount %d Slug %q Errors %v", o.Arm(), o.OK(), o.ProductCount(), o.Slug(), o.Errors())
	}
	m := encode(t, o)
	if got, want := keys(m), []string{"adcp_version", "cache_scope", "context", "products", "status"}; !slices.Equal(got, want) {
		t.Errorf("completed keys = %q, want %q", got, want)
	}
	if m["status"] != "completed" || m["adcp_version"] != "3.2-beta.5" || m["cache_scope"] != "public" {
		t.Errorf("completed = %v", m)
	}
	if p, ok := m["products"].([]any); !ok || len(p) != 0 {
		t.Errorf("products = %#v, want []", m["products"])
	}
	if diff := cmp.Diff(map[string]any{"trace": "abc", "n": []any{1.0, 2.0}}, m["context"]); diff != "" {
		t.Errorf("context not echoed (-want +got):\n%s", diff)
	}

	total := 3
	o = outcome.NewCompleted(env, outcome.CompletedBody{
		Products:   []json.RawMessage{json.RawMessage(`{"product_id":"a"}`), json.RawMessage(`{"product_id":"b"}`)},
		CacheScope: "account",
		Page:       &outcome.Page{HasMore: true, Cursor: "abc", Total: &total},
		Sandbox:    true,
	}).Replayed()
	m = encode(t, o)
	if o.ProductCount() != 2 || m["cache_scope"] != "account" || m["sandbox"] != true || m["replayed"] != true {
		t.Errorf("completed = %v", m)
	}
	if diff := cmp.Diff(map[string]any{"has_more": true, "cursor": "abc", "total_count": 3.0}, m["pagination"]); diff != "" {
		t.Errorf("pagination (-want +got):\n%s", diff)
	}
}

func TestRejected(t *testing.T) {
	if _, err := outcome.NewRejected(env, outcome.RejectedBody{Slug: "budget_below_minimum"}); !errors.Is(err, outcome.ErrEmptyReason) {
		t.Errorf("NewRejected(no reason) error = %v, want ErrEmptyReason", err)
	}
	var many []sanitize.Text
	for i := 0; i < 30; i++ {
		many = append(many, text(t, "Suggestion "+strings.Repeat("x", i+1)))
	}
	o, err := outcome.NewRejected(env, outcome.RejectedBody{
		Reason: text(t, "The requested budget is below the minimum for this inventory."),
		Slug:   "budget_below_minimum", Fixable: true, Suggestions: many,
	})
	if err != nil {
		t.Fatal(err)
	}
	if o.Arm() != outcome.Rejected || !o.OK() || o.Slug() != "budget_below_minimum" || o.ProductCount() != 0 {
		t.Errorf("NewRejected: Arm %v OK %v Slug %q", o.Arm(), o.OK(), o.Slug())
	}
	body, ok := o.Rejection()
	if !ok || len(body.Suggestions) != sanitize.MaxSuggestions {
		t.Errorf("Rejection() kept %d suggestions, want %d", len(body.Suggestions), sanitize.MaxSuggestions)
	}
	o = o.WithReceipt(outcome.Receipt{Sequence: 7, EntryHash: strings.Repeat("ab", 32)})
	m := encode(t, o)
	if got, want := keys(m), []string{"adcp_version", "context", "ext", "reason", "status", "suggestions"}; !slices.Equal(got, want) {
		t.Errorf("rejected keys = %q, want %q", got, want)
	}
	for _, forbidden := range []string{"products", "proposals", "errors", "adcp_error", "incomplete", "cache_scope", "filter_diagnostics", "refinement_applied", "unchanged", "wholesale_feed_version", "pricing_version", "pagination"} {
		if _, ok := m[forbidden]; ok {
			t.Errorf("rejected arm carries %q", forbidden)
		}
	}
	want := map[string]any{
		outcome.Namespace: map[string]any{
			"decline": map[string]any{"slug": "budget_below_minimum", "fixable": true},
			"receipt": map[string]any{"sequence": 7.0, "entry_hash": strings.Repeat("ab", 32)},
		},
	}
	if diff := cmp.Diff(want, m["ext"]); diff != "" {
		t.Errorf("ext (-want +got):\n%s", diff)
	}
	if s, _ := m["suggestions"].([]any); len(s) != sanitize.MaxSuggestions {
		t.Errorf("suggestions on the wire = %d, want %d", len(s), sanitize.MaxSuggestions)
	}

	final, _ := outcome.NewRejected(outcome.Envelope{Version: env.Version}, outcome.RejectedBody{Reason: sanitize.Declined, Slug: "commercially_declined"})
	m = encode(t, final)
	if got, want := keys(m), []string{"adcp_version", "ext", "reason", "status"}; !slices.Equal(got, want) {
		t.Errorf("final rejection keys = %q, want %q (no suggestions, no context)", got, want)
	}
}

// TestNamespace ties the exported constant to the struct tag the encoder
// actually uses.
func TestNamespace(t *testing.T) {
	f, ok := reflect.TypeOf(outcome.RejectedExt{}).FieldByName("Storefront")
	if !ok {
		t.Fatal("RejectedExt has no Storefront field")
	}
	if tag := f.Tag.Get("json"); tag != outcome.Namespace {
		t.Errorf("RejectedExt json tag = %q, want Namespace %q", tag, outcome.Namespace)
	}
	if outcome.Namespace != "io.github.storefront" {
		t.Errorf("Namespace = %q", outcome.Namespace)
	}
}

func TestFailed(t *testing.T) {
	first := outcome.Error{Code: adcp.BudgetTooLow, Message: text(t, "The requested budget is below the minimum."), Field: text(t, "filters.budget_range"), Suggestion: text(t, "A larger budget would fit this brief."), Details: &outcome.Details{Declined: &outcome.Declined{Decline: outcome.DeclineDetail{Fixable: true, Slug: vocab.BudgetBelowMinimum}}}}
	second := outcome.Error{Code: adcp.ServiceUnavailable}
	o := outcome.NewFailed(env, first, second)
	if o.Arm() != outcome.Failed || o.OK() || len(o.Errors()) != 2 || o.Slug() != "" {
		t.Errorf("NewFailed: Arm %v OK %v Errors %d", o.Arm(), o.OK(), len(o.Errors()))
	}
	m := encode(t, o)
	if got, want := keys(m), []string{"adcp_error", "adcp_version", "context", "errors", "status"}; !slices.Equal(got, want) {
		t.Errorf("failed keys = %q, want %q", got, want)
	}
	wantFirst := map[string]any{
		"code": "BUDGET_TOO_LOW", "message": "The requested budget is below the minimum.", "recovery": "correctable",
		"field": "filters.budget_range", "suggestion": "A larger budget would fit this brief.",
		"details": map[string]any{"decline": map[string]any{"fixable": true, "slug": "budget_below_minimum"}},
	}
	wantSecond := map[string]any{"code": "SERVICE_UNAVAILABLE", "message": sanitize.Internal.String(), "recovery": "transient"}
	if diff := cmp.Diff([]any{wantFirst, wantSecond}, m["errors"]); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantFirst, m["adcp_error"]); diff != "" {
		t.Errorf("adcp_error is not the first error (-want +got):\n%s", diff)
	}
	// Changing the returned slice does not change the outcome.
	errs := o.Errors()
	errs[0].Code = adcp.InternalError
	if o.Errors()[0].Code != adcp.BudgetTooLow {
		t.Error("Errors() aliases the outcome's errors")
	}
	if o.WithReceipt(outcome.Receipt{Sequence: 1}).Errors()[0].Code != adcp.BudgetTooLow {
		t.Error("WithReceipt changed a failed outcome")
	}
	m = encode(t, o.WithReceipt(outcome.Receipt{Sequence: 1, EntryHash: "x"}))
	if strings.Contains(mustJSON(t, m), "entry_hash") {
		t.Error("a failed outcome carries a receipt")
	}
}

func TestSubmitted(t *testing.T) {
	o := outcome.NewSubmitted(env, "task_123", sanitize.Text{})
	if o.Arm() != outcome.Submitted || !o.OK() || o.TaskID() != "task_123" {
		t.Errorf("NewSubmitted: Arm %v OK %v TaskID %q", o.Arm(), o.OK(), o.TaskID())
	}
	m := encode(t, o)
	if got, want := keys(m), []string{"adcp_version", "context", "status", "task_id"}; !slices.Equal(got, want) {
		t.Errorf("submitted keys = %q, want %q", got, want)
	}
	m = encode(t, outcome.NewSubmitted(env, "task_123", text(t, "Queued for review.")))
	if m["message"] != "Queued for review." {
		t.Errorf("message = %v", m["message"])
	}
}

func TestZeroOutcome(t *testing.T) {
	var o outcome.Outcome
	if o.OK() {
		t.Error("zero Outcome is OK")
	}
	if b, err := o.Encode(); err == nil {
		t.Errorf("zero Outcome encodes to %s", b)
	}
	if o.Arm().String() != "unknown" {
		t.Errorf("zero Arm = %q", o.Arm())
	}
	if _, ok := o.Rejection(); ok {
		t.Error("zero Outcome has a rejection")
	}
}

func TestArmString(t *testing.T) {
	for arm, want := range map[outcome.Arm]string{outcome.Completed: "completed", outcome.Rejected: "rejected", outcome.Failed: "failed", outcome.Submitted: "submitted"} {
		if arm.String() != want {
			t.Errorf("%d.String() = %q, want %q", arm, arm.String(), want)
		}
	}
}

func TestVersionDetails(t *testing.T) {
	d := outcome.VersionDetails()
	if diff := cmp.Diff(adcp.SupportedStrings(), d.SupportedVersions); diff != "" {
		t.Errorf("supported_versions (-want +got):\n%s", diff)
	}
	if d.BuildVersion != adcp.Build {
		t.Errorf("build_version = %v", d.BuildVersion)
	}
}

// TestArmsMatchOfficialSchema validates every arm's encoding against the
// official AdCP get_products response schemas.
func TestArmsMatchOfficialSchema(t *testing.T) {
	reason := text(t, "The requested budget is below the minimum for this inventory.")
	rejected, _ := outcome.NewRejected(env, outcome.RejectedBody{Reason: reason, Suggestions: []sanitize.Text{text(t, "A larger budget would fit this brief.")}, Slug: "budget_below_minimum", Fixable: true})
	for _, test := range []struct {
		name string
		o    outcome.Outcome
	}{
		{"completed", outcome.NewCompleted(env, outcome.CompletedBody{})},
		{"rejected", rejected.WithReceipt(outcome.Receipt{Sequence: 1, EntryHash: strings.Repeat("0", 64)})},
		{"failed", outcome.NewFailed(env, outcome.Error{Code: adcp.VersionUnsupported, Message: reason, Field: text(t, "adcp_version"), Details: outcome.VersionDetails()})},
		{"submitted", outcome.NewSubmitted(env, "task_1", reason)},
	} {
		t.Run(test.name, func(t *testing.T) {
			b, err := test.o.Encode()
			if err != nil {
				t.Fatal(err)
			}
			if got := spectest.GetProducts(t, b); got != test.name {
				t.Errorf("status = %q, want %q", got, test.name)
			}
		})
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestDetailsBytes checks that each kind of details object encodes to the
// bytes the map it replaced did: encoding/json sorts a map's keys, and the
// goldens compare bytes.
func TestDetailsBytes(t *testing.T) {
	sugg := []sanitize.Text{text(t, "A larger budget would fit this brief.")}
	conf := 0.5
	findings := []outcome.Finding{{CategoryID: "c", Severity: "high", Explanation: "e", Confidence: &conf}, {CategoryID: "d", PolicyID: "p", Severity: "low"}}
	for _, test := range []struct {
		name string
		got  *outcome.Details
		want map[string]any
	}{
		{"final decline", &outcome.Details{Declined: &outcome.Declined{Decline: outcome.DeclineDetail{Slug: vocab.CommerciallyDeclined}}},
			map[string]any{"decline": map[string]any{"slug": "commercially_declined", "fixable": false}}},
		{"fixable decline", &outcome.Details{Declined: &outcome.Declined{Decline: outcome.DeclineDetail{Slug: vocab.BudgetBelowMinimum, Fixable: true}, Suggestions: sugg}},
			map[string]any{"decline": map[string]any{"slug": "budget_below_minimum", "fixable": true}, "suggestions": sugg}},
		{"version", outcome.VersionDetails(),
			map[string]any{"supported_versions": adcp.SupportedStrings(), "supported_majors": adcp.Majors(), "build_version": adcp.Build}},
		{"status", &outcome.Details{BuyStatus: &outcome.BuyStatus{CurrentStatus: "canceled"}}, map[string]any{"current_status": "canceled"}},
		{"revision", &outcome.Details{BuyRevision: &outcome.BuyRevision{CurrentRevision: 3}}, map[string]any{"current_revision": int64(3)}},
		{"minimum spend", &outcome.Details{MinimumSpend: &outcome.MinimumSpend{MinimumBudget: 2500.5, Currency: "USD"}}, map[string]any{"minimum_budget": 2500.5, "currency": "USD"}},
		{"billing", &outcome.Details{BillingScope: &outcome.BillingScope{Scope: "capability", SupportedBilling: []string{"operator"}}},
			map[string]any{"scope": "capability", "supported_billing": []string{"operator"}}},
		{"governance", &outcome.Details{GovernanceDenial: &outcome.GovernanceDenial{CheckID: "chk_1", Findings: findings}}, map[string]any{"check_id": "chk_1", "findings": findings}},
		{"governance, nothing found", &outcome.Details{GovernanceDenial: &outcome.GovernanceDenial{Findings: []outcome.Finding{}}}, map[string]any{"check_id": "", "findings": []outcome.Finding{}}},
		{"exclusion", &outcome.Details{Exclusion: &outcome.Exclusion{ExcludedBy: "geo"}}, map[string]any{"excluded_by": "geo"}},
		{"stale", &outcome.Details{Staleness: &outcome.Staleness{ServedFromCache: true}}, map[string]any{"served_from_cache": true, "cache_age_seconds": 0}},
	} {
		got, err := json.Marshal(test.got)
		if err != nil {
			t.Fatal(err)
		}
		want, err := json.Marshal(test.want)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("%s: details encode as %s, want %s", test.name, got, want)
		}
	}
}

// TestEncodesCompact: every arm that says it encodes compact does, even
// from a context the buyer spaced out and strings holding spaces, and
// the bare error arm, which keeps the buyer's spelling of its context,
// does not say so.
func TestEncodesCompact(t *testing.T) {
	spaced := outcome.Envelope{Version: env.Version, Context: json.RawMessage("{ \"trace\" : \"a b\",\n\t\"n\": [1, 2] }")}
	rejected, err := outcome.NewRejected(spaced, outcome.RejectedBody{Reason: text(t, "Not a fit for this seller."), Suggestions: []sanitize.Text{text(t, "Try a larger budget.")}, Slug: "budget_below_minimum"})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range []outcome.Outcome{
		outcome.NewCompleted(spaced, outcome.CompletedBody{Products: []json.RawMessage{json.RawMessage(`{"product_id":"p 1","name":"A name"}`), json.RawMessage(`{"product_id":"p2"}`)}, CacheScope: "public", Page: &outcome.Page{}}),
		outcome.NewCompleted(spaced, outcome.CompletedBody{}),
		rejected.WithReceipt(outcome.Receipt{Sequence: 3, EntryHash: "ab"}),
		outcome.NewFailed(spaced, outcome.Error{Code: adcp.InvalidRequest, Message: text(t, "The brief is empty.")}),
		outcome.NewSubmitted(spaced, "task 1", text(t, "Queued for review.")),
		outcome.NewBareFailed(spaced, adcp.IdempotencyConflict, text(t, "Use a fresh key.")),
	} {
		b, err := o.Encode()
		if err != nil {
			t.Fatal(err)
		}
		var c bytes.Buffer
		if err := json.Compact(&c, b); err != nil {
			t.Fatal(err)
		}
		if compact := c.String() == string(b); o.EncodesCompact() && !compact {
			t.Errorf("%v says it encodes compact, and wrote %s", o.Arm(), b)
		} else if !o.EncodesCompact() && compact {
			t.Errorf("%v says it may not encode compact, and its context is compacted: %s", o.Arm(), b)
		}
	}
}

// joined is a ProductWriter over products already encoded.
type joined []json.RawMessage

func (j joined) Count() int { return len(j) }
func (j joined) Size() int  { return 0 } // too small: Encode must grow past it
func (j joined) Append(dst []byte) []byte {
	for i, p := range j {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, p...)
	}
	return dst
}

// TestCompletedWriter: products written by a ProductWriter encode exactly
// as the same products given encoded, and are counted.
func TestCompletedWriter(t *testing.T) {
	ps := []json.RawMessage{json.RawMessage(`{"product_id":"p1"}`), json.RawMessage(`{"product_id":"p2","name":"Two"}`)}
	body := outcome.CompletedBody{CacheScope: "account", Page: &outcome.Page{HasMore: true, Cursor: "c"}, Sandbox: true}
	given, written := body, body
	given.Products, written.Writer = ps, joined(ps)
	a, err := outcome.NewCompleted(env, given).Encode()
	if err != nil {
		t.Fatal(err)
	}
	w := outcome.NewCompleted(env, written)
	b, err := w.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if string(a) != string(b) || w.ProductCount() != 2 {
		t.Errorf("written: %s (%d products)\ngiven:   %s", b, w.ProductCount(), a)
	}
	if b, _ := outcome.NewCompleted(env, outcome.CompletedBody{Writer: joined(nil)}).Encode(); !strings.Contains(string(b), `"products":[]`) {
		t.Errorf("no products written: %s", b)
	}
}

// TestCompletedEncodingIsCompletedWire: the completed arm, written by
// hand, is byte for byte json.Marshal of CompletedWire with the same
// values, whatever members are set and whatever their strings hold.
func TestCompletedEncodingIsCompletedWire(t *testing.T) {
	str := rapid.StringOfN(rapid.SampledFrom([]rune("ab <>&\"\\\u2028é\x01\x7f")), 0, 12, -1)
	rapid.Check(t, func(t *rapid.T) {
		ctx := drawContext(t, str)
		e := outcome.Envelope{Version: env.Version, Context: ctx}
		var ps []json.RawMessage
		for i := range rapid.IntRange(0, 3).Draw(t, "products") {
			p, _ := json.Marshal(map[string]any{"product_id": fmt.Sprint("p", i), "name": str.Draw(t, "name")})
			ps = append(ps, p)
		}
		body := outcome.CompletedBody{Products: ps, CacheScope: rapid.SampledFrom([]string{"", "public", "account"}).Draw(t, "scope"), Sandbox: rapid.Bool().Draw(t, "sandbox")}
		if rapid.Bool().Draw(t, "page") {
			body.Page = &outcome.Page{HasMore: rapid.Bool().Draw(t, "more"), Cursor: str.Draw(t, "cursor")}
			if rapid.Bool().Draw(t, "total") {
				n := rapid.IntRange(-1, 1<<40).Draw(t, "count")
				body.Page.Total = &n
			}
		}
		for range rapid.IntRange(0, 2).Draw(t, "refinements") {
			body.Refinement = append(body.Refinement, outcome.Refinement{Scope: "request", Status: "applied", ProductID: str.Draw(t, "id")})
		}
		if rapid.Bool().Draw(t, "diagnostics") {
			body.Diagnostics = map[string]any{"semantics": "only", "excluded_by": map[string]any{str.Draw(t, "filter"): map[string]any{"count": 2}}}
		}
		if rapid.Bool().Draw(t, "warnings") {
			body.Warnings = []outcome.Error{{Code: adcp.InvalidRequest, Message: sanitize.Const("a warning")}}
		}
		o := outcome.NewCompleted(e, body)
		replayed := rapid.Bool().Draw(t, "replayed")
		if replayed {
			o = o.Replayed()
		}
		got, err := o.Encode()
		if err != nil {
			t.Fatal(err)
		}
		scope := body.CacheScope
		if scope == "" {
			scope = "public"
		}
		if ps == nil {
			ps = []json.RawMessage{}
		}
		want, err := json.Marshal(outcome.CompletedWire{
			Status: "completed", AdcpVersion: env.Version.String(), Products: ps, CacheScope: scope,
			Pagination: body.Page, RefinementApplied: body.Refinement, FilterDiagnostics: body.Diagnostics,
			Errors: body.Warnings, Sandbox: body.Sandbox, Replayed: replayed, Context: ctx,
		})
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Fatalf("wrote\n%s\njson.Marshal writes\n%s", got, want)
		}
	})
}

// drawContext is a request context for the encoders' property tests:
// none, one json.Marshal must compact and escape, null, or one holding a
// drawn string.
func drawContext(t *rapid.T, str *rapid.Generator[string]) json.RawMessage {
	switch rapid.IntRange(0, 3).Draw(t, "context") {
	case 1:
		return json.RawMessage(`{ "trace" : "<a&b>", "n": [1, 2.50] }`)
	case 2:
		return json.RawMessage(`null`)
	case 3:
		c, _ := json.Marshal(map[string]string{"k": str.Draw(t, "ctx")})
		return c
	}
	return nil
}

// TestRejectedEncodingIsRejectedWire: the hand-written rejected arm is
// json.Marshal of RejectedWire byte for byte, suggestions, receipt,
// replay marker and context present or not, with strings that need
// escaping.
func TestRejectedEncodingIsRejectedWire(t *testing.T) {
	str := rapid.StringOfN(rapid.SampledFrom([]rune("ab <>&\"\\\u2028é\x01\x7f")), 0, 12, -1)
	rapid.Check(t, func(t *rapid.T) {
		ctx := drawContext(t, str)
		e := outcome.Envelope{Version: env.Version, Context: ctx}
		text := func(label string) sanitize.Text {
			// The screen may drop or change what it is given: whatever
			// Text it makes is what both encoders are given.
			if s, ok := sanitize.Vendor().Line("x"+str.Draw(t, label), 500); ok {
				return s
			}
			return sanitize.Declined
		}
		body := outcome.RejectedBody{
			Reason:  text("reason"),
			Slug:    vocab.Slug(str.Draw(t, "slug")),
			Fixable: rapid.Bool().Draw(t, "fixable"),
		}
		for range rapid.IntRange(0, 3).Draw(t, "suggestions") {
			body.Suggestions = append(body.Suggestions, text("suggestion"))
		}
		if rapid.Bool().Draw(t, "empty suggestions") && body.Suggestions == nil {
			body.Suggestions = []sanitize.Text{}
		}
		o, err := outcome.NewRejected(e, body)
		if err != nil {
			t.Fatal(err)
		}
		if rapid.Bool().Draw(t, "receipt") {
			o = o.WithReceipt(outcome.Receipt{Sequence: rapid.Int64().Draw(t, "sequence"), EntryHash: str.Draw(t, "hash")})
		}
		replayed := rapid.Bool().Draw(t, "replayed")
		if replayed {
			o = o.Replayed()
		}
		got, err := o.Encode()
		if err != nil {
			t.Fatal(err)
		}
		rej, _ := o.Rejection()
		want, err := json.Marshal(outcome.RejectedWire{
			Status: "rejected", AdcpVersion: env.Version.String(), Reason: rej.Reason, Suggestions: rej.Suggestions,
			Ext:      outcome.RejectedExt{Storefront: outcome.DeclineExt{Decline: outcome.DeclineSlug{Fixable: rej.Fixable, Slug: string(rej.Slug)}, Receipt: rej.Receipt}},
			Replayed: replayed, Context: ctx,
		})
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Fatalf("wrote\n%s\njson.Marshal writes\n%s", got, want)
		}
	})
}
