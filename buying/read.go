package buying

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/storefront/storefront/adcp"
	"github.com/storefront/storefront/mediabuy"
	"github.com/storefront/storefront/outcome"
	"github.com/storefront/storefront/products"
	"github.com/storefront/storefront/sanitize"
)

// getWire is get_media_buys' answer.
type getWire struct {
	Status      string                  `json:"status"`
	AdcpVersion string                  `json:"adcp_version"`
	MediaBuys   []mediabuy.MediaBuyWire `json:"media_buys"`
	Pagination  *outcome.Page           `json:"pagination,omitempty"`
	Sandbox     bool                    `json:"sandbox,omitempty"`
	Context     json.RawMessage         `json:"context,omitempty"`
}

// Get runs get_media_buys.
func (s *Service) Get(ctx context.Context, c products.Call) outcome.Sent {
	now := s.now()
	req, err := mediabuy.DecodeGet(c.Args)
	// The response schema requires media_buys on every answer.
	a, done := s.startShaped(ctx, c, "get_media_buys", req.Envelope, err, func(f outcome.FailedWire) any {
		return struct {
			outcome.FailedWire
			MediaBuys []mediabuy.MediaBuyWire `json:"media_buys"`
		}{f, []mediabuy.MediaBuyWire{}}
	})
	if done != nil {
		return *done
	}
	acct, e := a.account(ctx, req.Account, false)
	if e != nil {
		return a.fail(ctx, false, *e)
	}
	buys, err := s.Store.Buys(ctx, c.Publisher, filter(acct, c.Principal, req.Query.IDs))
	if err != nil {
		s.log().Error("listing media buys failed", "err", err)
		return a.fail(ctx, false, unavailable)
	}
	var match []mediabuy.Buy
	for i := range buys {
		if req.Query.Match(&buys[i], now) {
			match = append(match, buys[i])
		}
	}
	offset, ok := cursorOffset("mb:", req.Cursor, len(match))
	if !ok {
		return a.fail(ctx, false, errorOf(sanitize.Vendor(), adcp.InvalidRequest, "pagination.cursor", "the cursor is not one this seller issued for this query", nil))
	}
	end := min(offset+req.MaxResults, len(match))
	w := getWire{Status: "completed", AdcpVersion: a.env.Version.String(), MediaBuys: []mediabuy.MediaBuyWire{},
		Sandbox: acct.Sandbox || c.Principal.Sandbox, Context: a.env.Context}
	for i := offset; i < end; i++ {
		var history []mediabuy.Event
		if req.History > 0 {
			if history, err = s.Store.History(ctx, c.Publisher, match[i].ID, req.History); err != nil {
				return a.fail(ctx, false, unavailable)
			}
		}
		w.MediaBuys = append(w.MediaBuys, match[i].Wire(now, history))
	}
	total := len(match)
	w.Pagination = &outcome.Page{HasMore: end < total, Total: &total}
	if end < total {
		w.Pagination.Cursor = cursorAt("mb:", end)
	}
	payload, err := encode(w)
	if err != nil {
		return a.internal(err)
	}
	return outcome.Sent{Payload: payload}
}

// cursorOffset reads a cursor cursorAt issued with the same prefix: the
// offset of the next page.
func cursorOffset(prefix, cursor string, total int) (int, bool) {
	if cursor == "" {
		return 0, true
	}
	raw, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil || !strings.HasPrefix(string(raw), prefix) {
		return 0, false
	}
	n, err := strconv.Atoi(string(raw[len(prefix):]))
	return n, err == nil && n >= 0 && n <= total
}

// cursorAt is the cursor of the page that starts at offset.
func cursorAt(prefix string, offset int) string {
	return base64.RawURLEncoding.EncodeToString([]byte(prefix + strconv.Itoa(offset)))
}

// Delivery runs get_media_buy_delivery: sums of what was reported, never
// invented, over the half-open UTC range asked for.
func (s *Service) Delivery(ctx context.Context, c products.Call) outcome.Sent {
	now := s.now()
	req, err := mediabuy.DecodeDelivery(c.Args)
	// The response schema requires a period, a currency and the
	// deliveries on every answer: the period asked for, nothing delivered.
	a, done := s.startShaped(ctx, c, "get_media_buy_delivery", req.Envelope, err, func(f outcome.FailedWire) any {
		start, end := reportingPeriod(nil, mediabuy.Period{From: req.From, To: req.To}, now)
		return struct {
			outcome.FailedWire
			ReportingPeriod mediabuy.PeriodWire `json:"reporting_period"`
			Currency        string              `json:"currency"`
			Deliveries      []mediabuy.BuyWire  `json:"media_buy_deliveries"`
		}{f, mediabuy.PeriodWire{Start: mediabuy.Stamp(start), End: mediabuy.Stamp(end)}, s.currency(ctx, c.Publisher), []mediabuy.BuyWire{}}
	})
	if done != nil {
		return *done
	}
	acct, e := a.account(ctx, req.Account, false)
	if e != nil {
		return a.fail(ctx, false, *e)
	}
	buys, err := s.Store.Buys(ctx, c.Publisher, filter(acct, c.Principal, req.Query.IDs))
	if err != nil {
		return a.fail(ctx, false, unavailable)
	}
	var match []mediabuy.Buy
	var ids []string
	for i := range buys {
		if req.Query.Match(&buys[i], now) {
			match = append(match, buys[i])
			ids = append(ids, buys[i].ID)
		}
	}
	if len(req.Query.IDs) > 0 && len(match) == 0 {
		return a.fail(ctx, false, errorOf(sanitize.Vendor(), adcp.MediaBuyNotFound, "media_buy_ids", "none of the media buys asked for exists for this account", nil))
	}
	currency := ""
	for _, b := range match {
		if currency != "" && b.Currency != currency {
			return a.fail(ctx, false, errorOf(sanitize.Vendor(), adcp.ValidationError, "media_buy_ids",
				"these media buys are in more than one currency: ask for each currency's buys separately", nil))
		}
		currency = b.Currency
	}
	if currency == "" {
		currency = s.currency(ctx, c.Publisher)
	}
	rows, err := s.Store.Delivery(ctx, c.Publisher, ids)
	if err != nil {
		return a.fail(ctx, false, unavailable)
	}
	period := mediabuy.Period{From: req.From, To: req.To}
	start, end := reportingPeriod(match, period, now)
	var out []mediabuy.BuyDelivery
	for i := range match {
		out = append(out, mediabuy.Sum(&match[i], rows, period))
	}
	payload, err := mediabuy.Report(a.env.Version, out, currency, start, end, req.Daily, now, acct.Sandbox || c.Principal.Sandbox, a.env.Context)
	if err != nil {
		return a.internal(err)
	}
	return outcome.Sent{Payload: payload}
}

// reportingPeriod is the exact range the answer covers: the dates asked
// for, as UTC midnights; else from the earliest buy's start (or the first
// day asked for) to now (or the end asked for).
func reportingPeriod(buys []mediabuy.Buy, p mediabuy.Period, now time.Time) (time.Time, time.Time) {
	start, end := now, now
	if !p.From.IsZero() {
		start = p.From.Time()
	} else {
		for _, b := range buys {
			if b.Start.Before(start) {
				start = b.Start
			}
		}
		if !p.To.IsZero() && p.To.Time().Before(start) {
			start = p.To.Time()
		}
	}
	if !p.To.IsZero() {
		end = p.To.Time()
	} else if end.Before(start) {
		end = start
	}
	return start, end
}

// currency is the currency an answer with no buy in it reports in: the
// first the publisher's catalogue prices in (USD for an empty catalogue).
func (s *Service) currency(ctx context.Context, publisher string) string {
	if snap, err := s.Snapshots.Snapshot(ctx, publisher); err == nil {
		if cs := snap.Catalogue.Market().Currencies; len(cs) > 0 {
			return cs[0]
		}
	}
	return "USD"
}

// startShaped is start for a read task whose every answer carries what
// shape adds; reads are not recorded.
func (s *Service) startShaped(ctx context.Context, c products.Call, task string, env mediabuy.Envelope, decodeErr error, shape func(outcome.FailedWire) any) (*answer, *outcome.Sent) {
	a, _ := s.begin(c, task, env)
	a.shape = shape
	return s.startFrom(ctx, a, env, decodeErr, false)
}
