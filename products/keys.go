package products

import (
	"math"
	"strconv"
	"time"

	"github.com/storefront/storefront/adcp"
	"github.com/storefront/storefront/internal/verbatim"
	"github.com/storefront/storefront/merch"
)

// The appenders below write, member by member, the bytes json.Marshal
// writes for the parts of a request that a cursor and a kept decline are
// keyed on: both keys are written for every get_products request, and
// json.Marshal's reflection made them a visible share of its CPU. A
// cursor's fingerprint covers these bytes, so they must stay json.Marshal's
// for cursors already issued to verify (TestQueryKeyIsMarshal). A field
// added to a type written here must be written here too
// (TestKeyWritersCoverEveryField).

// queryKey is the part of the request a cursor is bound to: json.Marshal
// of struct{Mode, Brief string; F Filters; Geo, Fields []string; Refine
// []RefineEntry; Size int}, as cursors already issued were fingerprinted;
// nil, as json.Marshal fails, when a float is not finite.
func queryKey(r *Request) []byte {
	b, ok := appendQueryKey(make([]byte, 0, 640+len(deref(r.Brief))), r)
	if !ok {
		return nil
	}
	return b
}

// appendQueryKey appends queryKey(r) to b, or reports false where
// queryKey is nil.
func appendQueryKey(b []byte, r *Request) ([]byte, bool) {
	if !r.Filters.writable() {
		return b, false
	}
	b = append(b, `{"Mode":`...)
	b = verbatim.AppendString(b, r.BuyingMode)
	b = append(b, `,"Brief":`...)
	b = verbatim.AppendString(b, deref(r.Brief))
	b = append(b, `,"F":`...)
	b = appendFilters(b, &r.Filters)
	b = append(b, `,"Geo":`...)
	b = appendStrings(b, r.GeoCountries)
	b = append(b, `,"Fields":`...)
	b = appendStrings(b, r.Fields)
	b = append(b, `,"Refine":`...)
	b = appendList(b, r.Refine, appendRefineEntry)
	b = append(b, `,"Size":`...)
	b = strconv.AppendInt(b, int64(r.Pagination.MaxResults), 10)
	return append(b, '}'), true
}

// appendList writes l as json.Marshal writes a slice, each item with
// item: null when l is nil.
func appendList[T any](b []byte, l []T, item func([]byte, *T) []byte) []byte {
	if l == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i := range l {
		if i > 0 {
			b = append(b, ',')
		}
		b = item(b, &l[i])
	}
	return append(b, ']')
}

func appendStrings(b []byte, l []string) []byte {
	return appendList(b, l, func(b []byte, s *string) []byte { return verbatim.AppendString(b, *s) })
}

func appendBoolPtr(b []byte, v *bool) []byte {
	if v == nil {
		return append(b, "null"...)
	}
	return strconv.AppendBool(b, *v)
}

// appendFloat is encoding/json's spelling of a finite float64: the
// shortest decimal that reads back as f, with an exponent only below 1e-6
// or from 1e21, and no leading zero in a negative exponent. json.Marshal
// refuses NaN and the infinities: see finite.
func appendFloat(b []byte, f float64) []byte {
	// A whole number short of 1e15, as budgets are, is its own shortest
	// decimal: written as an integer, without the search for one. Not -0,
	// which encoding/json writes with its sign.
	if f == math.Trunc(f) && math.Abs(f) < 1e15 && (f != 0 || !math.Signbit(f)) {
		return strconv.AppendInt(b, int64(f), 10)
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if n := len(b); format == 'e' && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
		b[n-2] = b[n-1]
		b = b[:n-1]
	}
	return b
}

func appendFloatPtr(b []byte, f *float64) []byte {
	if f == nil {
		return append(b, "null"...)
	}
	return appendFloat(b, *f)
}

// finite reports whether json.Marshal can write each of fs.
func finite(fs ...*float64) bool {
	for _, f := range fs {
		if f != nil && (math.IsInf(*f, 0) || math.IsNaN(*f)) {
			return false
		}
	}
	return true
}

// writable reports whether json.Marshal can write f: whether its floats
// are finite.
func (f *Filters) writable() bool {
	if br := f.Budget; br != nil && !finite(br.Min, br.Max) {
		return false
	}
	for i := range f.FormatIDs {
		if !finite(&f.FormatIDs[i].DurationMS) {
			return false
		}
	}
	return true
}

// appendDate is adcp.Date's MarshalJSON, without the string it goes
// through.
func appendDate(b []byte, d adcp.Date) []byte {
	b = append(b, '"')
	switch y, m, day := d.Time().Date(); {
	case d.IsZero():
	case y >= 0 && y <= 9999:
		b = append(b, byte('0'+y/1000), byte('0'+y/100%10), byte('0'+y/10%10), byte('0'+y%10), '-',
			byte('0'+m/10), byte('0'+m%10), '-', byte('0'+day/10), byte('0'+day%10))
	default:
		b = d.Time().AppendFormat(b, time.DateOnly)
	}
	return append(b, '"')
}

// appendBudget writes a BudgetRange or a merch.Budget, which have the same
// members.
func appendBudget(b []byte, lo, hi *float64, currency string) []byte {
	b = append(b, `{"Min":`...)
	b = appendFloatPtr(b, lo)
	b = append(b, `,"Max":`...)
	b = appendFloatPtr(b, hi)
	b = append(b, `,"Currency":`...)
	b = verbatim.AppendString(b, currency)
	return append(b, '}')
}

func appendFilters(b []byte, f *Filters) []byte {
	b = append(b, `{"Channels":`...)
	b = appendStrings(b, f.Channels)
	b = append(b, `,"FormatKinds":`...)
	b = appendStrings(b, f.FormatKinds)
	b = append(b, `,"DeliveryType":`...)
	b = verbatim.AppendString(b, f.DeliveryType)
	b = append(b, `,"Budget":`...)
	if br := f.Budget; br == nil {
		b = append(b, "null"...)
	} else {
		b = appendBudget(b, br.Min, br.Max, br.Currency)
	}
	b = append(b, `,"StartDate":`...)
	b = appendDate(b, f.StartDate)
	b = append(b, `,"EndDate":`...)
	b = appendDate(b, f.EndDate)
	b = append(b, `,"PricingCurrencies":`...)
	b = appendStrings(b, f.PricingCurrencies)
	b = append(b, `,"Countries":`...)
	b = appendStrings(b, f.Countries)
	b = append(b, `,"IsFixedPrice":`...)
	b = appendBoolPtr(b, f.IsFixedPrice)
	b = append(b, `,"PricingStructures":`...)
	b = appendStrings(b, f.PricingStructures)
	b = append(b, `,"Exclusivity":`...)
	b = verbatim.AppendString(b, f.Exclusivity)
	b = append(b, `,"VideoPlacementTypes":`...)
	b = appendStrings(b, f.VideoPlacementTypes)
	b = append(b, `,"AudioDistributionTypes":`...)
	b = appendStrings(b, f.AudioDistributionTypes)
	b = append(b, `,"RequiredMetrics":`...)
	b = appendStrings(b, f.RequiredMetrics)
	b = append(b, `,"StandardFormatsOnly":`...)
	b = strconv.AppendBool(b, f.StandardFormatsOnly)
	// omitempty: left out when empty, as cursors issued before these
	// filters existed were fingerprinted.
	if len(f.FormatOptionRefs) > 0 {
		b = append(b, `,"FormatOptionRefs":`...)
		b = appendList(b, f.FormatOptionRefs, appendFormatOptionRef)
	}
	if len(f.FormatIDs) > 0 {
		b = append(b, `,"FormatIDs":`...)
		b = appendList(b, f.FormatIDs, appendFormatRef)
	}
	b = append(b, `,"Unmodelled":`...)
	b = appendStrings(b, f.Unmodelled)
	return append(b, '}')
}

func appendFormatOptionRef(b []byte, r *FormatOptionRef) []byte {
	b = append(b, `{"Scope":`...)
	b = verbatim.AppendString(b, r.Scope)
	b = append(b, `,"PublisherDomain":`...)
	b = verbatim.AppendString(b, r.PublisherDomain)
	b = append(b, `,"FormatOptionID":`...)
	b = verbatim.AppendString(b, r.FormatOptionID)
	return append(b, '}')
}

func appendFormatRef(b []byte, r *FormatRef) []byte {
	b = append(b, `{"AgentURL":`...)
	b = verbatim.AppendString(b, r.AgentURL)
	b = append(b, `,"ID":`...)
	b = verbatim.AppendString(b, r.ID)
	b = append(b, `,"Width":`...)
	b = strconv.AppendInt(b, int64(r.Width), 10)
	b = append(b, `,"Height":`...)
	b = strconv.AppendInt(b, int64(r.Height), 10)
	b = append(b, `,"DurationMS":`...)
	b = appendFloat(b, r.DurationMS)
	return append(b, '}')
}

func appendRefineEntry(b []byte, e *RefineEntry) []byte {
	b = append(b, `{"Scope":`...)
	b = verbatim.AppendString(b, e.Scope)
	b = append(b, `,"Ask":`...)
	b = verbatim.AppendString(b, e.Ask)
	b = append(b, `,"ProductID":`...)
	b = verbatim.AppendString(b, e.ProductID)
	b = append(b, `,"ProposalID":`...)
	b = verbatim.AppendString(b, e.ProposalID)
	b = append(b, `,"Action":`...)
	b = verbatim.AppendString(b, e.Action)
	return append(b, '}')
}

func appendBrief(b []byte, br *merch.Brief) []byte {
	b = append(b, `{"Mode":`...)
	b = verbatim.AppendString(b, br.Mode)
	b = append(b, `,"Text":`...)
	b = verbatim.AppendString(b, br.Text)
	b = append(b, `,"Channels":`...)
	b = appendStrings(b, br.Channels)
	b = append(b, `,"FormatKinds":`...)
	b = appendStrings(b, br.FormatKinds)
	b = append(b, `,"DeliveryType":`...)
	b = verbatim.AppendString(b, br.DeliveryType)
	b = append(b, `,"Budget":`...)
	if bu := br.Budget; bu == nil {
		b = append(b, "null"...)
	} else {
		b = appendBudget(b, bu.Min, bu.Max, bu.Currency)
	}
	b = append(b, `,"Flight":{"start":`...)
	b = appendDate(b, br.Flight.Start)
	b = append(b, `,"end":`...)
	b = appendDate(b, br.Flight.End)
	b = append(b, `},"Currencies":`...)
	b = appendStrings(b, br.Currencies)
	b = append(b, `,"Countries":`...)
	b = appendStrings(b, br.Countries)
	b = append(b, `,"BrandDomain":`...)
	b = verbatim.AppendString(b, br.BrandDomain)
	b = append(b, `,"Industries":`...)
	b = appendStrings(b, br.Industries)
	b = append(b, `,"Today":`...)
	b = appendDate(b, br.Today)
	return append(b, '}')
}
