package admin

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/storefront/storefront/backtest"
	"github.com/storefront/storefront/internal/clock"
	"github.com/storefront/storefront/jsonfield"
	"github.com/storefront/storefront/products"
	"github.com/storefront/storefront/store"
)

// BacktestRequest is the body of POST /backtest: a draft rulebook, a draft
// catalogue (edits to the current one), or both, and the window to
// replay.
type BacktestRequest struct {
	// Rulebook is a draft rulebook; absent, the rulebook in force.
	Rulebook json.RawMessage `json:"rulebook,omitempty"`
	// Catalogue edits the current catalogue for the draft.
	Catalogue *CatalogueDraft `json:"catalogue,omitempty"`
	// Days is the window, ending now: 1 to 366, 30 by default.
	Days int `json:"days,omitempty"`
	// Baseline is recorded (what buyers were told, the default) or
	// current (a replay against what is in force now).
	Baseline string `json:"baseline,omitempty"`
	// Limit is the most decisions replayed; a larger window is sampled.
	Limit int `json:"limit,omitempty"`
	// IncludeSandbox replays sandbox accounts' decisions too.
	IncludeSandbox bool `json:"include_sandbox,omitempty"`
}

// CatalogueDraft is a draft catalogue: the current one with these
// products created or replaced and these ids removed.
type CatalogueDraft struct {
	Put    []products.Product `json:"put,omitempty"`
	Delete []string           `json:"delete,omitempty"`
}

// BacktestReport is a backtest's report with the accounts it names
// described for people.
type BacktestReport struct {
	backtest.Report
	Draft BacktestDraft `json:"draft"`
	// Accounts describes the accounts of by_account and the examples:
	// operator and brand.
	Accounts map[string]string `json:"accounts"`
}

// BacktestDraft says what was replayed.
type BacktestDraft struct {
	Rulebook         string `json:"rulebook"`
	RulebookVersion  int64  `json:"rulebook_version,omitempty"`
	Catalogue        string `json:"catalogue"`
	CatalogueVersion int64  `json:"catalogue_version"`
	ProductsChanged  int    `json:"products_changed,omitempty"`
}

// backtestEvent is one line of a streamed backtest.
type backtestEvent struct {
	Event    string             `json:"event"`
	Progress *backtest.Progress `json:"progress,omitempty"`
	Report   *BacktestReport    `json:"report,omitempty"`
	Problem  *Problem           `json:"problem,omitempty"`
}

// ndjson is the media type of streamed answers.
const ndjson = "application/x-ndjson"

func wantsStream(c echo.Context) bool {
	return strings.Contains(c.Request().Header.Get("Accept"), ndjson)
}

// backtest replays the briefs of the last days against a draft. With
// Accept: application/x-ndjson the answer streams progress lines and ends
// with the report; closing the connection cancels the run. One backtest
// runs at a time per storefront process, since it is CPU work beside the
// buyers'.
func (h *Handler) backtest(c echo.Context) error {
	b, err := body(c)
	if err != nil {
		return err
	}
	var req BacktestRequest
	if err := jsonfield.Decode(b, &req); err != nil {
		return invalid(err, "")
	}
	ctx := c.Request().Context()
	run, draft, err := h.backtestRun(ctx, pub(c), req)
	if err != nil {
		return err
	}
	select {
	case h.backtests() <- struct{}{}:
		defer func() { <-h.backtests() }()
	default:
		c.Response().Header().Set("Retry-After", "10")
		return newProblem(http.StatusTooManyRequests, "busy", "A backtest is running",
			"this storefront runs one backtest at a time; retry when it ends")
	}
	if !wantsStream(c) {
		rep, err := run.Execute(ctx)
		h.countBacktest(pub(c), err)
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, h.describe(ctx, pub(c), rep, draft))
	}

	w := c.Response()
	w.Header().Set(echo.HeaderContentType, ndjson)
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	enc := json.NewEncoder(w)
	send := func(ev backtestEvent) {
		_ = enc.Encode(ev)
		w.Flush()
	}
	var last clock.Stopwatch
	run.Progress = func(p backtest.Progress) {
		if last.Elapsed() >= 200*time.Millisecond {
			last = clock.Start()
			send(backtestEvent{Event: "progress", Progress: &p})
		}
	}
	send(backtestEvent{Event: "progress", Progress: &backtest.Progress{}})
	rep, err := run.Execute(ctx)
	h.countBacktest(pub(c), err)
	if err != nil {
		if ctx.Err() != nil {
			// The caller went away: nobody reads the stream any more.
			return nil
		}
		h.Log.Error("backtest failed", "publisher", pub(c), "err", err)
		p := newProblem(http.StatusInternalServerError, "internal", "Backtest failed", "the backtest could not finish; nothing was changed").P
		send(backtestEvent{Event: "error", Problem: &p})
		return nil
	}
	full := h.describe(ctx, pub(c), rep, draft)
	send(backtestEvent{Event: "report", Report: &full})
	return nil
}

func (h *Handler) backtests() chan struct{} {
	h.backtestOnce.Do(func() { h.backtestSlot = make(chan struct{}, 1) })
	return h.backtestSlot
}

func (h *Handler) countBacktest(publisher string, err error) {
	switch {
	case err == nil:
		h.Metrics.Backtest(publisher, "done")
	case errors.Is(err, context.Canceled):
		h.Metrics.Backtest(publisher, "canceled")
	default:
		h.Metrics.Backtest(publisher, "failed")
	}
}

// backtestRun checks a backtest request and builds the run: the draft
// snapshot from the draft rulebook and catalogue edits over the current
// snapshot.
func (h *Handler) backtestRun(ctx context.Context, publisher string, req BacktestRequest) (*backtest.Run, BacktestDraft, error) {
	var (
		v     jsonfield.Invalid
		draft BacktestDraft
	)
	if req.Days == 0 {
		req.Days = 30
	}
	if req.Days < 1 || req.Days > 366 {
		v.Add("/days", "days must be between 1 and 366")
	}
	if req.Limit == 0 {
		req.Limit = backtest.DefaultLimit
	}
	if req.Limit < 1 || req.Limit > backtest.MaxLimit {
		v.Add("/limit", "limit must be between 1 and %d", backtest.MaxLimit)
	}
	baseline, err := backtest.ParseBaseline(req.Baseline)
	if err != nil {
		v.Add("/baseline", "%v", err)
	}
	if err := v.Err(); err != nil {
		return nil, draft, invalid(err, "")
	}
	src, ok := h.Store.(store.Recordings)
	if !ok {
		return nil, draft, newProblem(http.StatusNotImplemented, "no-recordings", "No recorded requests", "this store keeps no requests to replay")
	}
	current, err := h.Snaps.Snapshot(ctx, publisher)
	if err != nil {
		return nil, draft, err
	}
	rb := current.Rulebook
	draft.Rulebook, draft.RulebookVersion = "in force", current.RulebookVersion
	if len(req.Rulebook) > 0 {
		d, err := decodeRulebook(req.Rulebook, "/rulebook")
		if err != nil {
			return nil, draft, err
		}
		rb, draft.Rulebook, draft.RulebookVersion = &d, "draft", 0
	}
	if rb == nil {
		return nil, draft, newProblem(http.StatusConflict, "no-rulebook", "No rulebook", "save a rulebook, or send a draft one, before a backtest")
	}
	catalogue := current.Catalogue.Products()
	draft.Catalogue, draft.CatalogueVersion = "current", current.CatalogueVersion
	if cd := req.Catalogue; cd != nil && (len(cd.Put) > 0 || len(cd.Delete) > 0) {
		if catalogue, err = applyDraft(catalogue, cd); err != nil {
			return nil, draft, err
		}
		draft.Catalogue, draft.ProductsChanged = "draft", len(cd.Put)+len(cd.Delete)
	}
	snap := current
	if draft.Rulebook == "draft" || draft.Catalogue == "draft" {
		snap = products.NewSnapshot(current.Publisher, catalogue, current.CatalogueVersion, rb, draft.RulebookVersion)
	}
	return &backtest.Run{
		Publisher: publisher, Preview: h.Preview, Draft: snap, Current: current, Source: src, Log: h.Log,
		Options: backtest.Options{Since: h.now().AddDate(0, 0, -req.Days), Limit: req.Limit, Baseline: baseline, Sandbox: req.IncludeSandbox},
	}, draft, nil
}

// applyDraft returns the catalogue with the draft's products put (each
// checked as a save would check it) and its ids removed.
func applyDraft(catalogue []products.Product, cd *CatalogueDraft) ([]products.Product, error) {
	var v jsonfield.Invalid
	at := make(map[string]int, len(catalogue))
	for i, p := range catalogue {
		at[p.ProductID] = i
	}
	out := append([]products.Product(nil), catalogue...)
	seen := map[string]bool{}
	for i, p := range cd.Put {
		ptr := jsonfield.Pointer("catalogue", "put", i)
		if err := p.Validate(); err != nil {
			var inv jsonfield.Invalid
			if errors.As(err, &inv) {
				for _, f := range inv {
					v.Add(ptr+f.Pointer, "%s", f.Detail)
				}
			}
			continue
		}
		if seen[p.ProductID] {
			v.Add(ptr+"/product_id", "product %q is given twice", p.ProductID)
			continue
		}
		seen[p.ProductID] = true
		if j, ok := at[p.ProductID]; ok {
			out[j] = p
		} else {
			at[p.ProductID] = len(out)
			out = append(out, p)
		}
	}
	gone := map[string]bool{}
	for i, id := range cd.Delete {
		if _, ok := at[id]; !ok || seen[id] {
			v.Add(jsonfield.Pointer("catalogue", "delete", i), "%q is not a product of the catalogue, or is also put", id)
		}
		gone[id] = true
	}
	if err := v.Err(); err != nil {
		return nil, invalid(err, "")
	}
	kept := out[:0]
	for _, p := range out {
		if !gone[p.ProductID] {
			kept = append(kept, p)
		}
	}
	return kept, nil
}

// describe adds who each account of the report is.
func (h *Handler) describe(ctx context.Context, publisher string, rep backtest.Report, draft BacktestDraft) BacktestReport {
	out := BacktestReport{Report: rep, Draft: draft, Accounts: map[string]string{}}
	ids := map[string]bool{}
	for _, g := range rep.ByAccount {
		ids[g.Key] = true
	}
	for _, e := range rep.Examples {
		ids[e.Account] = true
	}
	for id := range ids {
		if id == "" {
			out.Accounts[id] = "public requests (no account)"
			continue
		}
		a, err := h.Store.AccountByID(ctx, publisher, id)
		if err != nil {
			continue
		}
		out.Accounts[id] = a.BrandDomain + " via " + a.Operator
	}
	return out
}
