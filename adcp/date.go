package adcp

import (
	"encoding/json"
	"fmt"
	"time"
)

// Date is a calendar date with no time zone, as AdCP writes flight dates
// (YYYY-MM-DD). The zero Date is "no date".
type Date struct{ t time.Time }

const dateLayout = "2006-01-02"

// ParseDate parses YYYY-MM-DD.
func ParseDate(s string) (Date, error) {
	t, err := time.Parse(dateLayout, s)
	if err != nil {
		return Date{}, fmt.Errorf("%q is not a date in YYYY-MM-DD form", s)
	}
	return Date{t}, nil
}

// MustDate parses s or panics; for literals in tests and seed data.
func MustDate(s string) Date {
	d, err := ParseDate(s)
	if err != nil {
		panic(err)
	}
	return d
}

// DateOf returns the calendar date of t in UTC.
func DateOf(t time.Time) Date {
	y, m, d := t.UTC().Date()
	return Date{time.Date(y, m, d, 0, 0, 0, 0, time.UTC)}
}

// IsZero reports whether d is the zero Date.
func (d Date) IsZero() bool { return d.t.IsZero() }

// String formats d as YYYY-MM-DD, or "" for the zero Date.
func (d Date) String() string {
	if d.IsZero() {
		return ""
	}
	return d.t.Format(dateLayout)
}

// AddDays returns d moved by n days.
func (d Date) AddDays(n int) Date { return Date{d.t.AddDate(0, 0, n)} }

// Before reports whether d is strictly before e.
func (d Date) Before(e Date) bool { return d.t.Before(e.t) }

// After reports whether d is strictly after e.
func (d Date) After(e Date) bool { return d.t.After(e.t) }

// DaysUntil returns the number of days from d to e (negative if e is earlier).
func (d Date) DaysUntil(e Date) int { return int(e.t.Sub(d.t).Hours() / 24) }

// Time returns midnight UTC on d.
func (d Date) Time() time.Time { return d.t }

// MarshalJSON encodes d as "YYYY-MM-DD".
func (d Date) MarshalJSON() ([]byte, error) { return json.Marshal(d.String()) }

// UnmarshalJSON decodes "YYYY-MM-DD".
func (d *Date) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("a date must be a string in YYYY-MM-DD form")
	}
	p, err := ParseDate(s)
	if err != nil {
		return err
	}
	*d = p
	return nil
}

// DateRange is an inclusive range of dates.
type DateRange struct {
	Start Date `json:"start"`
	End   Date `json:"end"`
}

// Overlaps reports whether r and o share at least one day.
func (r DateRange) Overlaps(o DateRange) bool {
	return !r.End.Before(o.Start) && !o.End.Before(r.Start)
}

// Days is the number of days in r, counting both ends.
func (r DateRange) Days() int { return r.Start.DaysUntil(r.End) + 1 }
