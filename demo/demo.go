// Package demo holds the demo publisher embedded in the binary: Northwind
// Media, its catalogue and its merchandising rulebook. The embedded default
// (`go run ./cmd/storefront`) serves it from the in-memory store, and tests
// use it as a realistic fixture. Its rule ids, names and notes are
// confidential data the screen must keep in, like any publisher's.
package demo

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"time"

	"github.com/storefront/storefront/adcp"
	"github.com/storefront/storefront/merch"
	"github.com/storefront/storefront/products"
	"github.com/storefront/storefront/store"
)

var (
	//go:embed products.json
	productsJSON []byte
	//go:embed rulebook.json
	rulebookJSON []byte
	//go:embed publisher.json
	publisherJSON []byte
)

// PublisherID is the demo publisher's id.
const PublisherID = "northwind"

// Publisher returns the demo publisher.
func Publisher() products.Publisher {
	var p products.Publisher
	mustDecode(publisherJSON, &p)
	return p
}

// Written is the day the demo's dates are written from: the holiday CTV
// sellout starts 19 days after it, the holiday CTV package is on sale
// from 14 days before it. Rulebook and Products return the dates as
// written (for fixtures pinned to this day); Seed moves them all by the
// days from Written to the day it seeds, so that the demo answers the
// same on any day.
var Written = time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)

// Products returns the demo catalogue, its dates as written.
func Products() []products.Product {
	var ps []products.Product
	mustDecode(productsJSON, &ps)
	return ps
}

// ProductsOn is the demo catalogue with its dates moved to day (see
// Written).
func ProductsOn(day time.Time) []products.Product {
	n := daysFromWritten(day)
	ps := Products()
	for i := range ps {
		for j, w := range ps[i].Availability {
			ps[i].Availability[j] = adcp.DateRange{Start: w.Start.AddDays(n), End: w.End.AddDays(n)}
		}
	}
	return ps
}

// RulebookOn is the demo rulebook with its dates moved to day (see
// Written).
func RulebookOn(day time.Time) merch.Rulebook {
	n := daysFromWritten(day)
	rb := Rulebook()
	for i := range rb.Rules {
		for j, w := range rb.Rules[i].When.SoldOut {
			w.Start, w.End = w.Start.AddDays(n), w.End.AddDays(n)
			rb.Rules[i].When.SoldOut[j] = w
		}
	}
	return rb
}

func daysFromWritten(day time.Time) int { return adcp.DateOf(Written).DaysUntil(adcp.DateOf(day)) }

// Rulebook returns the demo rulebook, its dates as written.
func Rulebook() merch.Rulebook {
	var rb merch.Rulebook
	mustDecode(rulebookJSON, &rb)
	return rb
}

func mustDecode(b []byte, v any) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		panic(fmt.Sprintf("demo data does not decode: %v", err))
	}
}

// Seed loads the demo publisher into s, unless it is already there, with
// its dates moved to the day of now (see Written). It validates
// everything it loads, as the admin API would.
func Seed(ctx context.Context, s store.Content, now time.Time) error {
	if _, err := s.Publisher(ctx, PublisherID); err == nil {
		return nil
	}
	if err := s.PutPublisher(ctx, Publisher()); err != nil {
		return err
	}
	for _, p := range ProductsOn(now) {
		if err := p.Validate(); err != nil {
			return fmt.Errorf("demo product %s: %w", p.ProductID, err)
		}
		if _, err := s.PutProduct(ctx, PublisherID, p, 0); err != nil {
			return err
		}
	}
	rb := RulebookOn(now)
	if err := rb.Validate(); err != nil {
		return fmt.Errorf("demo rulebook: %w", err)
	}
	_, err := s.SaveRulebook(ctx, PublisherID, rb, 0, "demo", "demo rulebook")
	return err
}
