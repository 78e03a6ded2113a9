package agent

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/storefront/storefront/products"
	"github.com/storefront/storefront/store/memstore"
)

// TestKeptAnswersAreNotLent: idempotent tells its run whether the answer
// is cached for replay, so that get_products does not lend a payload the
// replay store would keep: a call under an idempotency key is kept, one
// without is not.
func TestKeptAnswersAreNotLent(t *testing.T) {
	st := memstore.New()
	if err := st.PutPublisher(context.Background(), products.Publisher{ID: "harborlane", Name: "Harbor Lane", Domain: "harborlane.example"}); err != nil {
		t.Fatal(err)
	}
	a := &Agent{Store: st, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	for _, test := range []struct {
		args string
		kept bool
	}{
		{`{"adcp_version":"3.2-beta.5","buying_mode":"brief","brief":"video","idempotency_key":"lent-key-0123456789"}`, true},
		{`{"adcp_version":"3.2-beta.5","buying_mode":"brief","brief":"video"}`, false},
	} {
		var kept, ran bool
		r := a.idempotent(context.Background(), Call{Publisher: "harborlane", Args: []byte(test.args)}, products.Principal{ID: "buyer"}, "get_products",
			func(_ context.Context, k bool) Reply {
				ran, kept = true, k
				return Reply{Payload: []byte(`{"status":"completed","adcp_version":"3.2-beta.5","products":[]}`)}
			})
		if !ran || kept != test.kept {
			t.Fatalf("%s: ran %v, kept %v, want kept %v: %s", test.args, ran, kept, test.kept, r.Payload)
		}
	}
}
