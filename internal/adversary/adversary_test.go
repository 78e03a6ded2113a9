package adversary

import (
	"context"
	"fmt"
	"math"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"
)

// The short run is part of the test command. The long run is
//
//	STOREFRONT_ADVERSARY_CASES=1000000 go test ./internal/adversary -run 'TestAdversary$' -timeout 6h -v
//
// and its figures are in the README ("Declines that help and leak
// nothing"). STOREFRONT_ADVERSARY_SEED moves the worlds.
const shortCases = 1500

// worldsPerProgram bounds the memory a run holds: the program keeps every
// world it served, so it is restarted after this many.
const worldsPerProgram = 200

func cases(t *testing.T) int {
	if s := os.Getenv("STOREFRONT_ADVERSARY_CASES"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("STOREFRONT_ADVERSARY_CASES=%q is not a number of cases", s)
		}
		return n
	}
	return shortCases
}

func seed(t *testing.T) uint64 {
	if s := os.Getenv("STOREFRONT_ADVERSARY_SEED"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("STOREFRONT_ADVERSARY_SEED=%q is not a number", s)
		}
		return n
	}
	return 1
}

// run probes worlds until at least n cases have run, worlds rewritten by
// view (nil for as generated), on STOREFRONT_ADVERSARY_WORKERS programs
// at once (one by default).
func run(t *testing.T, n int, first uint64, view func(*World) *World) *Tally {
	return runWorlds(t, n, first, NewWorld, view)
}

func runWorlds(t *testing.T, n int, first uint64, world func(uint64, string) *World, view func(*World) *World) *Tally {
	t.Helper()
	workers, wireEvery := 1, 1
	if s := os.Getenv("STOREFRONT_ADVERSARY_WORKERS"); s != "" {
		if workers, _ = strconv.Atoi(s); workers < 1 {
			t.Fatalf("STOREFRONT_ADVERSARY_WORKERS=%q is not a number of workers", s)
		}
	}
	// STOREFRONT_ADVERSARY_WIRE_EVERY=n sends every n-th world's probes
	// over HTTP too (the real MCP and A2A handlers, webhooks); the others
	// go through the agent's dispatch only. The short run sends every
	// world's; a long run on a busy machine may thin them.
	if s := os.Getenv("STOREFRONT_ADVERSARY_WIRE_EVERY"); s != "" {
		if wireEvery, _ = strconv.Atoi(s); wireEvery < 1 {
			t.Fatalf("STOREFRONT_ADVERSARY_WIRE_EVERY=%q is not a number of worlds", s)
		}
	}
	var (
		mu    sync.Mutex
		total = NewTally()
		next  = first
		wg    sync.WaitGroup
		start = time.Now()
	)
	claim := func() (uint64, bool) {
		mu.Lock()
		defer mu.Unlock()
		if total.Cases >= n {
			return 0, false
		}
		next++
		return next - 1, true
	}
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var h *Harness
			defer func() {
				if h != nil {
					if err := h.Close(); err != nil {
						t.Error(err)
					}
				}
			}()
			for i := 0; ; i++ {
				s, ok := claim()
				if !ok {
					return
				}
				if i%worldsPerProgram == 0 {
					if h != nil {
						if err := h.Close(); err != nil {
							t.Error(err)
							return
						}
					}
					var err error
					if h, err = Start(); err != nil {
						t.Error(err)
						return
					}
				}
				w := world(s, fmt.Sprintf("adv%d", s))
				if err := w.Valid(); err != nil {
					t.Error(err)
					return
				}
				if view != nil {
					w = view(w)
				}
				if err := h.Load(context.Background(), w); err != nil {
					t.Error(err)
					return
				}
				got := Probe(context.Background(), h, w, s%uint64(wireEvery) == 0)
				mu.Lock()
				total.Add(got)
				if testing.Verbose() && (got.LeakCount() > 0 || got.OracleCount() > 0) {
					// A long run shows what it finds as it goes.
					for _, e := range got.Examples[:min(len(got.Examples), 3)] {
						t.Logf("world %d: %s", s, e)
					}
				}
				if testing.Verbose() && total.Worlds%1000 == 0 {
					t.Logf("%d worlds, %d cases, %d leaks (%d distinct), %d oracle differences, %s",
						total.Worlds, total.Cases, total.LeakCount(), total.Leaked, total.OracleCount(), time.Since(start).Round(time.Second))
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	t.Logf("%s in %s", total, time.Since(start).Round(time.Second))
	return total
}

// TestAdversary: no leak and no oracle difference, over every transport
// and version.
func TestAdversary(t *testing.T) {
	tally := run(t, cases(t), seed(t), nil)
	if n := tally.LeakCount(); n > 0 {
		t.Errorf("%d leaks", n)
	}
	if n := tally.OracleCount(); n > 0 {
		t.Errorf("%d oracle differences", n)
	}
	if tally.Failures > 0 {
		t.Errorf("%d probes got no answer", tally.Failures)
	}
	for _, tr := range append(Transports, "webhook") {
		if tally.ByTransport[tr] == 0 && tr != "webhook" {
			t.Errorf("no probe went over %s", tr)
		}
	}
	if tally.Declines == 0 {
		t.Error("no decline was probed: the usefulness figures measure nothing")
	}
}

// TestAdversaryControl runs the same worlds with the screen blind to their
// secrets: the oracle must then find leaks, or the suite proves nothing.
func TestAdversaryControl(t *testing.T) {
	tally := run(t, 300, seed(t), (*World).Blind)
	if tally.LeakCount() == 0 {
		t.Fatal("with the screen blind no plant leaked: the leak oracle sees nothing")
	}
}

// Usefulness on the short run's clean worlds (seed 1, 1,500 cases), as
// measured with this suite on main at 0d63133, before lint = serve, the
// screened wire form and verified figures (see the README): they may not
// make declines say less.
const (
	baselineFigures   = 19.2 // per cent of declines naming a figure
	baselineSuggested = 52.7 // per cent with a verified suggestion
)

// TestAdversaryUsefulness measures what declines tell a buyer on clean
// worlds (no plants): the share naming a figure and the share carrying a
// verified suggestion, which must be no worse than before.
func TestAdversaryUsefulness(t *testing.T) {
	tally := runWorlds(t, cases(t), seed(t), NewCleanWorld, nil)
	if tally.Declines == 0 {
		t.Fatal("no decline was probed")
	}
	figures, suggested := round1(pct(tally.Figures, tally.Declines)), round1(pct(tally.Suggested, tally.Declines))
	t.Logf("clean worlds: %d declines, %.1f%% naming a figure, %.1f%% with a verified suggestion", tally.Declines, figures, suggested)
	if cases(t) != shortCases || seed(t) != 1 {
		return // the baseline is the short run's
	}
	if figures < baselineFigures || suggested < baselineSuggested {
		t.Errorf("declines say less than before: %.1f%% naming a figure (was %.1f%%), %.1f%% with a suggestion (was %.1f%%)",
			figures, baselineFigures, suggested, baselineSuggested)
	}
}

func round1(x float64) float64 { return math.Round(x*10) / 10 }
