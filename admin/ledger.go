package admin

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/storefront/storefront/jsonfield"
	"github.com/storefront/storefront/ledger"
	"github.com/storefront/storefront/store"
	"github.com/storefront/storefront/vocab"
)

// Decision is one ledger entry as the API returns it. It names internal
// rule ids: it is for the publisher only.
type Decision struct {
	Sequence        int64      `json:"sequence"`
	Time            time.Time  `json:"time"`
	Account         string     `json:"account,omitempty"`
	Principal       string     `json:"principal,omitempty"`
	Task            string     `json:"task"`
	Arm             string     `json:"arm"`
	Slug            vocab.Slug `json:"slug,omitempty"`
	RuleIDs         []string   `json:"rule_ids"`
	RulebookVersion int64      `json:"rulebook_version"`
	RequestDigest   string     `json:"request_digest"`
	ResponseDigest  string     `json:"response_digest"`
	Sandbox         bool       `json:"sandbox,omitempty"`
	Forced          bool       `json:"forced,omitempty"`
	Hash            string     `json:"entry_hash"`
	PrevHash        string     `json:"prev_hash"`
}

func decisionOf(e ledger.Entry) Decision {
	ids := e.RuleIDs
	if ids == nil {
		ids = []string{}
	}
	return Decision{
		Sequence: e.Sequence, Time: e.Time, Account: e.Account, Principal: e.Principal, Task: taskName(e.Task), Arm: e.Arm, Slug: e.Slug,
		RuleIDs: ids, RulebookVersion: e.RulebookVersion, RequestDigest: e.RequestDigest,
		ResponseDigest: e.ResponseDigest, Sandbox: e.Sandbox, Forced: e.Forced, Hash: e.Hash, PrevHash: e.PrevHash,
	}
}

// pageOf reads the paging parameters of a list newest first: ?limit= (1
// to 1000, def without it) and ?before= (a sequence number).
func pageOf(q url.Values, v *jsonfield.Invalid, def int) (limit int, before int64) {
	limit = def
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 1000 {
			v.Add("/limit", "limit must be between 1 and 1000")
		}
		limit = n
	}
	if s := q.Get("before"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 1 {
			v.Add("/before", "before must be a sequence number")
		}
		before = n
	}
	return limit, before
}

// taskName names an entry's task: the ledger leaves get_products unnamed,
// as every entry was before other tasks were recorded.
func taskName(task string) string {
	if task == "" {
		return "get_products"
	}
	return task
}

// filter reads the decision filter from the query string.
func filterOf(c echo.Context) (store.DecisionFilter, error) {
	var f store.DecisionFilter
	var v jsonfield.Invalid
	q := c.QueryParams()
	if a := q.Get("arm"); a != "" {
		arm, ok := ledger.ParseArm(a)
		if !ok {
			v.Add("/arm", "arm must be completed, rejected, failed or submitted")
		}
		f.Arm = arm
	}
	if s := q.Get("slug"); s != "" {
		if _, err := vocab.ParseSlug(s); err != nil {
			v.Add("/slug", "%v", err)
		}
		f.Slug = vocab.Slug(s)
	}
	f.Account = q.Get("account")
	for name, dst := range map[string]*time.Time{"since": &f.Since, "until": &f.Until} {
		if s := q.Get(name); s != "" {
			t, err := time.Parse(time.RFC3339, s)
			if err != nil {
				v.Add("/"+name, "%s must be an RFC 3339 time such as 2026-11-29T00:00:00Z", name)
			}
			*dst = t
		}
	}
	f.Limit, f.Before = pageOf(q, &v, 100)
	if err := v.Err(); err != nil {
		return f, invalidQuery(err)
	}
	return f, nil
}

func (h *Handler) decisions(c echo.Context) error {
	f, err := filterOf(c)
	if err != nil {
		return err
	}
	es, err := h.Store.Decisions(c.Request().Context(), pub(c), f)
	if err != nil {
		return err
	}
	return listPage(c, "decisions", es, f.Limit, func(e ledger.Entry) int64 { return e.Sequence }, decisionOf)
}

// listPage answers with one page of a chain's entries, newest first: their
// wire form under key, and next_before, the sequence the next page starts
// below (0 when this page is the last).
func listPage[T, W any](c echo.Context, key string, items []T, limit int, seq func(T) int64, wire func(T) W) error {
	out := make([]W, 0, len(items))
	for _, it := range items {
		out = append(out, wire(it))
	}
	next := int64(0)
	if len(items) == limit && len(items) > 0 {
		next = seq(items[len(items)-1])
	}
	return c.JSON(http.StatusOK, map[string]any{key: out, "next_before": next})
}

func (h *Handler) verify(c echo.Context) error {
	res, err := ledger.Verify(c.Request().Context(), h.Store, pub(c), nil)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, res)
}

// Stats are counts for the console's charts: decisions per arm, declines
// per slug per day, and briefs that came back after a fixable decline.
type Stats struct {
	Since   time.Time                     `json:"since"`
	Arms    map[string]int                `json:"arms"`
	Slugs   map[vocab.Slug]int            `json:"slugs"`
	PerDay  map[string]map[vocab.Slug]int `json:"declines_per_day"`
	Returns ReturnStats                   `json:"returns_after_fixable_decline"`
}

// ReturnStats count accounts that asked again after a fixable decline.
type ReturnStats struct {
	// Declined is the number of fixable declines to an account.
	Declined int `json:"declined"`
	// Returned is how many of them the same account followed with
	// another request; Converted, with one that was answered with
	// products.
	Returned  int                `json:"returned"`
	Converted int                `json:"converted"`
	BySlug    map[vocab.Slug]int `json:"converted_by_slug"`
}

func (h *Handler) stats(c echo.Context) error {
	days, err := daysParam(c)
	if err != nil {
		return err
	}
	st, err := h.statsFor(c.Request().Context(), pub(c), days)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, st)
}

// daysParam reads ?days=N (1 to 366, default 30).
func daysParam(c echo.Context) (int, error) {
	days := 30
	if s := c.QueryParam("days"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 366 {
			return 0, newProblem(http.StatusBadRequest, "invalid", "Invalid query", "days must be between 1 and 366")
		}
		days = n
	}
	return days, nil
}

// statsFor counts a publisher's decisions over the last days days,
// today included.
func (h *Handler) statsFor(ctx context.Context, publisher string, days int) (Stats, error) {
	since := h.now().UTC().Truncate(24*time.Hour).AddDate(0, 0, -days+1)
	st := Stats{Since: since, Arms: map[string]int{}, Slugs: map[vocab.Slug]int{}, PerDay: map[string]map[vocab.Slug]int{},
		Returns: ReturnStats{BySlug: map[vocab.Slug]int{}}}
	// The fixable slugs a later request from the same account answers.
	open := map[string]vocab.Slug{}
	err := h.Store.WalkLedger(ctx, publisher, func(e ledger.Entry) error {
		if e.Time.Before(since) {
			return nil
		}
		st.Arms[e.Arm]++
		if e.Slug != "" {
			st.Slugs[e.Slug]++
			day := e.Time.UTC().Format("2006-01-02")
			if st.PerDay[day] == nil {
				st.PerDay[day] = map[vocab.Slug]int{}
			}
			st.PerDay[day][e.Slug]++
		}
		// Returns are about briefs: a decision of another task (a media
		// buy) neither opens nor answers one.
		if e.Account == "" || e.Task != "" {
			return nil
		}
		if slug, ok := open[e.Account]; ok {
			st.Returns.Returned++
			if e.Arm == "completed" {
				st.Returns.Converted++
				st.Returns.BySlug[slug]++
			}
			delete(open, e.Account)
		}
		if e.Slug != "" {
			if entry, ok := vocab.Lookup(e.Slug); ok && entry.Fixable {
				st.Returns.Declined++
				open[e.Account] = e.Slug
			}
		}
		return nil
	})
	return st, err
}
