package outcome_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"pgregory.net/rapid"

	"github.com/storefront/storefront/outcome"
)

// The completed arm splices its already-encoded products in instead of
// passing them through json.Marshal. For products in the form json.Marshal
// writes (which is how the catalogue encodes them), the bytes must be the
// same as marshalling the whole wire object, whatever the context echoes.
func TestCompletedSpliceMatchesMarshal(t *testing.T) {
	value := rapid.OneOf(
		rapid.Just[any](nil), rapid.Bool().AsAny(), rapid.Float64Range(-1e6, 1e6).AsAny(),
		rapid.SampledFrom([]string{"", "a", `"products":[]`, "<b>&amp;</b>", "ünï", "\u2028", `\`}).AsAny(),
	)
	object := rapid.MapOf(rapid.SampledFrom([]string{"product_id", "name", "products", "a<b", "status"}), value)
	rapid.Check(t, func(t *rapid.T) {
		ps := []json.RawMessage{}
		for _, m := range rapid.SliceOfN(object, 0, 5).Draw(t, "products") {
			b, err := json.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			ps = append(ps, b)
		}
		ctx, _ := json.Marshal(object.Draw(t, "context"))
		e := env
		e.Context = ctx
		total := len(ps)
		body := outcome.CompletedBody{Products: ps, CacheScope: "public", Page: &outcome.Page{Total: &total}, Sandbox: rapid.Bool().Draw(t, "sandbox")}
		got, err := outcome.NewCompleted(e, body).Encode()
		if err != nil {
			t.Fatal(err)
		}
		want, err := json.Marshal(outcome.CompletedWire{
			Status: "completed", AdcpVersion: "3.2-beta.5", Products: ps, CacheScope: "public",
			Pagination: body.Page, Sandbox: body.Sandbox, Context: ctx,
		})
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("spliced\n%s\nmarshalled\n%s", got, want)
		}
	})
}
