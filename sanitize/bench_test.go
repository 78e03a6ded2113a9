package sanitize

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/storefront/storefront/internal/cputime"
)

// benchTerms makes n realistic confidential terms: rule ids, catalogue ids,
// multi-word rule names and single note words, in fixed proportions.
func benchTerms(n int) []Term {
	r := rand.New(rand.NewPCG(1, 2))
	word := func() string {
		const letters = "abcdefghijklmnopqrstuvwxyz"
		b := make([]byte, 5+r.IntN(5))
		for i := range b {
			b[i] = letters[r.IntN(len(letters))]
		}
		return string(b)
	}
	out := make([]Term, 0, n)
	for i := 0; len(out) < n; i++ {
		switch i % 4 {
		case 0:
			out = append(out, Term{Value: fmt.Sprintf("MR-%04d-%s-%s", r.IntN(10000), word(), word()), Kind: KindRuleID})
		case 1:
			out = append(out, Term{Value: fmt.Sprintf("GAM-LI-%06d", r.IntN(1000000)), Kind: KindCatalogID})
		case 2:
			out = append(out, Term{Value: word() + " " + word() + " " + word(), Kind: KindRuleName})
		default:
			out = append(out, Term{Value: "Q" + word(), Kind: KindNoteTerm, Whole: true})
		}
	}
	return out
}

// A typical decline: a reason of three sentences and two suggestions.
var (
	benchReason = "Thank you for considering Northwind Media. That budget is below what Northwind Media can accept for this inventory; budgets of 1,000 USD or more fit. We would be glad to look at a revised brief."
	benchSugg   = []string{"A budget of 1,000 USD or more would fit this brief.", "Display inventory would fit this brief."}
)

// BenchmarkScreenResponse measures the screen's cost per response as the
// deny-list grows: it should stay roughly flat, because matching is one
// Aho-Corasick pass plus word lookups, whatever the number of terms.
func BenchmarkScreenResponse(b *testing.B) {
	for _, n := range []int{10, 10_000, 100_000} {
		b.Run(fmt.Sprintf("terms=%d", n), func(b *testing.B) {
			s := New(NewDenyList(benchTerms(n), nil))
			b.ReportAllocs()
			for b.Loop() {
				if s.Prose(benchReason, MaxReason, Declined).IsZero() {
					b.Fatal("empty reason")
				}
				if len(s.Lines(benchSugg, MaxSuggestion, MaxSuggestions)) != 2 {
					b.Fatal("suggestions dropped")
				}
			}
		})
	}
}

// BenchmarkBuildDenyList measures rebuilding the deny-list after an edit,
// and reports the heap the built deny-list keeps (heap-MiB).
func BenchmarkBuildDenyList(b *testing.B) {
	for _, n := range []int{10, 10_000, 100_000} {
		b.Run(fmt.Sprintf("terms=%d", n), func(b *testing.B) {
			terms := benchTerms(n)
			b.ReportAllocs()
			var d *DenyList
			start := cputime.Used()
			for b.Loop() {
				d = NewDenyList(terms, nil)
			}
			b.StopTimer()
			b.ReportMetric(float64(cputime.Used()-start)/float64(b.N), "cpu-ns/op")
			var before, after runtime.MemStats
			d = nil
			runtime.GC()
			runtime.ReadMemStats(&before)
			d = NewDenyList(terms, nil)
			runtime.GC()
			runtime.ReadMemStats(&after)
			b.ReportMetric(float64(after.HeapInuse-min(after.HeapInuse, before.HeapInuse))/(1<<20), "heap-MiB")
			runtime.KeepAlive(d)
		})
	}
}
