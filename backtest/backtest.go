// Package backtest answers "what would this draft have done to the briefs
// we really received?". It replays the requests the decision ledger kept
// (store.Recordings) through the real pipeline, as a preview (nothing is
// recorded, no directive is taken), against a draft snapshot: a draft
// rulebook, a draft catalogue, or both. Each replay runs at the time the
// decision was made, so lead times and sold-out windows judge it as they
// judged the original. It reports what flips: briefs that were answered
// with products and would now be declined, and back, and declines whose
// slug changes, counted by slug and by account with the budgets involved.
//
// The comparison is with what buyers were told (Recorded), or with a replay
// against the snapshot in force (Current), which leaves out what changed in
// the rulebook and catalogue since the briefs came in.
//
// It never writes anything and never shows a buyer anything: its report is
// for the publisher.
package backtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/storefront/storefront/internal/recovery"
	"github.com/storefront/storefront/ledger"
	"github.com/storefront/storefront/outcome"
	"github.com/storefront/storefront/products"
	"github.com/storefront/storefront/store"
	"github.com/storefront/storefront/vocab"
)

// Baseline is what the draft's answers are compared with.
type Baseline string

const (
	// Recorded compares with what the ledger says buyers were told.
	Recorded Baseline = "recorded"
	// Current compares with a replay against the snapshot in force.
	Current Baseline = "current"
)

// ParseBaseline reads a baseline name; "" is Recorded.
func ParseBaseline(s string) (Baseline, error) {
	switch Baseline(s) {
	case "", Recorded:
		return Recorded, nil
	case Current:
		return Current, nil
	}
	return "", fmt.Errorf("baseline must be %s or %s", Recorded, Current)
}

// Options choose what is replayed.
type Options struct {
	// Since starts the window; it ends now.
	Since time.Time
	// Limit is the most decisions replayed. A window holding more is
	// sampled evenly (every k-th decision) and the report says so.
	Limit int
	// Baseline is what the draft is compared with.
	Baseline Baseline
	// Sandbox includes decisions for sandbox accounts, left out by
	// default: they are compliance runs, not business.
	Sandbox bool
}

// DefaultLimit is Options.Limit when it is not set.
const DefaultLimit = 20_000

// MaxLimit is the most a backtest may replay.
const MaxLimit = 200_000

// Run is one backtest: the draft and current snapshots, and the service
// that answers previews.
type Run struct {
	Publisher string
	// Preview answers a request against a snapshot without recording
	// anything (products.Service.Preview); its clock is replaced per
	// replay.
	Preview *products.Service
	Draft   *products.Snapshot
	// Current is the snapshot in force; needed for the Current baseline.
	Current *products.Snapshot
	Source  store.Recordings
	Options Options
	// Progress, when set, is called as decisions are scanned; the caller
	// throttles what it shows.
	Progress func(Progress)
	// Log is where a recovered panic is logged (slog's default when nil).
	Log *slog.Logger
}

// Progress is how far a backtest has got.
type Progress struct {
	// Scanned are decisions read from the window so far, Total in all.
	Scanned int64 `json:"scanned"`
	Total   int64 `json:"total"`
	// Replayed are the decisions replayed so far.
	Replayed int64 `json:"replayed"`
	Flips    int64 `json:"flips"`
}

// Answer is one side of a comparison: the arm, and the decline slug when
// the answer is a decline (the rejected arm, or the typed error a 3.0 or
// 3.1 buyer gets for one). Products counts the products of a completed
// answer that was replayed; the ledger does not record it, so it is nil
// for the Recorded baseline.
type Answer struct {
	Arm      string     `json:"arm"`
	Slug     vocab.Slug `json:"slug,omitempty"`
	Products *int       `json:"products,omitempty"`
}

// Declined reports whether the answer is a decline.
func (a Answer) Declined() bool { return a.Slug != "" }

// Kinds of flip.
const (
	// NewlyDeclined: answered with products (or no match) before, declined now.
	NewlyDeclined = "newly_declined"
	// NoLongerDeclined: declined before, answered now.
	NoLongerDeclined = "no_longer_declined"
	// SlugChanged: declined both times, for another public reason.
	SlugChanged = "slug_changed"
	// NowFailing: answered or declined before, the error arm now.
	NowFailing = "now_failing"
	// NoLongerFailing: the error arm before, answered or declined now.
	NoLongerFailing = "no_longer_failing"
	// NowEmpty: answered with products before, with none now (a draft
	// catalogue that no longer carries what the brief asks for). Known
	// only against the Current baseline.
	NowEmpty = "now_empty"
	// NoLongerEmpty: answered with no products before, with some now.
	NoLongerEmpty = "no_longer_empty"
)

// Flip is one decision the draft answers differently.
type Flip struct {
	Sequence int64     `json:"sequence"`
	Time     time.Time `json:"time"`
	Account  string    `json:"account,omitempty"`
	Kind     string    `json:"kind"`
	Before   Answer    `json:"before"`
	After    Answer    `json:"after"`
	Budget   *Budget   `json:"budget,omitempty"`
	// Brief is the brief text, for the publisher to recognise it.
	Brief string `json:"brief,omitempty"`
}

// Budget is the budget a brief named (filters.budget_range).
type Budget struct {
	Amount   float64 `json:"amount"`
	Currency string  `json:"currency"`
}

// Counts are flips by kind.
type Counts struct {
	NewlyDeclined    int64 `json:"newly_declined"`
	NoLongerDeclined int64 `json:"no_longer_declined"`
	SlugChanged      int64 `json:"slug_changed"`
	NowFailing       int64 `json:"now_failing"`
	NoLongerFailing  int64 `json:"no_longer_failing"`
	NowEmpty         int64 `json:"now_empty"`
	NoLongerEmpty    int64 `json:"no_longer_empty"`
}

func (c *Counts) add(kind string) {
	switch kind {
	case NewlyDeclined:
		c.NewlyDeclined++
	case NoLongerDeclined:
		c.NoLongerDeclined++
	case SlugChanged:
		c.SlugChanged++
	case NowFailing:
		c.NowFailing++
	case NoLongerFailing:
		c.NoLongerFailing++
	case NowEmpty:
		c.NowEmpty++
	case NoLongerEmpty:
		c.NoLongerEmpty++
	}
}

// Total is every flip.
func (c Counts) Total() int64 {
	return c.NewlyDeclined + c.NoLongerDeclined + c.SlugChanged + c.NowFailing + c.NoLongerFailing + c.NowEmpty + c.NoLongerEmpty
}

// merge adds o's counts to c.
func (c *Counts) merge(o Counts) {
	c.NewlyDeclined += o.NewlyDeclined
	c.NoLongerDeclined += o.NoLongerDeclined
	c.SlugChanged += o.SlugChanged
	c.NowFailing += o.NowFailing
	c.NoLongerFailing += o.NoLongerFailing
	c.NowEmpty += o.NowEmpty
	c.NoLongerEmpty += o.NoLongerEmpty
}

// Budgets sum, per currency, the budgets of the briefs that flipped one
// way and the other; Unbudgeted counts flips whose brief named no budget.
type Budgets struct {
	NewlyDeclined    map[string]float64 `json:"newly_declined"`
	NoLongerDeclined map[string]float64 `json:"no_longer_declined"`
	Unbudgeted       int64              `json:"flips_without_budget"`
}

func (b *Budgets) add(kind string, budget *Budget) {
	if budget == nil {
		b.Unbudgeted++
		return
	}
	var m *map[string]float64
	switch kind {
	case NewlyDeclined:
		m = &b.NewlyDeclined
	case NoLongerDeclined:
		m = &b.NoLongerDeclined
	default:
		return
	}
	if *m == nil {
		*m = map[string]float64{}
	}
	(*m)[budget.Currency] += budget.Amount
}

// Group is the flips of one slug or one account.
type Group struct {
	Key string `json:"key"`
	Counts
	Budgets Budgets `json:"budgets"`
}

// Report is a backtest's result.
type Report struct {
	Since    time.Time `json:"since"`
	Until    time.Time `json:"until"`
	Baseline Baseline  `json:"baseline"`
	// Decisions is every decision in the window; Stride > 1 means only
	// every Stride-th was considered, to stay within the limit.
	Decisions int64 `json:"decisions"`
	Stride    int64 `json:"stride"`
	// Replayed decisions were answered again; Skipped ones could not or
	// should not be, by reason: no_request (not kept, or dropped by
	// retention), digest_mismatch (the kept request is not the one the
	// chain recorded), forced (a compliance directive decided it),
	// sandbox, submitted, failed (a bad request or an outage, which a
	// rulebook does not decide).
	Replayed  int64            `json:"replayed"`
	Skipped   map[string]int64 `json:"skipped"`
	Unchanged int64            `json:"unchanged"`
	Flips     Counts           `json:"flips"`
	Budgets   Budgets          `json:"budgets"`
	// BySlug groups flips by the slug declined for: the new slug for
	// briefs newly declined or whose slug changed, the old one for
	// briefs no longer declined.
	BySlug []Group `json:"by_slug"`
	// ByAccount groups flips by account ("" for public requests), the
	// accounts with the most flips first, at most MaxAccounts of them;
	// OtherAccounts sums the rest.
	ByAccount     []Group `json:"by_account"`
	OtherAccounts *Group  `json:"other_accounts,omitempty"`
	// Examples are the most recent flips, at most MaxExamples.
	Examples []Flip `json:"examples"`
}

// Report limits.
const (
	MaxAccounts = 100
	MaxExamples = 50
)

// ErrNoRecordings: the store keeps no requests to replay.
var ErrNoRecordings = errors.New("this store keeps no requests to replay")

// ErrPanicked: a replay or the progress callback panicked. The panic is
// logged and counted; the run stops, and reports nothing partial.
var ErrPanicked = errors.New("the backtest failed inside the storefront")

// Execute runs the backtest. It stops, returning ctx's error, when ctx
// ends.
func (r *Run) Execute(ctx context.Context) (Report, error) {
	opts := r.Options
	if opts.Limit <= 0 {
		opts.Limit = DefaultLimit
	}
	if opts.Baseline == "" {
		opts.Baseline = Recorded
	}
	if opts.Baseline == Current && r.Current == nil {
		return Report{}, errors.New("backtest: the current baseline needs the current snapshot")
	}
	if r.Source == nil {
		return Report{}, ErrNoRecordings
	}
	total, _, err := r.Source.CountRecorded(ctx, r.Publisher, opts.Since)
	if err != nil {
		return Report{}, err
	}
	stride := int64(1)
	if total > int64(opts.Limit) {
		stride = (total + int64(opts.Limit) - 1) / int64(opts.Limit)
	}
	rep := Report{Since: opts.Since, Baseline: opts.Baseline, Decisions: total, Stride: stride, Skipped: map[string]int64{}}
	agg := newAggregate()

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// The workers and the aggregator run under recover boundaries: a
	// panic in one stops the run (cancel), and nobody is left waiting.
	var panicked atomic.Bool
	guarded := func(what string, fn func()) {
		if recovery.Run(ctx, r.Log, "background", what, fn) {
			panicked.Store(true)
			cancel()
		}
	}
	jobs := make(chan ledger.Entry, 64)
	results := make(chan result, 64)
	var workers sync.WaitGroup
	for range max(1, min(4, runtime.GOMAXPROCS(0))) {
		workers.Add(1)
		go func() {
			defer workers.Done()
			guarded("replaying a backtest's decisions", func() {
				for e := range jobs {
					res := r.compare(ctx, e, opts.Baseline)
					select {
					case results <- res:
					case <-ctx.Done():
						return
					}
				}
			})
		}()
	}
	done := make(chan struct{})
	var scanned atomic.Int64
	prog := Progress{Total: total}
	go func() {
		defer close(done)
		guarded("aggregating a backtest", func() {
			for res := range results {
				prog.Replayed++
				if agg.add(res) {
					prog.Flips++
				}
				if r.Progress != nil {
					prog.Scanned = scanned.Load()
					r.Progress(prog)
				}
			}
		})
	}()

	var last time.Time
	walkErr := r.Source.WalkRecorded(ctx, r.Publisher, opts.Since, func(e ledger.Entry) error {
		index := scanned.Add(1)
		last = e.Time
		if (index-1)%stride != 0 {
			return nil
		}
		if skip := skipReason(e, opts); skip != "" {
			rep.Skipped[skip]++
			return nil
		}
		select {
		case jobs <- e:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	})
	close(jobs)
	workers.Wait()
	close(results)
	<-done
	if panicked.Load() {
		return Report{}, ErrPanicked
	}
	if walkErr != nil {
		return Report{}, walkErr
	}
	if err := ctx.Err(); err != nil {
		return Report{}, err
	}
	if r.Progress != nil {
		prog.Scanned = scanned.Load()
		r.Progress(prog)
	}
	rep.Until = last
	agg.fill(&rep)
	return rep, nil
}

// skipReason says why a decision is not replayed; "" replays it.
func skipReason(e ledger.Entry, opts Options) string {
	switch {
	case e.Forced:
		return "forced"
	case e.Sandbox && !opts.Sandbox:
		return "sandbox"
	case e.Arm == "submitted":
		return "submitted"
	case e.Arm == "failed" && e.Slug == "":
		return "failed"
	case e.Request == nil:
		return "no_request"
	case ledger.Digest(e.Request) != e.RequestDigest:
		return "digest_mismatch"
	}
	return ""
}

type result struct {
	entry         ledger.Entry
	before, after Answer
}

// compare replays one decision against the draft and finds its baseline.
func (r *Run) compare(ctx context.Context, e ledger.Entry, baseline Baseline) result {
	res := result{entry: e, after: r.replay(ctx, e, r.Draft)}
	if baseline == Current {
		res.before = r.replay(ctx, e, r.Current)
	} else {
		res.before = Answer{Arm: e.Arm, Slug: e.Slug}
	}
	return res
}

// Replay answers one recorded request against snap, at the time it was
// decided, as the principal that sent it.
func Replay(ctx context.Context, svc *products.Service, publisher string, e ledger.Entry, snap *products.Snapshot) Answer {
	s := *svc
	at := e.Time
	s.Now = func() time.Time { return at }
	res := s.Preview(ctx, products.Call{
		Publisher: publisher,
		Principal: products.Principal{ID: e.Principal, Operator: OperatorOf(e.Request)},
		Args:      e.Request,
	}, snap)
	return answerOf(res.Outcome)
}

func (r *Run) replay(ctx context.Context, e ledger.Entry, snap *products.Snapshot) Answer {
	return Replay(ctx, r.Preview, r.Publisher, e, snap)
}

// answerOf reads an outcome as the ledger records it: the arm, and the
// slug of a decline, which a 3.0 or 3.1 buyer gets as a typed error.
func answerOf(o outcome.Outcome) Answer {
	a := Answer{Arm: o.Arm().String(), Slug: o.Slug()}
	if o.Arm() == outcome.Completed {
		n := o.ProductCount()
		a.Products = &n
	}
	if a.Slug == "" {
		for _, e := range o.Errors() {
			if s := e.DeclineSlug(); s != "" {
				a.Slug = s
			}
		}
	}
	return a
}

// OperatorOf reads account.operator from a request, so that a replay or a
// preview of an account-scoped request acts as that account's operator.
func OperatorOf(req []byte) string {
	var r struct {
		Account struct {
			Operator string `json:"operator"`
		} `json:"account"`
	}
	_ = json.Unmarshal(req, &r)
	return r.Account.Operator
}

// briefOf reads the brief text and budget of a request.
func briefOf(req []byte) (string, *Budget) {
	var r struct {
		Brief   string `json:"brief"`
		Filters struct {
			Budget *struct {
				Max      *float64 `json:"max"`
				Min      *float64 `json:"min"`
				Currency string   `json:"currency"`
			} `json:"budget_range"`
		} `json:"filters"`
	}
	_ = json.Unmarshal(req, &r)
	b := r.Filters.Budget
	if b == nil || b.Currency == "" {
		return r.Brief, nil
	}
	switch {
	case b.Max != nil:
		return r.Brief, &Budget{Amount: *b.Max, Currency: b.Currency}
	case b.Min != nil:
		return r.Brief, &Budget{Amount: *b.Min, Currency: b.Currency}
	}
	return r.Brief, nil
}

// Classify names the flip from before to after; "" when nothing flipped.
func Classify(before, after Answer) string {
	bf, af := before.Arm == "failed" && !before.Declined(), after.Arm == "failed" && !after.Declined()
	switch {
	case bf && af:
		return ""
	case af:
		return NowFailing
	case bf:
		return NoLongerFailing
	case !before.Declined() && after.Declined():
		return NewlyDeclined
	case before.Declined() && !after.Declined():
		return NoLongerDeclined
	case before.Declined() && after.Declined() && before.Slug != after.Slug:
		return SlugChanged
	case before.Products != nil && after.Products != nil && *before.Products > 0 && *after.Products == 0:
		return NowEmpty
	case before.Products != nil && after.Products != nil && *before.Products == 0 && *after.Products > 0:
		return NoLongerEmpty
	}
	return ""
}

// aggregate gathers results; it is used from one goroutine.
type aggregate struct {
	replayed, unchanged int64
	flips               Counts
	budgets             Budgets
	bySlug, byAccount   map[string]*Group
	examples            []Flip
}

func newAggregate() *aggregate {
	return &aggregate{bySlug: map[string]*Group{}, byAccount: map[string]*Group{}}
}

func group(m map[string]*Group, key string) *Group {
	g, ok := m[key]
	if !ok {
		g = &Group{Key: key}
		m[key] = g
	}
	return g
}

// add counts one result and reports whether it flipped.
func (a *aggregate) add(res result) bool {
	a.replayed++
	kind := Classify(res.before, res.after)
	if kind == "" {
		a.unchanged++
		return false
	}
	brief, budget := briefOf(res.entry.Request)
	a.flips.add(kind)
	a.budgets.add(kind, budget)
	slug := res.after.Slug
	if kind == NoLongerDeclined || (kind == NowFailing && res.before.Declined()) {
		slug = res.before.Slug
	}
	if slug != "" {
		g := group(a.bySlug, string(slug))
		g.add(kind)
		g.Budgets.add(kind, budget)
	}
	g := group(a.byAccount, res.entry.Account)
	g.add(kind)
	g.Budgets.add(kind, budget)
	if len([]rune(brief)) > 200 {
		brief = string([]rune(brief)[:200]) + "…"
	}
	a.examples = append(a.examples, Flip{
		Sequence: res.entry.Sequence, Time: res.entry.Time, Account: res.entry.Account, Kind: kind,
		Before: res.before, After: res.after, Budget: budget, Brief: brief,
	})
	// Keep memory bounded: only the most recent examples are reported.
	if len(a.examples) > 4*MaxExamples {
		a.trimExamples()
	}
	return true
}

func (a *aggregate) trimExamples() {
	sort.Slice(a.examples, func(i, j int) bool { return a.examples[i].Sequence > a.examples[j].Sequence })
	if len(a.examples) > MaxExamples {
		a.examples = a.examples[:MaxExamples]
	}
}

func sortedGroups(m map[string]*Group, byFlips bool) []Group {
	out := make([]Group, 0, len(m))
	for _, g := range m {
		out = append(out, *g)
	}
	sort.Slice(out, func(i, j int) bool {
		if byFlips && out[i].Total() != out[j].Total() {
			return out[i].Total() > out[j].Total()
		}
		return out[i].Key < out[j].Key
	})
	return out
}

func (a *aggregate) fill(rep *Report) {
	rep.Replayed, rep.Unchanged, rep.Flips, rep.Budgets = a.replayed, a.unchanged, a.flips, a.budgets
	rep.BySlug = sortedGroups(a.bySlug, false)
	accounts := sortedGroups(a.byAccount, true)
	if len(accounts) > MaxAccounts {
		other := Group{Key: "(other accounts)"}
		for _, g := range accounts[MaxAccounts:] {
			other.merge(g.Counts)
			other.Budgets.Unbudgeted += g.Budgets.Unbudgeted
			for c, v := range g.Budgets.NewlyDeclined {
				other.Budgets.add(NewlyDeclined, &Budget{Amount: v, Currency: c})
			}
			for c, v := range g.Budgets.NoLongerDeclined {
				other.Budgets.add(NoLongerDeclined, &Budget{Amount: v, Currency: c})
			}
		}
		rep.OtherAccounts = &other
		accounts = accounts[:MaxAccounts]
	}
	rep.ByAccount = accounts
	a.trimExamples()
	rep.Examples = a.examples
}
