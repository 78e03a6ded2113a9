package admin

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/storefront/storefront/adcp"
	"github.com/storefront/storefront/audit"
	"github.com/storefront/storefront/buying"
	"github.com/storefront/storefront/field"
	"github.com/storefront/storefront/jsonfield"
	"github.com/storefront/storefront/mediabuy"
	"github.com/storefront/storefront/store"
	"github.com/storefront/storefront/vocab"
)

// mountBuying adds the order desk, the media buys and delivery reporting.
func (h *Handler) mountBuying(p *echo.Group) {
	p.GET("/orders", h.listOrders)
	p.GET("/orders/:id", h.getOrder)
	p.POST("/orders/:id/approve", h.approveOrder)
	p.POST("/orders/:id/decline", h.declineOrder)
	p.GET("/media-buys", h.listBuys)
	p.GET("/media-buys/:id", h.getBuy)
	p.POST("/delivery", h.reportDelivery)
}

// orderView is an order as the desk shows it (docs/media-buys.md, "The
// admin API's orders and media buys"): the stored order with its account
// named, less the task's owner key, which is the store's (see buyTerms).
// TestOrderDeskJSONShape holds every member to the documentation, so one
// added to the store does not reach the API unseen.
type orderView struct {
	store.Order
	Owner       *struct{} `json:"owner,omitempty"`
	Account     string    `json:"account"`
	Buy         buyTerms  `json:"buy"`
	TotalBudget float64   `json:"total_budget"`
	Currency    string    `json:"currency"`
}

func viewOrder(o store.Order) orderView {
	return orderView{Order: o, Account: o.Owner.Account, Buy: termsOf(o.Buy), TotalBudget: o.Buy.TotalBudget(), Currency: o.Buy.Currency}
}

// buyTerms is a media buy as the admin API shows it: its terms and state,
// less the buyer principal that made it, which is the store's access key
// (a sandbox principal's id is its test-kit key); the ledger names the
// principal where an audit needs it.
type buyTerms struct {
	mediabuy.Buy
	// Principal hides the buy's own: encoding/json takes the shallower of
	// two members with one name, and leaves this nil one out.
	Principal *struct{} `json:"principal,omitempty"`
}

func termsOf(b mediabuy.Buy) buyTerms { return buyTerms{Buy: b} }

func (h *Handler) buyingService() (*buying.Service, error) {
	if h.Buying == nil {
		return nil, newProblem(http.StatusNotFound, "not-found", "Not found", "this storefront takes no orders")
	}
	return h.Buying, nil
}

func (h *Handler) listOrders(c echo.Context) error {
	status := c.QueryParam("status")
	switch status {
	case "", store.OrderPending, store.OrderApproved, store.OrderDeclined:
	case "all":
		status = ""
	default:
		return newProblem(http.StatusBadRequest, "invalid-query", "Invalid query", "status must be pending, approved, declined or all")
	}
	if c.QueryParam("status") == "" {
		status = store.OrderPending
	}
	os, err := h.Store.Orders(c.Request().Context(), pub(c), status)
	if err != nil {
		return err
	}
	out := make([]orderView, len(os))
	for i, o := range os {
		out[i] = viewOrder(o)
	}
	return c.JSON(http.StatusOK, map[string]any{"orders": out})
}

func (h *Handler) getOrder(c echo.Context) error {
	o, err := h.Store.Order(c.Request().Context(), pub(c), c.Param("id"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, viewOrder(o))
}

// decided is the problem for an order decided already.
func decided(err error) error {
	switch {
	case errors.Is(err, buying.ErrDecided):
		return newProblem(http.StatusConflict, "decided", "Already decided", "this order has been approved or declined already; reload to see how")
	case errors.Is(err, buying.ErrFlightOver):
		return newProblem(http.StatusConflict, "flight-over", "Flight over", "the order's flight ended while it waited: decline it")
	}
	return err
}

func (h *Handler) approveOrder(c echo.Context) error {
	svc, err := h.buyingService()
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	b, err := svc.Approve(ctx, pub(c), c.Param("id"), admin(c).Name, h.Notify)
	if err != nil {
		return decided(err)
	}
	if err := h.Record(c, audit.OrderApprove, c.Param("id"), map[string]string{
		"media_buy_id": b.ID, "account": b.Account, "total_budget": strconv.FormatFloat(b.TotalBudget(), 'f', -1, 64), "currency": b.Currency,
	}); err != nil {
		return err
	}
	o, err := h.Store.Order(ctx, pub(c), c.Param("id"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"order": viewOrder(o), "media_buy_id": b.ID, "status": b.Status(h.now())})
}

func (h *Handler) declineOrder(c echo.Context) error {
	svc, err := h.buyingService()
	if err != nil {
		return err
	}
	raw, err := body(c)
	if err != nil {
		return err
	}
	var req struct {
		Slug   vocab.Slug `json:"slug"`
		Reason string     `json:"reason"`
	}
	if err := jsonfield.Decode(raw, &req); err != nil {
		return invalid(err, "")
	}
	var v jsonfield.Invalid
	if v.Check("/reason", field.Prose.Check(req.Reason)); len(v) > 0 {
		return invalid(v, "")
	}
	composed, err := svc.Decline(c.Request().Context(), pub(c), c.Param("id"), admin(c).Name, req.Slug, req.Reason, h.Notify)
	var re *buying.ReasonError
	switch {
	case errors.Is(err, buying.ErrUnknownSlug):
		return invalid(jsonfield.Invalid{{Pointer: "/slug", Detail: fmt.Sprintf("%q is not a published decline slug (want one of %s)", req.Slug, strings.Join(vocab.Slugs(), ", "))}}, "")
	case errors.As(err, &re):
		return invalid(jsonfield.Invalid{{Pointer: "/reason", Detail: "the buyer would read something else: " + re.Screened +
			"; write the reason without confidential names, ids or markup"}}, "")
	case err != nil:
		return decided(err)
	}
	if err := h.Record(c, audit.OrderDecline, c.Param("id"), map[string]string{
		"slug": string(composed.Slug), "own_words": strconv.FormatBool(strings.TrimSpace(req.Reason) != ""),
	}); err != nil {
		return err
	}
	o, err := h.Store.Order(c.Request().Context(), pub(c), c.Param("id"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"order": viewOrder(o), "slug": composed.Slug, "reason": composed.Reason})
}

// buyView is a media buy as the console shows it: its status now, its
// totals and what has been delivered.
type buyView struct {
	buyTerms
	Status      mediabuy.Status             `json:"status"`
	TotalBudget float64                     `json:"total_budget"`
	Delivered   mediabuy.Metrics            `json:"delivered"`
	ByPackage   map[string]mediabuy.Metrics `json:"delivered_by_package"`
	History     []mediabuy.Event            `json:"history,omitempty"`
}

func (h *Handler) viewBuy(b mediabuy.Buy, rows []mediabuy.Row) buyView {
	d := mediabuy.Sum(&b, rows, mediabuy.Period{})
	v := buyView{buyTerms: termsOf(b), Status: b.Status(h.now()), TotalBudget: b.TotalBudget(), Delivered: d.Totals, ByPackage: map[string]mediabuy.Metrics{}}
	for _, p := range d.Packages {
		v.ByPackage[p.Package.ID] = p.Metrics
	}
	return v
}

func (h *Handler) listBuys(c echo.Context) error {
	ctx := c.Request().Context()
	bs, err := h.Store.Buys(ctx, pub(c), store.BuyFilter{Account: c.QueryParam("account")})
	if err != nil {
		return err
	}
	var want mediabuy.Status
	if s := c.QueryParam("status"); s != "" {
		st, ok := mediabuy.ParseStatus(s)
		if !ok {
			return newProblem(http.StatusBadRequest, "invalid-query", "Invalid query", "status must be a media buy status")
		}
		want = st
	}
	ids := make([]string, len(bs))
	for i, b := range bs {
		ids[i] = b.ID
	}
	rows, err := h.Store.Delivery(ctx, pub(c), ids)
	if err != nil {
		return err
	}
	out := []buyView{}
	for i := len(bs) - 1; i >= 0; i-- {
		v := h.viewBuy(bs[i], rows)
		if want == "" || v.Status == want {
			out = append(out, v)
		}
	}
	return c.JSON(http.StatusOK, map[string]any{"media_buys": out})
}

func (h *Handler) getBuy(c echo.Context) error {
	ctx := c.Request().Context()
	b, err := h.Store.Buy(ctx, pub(c), c.Param("id"))
	if err != nil {
		return err
	}
	rows, err := h.Store.Delivery(ctx, pub(c), []string{b.ID})
	if err != nil {
		return err
	}
	v := h.viewBuy(b, rows)
	if v.History, err = h.Store.History(ctx, pub(c), b.ID, 0); err != nil {
		return err
	}
	return c.JSON(http.StatusOK, v)
}

// DeliveryRow is one row of a delivery report: one package's figures for
// one UTC day, as the publisher's ad server reports them. The CSV upload
// has the same columns, named in its header row.
type DeliveryRow struct {
	MediaBuyID      string                `json:"media_buy_id"`
	PackageID       string                `json:"package_id"`
	Date            string                `json:"date"`
	Impressions     int64                 `json:"impressions"`
	Clicks          int64                 `json:"clicks,omitempty"`
	Spend           float64               `json:"spend"`
	Views           int64                 `json:"views,omitempty"`
	CompletedViews  int64                 `json:"completed_views,omitempty"`
	Conversions     float64               `json:"conversions,omitempty"`
	ConversionValue float64               `json:"conversion_value,omitempty"`
	Viewability     *mediabuy.Viewability `json:"viewability,omitempty"`
}

// MaxDeliveryRows bounds one delivery report.
const MaxDeliveryRows = 10000

// reportDelivery stores a delivery report (JSON {"rows": [...]} or
// text/csv). A row for a package and day that was reported before replaces
// it: re-sending a period after a correction never counts twice. The report
// is refused whole when any row is wrong, each failure pointed at its row.
func (h *Handler) reportDelivery(c echo.Context) error {
	raw, err := body(c)
	if err != nil {
		return err
	}
	var in []DeliveryRow
	var bad jsonfield.Invalid
	if strings.HasPrefix(c.Request().Header.Get("Content-Type"), "text/csv") {
		in, bad = parseDeliveryCSV(raw)
	} else {
		var doc struct {
			Rows []DeliveryRow `json:"rows"`
		}
		if err := jsonfield.Decode(raw, &doc); err != nil {
			return invalid(err, "")
		}
		in = doc.Rows
	}
	if len(bad) > 0 {
		return invalid(bad, "")
	}
	ctx := c.Request().Context()
	rows, bad := h.deliveryRows(c, in)
	if len(bad) > 0 {
		return invalid(bad, "")
	}
	if err := h.Store.ReportDelivery(ctx, pub(c), rows); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return invalid(jsonfield.Invalid{{Pointer: "/rows", Detail: "a media buy or package was removed while the report was stored"}}, "")
		}
		return err
	}
	if err := h.Record(c, audit.DeliveryReport, "delivery", deliveryDetail(rows)); err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"stored": len(rows)})
}

// deliveryDetail sums up a stored report for the audit trail: how many
// rows, for how many buys, over which days.
func deliveryDetail(rows []mediabuy.Row) map[string]string {
	buys := map[string]bool{}
	first, last := rows[0].Date, rows[0].Date
	for _, r := range rows {
		buys[r.MediaBuyID] = true
		if r.Date.Before(first) {
			first = r.Date
		}
		if r.Date.After(last) {
			last = r.Date
		}
	}
	return map[string]string{"rows": strconv.Itoa(len(rows)), "media_buys": strconv.Itoa(len(buys)),
		"first_day": first.String(), "last_day": last.String()}
}

// deliveryRows checks each row against the publisher's buys.
func (h *Handler) deliveryRows(c echo.Context, in []DeliveryRow) ([]mediabuy.Row, jsonfield.Invalid) {
	var bad jsonfield.Invalid
	if len(in) == 0 {
		bad.Add("/rows", "the report has no rows")
		return nil, bad
	}
	if len(in) > MaxDeliveryRows {
		bad.Add("/rows", "at most %d rows per report", MaxDeliveryRows)
		return nil, bad
	}
	buys := map[string]*mediabuy.Buy{}
	seen := map[[3]string]int{}
	now := h.now()
	out := make([]mediabuy.Row, 0, len(in))
	for i, r := range in {
		p := jsonfield.Pointer("rows", i)
		b, ok := buys[r.MediaBuyID]
		if !ok && r.MediaBuyID != "" {
			got, err := h.Store.Buy(c.Request().Context(), pub(c), r.MediaBuyID)
			if err == nil {
				b = &got
			}
			buys[r.MediaBuyID] = b
		}
		switch {
		case b == nil:
			bad.Add(p+"/media_buy_id", "no media buy %q", r.MediaBuyID)
			continue
		case b.Package(r.PackageID) == nil:
			bad.Add(p+"/package_id", "media buy %s has no package %q", r.MediaBuyID, r.PackageID)
			continue
		}
		day, err := adcp.ParseDate(r.Date)
		if err != nil {
			bad.Add(p+"/date", "date must be a UTC day, YYYY-MM-DD")
			continue
		}
		if day.After(adcp.DateOf(now)) {
			bad.Add(p+"/date", "%s is in the future: report delivery that happened", r.Date)
		}
		key := [3]string{r.MediaBuyID, r.PackageID, r.Date}
		if j, dup := seen[key]; dup {
			bad.Add(p, "the same package and day as /rows/%d", j)
		}
		seen[key] = i
		for _, n := range []struct {
			name string
			v    float64
		}{{"impressions", float64(r.Impressions)}, {"clicks", float64(r.Clicks)}, {"spend", r.Spend}, {"views", float64(r.Views)},
			{"completed_views", float64(r.CompletedViews)}, {"conversions", r.Conversions}, {"conversion_value", r.ConversionValue}} {
			if n.v < 0 {
				bad.Add(p+"/"+n.name, "%s must not be negative", n.name)
			}
		}
		if v := r.Viewability; v != nil && (v.Measurable < 0 || v.Viewable < 0 || v.Viewable > v.Measurable || (v.Standard != "" && v.Standard != "mrc" && v.Standard != "groupm")) {
			bad.Add(p+"/viewability", "viewable_impressions must be within measurable_impressions, and the standard mrc or groupm")
		}
		out = append(out, mediabuy.Row{MediaBuyID: r.MediaBuyID, PackageID: r.PackageID, Date: day, Source: mediabuy.AdServer,
			Metrics: mediabuy.Metrics{Impressions: r.Impressions, Clicks: r.Clicks, Spend: mediabuy.Round(r.Spend), Views: r.Views,
				CompletedViews: r.CompletedViews, Conversions: r.Conversions, ConversionValue: r.ConversionValue, Viewability: r.Viewability},
			ReportedAt: now})
	}
	return out, bad
}

// deliveryColumns are the CSV columns, by header name.
var deliveryColumns = []string{"media_buy_id", "package_id", "date", "impressions", "clicks", "spend", "views", "completed_views", "conversions", "conversion_value"}

// parseDeliveryCSV reads a CSV delivery report: a header row naming
// columns (media_buy_id, package_id, date, impressions and spend are
// required; the rest optional), then one row per package and day.
func parseDeliveryCSV(raw []byte) ([]DeliveryRow, jsonfield.Invalid) {
	var bad jsonfield.Invalid
	r := csv.NewReader(bytes.NewReader(raw))
	r.TrimLeadingSpace = true
	header, err := r.Read()
	if err != nil {
		bad.Add("/rows", "the CSV has no header row")
		return nil, bad
	}
	col := map[string]int{}
	for i, name := range header {
		name = strings.ToLower(strings.TrimSpace(strings.TrimPrefix(name, "\ufeff")))
		if !contains(deliveryColumns, name) {
			bad.Add("/header/"+strconv.Itoa(i), "unknown column %q (columns: %s)", name, strings.Join(deliveryColumns, ", "))
			continue
		}
		col[name] = i
	}
	for _, need := range deliveryColumns[:6] {
		if _, ok := col[need]; !ok && need != "clicks" {
			bad.Add("/header", "the %s column is required", need)
		}
	}
	if len(bad) > 0 {
		return nil, bad
	}
	var out []DeliveryRow
	for line := 2; ; line++ {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		p := jsonfield.Pointer("rows", len(out))
		if err != nil {
			bad.Add(p, "line %d: %v", line, err)
			return nil, bad
		}
		get := func(name string) string {
			if i, ok := col[name]; ok && i < len(rec) {
				return strings.TrimSpace(rec[i])
			}
			return ""
		}
		row := DeliveryRow{MediaBuyID: get("media_buy_id"), PackageID: get("package_id"), Date: get("date")}
		ints := map[string]*int64{"impressions": &row.Impressions, "clicks": &row.Clicks, "views": &row.Views, "completed_views": &row.CompletedViews}
		floats := map[string]*float64{"spend": &row.Spend, "conversions": &row.Conversions, "conversion_value": &row.ConversionValue}
		for name, into := range ints {
			if v := get(name); v != "" {
				n, err := strconv.ParseInt(v, 10, 64)
				if err != nil {
					bad.Add(p+"/"+name, "line %d: %s must be a whole number", line, name)
				}
				*into = n
			}
		}
		for name, into := range floats {
			if v := get(name); v != "" {
				n, err := strconv.ParseFloat(v, 64)
				if err != nil {
					bad.Add(p+"/"+name, "line %d: %s must be a number", line, name)
				}
				*into = n
			}
		}
		out = append(out, row)
	}
	return out, bad
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
