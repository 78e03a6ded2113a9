package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Target is something the load generator drives: the storefront, the
// ceiling or the peer, at an MCP endpoint.
type Target struct {
	Name string
	URL  string
	// Handshake runs the MCP initialize exchange once per connection
	// before calls, for servers that keep sessions.
	Handshake bool
	// CheckArms counts an answer whose arm is not the one the mix expects
	// for its request as wrong. The peer is exempt: AdCP 3.0, which it
	// speaks, has no rejected arm.
	CheckArms bool
	// A2A sends each request's A2A body (SendMessage) instead of its MCP
	// one; the arm is read from the task's artifact the same way.
	A2A bool
}

// LoadOptions says how hard and how long to drive a target.
type LoadOptions struct {
	Concurrency int
	Duration    time.Duration
	// Warmup runs the same load first, unmeasured.
	Warmup   time.Duration
	Requests []Request
	// Progress, when set, gets a line a second while the load runs.
	Progress io.Writer
}

// Stats is what one load run measured.
type Stats struct {
	Target      string  `json:"target"`
	Concurrency int     `json:"concurrency"`
	Seconds     float64 `json:"seconds"`
	Requests    int64   `json:"requests"`
	Errors      int64   `json:"errors"`
	// Wrong counts answers of another arm than the mix expects, for
	// targets that check arms.
	Wrong int64            `json:"wrong_arm"`
	Arms  map[string]int64 `json:"arms"`
	RPS   float64          `json:"rps"`
	// Latencies in milliseconds.
	P50        float64 `json:"p50_ms"`
	P90        float64 `json:"p90_ms"`
	P99        float64 `json:"p99_ms"`
	Max        float64 `json:"max_ms"`
	FirstError string  `json:"first_error,omitempty"`
}

// Load drives t with o.Concurrency callers in a closed loop for
// o.Duration after o.Warmup, cycling through o.Requests so the mix holds
// at any concurrency.
func Load(ctx context.Context, t Target, o LoadOptions) (Stats, error) {
	if o.Concurrency < 1 || o.Duration <= 0 || len(o.Requests) == 0 {
		return Stats{}, errors.New("load: need a concurrency of at least 1, a duration and requests")
	}
	hc := &http.Client{Transport: NewTransport(o.Concurrency), Timeout: 30 * time.Second}
	defer hc.CloseIdleConnections()
	clients := make([]*Client, o.Concurrency)
	for i := range clients {
		clients[i] = &Client{URL: t.URL, HTTP: hc, A2A: t.A2A}
		if t.Handshake {
			if err := clients[i].Initialize(ctx); err != nil {
				return Stats{}, fmt.Errorf("%s at %s: %w", t.Name, t.URL, err)
			}
		}
	}
	if o.Warmup > 0 {
		if _, err := phase(ctx, t, o, clients, o.Warmup, nil); err != nil {
			return Stats{}, err
		}
	}
	return phase(ctx, t, o, clients, o.Duration, o.Progress)
}

type worker struct {
	lat      []time.Duration
	arms     map[string]int64
	errors   int64
	wrong    int64
	firstErr string
}

func phase(ctx context.Context, t Target, o LoadOptions, clients []*Client, d time.Duration, progress io.Writer) (Stats, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		done   atomic.Int64
		sumNs  atomic.Int64
		wg     sync.WaitGroup
		stop   atomic.Bool
		work   = make([]worker, len(clients))
		start  = time.Now()
		cutoff = start.Add(d)
	)
	for i := range clients {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			w := &work[i]
			w.lat = make([]time.Duration, 0, 1<<14)
			w.arms = map[string]int64{}
			c := clients[i]
			for k := i; !stop.Load(); k += len(clients) {
				req := o.Requests[k%len(o.Requests)]
				t0 := time.Now()
				body := req.Body
				if t.A2A {
					body = req.A2ABody
				}
				raw, err := c.Call(ctx, body)
				el := time.Since(t0)
				if t0.After(cutoff) {
					return
				}
				arm := "error"
				if err == nil {
					arm = Arm(raw)
				}
				switch {
				case arm == "error":
					w.errors++
					if w.firstErr == "" {
						if err != nil {
							w.firstErr = err.Error()
						} else {
							w.firstErr = truncate(raw, 300)
						}
					}
				case t.CheckArms && arm != req.Arm:
					w.wrong++
					if w.firstErr == "" {
						w.firstErr = fmt.Sprintf("%q answered %s, want %s: %s", req.Name, arm, req.Arm, truncate(raw, 300))
					}
				}
				w.arms[arm]++
				w.lat = append(w.lat, el)
				done.Add(1)
				sumNs.Add(int64(el))
			}
		}(i)
	}
	ticker := time.NewTicker(time.Second)
	timer := time.NewTimer(d)
	var lastN, lastSum int64
	last := start
	timedOut := false
loop:
	for {
		select {
		case <-ctx.Done():
			break loop
		case <-timer.C:
			timedOut = true
			break loop
		case now := <-ticker.C:
			if progress == nil {
				continue
			}
			n, sum := done.Load(), sumNs.Load()
			mean := 0.0
			if n > lastN {
				mean = float64(sum-lastSum) / float64(n-lastN) / 1e6
			}
			fmt.Fprintf(progress, "  %-10s c=%-4d %4.0fs  %8.0f req/s  mean %6.2f ms\n",
				t.Name, len(clients), now.Sub(start).Seconds(), float64(n-lastN)/now.Sub(last).Seconds(), mean)
			lastN, lastSum, last = n, sum, now
		}
	}
	ticker.Stop()
	stop.Store(true)
	elapsed := time.Since(start)
	if !timedOut {
		// Interrupted: the figures would be partial, so there are none.
		cancel()
		wg.Wait()
		return Stats{}, ctx.Err()
	}
	wg.Wait()
	s := Stats{Target: t.Name, Concurrency: len(clients), Seconds: elapsed.Seconds(), Arms: map[string]int64{}}
	var all []time.Duration
	for _, w := range work {
		all = append(all, w.lat...)
		s.Errors += w.errors
		s.Wrong += w.wrong
		for k, v := range w.arms {
			s.Arms[k] += v
		}
		if s.FirstError == "" {
			s.FirstError = w.firstErr
		}
	}
	s.Requests = int64(len(all))
	s.RPS = float64(s.Requests) / min(elapsed, d).Seconds()
	if len(all) > 0 {
		slices.Sort(all)
		q := func(p float64) float64 {
			i := int(p*float64(len(all))+0.5) - 1
			i = max(0, min(len(all)-1, i))
			return ms(all[i])
		}
		s.P50, s.P90, s.P99, s.Max = q(0.50), q(0.90), q(0.99), ms(all[len(all)-1])
	}
	return s, nil
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }
