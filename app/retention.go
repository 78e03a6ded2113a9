package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/storefront/storefront/agent"
	"github.com/storefront/storefront/internal/recovery"
	"github.com/storefront/storefront/metrics"
	"github.com/storefront/storefront/store"
)

// Retention is how long each kind of data is kept. A zero duration keeps
// that kind for ever.
type Retention struct {
	Tasks    time.Duration
	Seeds    time.Duration
	Replays  time.Duration
	Requests time.Duration
	// KeepRequests records each decision's request beside the ledger at
	// all (ledger-requests=off turns it off: no backtests then).
	KeepRequests bool
}

// DefaultRetention is the retention when --retention does not change it.
// Idempotency records outlive the 24 hours the capabilities declare by a
// day, so that a late retry is told its key expired rather than run again.
const DefaultRetention = "tasks=30d,seeds=7d,replays=48h,ledger-requests=90d"

// ParseRetention reads "tasks=30d,seeds=7d,replays=48h,ledger-requests=90d".
// Durations take d (days) as well as Go's units; "keep" keeps for ever,
// and ledger-requests=off records no requests. Kinds left out keep their
// defaults.
func ParseRetention(s string) (Retention, error) {
	r, err := parseRetention(DefaultRetention, Retention{KeepRequests: true})
	if err != nil {
		panic(err) // the default is a constant
	}
	return parseRetention(s, r)
}

func parseRetention(s string, r Retention) (Retention, error) {
	if strings.TrimSpace(s) == "" {
		return r, nil
	}
	for _, part := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return r, fmt.Errorf("%q: want kind=duration pairs such as %s", s, DefaultRetention)
		}
		if k == "ledger-requests" && v == "off" {
			r.KeepRequests, r.Requests = false, 0
			continue
		}
		d, err := retentionDuration(v)
		if err != nil {
			return r, fmt.Errorf("%s: %w", k, err)
		}
		switch k {
		case "tasks":
			r.Tasks = d
		case "seeds":
			r.Seeds = d
		case "replays":
			if d != 0 && d < agent.ReplayTTL {
				return r, fmt.Errorf("replays: %s is shorter than the %s replay window the capabilities declare", v, agent.ReplayTTL)
			}
			r.Replays = d
		case "ledger-requests":
			r.Requests, r.KeepRequests = d, true
		default:
			return r, fmt.Errorf("unknown kind %q (want tasks, seeds, replays or ledger-requests)", k)
		}
	}
	return r, nil
}

// retentionDuration reads 30d, 12h, 90m or keep (0: for ever).
func retentionDuration(v string) (time.Duration, error) {
	if v == "keep" {
		return 0, nil
	}
	if days, ok := strings.CutSuffix(v, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil || n < 1 || n > 36500 {
			return 0, fmt.Errorf("%q is not a number of days", v)
		}
		return time.Duration(n) * 24 * time.Hour, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < time.Minute {
		return 0, fmt.Errorf("%q is not a duration of a minute or more (such as 30d or 12h), or keep", v)
	}
	return d, nil
}

func (r Retention) String() string {
	f := func(d time.Duration) string {
		switch {
		case d == 0:
			return "keep"
		case d%(24*time.Hour) == 0:
			return strconv.Itoa(int(d/(24*time.Hour))) + "d"
		}
		return d.String()
	}
	req := f(r.Requests)
	if !r.KeepRequests {
		req = "off"
	}
	return fmt.Sprintf("tasks=%s,seeds=%s,replays=%s,ledger-requests=%s", f(r.Tasks), f(r.Seeds), f(r.Replays), req)
}

// Before turns the retention into the cut-off times at now.
func (r Retention) Before(now time.Time) store.RetainBefore {
	at := func(d time.Duration) time.Time {
		if d == 0 {
			return time.Time{}
		}
		return now.Add(-d)
	}
	return store.RetainBefore{Tasks: at(r.Tasks), Seeds: at(r.Seeds), Replays: at(r.Replays), Requests: at(r.Requests)}
}

// purge runs one retention pass over every publisher. Several replicas
// may run it at once: each deletion is idempotent.
func purge(ctx context.Context, s store.Publishers, r Retention, now time.Time, mx *metrics.Metrics) (store.Purged, error) {
	rt, ok := s.(store.Retention)
	if !ok {
		return store.Purged{}, errors.New("this store keeps no retention")
	}
	ps, err := s.Publishers(ctx)
	if err != nil {
		return store.Purged{}, err
	}
	var total store.Purged
	for _, p := range ps {
		n, err := rt.Purge(ctx, p.ID, r.Before(now))
		total.Tasks += n.Tasks
		total.Seeds += n.Seeds
		total.Replays += n.Replays
		total.Requests += n.Requests
		mx.Purged("tasks", n.Tasks)
		mx.Purged("seeded_catalogues", n.Seeds)
		mx.Purged("replays", n.Replays)
		mx.Purged("ledger_requests", n.Requests)
		if err != nil {
			return total, fmt.Errorf("retention for %s: %w", p.ID, err)
		}
	}
	return total, nil
}

// retain runs a retention pass a minute after start and then every
// interval, until ctx ends.
func retain(ctx context.Context, s store.Publishers, r Retention, every time.Duration, now func() time.Time, mx *metrics.Metrics, log *slog.Logger) {
	wait := time.Minute
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		wait = every
		var n store.Purged
		var err error
		// A pass that panics is logged and counted; the next one runs
		// on time.
		if recovery.Run(ctx, log, "background", "a retention pass", func() { n, err = purge(ctx, s, r, now(), mx) }) {
			continue
		}
		if err != nil && ctx.Err() == nil {
			log.Warn("retention pass failed; the next one retries", "err", err)
			continue
		}
		if n != (store.Purged{}) {
			log.Info("retention pass", "tasks", n.Tasks, "seeded_catalogues", n.Seeds, "replays", n.Replays, "ledger_requests", n.Requests)
		}
	}
}
