package decline

import "fmt"

// reveal is the one place that decides what each disclosure level shows.
// It returns the placeholder values for g at g.Level: a name is absent when
// the level does not reveal it. Everything the composer writes about a
// decline's figures comes from here.
func reveal(g Grounds, v Voice) map[string]string {
	f := g.Facts
	shown := map[string]string{}
	if g.Level < Category {
		return shown
	}
	if v.SellerName != "" {
		shown["seller"] = v.SellerName
	}
	if len(f.AlternativeChannels) > 0 {
		shown["channels"] = mapList(f.AlternativeChannels, ChannelLabel, 4)
	}
	if len(f.ServedCountries) > 0 {
		shown["markets"] = mapList(f.ServedCountries, countryLabel, 6)
	}
	if len(f.OfferedFormatKinds) > 0 {
		shown["formats"] = mapList(f.OfferedFormatKinds, FormatLabel, 6)
	}
	switch g.Level {
	case Range:
		if f.Minimum > 0 {
			shown["minimum"] = money(coarse(f.Minimum), f.Currency)
		}
		if !f.EarliestStart.IsZero() {
			shown["earliest_start"] = monthPart(f.EarliestStart)
			shown["lead_time"] = leadBucket(f.LeadDays)
		}
		if f.OpenFlight != nil {
			shown["open_flight"] = "starting in " + monthPart(f.OpenFlight.Start)
		}
	case Exact:
		if f.Minimum > 0 {
			shown["minimum"] = money(exactUp(f.Minimum), f.Currency)
		}
		if !f.EarliestStart.IsZero() {
			shown["earliest_start"] = f.EarliestStart.String()
			shown["lead_time"] = fmt.Sprintf("%d days", f.LeadDays)
		}
		if f.OpenFlight != nil {
			shown["open_flight"] = fmt.Sprintf("from %s to %s", f.OpenFlight.Start, f.OpenFlight.End)
		}
	}
	return shown
}

// detail is the sentence the canned line gains at range and exact level.
func detail(g Grounds, shown map[string]string) string {
	switch g.Slug {
	case BudgetBelowMinimum:
		if m := shown["minimum"]; m != "" {
			if g.Level == Exact {
				return "The minimum for this inventory is " + m + "."
			}
			return "Budgets of " + m + " or more fit this inventory."
		}
	case ChannelNotOffered:
		if c := shown["channels"]; c != "" {
			return "Channels offered: " + c + "."
		}
	case LeadTimeTooShort:
		if g.Level == Exact && shown["earliest_start"] != "" {
			return "Flights must start on or after " + shown["earliest_start"] + "."
		}
		if l := shown["lead_time"]; l != "" {
			return "Flights need " + l + " of lead time."
		}
	case GeoNotServed:
		if m := shown["markets"]; m != "" {
			return "Markets served: " + m + "."
		}
	case FormatNotOffered:
		if f := shown["formats"]; f != "" {
			return "Format kinds offered: " + f + "."
		}
	}
	return ""
}

var countryNames = map[string]string{
	"US": "the United States", "CA": "Canada", "GB": "the United Kingdom",
	"IE": "Ireland", "AU": "Australia", "NZ": "New Zealand", "DE": "Germany",
	"FR": "France", "ES": "Spain", "IT": "Italy", "NL": "the Netherlands",
	"BE": "Belgium", "SE": "Sweden", "NO": "Norway", "DK": "Denmark",
	"FI": "Finland", "MX": "Mexico", "BR": "Brazil", "JP": "Japan",
	"IN": "India", "SG": "Singapore",
}

func countryLabel(code string) string {
	if n, ok := countryNames[code]; ok {
		return n
	}
	return code
}
