package bench_test

import (
	"bytes"
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
	"github.com/storefront/storefront/sanitize"
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

// service is the products service as the program wires it over s
// (ledger on), on benchDay.
func service(s *memstore.Store) *products.Service {
	return &products.Service{
		Snapshots:  store.NewSnapshots(s),
		Ledger:     store.Ledger{Store: s},
		Accounts:   access.Accounts{Store: s},
		Directives: store.Directives{Store: s},
		Tasks:      store.Tasks{Store: s},
		Now:        func() time.Time { return benchDay },
		Log:        slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
}

// TestSnapshotLeavesSharedProductsAlone: the in-memory store hands the
// snapshot its own product values (store.SharedCatalogue), so serving
// from the snapshot must never write into them. Every brief of the mix is
// answered, products and declines, and the store's catalogue must encode
// as it did before.
func TestSnapshotLeavesSharedProductsAlone(t *testing.T) {
	ctx := t.Context()
	s := memstore.New()
	if err := (bench.Fixture{Products: 300, Rules: 20, Deny: 400}).Seed(ctx, s); err != nil {
		t.Fatal(err)
	}
	var _ store.SharedCatalogue = s
	encoded := func() []byte {
		ps, _, err := s.Catalogue(ctx, bench.PublisherID)
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(ps)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	before := encoded()
	svc := service(s)
	arms := map[string]int{}
	for _, r := range bench.Mix("3.2-beta.5") {
		res := svc.GetProducts(ctx, products.Call{Publisher: bench.PublisherID, Args: r.Args})
		arms[res.Outcome.Arm().String()]++
	}
	if arms["completed"] == 0 || arms["rejected"] == 0 {
		t.Fatalf("the mix was answered %v: want products and declines", arms)
	}
	if !bytes.Equal(encoded(), before) {
		t.Fatal("serving from the snapshot changed the store's catalogue")
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
			svc := service(s)
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

// BenchmarkStoreHeap seeds the in-memory store with a generated catalogue
// as `storefront bench serve` does and builds its serving snapshot, then
// reports the live heap the two keep together, as the process holds them
// (live-MiB, and live-B/product), and the store's part alone (store-MiB).
// Each op measures: run it with -benchtime 1x.
func BenchmarkStoreHeap(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("products=%d", n), func(b *testing.B) {
			f := bench.DefaultFixture()
			f.Products = n
			ctx := context.Background()
			var live, kept float64
			loop(b, func(int) {
				var before, seeded, after runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				s := memstore.New()
				if err := f.Seed(ctx, s); err != nil {
					b.Fatal(err)
				}
				runtime.GC()
				runtime.ReadMemStats(&seeded)
				snap, err := store.NewSnapshots(s).Snapshot(ctx, bench.PublisherID)
				if err != nil {
					b.Fatal(err)
				}
				runtime.GC()
				runtime.ReadMemStats(&after)
				runtime.KeepAlive(s)
				runtime.KeepAlive(snap)
				live = float64(after.HeapAlloc) - float64(before.HeapAlloc)
				kept = float64(seeded.HeapAlloc) - float64(before.HeapAlloc)
			})
			b.ReportMetric(live/(1<<20), "live-MiB")
			b.ReportMetric(live/float64(n), "live-B/product")
			b.ReportMetric(kept/(1<<20), "store-MiB")
		})
	}
}

// BenchmarkScreenBuild builds the deny-list `storefront bench` times in
// its screen table (bench.ScreenTerms: the generated publisher's terms,
// each confidential phrase bringing its distinctive words) against the
// public lexicon, and reports the CPU time per build (cpu-ns/op) and the
// live heap the built list keeps (heap-MiB).
func BenchmarkScreenBuild(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("terms=%d", n), func(b *testing.B) {
			terms := bench.ScreenTerms(n)
			lexicon := products.PublicLexicon()
			var d *sanitize.DenyList
			loop(b, func(int) { d = sanitize.NewDenyList(terms, lexicon) })
			var before, after runtime.MemStats
			d = nil
			runtime.GC()
			runtime.ReadMemStats(&before)
			d = sanitize.NewDenyList(terms, lexicon)
			runtime.GC()
			runtime.ReadMemStats(&after)
			runtime.KeepAlive(d)
			b.ReportMetric((float64(after.HeapAlloc)-float64(before.HeapAlloc))/(1<<20), "heap-MiB")
			b.ReportMetric(float64(d.Len())/float64(len(terms)), "kept/term")
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
