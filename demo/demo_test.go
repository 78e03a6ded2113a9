package demo_test

import (
	"testing"
	"time"

	"github.com/storefront/storefront/demo"
	"github.com/storefront/storefront/store/memstore"
)

// TestSeedMovesTheDates: seeded on any day, the demo's dates keep their
// distance from that day (the holiday sellout starts 19 days after it),
// and seeded on demo.Written they are the dates as written.
func TestSeedMovesTheDates(t *testing.T) {
	written := demo.Rulebook().Rules[2].When.SoldOut[0]
	if written.Start.String() != "2026-12-18" {
		t.Fatalf("the demo's holiday sellout is written from %s, want 2026-12-18: the test follows the demo", written.Start)
	}
	for _, day := range []time.Time{demo.Written, demo.Written.AddDate(7, 3, 1), demo.Written.AddDate(-2, 0, -40)} {
		s := memstore.New()
		if err := demo.Seed(t.Context(), s, day.Add(15*time.Hour)); err != nil {
			t.Fatal(err)
		}
		rv, err := s.Rulebook(t.Context(), demo.PublisherID)
		if err != nil {
			t.Fatal(err)
		}
		sold := rv.Rulebook.Rules[2].When.SoldOut[0]
		if want := day.AddDate(0, 0, 19).Format("2006-01-02"); sold.Start.String() != want || sold.Start.DaysUntil(sold.End) != written.Start.DaysUntil(written.End) {
			t.Errorf("seeded on %s: the sellout is %s to %s, want it from %s for as long as written", day.Format("2006-01-02"), sold.Start, sold.End, want)
		}
		cat, _, err := s.Catalogue(t.Context(), demo.PublisherID)
		if err != nil {
			t.Fatal(err)
		}
		moved := 0
		for _, p := range cat {
			for _, w := range p.Availability {
				if want := day.AddDate(0, 0, -14).Format("2006-01-02"); w.Start.String() != want {
					t.Errorf("seeded on %s: %s is available from %s, want %s", day.Format("2006-01-02"), p.ProductID, w.Start, want)
				}
				moved++
			}
		}
		if moved == 0 {
			t.Error("no demo product has an availability window: the test follows the demo")
		}
	}
}
