package ledger_test

import (
	"fmt"
	"testing"

	"github.com/storefront/storefront/ledger"
	"github.com/storefront/storefront/products"
	"github.com/storefront/storefront/store/memstore"
)

// TestVerifyWindow: the in-memory store keeps a bounded window of each
// chain. Verification checks that window from its checkpoint, says where
// it started, and still catches an altered entry in it, including the
// first one.
func TestVerifyWindow(t *testing.T) {
	s := memstore.New()
	s.LedgerRetain = 10
	ctx := t.Context()
	if err := s.PutPublisher(ctx, products.Publisher{ID: "p", Name: "P", Domain: "p.example"}); err != nil {
		t.Fatal(err)
	}
	for i := range 35 {
		if _, err := s.Append(ctx, ledger.Record{Publisher: "p", Arm: "completed", RequestDigest: ledger.Digest(fmt.Appendf(nil, "%d", i))}); err != nil {
			t.Fatal(err)
		}
	}
	res, err := ledger.Verify(ctx, s, "p", nil)
	if err != nil {
		t.Fatal(err)
	}
	if !res.OK || res.Total != 35 || res.From <= 1 || res.Checked != res.Total-res.From+1 || res.Checked < 10 || res.Checked > 11 {
		t.Fatalf("Verify = %+v, want ok over the last 10 or 11 of 35 entries", res)
	}
	for _, seq := range []int64{res.From, res.From + 3, 35} {
		s := memstore.New()
		s.LedgerRetain = 10
		if err := s.PutPublisher(ctx, products.Publisher{ID: "p", Name: "P", Domain: "p.example"}); err != nil {
			t.Fatal(err)
		}
		for i := range 35 {
			if _, err := s.Append(ctx, ledger.Record{Publisher: "p", Arm: "completed", RequestDigest: ledger.Digest(fmt.Appendf(nil, "%d", i))}); err != nil {
				t.Fatal(err)
			}
		}
		s.Tamper("p", seq, func(e *ledger.Entry) { e.Arm = "rejected" })
		res, err := ledger.Verify(ctx, s, "p", nil)
		if err != nil {
			t.Fatal(err)
		}
		if res.OK || res.Break == nil || res.Break.Sequence != seq {
			t.Errorf("altered entry %d: Verify = %+v", seq, res)
		}
	}
}
