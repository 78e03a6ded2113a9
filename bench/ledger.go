package bench

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/storefront/storefront/ledger"
	"github.com/storefront/storefront/store/pgstore"
)

// LedgerLoad appends decisions to the generated publisher's ledger in the
// database at dbURL from conc goroutines for d, through the same store the
// storefront uses, and returns the appends per second. It measures what
// the ledger sustains with the MCP layer out of the way.
func LedgerLoad(ctx context.Context, dbURL string, conc int, d time.Duration) (float64, error) {
	s, err := pgstore.Open(ctx, dbURL, nil)
	if err != nil {
		return 0, err
	}
	defer s.Close()
	var (
		n     atomic.Int64
		first atomic.Value
		wg    sync.WaitGroup
	)
	began := time.Now()
	deadline := began.Add(d)
	for w := range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; time.Now().Before(deadline); i++ {
				r := ledger.Record{
					Publisher: PublisherID, Principal: "bench", RulebookVersion: 1, Arm: "completed",
					RequestDigest:  ledger.Digest(fmt.Appendf(nil, "request %d/%d", w, i)),
					ResponseDigest: ledger.Digest(fmt.Appendf(nil, "response %d/%d", w, i)),
				}
				if i%10 >= 7 {
					r.Arm, r.Slug, r.RuleIDs = "rejected", "budget_below_minimum", []string{"MR-2291-CTV-FLOOR"}
				}
				if _, err := s.Append(ctx, r); err != nil {
					first.CompareAndSwap(nil, err)
					return
				}
				n.Add(1)
			}
		}()
	}
	wg.Wait()
	if err, _ := first.Load().(error); err != nil {
		return 0, fmt.Errorf("ledger append: %w", err)
	}
	return float64(n.Load()) / time.Since(began).Seconds(), nil
}
