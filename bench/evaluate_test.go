package bench_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"testing"
	"time"

	"github.com/storefront/storefront/access"
	"github.com/storefront/storefront/bench"
	"github.com/storefront/storefront/internal/cputime"
	"github.com/storefront/storefront/merch"
	"github.com/storefront/storefront/products"
	"github.com/storefront/storefront/store"
	"github.com/storefront/storefront/store/memstore"
)

// benchDay is the day the mix is evaluated on: before the demo's sold-out
// holiday weeks, so every brief of the mix gets the answer the mix says.
var benchDay = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

// ruleSizes are the rulebook sizes rule evaluation is compared at: the
// target is that 10k rules cost at most 1.2x what 10 rules cost.
var ruleSizes = []int{10, 1_000, 10_000}

// loop runs op until the benchmark has its time and reports CPU time per
// op as cpu-ns/op.
func loop(b *testing.B, op func(i int)) {
	b.ReportAllocs()
	start := cputime.Used()
	for i := 0; b.Loop(); i++ {
		op(i)
	}
	b.ReportMetric(float64(cputime.Used()-start)/float64(b.N), "cpu-ns/op")
}

// fixtureSnapshot is the generated publisher with n rules and a small
// catalogue of the same shapes (the same market) and no padded deny-list:
// only the rules matter to evaluation.
func fixtureSnapshot(tb testing.TB, n int) *products.Snapshot {
	tb.Helper()
	f := bench.Fixture{Products: 100, Rules: n}
	cat := f.Catalogue()
	rb := f.Rulebook(cat)
	if err := rb.Validate(); err != nil {
		tb.Fatalf("generated rulebook: %v", err)
	}
	return products.NewSnapshot(f.Publisher(), cat, 1, &rb, 1)
}

// BenchmarkEvaluate evaluates the mix's briefs, one per op, against the
// generated rulebook at each size: through the snapshot's index, as
// serving does, and through the linear reference.
func BenchmarkEvaluate(b *testing.B) {
	briefs, err := bench.Briefs(benchDay)
	if err != nil {
		b.Fatal(err)
	}
	for _, n := range ruleSizes {
		snap := fixtureSnapshot(b, n)
		market := snap.Catalogue.Market()
		b.Run(fmt.Sprintf("indexed/rules=%d", n), func(b *testing.B) {
			loop(b, func(i int) {
				if _, err := snap.Rules.Evaluate(briefs[i%len(briefs)], market); err != nil {
					b.Fatal(err)
				}
			})
		})
		b.Run(fmt.Sprintf("linear/rules=%d", n), func(b *testing.B) {
			loop(b, func(i int) {
				if _, err := merch.Evaluate(snap.Rulebook, briefs[i%len(briefs)], market); err != nil {
					b.Fatal(err)
				}
			})
		})
	}
}

// BenchmarkIndexBuild builds the index of the generated rulebook, as each
// snapshot does once, and reports the heap one index keeps (live-B).
func BenchmarkIndexBuild(b *testing.B) {
	for _, n := range ruleSizes {
		f := bench.Fixture{Products: 100, Rules: n}
		rb := f.Rulebook(f.Catalogue())
		b.Run(fmt.Sprintf("rules=%d", n), func(b *testing.B) {
			loop(b, func(int) { merch.NewIndex(&rb) })
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			ix := merch.NewIndex(&rb)
			runtime.GC()
			runtime.ReadMemStats(&after)
			runtime.KeepAlive(ix)
			b.ReportMetric(float64(after.HeapAlloc)-float64(before.HeapAlloc), "live-B")
		})
	}
}

// BenchmarkGetProducts serves the mix's requests, one per op, through the
// whole products service as the program wires it (memstore, ledger on),
// for the default fixture's catalogue and deny-list and each rulebook size.
func BenchmarkGetProducts(b *testing.B) {
	calls := bench.Mix("3.2-beta.5")
	for _, n := range ruleSizes {
		b.Run(fmt.Sprintf("rules=%d", n), func(b *testing.B) {
			f := bench.DefaultFixture()
			f.Rules = n
			s := memstore.New()
			if err := f.Seed(context.Background(), s); err != nil {
				b.Fatal(err)
			}
			svc := &products.Service{
				Snapshots:  store.NewSnapshots(s),
				Ledger:     store.Ledger{Store: s},
				Accounts:   access.Accounts{Store: s},
				Directives: store.Directives{Store: s},
				Tasks:      store.Tasks{Store: s},
				Now:        func() time.Time { return benchDay },
				Log:        slog.New(slog.NewTextHandler(io.Discard, nil)),
			}
			ctx := context.Background()
			// Every request answers with the arm the mix says, before any
			// is timed (this also builds the snapshot).
			for _, r := range calls {
				res := svc.GetProducts(ctx, products.Call{Publisher: bench.PublisherID, Args: r.Args})
				if got := res.Outcome.Arm().String(); got != r.Arm {
					b.Fatalf("%s: answered %s, the mix expects %s: %s", r.Name, got, r.Arm, res.Payload)
				}
			}
			loop(b, func(i int) {
				r := calls[i%len(calls)]
				if res := svc.GetProducts(ctx, products.Call{Publisher: bench.PublisherID, Args: r.Args}); res.Outcome.Arm().String() != r.Arm {
					b.Fatalf("%s: answered %s", r.Name, res.Outcome.Arm())
				}
			})
		})
	}
}

// BenchmarkCatalogueHeap builds the serving snapshot of a generated
// catalogue, its products decoded one by one as a store loads them, and
// reports the live heap the snapshot keeps: in all (live-MiB) and per
// product (live-B/product).
func BenchmarkCatalogueHeap(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("products=%d", n), func(b *testing.B) {
			f := bench.DefaultFixture()
			f.Products = n
			load := func() []products.Product {
				cat := f.Catalogue()
				out := make([]products.Product, len(cat))
				for i, p := range cat {
					raw, err := json.Marshal(p)
					if err == nil {
						err = json.Unmarshal(raw, &out[i])
					}
					if err != nil {
						b.Fatal(err)
					}
				}
				return out
			}
			rb := f.Rulebook(f.Catalogue())
			var snap *products.Snapshot
			loop(b, func(int) {
				cat := load()
				snap = products.NewSnapshot(f.Publisher(), cat, 1, &rb, 1)
			})
			snap = nil
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			snap = products.NewSnapshot(f.Publisher(), load(), 1, &rb, 1)
			runtime.GC()
			runtime.ReadMemStats(&after)
			runtime.KeepAlive(snap)
			live := float64(after.HeapAlloc) - float64(before.HeapAlloc)
			b.ReportMetric(live/(1<<20), "live-MiB")
			b.ReportMetric(live/float64(n), "live-B/product")
		})
	}
}

// BenchmarkFind matches and ranks the mix's briefs against the default
// fixture's 10k-product catalogue, the first page of each, one per op:
// the catalogue's part of get_products without the rest of the pipeline.
func BenchmarkFind(b *testing.B) {
	f := bench.DefaultFixture()
	cat := f.Catalogue()
	rb := f.Rulebook(cat)
	snap := products.NewSnapshot(f.Publisher(), cat, 1, &rb, 1)
	var reqs []*products.Request
	for _, r := range bench.Mix("3.2-beta.5") {
		req, err := products.DecodeRequest(r.Args)
		if err != nil {
			b.Fatalf("mix request %s: %v", r.Name, err)
		}
		reqs = append(reqs, req)
	}
	loop(b, func(i int) {
		req := reqs[i%len(reqs)]
		m := snap.Catalogue.Find(req.Filters, req.GeoCountries, *req.Brief, true, nil)
		if m.Total > 0 && len(m.Page(0, req.Pagination.MaxResults)) == 0 {
			b.Fatalf("%d matched, an empty first page", m.Total)
		}
	})
}
