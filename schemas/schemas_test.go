package schemas

import (
	"bytes"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/storefront/storefront/adcp"
	"github.com/storefront/storefront/internal/golden"
	"github.com/storefront/storefront/outcome"
	"github.com/storefront/storefront/sanitize"
)

// TestPublishedMatchesSource is the drift test: every published file must be
// exactly what the Go source generates.
func TestPublishedMatchesSource(t *testing.T) {
	for name, gen := range Files {
		got, err := gen("..")
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		golden.Bytes(t, name, got, golden.Options{Hint: "go test ./schemas -update"})
	}
}

// TestFailedArmMatchesTheWire: an error arm as the storefront sends it,
// retry_after included, validates against the published schema, and one
// spelt as the Go type is held does not: the schema describes the wire.
func TestFailedArmMatchesTheWire(t *testing.T) {
	raw, err := Published.ReadFile("get-products-response.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("get-products-response.schema.json", doc); err != nil {
		t.Fatal(err)
	}
	schema, err := c.Compile("get-products-response.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	msg, _ := sanitize.New(sanitize.NewDenyList(nil, nil)).Line("a request with this idempotency_key is still in progress", sanitize.MaxMessage)
	sent, err := outcome.NewFailed(outcome.Envelope{Version: adcp.Default()}, outcome.Error{Code: adcp.IdempotencyInFlight, Message: msg, RetryAfter: 13}).Encode()
	if err != nil {
		t.Fatal(err)
	}
	held := []byte(`{"status":"failed","adcp_version":"3.1","errors":[{"Code":"IDEMPOTENCY_IN_FLIGHT","Message":"x"}],"adcp_error":{"Code":"IDEMPOTENCY_IN_FLIGHT","Message":"x"}}`)
	for _, test := range []struct {
		payload []byte
		valid   bool
	}{{sent, true}, {held, false}} {
		v, err := jsonschema.UnmarshalJSON(bytes.NewReader(test.payload))
		if err != nil {
			t.Fatal(err)
		}
		if err := schema.Validate(v); (err == nil) != test.valid {
			t.Errorf("validating %s = %v, want valid %v", test.payload, err, test.valid)
		}
	}
}
