package backtest_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/storefront/storefront/admin"
	"github.com/storefront/storefront/backtest"
	"github.com/storefront/storefront/demo"
	"github.com/storefront/storefront/internal/traffic"
	"github.com/storefront/storefront/ledger"
	"github.com/storefront/storefront/merch"
	"github.com/storefront/storefront/metrics"
	"github.com/storefront/storefront/products"
	"github.com/storefront/storefront/store"
	"github.com/storefront/storefront/store/memstore"
)

// start is when the recorded traffic begins: a fixed instant, never today.
var start = time.Date(2031, 3, 2, 0, 0, 0, 0, time.UTC)

type fixture struct {
	store   *memstore.Store
	snaps   *store.Snapshots
	clock   *traffic.Clock
	preview *products.Service
	briefs  int
}

// recorded30Days records 30 days of traffic through the live pipeline on
// the demo publisher, the store stamping entries with the same moving
// clock the pipeline reads.
func recorded30Days(t *testing.T) *fixture { return recorded(t, 60) }

// recorded records 30 days of perDay briefs.
func recorded(t testing.TB, perDay int) *fixture {
	t.Helper()
	ctx := context.Background()
	clock := &traffic.Clock{T: start}
	s := memstore.New()
	s.SetClock(clock.Now)
	if err := demo.Seed(ctx, s, demo.Written); err != nil {
		t.Fatal(err)
	}
	snaps := store.NewSnapshots(s)
	n, err := traffic.Record(ctx, traffic.Service(s, snaps, clock), clock, 1, 30, perDay)
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{
		store: s, snaps: snaps, clock: clock, briefs: n,
		preview: &products.Service{Snapshots: snaps, Accounts: admin.PreviewAccounts{Store: s}, Now: clock.Now},
	}
}

// draftRulebook raises the display floor to 5,000 USD, asks for a week of
// lead time instead of three days, and starts serving Germany.
func draftRulebook() *merch.Rulebook {
	rb := demo.Rulebook()
	for i := range rb.Rules {
		w := &rb.Rules[i].When
		if w.BudgetBelow != nil {
			w.BudgetBelow.PerChannel["display"] = 5000
		}
		if w.LeadTimeDays != nil {
			week := 7
			w.LeadTimeDays = &week
		}
		if w.CountriesServed != nil {
			w.CountriesServed = append(w.CountriesServed, "DE")
		}
	}
	return &rb
}

func (f *fixture) draft(t testing.TB) (draft, current *products.Snapshot) {
	t.Helper()
	cur, err := f.snaps.Snapshot(context.Background(), demo.PublisherID)
	if err != nil {
		t.Fatal(err)
	}
	return products.NewSnapshot(cur.Publisher, cur.Catalogue.Products(), cur.CatalogueVersion, draftRulebook(), 0), cur
}

// direct is the backtest done by hand, without the package: every
// decision of the window the rulebook decided, answered again against the
// draft at its own time, compared with what the ledger says.
type direct struct {
	replayed, unchanged          int64
	newly, noLonger, slugChanged int64
	newlyBySlug, noLongerBySlug  map[string]int64
	newlyByAccount               map[string]int64
	newlyUSD, noLongerUSD        float64
}

func replayByHand(t *testing.T, f *fixture, draft *products.Snapshot, since time.Time) direct {
	t.Helper()
	ctx := context.Background()
	d := direct{newlyBySlug: map[string]int64{}, noLongerBySlug: map[string]int64{}, newlyByAccount: map[string]int64{}}
	err := f.store.WalkRecorded(ctx, demo.PublisherID, since, func(e ledger.Entry) error {
		if e.Forced || e.Sandbox || (e.Arm == "failed" && e.Slug == "") {
			return nil
		}
		at := e.Time
		svc := &products.Service{Snapshots: f.snaps, Accounts: admin.PreviewAccounts{Store: f.store}, Now: func() time.Time { return at }}
		p := products.Principal{ID: e.Principal}
		if e.Principal == traffic.Buyer.ID {
			p = traffic.Buyer
		}
		res := svc.Preview(ctx, products.Call{Publisher: demo.PublisherID, Principal: p, Args: e.Request}, draft)
		slug := res.Outcome.Slug()
		for _, er := range res.Outcome.Errors() {
			if s := er.DeclineSlug(); s != "" {
				slug = s
			}
		}
		d.replayed++
		var budget float64
		if b := budgetOf(t, e.Request); b != nil {
			budget = *b
		}
		switch {
		case e.Slug == "" && slug != "":
			d.newly++
			d.newlyBySlug[string(slug)]++
			d.newlyByAccount[e.Account]++
			d.newlyUSD += budget
		case e.Slug != "" && slug == "":
			d.noLonger++
			d.noLongerBySlug[string(e.Slug)]++
			d.noLongerUSD += budget
		case e.Slug != slug:
			d.slugChanged++
		default:
			d.unchanged++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestBacktestMatchesADirectReplay: over 30 days of recorded decisions,
// the backtest's counts (flips by kind, by slug and by account, and the
// budgets) equal those of replaying every decision by hand.
func TestBacktestMatchesADirectReplay(t *testing.T) {
	f := recorded30Days(t)
	draft, current := f.draft(t)
	since := f.clock.T.AddDate(0, 0, -30)
	var progress []backtest.Progress
	run := &backtest.Run{
		Publisher: demo.PublisherID, Preview: f.preview, Draft: draft, Current: current, Source: f.store,
		Options:  backtest.Options{Since: since, Limit: backtest.MaxLimit},
		Progress: func(p backtest.Progress) { progress = append(progress, p) },
	}
	rep, err := run.Execute(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := replayByHand(t, f, draft, since)

	if rep.Decisions != int64(f.briefs) || rep.Stride != 1 {
		t.Errorf("the window holds %d decisions (stride %d), want all %d recorded", rep.Decisions, rep.Stride, f.briefs)
	}
	if rep.Replayed != want.replayed || rep.Unchanged != want.unchanged {
		t.Errorf("replayed %d (%d unchanged), want %d (%d unchanged)", rep.Replayed, rep.Unchanged, want.replayed, want.unchanged)
	}
	if rep.Flips.NewlyDeclined != want.newly || rep.Flips.NoLongerDeclined != want.noLonger || rep.Flips.SlugChanged != want.slugChanged {
		t.Errorf("flips = %+v, want newly declined %d, no longer declined %d, slug changed %d", rep.Flips, want.newly, want.noLonger, want.slugChanged)
	}
	// The draft must move every kind of flip, or the comparison proves
	// little.
	if want.newly < 20 || want.noLonger < 5 || want.slugChanged < 1 {
		t.Fatalf("the recorded traffic flips too little under the draft to test with: %+v", want)
	}
	if rep.Replayed+rep.Skipped["failed"] != rep.Decisions || rep.Skipped["failed"] == 0 {
		t.Errorf("replayed %d and skipped %v of %d decisions", rep.Replayed, rep.Skipped, rep.Decisions)
	}
	for _, g := range rep.BySlug {
		if g.NewlyDeclined != want.newlyBySlug[g.Key] || g.NoLongerDeclined != want.noLongerBySlug[g.Key] {
			t.Errorf("slug %s: %d newly / %d no longer declined, want %d / %d", g.Key, g.NewlyDeclined, g.NoLongerDeclined, want.newlyBySlug[g.Key], want.noLongerBySlug[g.Key])
		}
		delete(want.newlyBySlug, g.Key)
		delete(want.noLongerBySlug, g.Key)
	}
	for slug, n := range want.newlyBySlug {
		if n > 0 {
			t.Errorf("slug %s newly declined %d briefs but is not in the report", slug, n)
		}
	}
	accounts := 0
	for _, g := range rep.ByAccount {
		if g.NewlyDeclined != want.newlyByAccount[g.Key] {
			t.Errorf("account %q: %d newly declined, want %d", g.Key, g.NewlyDeclined, want.newlyByAccount[g.Key])
		}
		accounts++
	}
	if accounts < 3 {
		t.Errorf("flips by account cover %d accounts; the traffic uses several", accounts)
	}
	if got := rep.Budgets.NewlyDeclined["USD"]; got != want.newlyUSD {
		t.Errorf("budgets newly declined = %v USD, want %v", got, want.newlyUSD)
	}
	if got := rep.Budgets.NoLongerDeclined["USD"]; got != want.noLongerUSD {
		t.Errorf("budgets no longer declined = %v USD, want %v", got, want.noLongerUSD)
	}
	if len(rep.Examples) != backtest.MaxExamples {
		t.Errorf("%d examples, want %d", len(rep.Examples), backtest.MaxExamples)
	}
	for i := 1; i < len(rep.Examples); i++ {
		if rep.Examples[i].Sequence >= rep.Examples[i-1].Sequence {
			t.Fatalf("examples are not newest first")
		}
	}
	if len(progress) == 0 || progress[len(progress)-1].Replayed != rep.Replayed || progress[len(progress)-1].Scanned != rep.Decisions {
		t.Errorf("the last progress = %+v, want %d replayed of %d scanned", progress[len(progress)-1], rep.Replayed, rep.Decisions)
	}

	// Against the rulebook in force instead of what buyers were told:
	// nothing changed since, so the counts are the same.
	run.Options.Baseline = backtest.Current
	cur, err := run.Execute(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if cur.Flips != rep.Flips {
		t.Errorf("baseline current: flips %+v, baseline recorded: %+v; want equal when nothing changed since", cur.Flips, rep.Flips)
	}
	// The rulebook in force as the draft flips nothing.
	run.Draft = current
	same, err := run.Execute(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if same.Flips.Total() != 0 || same.Unchanged != same.Replayed {
		t.Errorf("replaying the rulebook in force: %+v flips", same.Flips)
	}
}

func budgetOf(t *testing.T, req []byte) *float64 {
	t.Helper()
	var r struct {
		Filters struct {
			Budget *struct {
				Max *float64 `json:"max"`
			} `json:"budget_range"`
		} `json:"filters"`
	}
	_ = json.Unmarshal(req, &r)
	if r.Filters.Budget == nil {
		return nil
	}
	return r.Filters.Budget.Max
}

// TestBacktestWindowSamplingAndSkips: a window larger than the limit is
// sampled evenly; days outside the window are not read; decisions whose
// requests retention dropped are skipped and counted, never replayed.
func TestBacktestWindowSamplingAndSkips(t *testing.T) {
	f := recorded30Days(t)
	draft, current := f.draft(t)
	ctx := context.Background()
	run := &backtest.Run{Publisher: demo.PublisherID, Preview: f.preview, Draft: draft, Current: current, Source: f.store,
		Options: backtest.Options{Since: f.clock.T.AddDate(0, 0, -7), Limit: 100}}
	rep, err := run.Execute(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Decisions != 7*60 || rep.Stride != 5 {
		t.Errorf("7 days: %d decisions, stride %d; want 420 and 5", rep.Decisions, rep.Stride)
	}
	if considered := rep.Replayed + sum(rep.Skipped); considered != 84 {
		t.Errorf("considered %d decisions of 420 at stride 5, want 84", considered)
	}
	if rep.Since.Before(f.clock.T.AddDate(0, 0, -7)) || rep.Until.After(f.clock.T) {
		t.Errorf("window %v to %v", rep.Since, rep.Until)
	}

	// Retention drops the requests of the first 20 days.
	if _, err := f.store.Purge(ctx, demo.PublisherID, store.RetainBefore{Requests: start.AddDate(0, 0, 20)}); err != nil {
		t.Fatal(err)
	}
	run.Options = backtest.Options{Since: start, Limit: backtest.MaxLimit}
	rep, err = run.Execute(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := rep.Skipped["no_request"]; got < 20*55 || got > 20*60 {
		t.Errorf("%d decisions skipped for want of their request, want those of 20 days", got)
	}
	if rep.Replayed == 0 || rep.Replayed > 10*60 {
		t.Errorf("replayed %d, want the last 10 days' decisions", rep.Replayed)
	}
}

// TestBacktestCancels: a canceled backtest stops and says so.
func TestBacktestCancels(t *testing.T) {
	f := recorded30Days(t)
	draft, current := f.draft(t)
	ctx, cancel := context.WithCancel(context.Background())
	run := &backtest.Run{Publisher: demo.PublisherID, Preview: f.preview, Draft: draft, Current: current, Source: f.store,
		Options: backtest.Options{Since: start}}
	run.Progress = func(p backtest.Progress) {
		if p.Replayed == 50 {
			cancel()
		}
	}
	_, err := run.Execute(ctx)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Execute after cancel = %v, want context.Canceled", err)
	}
}

func sum(m map[string]int64) int64 {
	var n int64
	for _, v := range m {
		n += v
	}
	return n
}

// BenchmarkBacktest replays 30 days of recorded traffic (200 briefs a day)
// against the draft and reports the replay rate.
//
//	go test ./backtest -run '^$' -bench Backtest -benchtime 3x
func BenchmarkBacktest(b *testing.B) {
	f := recorded(b, 200)
	draft, current := f.draft(b)
	run := &backtest.Run{Publisher: demo.PublisherID, Draft: draft, Current: current, Source: f.store, Preview: f.preview,
		Options: backtest.Options{Since: start, Limit: backtest.MaxLimit}}
	b.ResetTimer()
	for range b.N {
		rep, err := run.Execute(context.Background())
		if err != nil || rep.Decisions != int64(f.briefs) {
			b.Fatalf("%v, %d decisions", err, rep.Decisions)
		}
	}
	b.ReportMetric(float64(f.briefs*b.N)/b.Elapsed().Seconds(), "decisions/s")
}

// panickingAccounts resolves no account: it panics.
type panickingAccounts struct{}

func (panickingAccounts) Resolve(context.Context, string, products.Principal, *products.AccountRef) (products.Account, error) {
	panic("xyzzy-internal-panic-detail")
}

// TestBacktestPanics: a replay or a progress report that panics stops the
// backtest with ErrPanicked, counted, and leaves nothing waiting; no
// partial report is given.
func TestBacktestPanics(t *testing.T) {
	f := recorded30Days(t)
	draft, current := f.draft(t)
	quiet := slog.New(slog.DiscardHandler)
	for _, test := range []struct {
		name    string
		preview *products.Service
		report  func(backtest.Progress)
	}{
		{"in a replay", &products.Service{Snapshots: f.snaps, Accounts: panickingAccounts{}, Now: f.clock.Now}, nil},
		{"in a progress report", f.preview, func(p backtest.Progress) {
			if p.Replayed == 50 {
				panic("xyzzy-internal-panic-detail")
			}
		}},
	} {
		t.Run(test.name, func(t *testing.T) {
			before := metrics.RecoveredPanics("background")
			run := &backtest.Run{Publisher: demo.PublisherID, Preview: test.preview, Draft: draft, Current: current, Source: f.store,
				Options: backtest.Options{Since: start}, Progress: test.report, Log: quiet}
			done := make(chan error, 1)
			go func() {
				rep, err := run.Execute(context.Background())
				if rep.Replayed != 0 {
					err = errors.New("a partial report")
				}
				done <- err
			}()
			select {
			case err := <-done:
				if !errors.Is(err, backtest.ErrPanicked) {
					t.Errorf("Execute = %v, want ErrPanicked", err)
				}
			case <-time.After(time.Minute):
				t.Fatal("Execute did not return after a panic")
			}
			if metrics.RecoveredPanics("background") == before {
				t.Error("the panic was not counted")
			}
		})
	}
}
