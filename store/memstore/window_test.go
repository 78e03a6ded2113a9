package memstore

import (
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/storefront/storefront/ledger"
	"github.com/storefront/storefront/products"
	"github.com/storefront/storefront/store"
)

// TestLedgerRetain appends to chains held to small LedgerRetain values,
// and to one held whole, and after each append compares what the store
// holds with a plain slice cut as LedgerRetain says: past it and a tenth,
// down to it. The entries held, their order, the checkpoint and the
// requests kept must all match; at the end the listing is newest first,
// the recordings are the held entries with their requests, the chain
// verifies from the checkpoint, and altering any held entry breaks it
// there.
func TestLedgerRetain(t *testing.T) {
	const appends = 120
	for _, keep := range []int{0, 1, 2, 3, 9, 10, 11, 25, 200} {
		t.Run(fmt.Sprintf("keep=%d", keep), func(t *testing.T) {
			ctx := t.Context()
			s := retaining(t, keep)
			p := s.pubs["p"]
			var want []ledger.Entry
			var checkpoint ledger.Entry
			for i := range appends {
				request := fmt.Appendf(nil, `{"brief":"%d"}`, i)
				e, err := s.Append(ctx, ledger.Record{Publisher: "p", Arm: "completed", RequestDigest: ledger.Digest(request), Request: request})
				if err != nil {
					t.Fatal(err)
				}
				want = append(want, e)
				if keep > 0 && len(want) > keep+keep/10 {
					drop := len(want) - keep
					checkpoint = want[drop-1]
					want = want[drop:]
				}
				if diff := cmp.Diff(want, p.chain.Clone()); diff != "" {
					t.Fatalf("after %d appends, chain held (-want +got):\n%s", i+1, diff)
				}
				if got := p.chain.Checkpoint(); got.Sequence != checkpoint.Sequence || got.Hash != checkpoint.Hash {
					t.Fatalf("after %d appends, checkpoint = %d %s, want %d %s", i+1, got.Sequence, got.Hash, checkpoint.Sequence, checkpoint.Hash)
				}
				var seqs []int64
				for _, e := range want {
					seqs = append(seqs, e.Sequence)
				}
				if got := slices.Sorted(maps.Keys(p.requests)); !slices.Equal(got, seqs) {
					t.Fatalf("after %d appends, requests kept for %v, want %v", i+1, got, seqs)
				}
				if n, err := s.LedgerLen(ctx, "p"); err != nil || n != int64(i+1) {
					t.Fatalf("after %d appends, LedgerLen = %d, %v, want %d", i+1, n, err, i+1)
				}
			}

			got, err := s.Decisions(ctx, "p", store.DecisionFilter{Limit: appends})
			if err != nil {
				t.Fatal(err)
			}
			newest := slices.Clone(want)
			slices.Reverse(newest)
			if diff := cmp.Diff(newest, got); diff != "" {
				t.Errorf("Decisions (-want +got):\n%s", diff)
			}

			var recorded []ledger.Entry
			if err := s.WalkRecorded(ctx, "p", time.Time{}, func(e ledger.Entry) error {
				recorded = append(recorded, e)
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			if len(recorded) != len(want) {
				t.Fatalf("WalkRecorded gave %d entries, want %d", len(recorded), len(want))
			}
			for i, e := range recorded {
				if e.Sequence != want[i].Sequence || string(e.Request) != fmt.Sprintf(`{"brief":"%d"}`, e.Sequence-1) {
					t.Errorf("WalkRecorded[%d] = sequence %d, request %s, want sequence %d with its request", i, e.Sequence, e.Request, want[i].Sequence)
				}
			}

			res, err := ledger.Verify(ctx, s, "p", nil)
			if err != nil {
				t.Fatal(err)
			}
			from := int64(0)
			if checkpoint.Sequence > 0 {
				from = checkpoint.Sequence + 1
			}
			if !res.OK || res.Total != appends || res.From != from || res.Checked != int64(len(want)) {
				t.Errorf("Verify = %+v, want ok over %d entries of %d from %d", res, len(want), appends, from)
			}

			for _, e := range want {
				s.Tamper("p", e.Sequence, func(e *ledger.Entry) { e.Arm = "rejected" })
				res, err := ledger.Verify(ctx, s, "p", nil)
				if err != nil {
					t.Fatal(err)
				}
				if res.OK || res.Break == nil || res.Break.Sequence != e.Sequence {
					t.Errorf("altered entry %d: Verify = %+v, want a break there", e.Sequence, res)
				}
				s.Tamper("p", e.Sequence, func(e *ledger.Entry) { e.Arm = "completed" })
			}
		})
	}
}

// BenchmarkAppend appends to a chain held to 1,000 entries, so that the
// oldest are dropped as it runs, as on a server that has been up a while.
func BenchmarkAppend(b *testing.B) {
	ctx := b.Context()
	s := retaining(b, 1000)
	r := ledger.Record{Publisher: "p", Arm: "completed", RequestDigest: ledger.Digest([]byte("{}")), Request: []byte("{}")}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Append(ctx, r); err != nil {
			b.Fatal(err)
		}
	}
}

// retaining returns a store holding LedgerRetain entries of each chain,
// with one publisher, p.
func retaining(tb testing.TB, keep int) *Store {
	s := New()
	s.LedgerRetain = keep
	if err := s.PutPublisher(tb.Context(), products.Publisher{ID: "p", Name: "P", Domain: "p.example"}); err != nil {
		tb.Fatal(err)
	}
	return s
}
