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

// Products returns the demo catalogue.
func Products() []products.Product {
	var ps []products.Product
	mustDecode(productsJSON, &ps)
	return ps
}

// Rulebook returns the demo rulebook.
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

// Seed loads the demo publisher into s, unless it is already there. It
// validates everything it loads, as the admin API would.
func Seed(ctx context.Context, s store.Store) error {
	if _, err := s.Publisher(ctx, PublisherID); err == nil {
		return nil
	}
	if err := s.PutPublisher(ctx, Publisher()); err != nil {
		return err
	}
	for _, p := range Products() {
		if err := p.Validate(); err != nil {
			return fmt.Errorf("demo product %s: %w", p.ProductID, err)
		}
		if _, err := s.PutProduct(ctx, PublisherID, p, 0); err != nil {
			return err
		}
	}
	rb := Rulebook()
	if err := rb.Validate(); err != nil {
		return fmt.Errorf("demo rulebook: %w", err)
	}
	_, err := s.SaveRulebook(ctx, PublisherID, rb, 0, "demo", "demo rulebook")
	return err
}
