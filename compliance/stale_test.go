package compliance_test

import (
	"testing"

	"github.com/storefront/storefront/internal/kittest"
	"github.com/storefront/storefront/internal/testenv"
)

// TestForceUpstreamUnavailable: the next brief is still answered with
// products, from cache, with a STALE_RESPONSE advisory that does not make
// it a failure; the call after is clean.
func TestForceUpstreamUnavailable(t *testing.T) {
	env := testenv.Start(t, "--sandbox")
	cs := kittest.Connect(t, env.BaseURL, kittest.Kit)
	m := kittest.Control(t, cs, "force_upstream_unavailable", `{"tool":"get_products","upstream_name":"inventory"}`)
	kittest.MustSucceed(t, m)

	// A wholesale call is not a brief: it leaves the directive in place.
	kittest.WantStatus(t, kittest.GetProducts(t, cs, `{"adcp_version":"3.2-beta.5","buying_mode":"wholesale","filters":{"channels":["olv"]}}`), "completed")

	res, payload := kittest.Call(t, cs, "get_products", kittest.Brief)
	if res.IsError {
		t.Errorf("a stale answer set isError: %s", payload)
	}
	after := kittest.GetProducts(t, cs, `{"adcp_version":"3.2-beta.5","buying_mode":"brief","brief":"check"}`)
	got := kittest.Decode(t, payload)
	kittest.WantStatus(t, got, "completed")
	if ps, _ := got["products"].([]any); len(ps) == 0 {
		t.Errorf("the stale answer has no products: %s", payload)
	}
	errs, _ := got["errors"].([]any)
	if len(errs) == 0 {
		t.Fatalf("the stale answer has no advisory: %s", payload)
	}
	e := errs[0].(map[string]any)
	if e["code"] != "STALE_RESPONSE" {
		t.Errorf("errors[0].code = %v, want STALE_RESPONSE", e["code"])
	}
	details, _ := e["details"].(map[string]any)
	if details["served_from_cache"] != true {
		t.Errorf("details.served_from_cache = %v, want true", details["served_from_cache"])
	}
	if age, ok := details["cache_age_seconds"].(float64); !ok || age < 0 {
		t.Errorf("details.cache_age_seconds = %v, want a non-negative number", details["cache_age_seconds"])
	}
	if _, ok := got["adcp_error"]; ok {
		t.Errorf("an advisory answer carries adcp_error: %s", payload)
	}

	// The directive was one-shot.
	kittest.WantStatus(t, after, "completed")
	if _, ok := after["errors"]; ok {
		t.Errorf("the call after the stale one still carries errors: %v", after["errors"])
	}

	// Another principal never saw an outage.
	kittest.MustSucceed(t, kittest.Control(t, cs, "force_upstream_unavailable", `{"tool":"get_products"}`))
	if other := kittest.GetProducts(t, kittest.Connect(t, env.BaseURL, kittest.OtherKit), kittest.Brief); other["errors"] != nil {
		t.Errorf("another principal got the advisory: %v", other["errors"])
	}
}
