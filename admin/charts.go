package admin

import (
	"net/http"
	"sort"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/storefront/storefront/console/chart"
	"github.com/storefront/storefront/vocab"
)

// The charts are the decision stats drawn as SVG on the server, so the
// console needs no chart library and every figure it shows comes from this
// API. They take ?days=N like /decisions/stats.

// armColors keeps each arm's colour the same on every chart.
var armColors = map[string]string{
	"completed": "#009e73", "rejected": "#e69f00", "failed": "#d55e00", "submitted": "#0072b2",
}

// arms are the ledger's arms in the order the charts list them.
var arms = []string{"completed", "rejected", "failed", "submitted"}

func (h *Handler) chartDeclines(c echo.Context) error {
	days, st, err := h.chartStats(c)
	if err != nil {
		return err
	}
	var cats []string
	for d := st.Since; len(cats) < days; d = d.AddDate(0, 0, 1) {
		cats = append(cats, d.Format("2006-01-02"))
	}
	var series []chart.Series
	for i, slug := range vocab.Slugs() {
		if st.Slugs[vocab.Slug(slug)] == 0 {
			continue
		}
		vals := make([]float64, len(cats))
		for j, day := range cats {
			vals[j] = float64(st.PerDay[day][vocab.Slug(slug)])
		}
		series = append(series, chart.Series{Name: slug, Color: chart.Color(i), Values: vals})
	}
	return svg(c, chart.Stacked(
		"Declines per slug per day, last "+plural(days, "day"),
		"Each bar is one UTC day; each band is one decline slug, so the tallest bands are the declines that turn away the most briefs.",
		cats, series, "No declines in the last "+plural(days, "day")))
}

func (h *Handler) chartArms(c echo.Context) error {
	days, st, err := h.chartStats(c)
	if err != nil {
		return err
	}
	var parts []chart.Part
	for _, a := range arms {
		if a == "submitted" && st.Arms[a] == 0 {
			continue
		}
		parts = append(parts, chart.Part{Name: a, Color: armColors[a], Value: float64(st.Arms[a])})
	}
	// Any arm the ledger learns later still shows.
	var other []string
	for a := range st.Arms {
		if _, ok := armColors[a]; !ok {
			other = append(other, a)
		}
	}
	sort.Strings(other)
	for _, a := range other {
		parts = append(parts, chart.Part{Name: a, Value: float64(st.Arms[a])})
	}
	return svg(c, chart.Shares(
		"Share of answers by arm, last "+plural(days, "day"),
		"How many get_products calls were answered with products, declined, or failed.",
		parts, "No decisions in the last "+plural(days, "day")))
}

func (h *Handler) chartReturns(c echo.Context) error {
	days, st, err := h.chartStats(c)
	if err != nil {
		return err
	}
	r := st.Returns
	groups := []chart.Group{{Label: "After a fixable decline to an account", Parts: []chart.Part{
		{Name: "fixable declines", Color: armColors["rejected"], Value: float64(r.Declined)},
		{Name: "asked again", Color: "#56b4e9", Value: float64(r.Returned)},
		{Name: "asked again and got products", Color: armColors["completed"], Value: float64(r.Converted)},
	}}}
	var bySlug []chart.Part
	for i, slug := range vocab.Slugs() {
		if n := r.BySlug[vocab.Slug(slug)]; n > 0 {
			bySlug = append(bySlug, chart.Part{Name: slug, Color: chart.Color(i), Value: float64(n)})
		}
	}
	if len(bySlug) > 0 {
		groups = append(groups, chart.Group{Label: "Got products after a decline for", Parts: bySlug})
	}
	return svg(c, chart.Bars(
		"Briefs that came back after a fixable decline, last "+plural(days, "day"),
		"Accounts told how to fix a brief, how many asked again, and how many of those were then answered with products.",
		groups, "No fixable declines to an account in the last "+plural(days, "day")))
}

func (h *Handler) chartStats(c echo.Context) (int, Stats, error) {
	days, err := daysParam(c)
	if err != nil {
		return 0, Stats{}, err
	}
	st, err := h.statsFor(c.Request().Context(), pub(c), days)
	return days, st, err
}

// svg sends a chart. The policy header keeps the document inert even when
// opened directly: no scripts, no fetches, no framing.
func svg(c echo.Context, b []byte) error {
	hd := c.Response().Header()
	hd.Set("Content-Security-Policy", "default-src 'none'; frame-ancestors 'none'; sandbox")
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Cache-Control", "no-store")
	return c.Blob(http.StatusOK, "image/svg+xml; charset=utf-8", b)
}

func plural(n int, unit string) string {
	if n == 1 {
		return "1 " + unit
	}
	return strconv.Itoa(n) + " " + unit + "s"
}
