package products_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/storefront/storefront/products"
)

// TestLentPayloadIsTheAnswer: a call that lends its payload gets the very
// bytes an unlent call gets, for every arm; only the completed arm is
// lent; and answers encoded one after another into handed-back buffers,
// long after short and short after long, carry nothing of the one before.
func TestLentPayloadIsTheAnswer(t *testing.T) {
	e := demoEnv(t)
	calls := []string{
		`{"adcp_version":"3.2-beta.5","buying_mode":"brief","brief":"premium video for coffee lovers"}`,
		`{"adcp_version":"3.2-beta.5","buying_mode":"wholesale","pagination":{"max_results":1}}`,
		`{"adcp_version":"3.2-beta.5","buying_mode":"brief","brief":"display","budget":{"total":1,"currency":"USD"}}`,
		`{"adcp_version":"3.2-beta.5","buying_mode":"wholesale"}`,
		`{"adcp_version":"9.0"}`,
		`{"adcp_version":"3.2-beta.5","buying_mode":"brief","brief":"audio","fields":["product_id","brief_relevance"]}`,
	}
	want := make([][]byte, len(calls))
	for i, args := range calls {
		r := e.svc.GetProducts(context.Background(), products.Call{Publisher: nw, Principal: agency, Args: []byte(args)})
		if r.Release != nil {
			t.Fatalf("%s: an unlent call was given a Release", args)
		}
		want[i] = r.Payload
	}
	lent := 0
	for round := range 20 {
		i := (round * 5) % len(calls)
		r := e.svc.GetProducts(context.Background(), products.Call{Publisher: nw, Principal: agency, Args: []byte(calls[i]), Lent: true})
		if !bytes.Equal(r.Payload, want[i]) {
			t.Fatalf("%s, round %d: lent\n%s\nunlent\n%s", calls[i], round, r.Payload, want[i])
		}
		if completed := bytes.HasPrefix(r.Payload, []byte(`{"status":"completed"`)); completed != (r.Release != nil) {
			t.Fatalf("%s: completed %v, lent %v", calls[i], completed, r.Release != nil)
		}
		if r.Release != nil {
			lent++
			r.Release()
			r.Release()
		}
	}
	if lent == 0 {
		t.Fatal("no answer was lent")
	}
}
