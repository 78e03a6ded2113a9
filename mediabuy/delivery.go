package mediabuy

import (
	"sort"
	"time"

	"github.com/storefront/storefront/adcp"
)

// Sources of delivery rows.
const (
	// AdServer rows come from the publisher's ad server through the admin
	// API (or the console's CSV upload). Reporting a package's day again
	// replaces the row: a period can be re-sent after a correction.
	AdServer = "ad_server"
	// Simulated rows come from the sandbox controller's simulate_delivery.
	// Each simulation adds to the day's row, as the controller's
	// cumulative semantics ask.
	Simulated = "simulated"
)

// Row is one package's delivery on one UTC day, from one source.
type Row struct {
	MediaBuyID string    `json:"media_buy_id"`
	PackageID  string    `json:"package_id"`
	Date       adcp.Date `json:"date"`
	Source     string    `json:"source"`
	Metrics
	ReportedAt time.Time `json:"reported_at"`
}

// Metrics are the additive delivery figures the storefront keeps.
type Metrics struct {
	Impressions     int64        `json:"impressions"`
	Clicks          int64        `json:"clicks,omitempty"`
	Spend           float64      `json:"spend"`
	Views           int64        `json:"views,omitempty"`
	CompletedViews  int64        `json:"completed_views,omitempty"`
	Conversions     float64      `json:"conversions,omitempty"`
	ConversionValue float64      `json:"conversion_value,omitempty"`
	Viewability     *Viewability `json:"viewability,omitempty"`
}

// Viewability is delivery-metrics viewability. Measurable impressions are
// the shared denominator of the rate and of viewed seconds.
type Viewability struct {
	Measurable    float64  `json:"measurable_impressions"`
	Viewable      float64  `json:"viewable_impressions"`
	ViewedSeconds *float64 `json:"viewed_seconds,omitempty"`
	Standard      string   `json:"standard,omitempty"`
}

// Add adds m to t. Viewed seconds are averaged over measurable
// impressions; a standard survives only when every part agrees.
func (t *Metrics) Add(m Metrics) {
	t.Impressions += m.Impressions
	t.Clicks += m.Clicks
	t.Spend = Round(t.Spend + m.Spend)
	t.Views += m.Views
	t.CompletedViews += m.CompletedViews
	t.Conversions += m.Conversions
	t.ConversionValue = Round(t.ConversionValue + m.ConversionValue)
	if m.Viewability == nil {
		return
	}
	if t.Viewability == nil {
		v := *m.Viewability
		if v.ViewedSeconds != nil {
			s := *v.ViewedSeconds
			v.ViewedSeconds = &s
		}
		t.Viewability = &v
		return
	}
	a, b := t.Viewability, m.Viewability
	switch {
	case a.ViewedSeconds != nil && b.ViewedSeconds != nil && a.Measurable+b.Measurable > 0:
		s := (*a.ViewedSeconds*a.Measurable + *b.ViewedSeconds*b.Measurable) / (a.Measurable + b.Measurable)
		a.ViewedSeconds = &s
	case b.ViewedSeconds != nil && a.Measurable == 0:
		s := *b.ViewedSeconds
		a.ViewedSeconds = &s
	case b.ViewedSeconds == nil && b.Measurable > 0:
		// A part without viewed seconds leaves the average unknown.
		a.ViewedSeconds = nil
	}
	a.Measurable += b.Measurable
	a.Viewable += b.Viewable
	if a.Standard != b.Standard {
		a.Standard = ""
	}
}

// Allocate splits buy-level figures (a simulation) across the buy's live
// packages in proportion to their budgets: counts rounded down with the
// remainder on the first package, money in cents with the remainder on the
// first package, viewability rates kept.
func Allocate(b *Buy, m Metrics) map[string]Metrics {
	var live []*Package
	total := 0.0
	for i := range b.Packages {
		if b.Packages[i].Live() {
			live = append(live, &b.Packages[i])
			total += b.Packages[i].Budget
		}
	}
	out := map[string]Metrics{}
	if len(live) == 0 || total <= 0 {
		return out
	}
	var sum Metrics
	for i, p := range live {
		if i == 0 {
			continue
		}
		share := p.Budget / total
		part := Metrics{
			Impressions: int64(float64(m.Impressions) * share), Clicks: int64(float64(m.Clicks) * share),
			Spend: Round(m.Spend * share), Views: int64(float64(m.Views) * share),
			CompletedViews: int64(float64(m.CompletedViews) * share), Conversions: m.Conversions * share,
			ConversionValue: Round(m.ConversionValue * share),
		}
		if v := m.Viewability; v != nil {
			pv := *v
			pv.Measurable, pv.Viewable = float64(int64(v.Measurable*share)), float64(int64(v.Viewable*share))
			part.Viewability = &pv
		}
		out[p.ID] = part
		sum.Add(part)
	}
	first := Metrics{
		Impressions: m.Impressions - sum.Impressions, Clicks: m.Clicks - sum.Clicks, Spend: Round(m.Spend - sum.Spend),
		Views: m.Views - sum.Views, CompletedViews: m.CompletedViews - sum.CompletedViews,
		Conversions: m.Conversions - sum.Conversions, ConversionValue: Round(m.ConversionValue - sum.ConversionValue),
	}
	if v := m.Viewability; v != nil {
		pv := *v
		if sum.Viewability != nil {
			pv.Measurable, pv.Viewable = v.Measurable-sum.Viewability.Measurable, v.Viewable-sum.Viewability.Viewable
		}
		first.Viewability = &pv
	}
	out[live[0].ID] = first
	return out
}

// Period is a half-open range of UTC days [From, To).
type Period struct{ From, To adcp.Date }

// Contains reports whether day d is in the period; a zero bound is open.
func (p Period) Contains(d adcp.Date) bool {
	return (p.From.IsZero() || !d.Before(p.From)) && (p.To.IsZero() || d.Before(p.To))
}

// PackageDelivery is one package's figures over a period.
type PackageDelivery struct {
	Package *Package
	Metrics
	Days []DayDelivery
}

// DayDelivery is one day's figures.
type DayDelivery struct {
	Date adcp.Date
	Metrics
}

// BuyDelivery is one buy's figures over a period.
type BuyDelivery struct {
	Buy      *Buy
	Totals   Metrics
	Packages []PackageDelivery
}

// Sum adds up the rows of b that fall in p, per package and per day. Every
// live package appears, with zeros when nothing was reported for it.
func Sum(b *Buy, rows []Row, p Period) BuyDelivery {
	out := BuyDelivery{Buy: b}
	index := map[string]int{}
	for i := range b.Packages {
		pk := &b.Packages[i]
		if !pk.Live() && !hasRows(rows, pk.ID, p) {
			continue
		}
		index[pk.ID] = len(out.Packages)
		out.Packages = append(out.Packages, PackageDelivery{Package: pk})
	}
	days := map[string]map[string]*DayDelivery{}
	for _, r := range rows {
		i, ok := index[r.PackageID]
		if r.MediaBuyID != b.ID || !ok || !p.Contains(r.Date) {
			continue
		}
		pd := &out.Packages[i]
		pd.Metrics.Add(r.Metrics)
		out.Totals.Add(r.Metrics)
		if days[r.PackageID] == nil {
			days[r.PackageID] = map[string]*DayDelivery{}
		}
		k := r.Date.String()
		if days[r.PackageID][k] == nil {
			days[r.PackageID][k] = &DayDelivery{Date: r.Date}
		}
		days[r.PackageID][k].Metrics.Add(r.Metrics)
	}
	for i := range out.Packages {
		for _, d := range days[out.Packages[i].Package.ID] {
			out.Packages[i].Days = append(out.Packages[i].Days, *d)
		}
		sort.Slice(out.Packages[i].Days, func(a, c int) bool {
			return out.Packages[i].Days[a].Date.Before(out.Packages[i].Days[c].Date)
		})
	}
	return out
}

func hasRows(rows []Row, pkg string, p Period) bool {
	for _, r := range rows {
		if r.PackageID == pkg && p.Contains(r.Date) {
			return true
		}
	}
	return false
}
