package mediabuy

import (
	"encoding/json"
	"time"

	"github.com/storefront/storefront/adcp"
)

// TimeFormat is how every timestamp is written: UTC with milliseconds, so a
// reporting boundary reads exactly as buyers compare it.
const TimeFormat = "2006-01-02T15:04:05.000Z07:00"

// Stamp writes t in TimeFormat.
func Stamp(t time.Time) string { return t.UTC().Format(TimeFormat) }

// PackageWire is core/package.json for a package.
type PackageWire struct {
	PackageID           string            `json:"package_id"`
	ProductID           string            `json:"product_id"`
	PricingOptionID     string            `json:"pricing_option_id"`
	Budget              float64           `json:"budget"`
	Currency            string            `json:"currency,omitempty"`
	BidPrice            *float64          `json:"bid_price,omitempty"`
	Impressions         *float64          `json:"impressions,omitempty"`
	Pacing              string            `json:"pacing,omitempty"`
	FormatOptionRefs    json.RawMessage   `json:"format_option_refs,omitempty"`
	FormatKind          string            `json:"format_kind,omitempty"`
	Params              json.RawMessage   `json:"params,omitempty"`
	FormatIDs           json.RawMessage   `json:"format_ids,omitempty"`
	TargetingOverlay    *TargetingWire    `json:"targeting_overlay,omitempty"`
	CreativeAssignments []Assignment      `json:"creative_assignments,omitempty"`
	OptimizationGoals   json.RawMessage   `json:"optimization_goals,omitempty"`
	StartTime           string            `json:"start_time,omitempty"`
	EndTime             string            `json:"end_time,omitempty"`
	Paused              bool              `json:"paused"`
	Canceled            bool              `json:"canceled,omitempty"`
	Cancellation        *CancellationWire `json:"cancellation,omitempty"`
	Context             json.RawMessage   `json:"context,omitempty"`
}

// TargetingWire is the part of core/targeting.json the storefront takes.
type TargetingWire struct {
	GeoCountries []string `json:"geo_countries"`
}

// CancellationWire is a cancellation on the wire.
type CancellationWire struct {
	CanceledAt string `json:"canceled_at"`
	CanceledBy string `json:"canceled_by"`
	Reason     string `json:"reason,omitempty"`
}

func cancellation(c *Cancellation) *CancellationWire {
	if c == nil {
		return nil
	}
	return &CancellationWire{CanceledAt: Stamp(c.At), CanceledBy: c.By, Reason: c.Reason}
}

// Wire writes a package; currency is set on reads, where packages carry it.
func (p *Package) Wire(currency string) PackageWire {
	w := PackageWire{
		PackageID: p.ID, ProductID: p.ProductID, PricingOptionID: p.PricingOptionID, Budget: p.Budget,
		Currency: currency, BidPrice: p.BidPrice, Impressions: p.Impressions, Pacing: p.Pacing,
		FormatOptionRefs: p.FormatOptionRefs, FormatKind: p.FormatKind, Params: p.Params, FormatIDs: p.FormatIDs,
		CreativeAssignments: p.Assignments, OptimizationGoals: p.OptimizationGoals, Paused: p.Held,
		Canceled: p.Canceled != nil, Cancellation: cancellation(p.Canceled), Context: p.Context,
	}
	if len(p.Countries) > 0 {
		w.TargetingOverlay = &TargetingWire{GeoCountries: p.Countries}
	}
	if !p.Start.IsZero() {
		w.StartTime = Stamp(p.Start)
	}
	if !p.End.IsZero() {
		w.EndTime = Stamp(p.End)
	}
	return w
}

// CreatedWire is create_media_buy's success arm.
type CreatedWire struct {
	Status         string          `json:"status"`
	AdcpVersion    string          `json:"adcp_version"`
	MediaBuyID     string          `json:"media_buy_id"`
	Name           string          `json:"name,omitempty"`
	MediaBuyStatus Status          `json:"media_buy_status"`
	ConfirmedAt    string          `json:"confirmed_at"`
	Revision       int64           `json:"revision"`
	Currency       string          `json:"currency"`
	TotalBudget    float64         `json:"total_budget"`
	Pacing         string          `json:"pacing,omitempty"`
	ValidActions   []string        `json:"valid_actions"`
	Packages       []PackageWire   `json:"packages"`
	Sandbox        bool            `json:"sandbox,omitempty"`
	Context        json.RawMessage `json:"context,omitempty"`
}

// RootStatus is the root status of a create or update answer. AdCP 3.0
// put the buy's lifecycle status there, and 3.1 still allows that form
// (deprecated, beside media_buy_status); from 3.2 the root is the task
// status only. Buyers served 3.0 and 3.1 read the buy's status there.
func RootStatus(v adcp.Version, s Status) string {
	if v.AtLeast(3, 2) {
		return "completed"
	}
	return string(s)
}

// Created writes the success answer for a new buy at now.
func Created(v adcp.Version, b *Buy, now time.Time, ctx json.RawMessage) ([]byte, error) {
	w := CreatedWire{
		Status: RootStatus(v, b.Status(now)), AdcpVersion: v.String(), MediaBuyID: b.PublicID(), Name: b.Name,
		MediaBuyStatus: b.Status(now), ConfirmedAt: Stamp(b.ConfirmedAt), Revision: b.Revision,
		Currency: b.Currency, TotalBudget: b.TotalBudget(), Pacing: b.Pacing, ValidActions: b.ValidActions(now),
		Sandbox: b.Sandbox, Context: ctx,
	}
	for i := range b.Packages {
		w.Packages = append(w.Packages, b.Packages[i].Wire(""))
	}
	return json.Marshal(w)
}

// UpdatedWire is update_media_buy's success arm.
type UpdatedWire struct {
	Status             string          `json:"status"`
	AdcpVersion        string          `json:"adcp_version"`
	MediaBuyID         string          `json:"media_buy_id"`
	Name               string          `json:"name,omitempty"`
	MediaBuyStatus     Status          `json:"media_buy_status"`
	Revision           int64           `json:"revision"`
	Currency           string          `json:"currency"`
	TotalBudget        float64         `json:"total_budget"`
	Pacing             string          `json:"pacing,omitempty"`
	ImplementationDate string          `json:"implementation_date"`
	AffectedPackages   []PackageWire   `json:"affected_packages"`
	ValidActions       []string        `json:"valid_actions"`
	Sandbox            bool            `json:"sandbox,omitempty"`
	Context            json.RawMessage `json:"context,omitempty"`
}

// Updated writes the success answer for an update applied at now.
func Updated(v adcp.Version, b *Buy, affected []string, now time.Time, ctx json.RawMessage) ([]byte, error) {
	w := UpdatedWire{
		Status: RootStatus(v, b.Status(now)), AdcpVersion: v.String(), MediaBuyID: b.PublicID(), Name: b.Name, MediaBuyStatus: b.Status(now),
		Revision: b.Revision, Currency: b.Currency, TotalBudget: b.TotalBudget(), Pacing: b.Pacing,
		ImplementationDate: Stamp(now), AffectedPackages: []PackageWire{}, ValidActions: b.ValidActions(now),
		Sandbox: b.Sandbox, Context: ctx,
	}
	for _, id := range affected {
		if p := b.Package(id); p != nil {
			w.AffectedPackages = append(w.AffectedPackages, p.Wire(b.Currency))
		}
	}
	return json.Marshal(w)
}

// MediaBuyWire is one entry of get_media_buys.
type MediaBuyWire struct {
	MediaBuyID   string            `json:"media_buy_id"`
	Name         string            `json:"name,omitempty"`
	Status       Status            `json:"status"`
	StatusAsOf   string            `json:"status_as_of"`
	Currency     string            `json:"currency"`
	TotalBudget  float64           `json:"total_budget"`
	Pacing       string            `json:"pacing,omitempty"`
	StartTime    string            `json:"start_time"`
	EndTime      string            `json:"end_time"`
	ConfirmedAt  string            `json:"confirmed_at"`
	Cancellation *CancellationWire `json:"cancellation,omitempty"`
	Revision     int64             `json:"revision"`
	CreatedAt    string            `json:"created_at"`
	UpdatedAt    string            `json:"updated_at"`
	ValidActions []string          `json:"valid_actions"`
	History      []HistoryWire     `json:"history,omitempty"`
	Packages     []PackageWire     `json:"packages"`
	Context      json.RawMessage   `json:"context,omitempty"`
}

// HistoryWire is one history entry on the wire.
type HistoryWire struct {
	Revision  int64  `json:"revision"`
	Timestamp string `json:"timestamp"`
	Actor     string `json:"actor,omitempty"`
	Action    string `json:"action"`
	Summary   string `json:"summary,omitempty"`
	PackageID string `json:"package_id,omitempty"`
}

// Wire writes b as get_media_buys reports it at now, with the newest
// history entries first.
func (b *Buy) Wire(now time.Time, history []Event) MediaBuyWire {
	w := MediaBuyWire{
		MediaBuyID: b.PublicID(), Name: b.Name, Status: b.Status(now), StatusAsOf: Stamp(b.StatusSince(now)),
		Currency: b.Currency, TotalBudget: b.TotalBudget(), Pacing: b.Pacing,
		StartTime: Stamp(b.Start), EndTime: Stamp(b.End), ConfirmedAt: Stamp(b.ConfirmedAt),
		Cancellation: cancellation(b.Canceled), Revision: b.Revision, CreatedAt: Stamp(b.CreatedAt),
		UpdatedAt: Stamp(b.UpdatedAt), ValidActions: b.ValidActions(now), Packages: []PackageWire{}, Context: b.Context,
	}
	for i := len(history) - 1; i >= 0; i-- {
		h := history[i]
		w.History = append(w.History, HistoryWire{Revision: h.Revision, Timestamp: Stamp(h.At), Actor: h.Actor,
			Action: h.Action, Summary: truncate(h.Summary, 500), PackageID: h.PackageID})
	}
	for i := range b.Packages {
		w.Packages = append(w.Packages, b.Packages[i].Wire(b.Currency))
	}
	return w
}

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n])
}

// MetricsWire is core/delivery-metrics.json for the figures kept.
type MetricsWire struct {
	Impressions     int64            `json:"impressions"`
	Spend           float64          `json:"spend"`
	Clicks          int64            `json:"clicks"`
	CTR             *float64         `json:"ctr,omitempty"`
	Views           int64            `json:"views,omitempty"`
	CompletedViews  int64            `json:"completed_views,omitempty"`
	Conversions     float64          `json:"conversions,omitempty"`
	ConversionValue float64          `json:"conversion_value,omitempty"`
	Viewability     *ViewabilityWire `json:"viewability,omitempty"`
}

// ViewabilityWire is the viewability block.
type ViewabilityWire struct {
	MeasurableImpressions float64  `json:"measurable_impressions"`
	ViewableImpressions   float64  `json:"viewable_impressions"`
	ViewableRate          float64  `json:"viewable_rate"`
	ViewedSeconds         *float64 `json:"viewed_seconds,omitempty"`
	Standard              string   `json:"standard,omitempty"`
}

func (m Metrics) wire() MetricsWire {
	w := MetricsWire{Impressions: m.Impressions, Spend: Round(m.Spend), Clicks: m.Clicks, Views: m.Views,
		CompletedViews: m.CompletedViews, Conversions: m.Conversions, ConversionValue: m.ConversionValue}
	if m.Impressions > 0 {
		ctr := float64(m.Clicks) / float64(m.Impressions)
		w.CTR = &ctr
	}
	if v := m.Viewability; v != nil {
		vw := &ViewabilityWire{MeasurableImpressions: v.Measurable, ViewableImpressions: v.Viewable,
			ViewedSeconds: v.ViewedSeconds, Standard: v.Standard}
		if v.Measurable > 0 {
			vw.ViewableRate = v.Viewable / v.Measurable
		}
		w.Viewability = vw
	}
	return w
}

// DeliveryWire is get_media_buy_delivery's answer.
type DeliveryWire struct {
	Status          string          `json:"status"`
	AdcpVersion     string          `json:"adcp_version"`
	ReportingPeriod PeriodWire      `json:"reporting_period"`
	Currency        string          `json:"currency"`
	AggregatedTotal AggregateWire   `json:"aggregated_totals"`
	Deliveries      []BuyWire       `json:"media_buy_deliveries"`
	Sandbox         bool            `json:"sandbox,omitempty"`
	Context         json.RawMessage `json:"context,omitempty"`
}

// PeriodWire is the half-open reporting period.
type PeriodWire struct {
	Start string `json:"start"`
	End   string `json:"end"`
}

// AggregateWire sums every buy of the answer.
type AggregateWire struct {
	Impressions   int64   `json:"impressions"`
	Spend         float64 `json:"spend"`
	Clicks        int64   `json:"clicks"`
	MediaBuyCount int     `json:"media_buy_count"`
}

// BuyWire is one buy's delivery.
type BuyWire struct {
	MediaBuyID   string         `json:"media_buy_id"`
	Status       Status         `json:"status"`
	PricingModel string         `json:"pricing_model,omitempty"`
	Totals       MetricsWire    `json:"totals"`
	ByPackage    []PackageDWire `json:"by_package"`
}

// PackageDWire is one package's delivery.
type PackageDWire struct {
	PackageID string `json:"package_id"`
	MetricsWire
	PricingModel   string    `json:"pricing_model"`
	Rate           float64   `json:"rate"`
	Currency       string    `json:"currency"`
	Paused         bool      `json:"paused"`
	DeliveryStatus string    `json:"delivery_status,omitempty"`
	Daily          []DayWire `json:"daily_breakdown,omitempty"`
}

// DayWire is one day of a package's delivery.
type DayWire struct {
	Date        string  `json:"date"`
	Impressions int64   `json:"impressions"`
	Spend       float64 `json:"spend"`
}

// Report writes the delivery answer for buys at now over [start, end).
func Report(v adcp.Version, buys []BuyDelivery, currency string, start, end time.Time, daily bool, now time.Time, sandbox bool, ctx json.RawMessage) ([]byte, error) {
	w := DeliveryWire{
		Status: "completed", AdcpVersion: v.String(), ReportingPeriod: PeriodWire{Start: Stamp(start), End: Stamp(end)},
		Currency: currency, Deliveries: []BuyWire{}, Sandbox: sandbox, Context: ctx,
	}
	for _, bd := range buys {
		bw := BuyWire{MediaBuyID: bd.Buy.PublicID(), Status: bd.Buy.Status(now), Totals: bd.Totals.wire(), ByPackage: []PackageDWire{}}
		models := map[string]bool{}
		for _, pd := range bd.Packages {
			p := pd.Package
			models[p.PricingModel] = true
			rate := p.Rate
			if p.BidPrice == nil && rate == 0 && pd.Impressions > 0 {
				rate = Round(pd.Spend / float64(pd.Impressions) * 1000)
			}
			pw := PackageDWire{PackageID: p.ID, MetricsWire: pd.Metrics.wire(), PricingModel: p.PricingModel,
				Rate: rate, Currency: bd.Buy.Currency, Paused: p.Held}
			switch s := bd.Buy.Status(now); {
			case s == Completed:
				pw.DeliveryStatus = "completed"
			case s == Active && p.Live() && !p.Held:
				pw.DeliveryStatus = "delivering"
			}
			if daily {
				for _, d := range pd.Days {
					pw.Daily = append(pw.Daily, DayWire{Date: d.Date.String(), Impressions: d.Impressions, Spend: Round(d.Spend)})
				}
			}
			bw.ByPackage = append(bw.ByPackage, pw)
		}
		if len(models) == 1 {
			for m := range models {
				bw.PricingModel = m
			}
		}
		w.Deliveries = append(w.Deliveries, bw)
		w.AggregatedTotal.Impressions += bd.Totals.Impressions
		w.AggregatedTotal.Spend = Round(w.AggregatedTotal.Spend + bd.Totals.Spend)
		w.AggregatedTotal.Clicks += bd.Totals.Clicks
		w.AggregatedTotal.MediaBuyCount++
	}
	return json.Marshal(w)
}
