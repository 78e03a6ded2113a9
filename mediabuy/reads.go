package mediabuy

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/storefront/storefront/adcp"
	"github.com/storefront/storefront/products"
)

// Page sizes of the read tasks.
const (
	DefaultPageSize = 50
	MaxPageSize     = 100
	MaxIDs          = 100
	MaxHistory      = 1000
)

// Query selects buys: by ids (as buyers know them, see Buy.PublicID), by
// status, or both (conjunctively).
type Query struct {
	IDs      []string
	Statuses []Status
}

// Match reports whether b, at now, is selected by q.
func (q Query) Match(b *Buy, now time.Time) bool {
	if len(q.IDs) > 0 && !contains(q.IDs, b.PublicID()) {
		return false
	}
	if len(q.Statuses) == 0 {
		return true
	}
	s := b.Status(now)
	for _, x := range q.Statuses {
		if x == s {
			return true
		}
	}
	return false
}

// GetRequest is a decoded get_media_buys request.
type GetRequest struct {
	Envelope
	Account *products.AccountRef
	Query   Query
	History int
	// MaxResults and Cursor page through the buys.
	MaxResults int
	Cursor     string
}

type readWire struct {
	Envelope
	Account      json.RawMessage `json:"account"`
	MediaBuyIDs  []string        `json:"media_buy_ids"`
	StatusFilter json.RawMessage `json:"status_filter"`
}

func decodeRead(e *errs, w *readWire, defaultStatus bool) (*products.AccountRef, Query) {
	checkEnvelope(&w.Envelope, e, false)
	acct, _, _ := refs(w.Account, nil, nil, e)
	var q Query
	if w.MediaBuyIDs != nil && len(w.MediaBuyIDs) == 0 {
		e.invalid("media_buy_ids", "media_buy_ids must list at least one id")
	}
	if len(w.MediaBuyIDs) > MaxIDs {
		e.invalid("media_buy_ids", "media_buy_ids lists %d ids; the limit is %d", len(w.MediaBuyIDs), MaxIDs)
	}
	for i, id := range w.MediaBuyIDs {
		checkID(e, fmt.Sprintf("media_buy_ids[%d]", i), id)
	}
	q.IDs = w.MediaBuyIDs
	if present(w.StatusFilter) {
		var one string
		var many []string
		switch {
		case read(w.StatusFilter, &one):
			many = []string{one}
		case read(w.StatusFilter, &many) && len(many) > 0:
		default:
			e.invalid("status_filter", "status_filter must be a media buy status or a non-empty array of them")
		}
		for _, s := range many {
			st, ok := ParseStatus(s)
			if !ok {
				e.invalid("status_filter", "%q is not a media buy status", s)
				continue
			}
			q.Statuses = append(q.Statuses, st)
		}
	} else if defaultStatus && len(q.IDs) == 0 {
		// Without ids the spec's default is the active buys.
		q.Statuses = []Status{Active}
	}
	return acct, q
}

// DecodeGet parses and validates get_media_buys arguments.
func DecodeGet(args []byte) (*GetRequest, error) {
	var w struct {
		readWire
		IncludeHistory  *int            `json:"include_history"`
		IncludeSnapshot json.RawMessage `json:"include_snapshot"`
		Indicators      json.RawMessage `json:"indicator_types"`
		WebhookActivity json.RawMessage `json:"include_webhook_activity"`
		Pagination      *struct {
			MaxResults *int   `json:"max_results"`
			Cursor     string `json:"cursor"`
		} `json:"pagination"`
	}
	var e errs
	if !unmarshal(args, &w, &e) {
		return &GetRequest{Envelope: envelopeOnly(args)}, e.err()
	}
	r := &GetRequest{MaxResults: DefaultPageSize}
	r.Account, r.Query = decodeRead(&e, &w.readWire, true)
	r.Envelope = w.Envelope
	if w.IncludeHistory != nil {
		if *w.IncludeHistory < 0 || *w.IncludeHistory > MaxHistory {
			e.invalid("include_history", "include_history must be between 0 and %d", MaxHistory)
		}
		r.History = *w.IncludeHistory
	}
	var snapshot bool
	if present(w.IncludeSnapshot) && read(w.IncludeSnapshot, &snapshot) && snapshot {
		e.add(adcp.UnsupportedFeature, "include_snapshot", "delivery snapshots are not supported by this seller: use get_media_buy_delivery")
	}
	unsupported(&e, "", map[string]json.RawMessage{"indicator_types": w.Indicators})
	var activity bool
	if present(w.WebhookActivity) && read(w.WebhookActivity, &activity) && activity {
		e.add(adcp.UnsupportedFeature, "include_webhook_activity", "webhook activity is not reported by this seller")
	}
	if p := w.Pagination; p != nil {
		if p.MaxResults != nil {
			r.MaxResults = *p.MaxResults
			if r.MaxResults < 1 || r.MaxResults > MaxPageSize {
				e.invalid("pagination.max_results", "max_results must be between 1 and %d", MaxPageSize)
			}
		}
		r.Cursor = p.Cursor
	}
	return r, e.err()
}

// DeliveryRequest is a decoded get_media_buy_delivery request.
type DeliveryRequest struct {
	Envelope
	Account *products.AccountRef
	Query   Query
	// From and To are the half-open UTC date range [From, To); zero
	// when not given.
	From, To adcp.Date
	Daily    bool
}

// DecodeDelivery parses and validates get_media_buy_delivery arguments.
func DecodeDelivery(args []byte) (*DeliveryRequest, error) {
	var w struct {
		readWire
		StartDate   string          `json:"start_date"`
		EndDate     string          `json:"end_date"`
		Daily       bool            `json:"include_package_daily_breakdown"`
		Granularity json.RawMessage `json:"time_granularity"`
		Windows     json.RawMessage `json:"include_window_breakdown"`
		Attribution json.RawMessage `json:"attribution_window"`
		Dimensions  json.RawMessage `json:"reporting_dimensions"`
	}
	var e errs
	if !unmarshal(args, &w, &e) {
		return &DeliveryRequest{Envelope: envelopeOnly(args)}, e.err()
	}
	r := &DeliveryRequest{Daily: w.Daily}
	r.Account, r.Query = decodeRead(&e, &w.readWire, false)
	r.Envelope = w.Envelope
	var windows bool
	if present(w.Windows) && read(w.Windows, &windows) && windows {
		e.add(adcp.UnsupportedFeature, "include_window_breakdown", "measurement windows are not reported by this seller")
	}
	unsupported(&e, "", map[string]json.RawMessage{"attribution_window": w.Attribution, "reporting_dimensions": w.Dimensions})
	if present(w.Granularity) {
		var g string
		if !read(w.Granularity, &g) || g != "daily" {
			e.add(adcp.UnsupportedFeature, "time_granularity", "delivery is reported by day only")
		}
	}
	for _, f := range []struct {
		name string
		raw  string
		into *adcp.Date
	}{{"start_date", w.StartDate, &r.From}, {"end_date", w.EndDate, &r.To}} {
		if f.raw == "" {
			continue
		}
		d, err := adcp.ParseDate(f.raw)
		if err != nil {
			e.invalid(f.name, "%s must be a date (YYYY-MM-DD)", f.name)
			continue
		}
		*f.into = d
	}
	if !r.From.IsZero() && !r.To.IsZero() && !r.From.Before(r.To) {
		// The range is half-open: equal bounds select nothing.
		e.add(adcp.ValidationError, "start_date", "start_date must be before end_date: the range is half-open, so equal dates select no day")
	}
	return r, e.err()
}
