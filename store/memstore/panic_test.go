package memstore_test

import (
	"context"
	"io"
	"sync/atomic"
	"testing"
	"time"

	"github.com/storefront/storefront/demo"
	"github.com/storefront/storefront/products"
	"github.com/storefront/storefront/store"
	"github.com/storefront/storefront/store/memstore"
)

// TestLockReleasedAfterAPanic makes each write that reads the clock (or
// clones) while it holds the store's lock panic there, recovers, as every
// entry point of the program does, and checks the store still answers: a
// lock a panic left held would stop every later call on every publisher.
func TestLockReleasedAfterAPanic(t *testing.T) {
	ctx := context.Background()
	prod := demo.Products()[0]
	for _, test := range []struct {
		name  string
		write func(s *memstore.Store) error
	}{
		{"SaveRulebook", func(s *memstore.Store) error {
			_, err := s.SaveRulebook(ctx, demo.PublisherID, demo.Rulebook(), 1, "test", "")
			return err
		}},
		{"EditCatalogue", func(s *memstore.Store) error {
			_, err := s.EditCatalogue(ctx, demo.PublisherID, store.CatalogueEdit{Put: []products.Product{prod}, Author: "test"})
			return err
		}},
		{"ImportCatalogue", func(s *memstore.Store) error {
			done := false
			_, err := s.ImportCatalogue(ctx, demo.PublisherID, store.CatalogueImport{Author: "test"}, func() (products.Product, error) {
				if done {
					return products.Product{}, io.EOF
				}
				done = true
				return prod, nil
			})
			return err
		}},
		{"RollbackCatalogue", func(s *memstore.Store) error {
			_, err := s.RollbackCatalogue(ctx, demo.PublisherID, 1, 0, "test")
			return err
		}},
	} {
		t.Run(test.name, func(t *testing.T) {
			s := memstore.New()
			if err := demo.Seed(ctx, s, demo.Written); err != nil {
				t.Fatal(err)
			}
			var armed atomic.Bool
			s.SetClock(func() time.Time {
				if armed.Load() {
					panic("the clock failed")
				}
				return demo.Written
			})
			armed.Store(true)
			func() {
				defer func() { _ = recover() }()
				_ = test.write(s)
			}()
			armed.Store(false)
			answered := make(chan error, 1)
			go func() {
				_, err := s.Versions(ctx, demo.PublisherID)
				answered <- err
			}()
			select {
			case err := <-answered:
				if err != nil {
					t.Errorf("Versions after a recovered panic in %s = %v", test.name, err)
				}
			case <-time.After(5 * time.Second):
				t.Fatalf("the store still holds its lock 5s after a panic in %s was recovered", test.name)
			}
			if err := test.write(s); err != nil {
				t.Errorf("%s again, with the clock back = %v", test.name, err)
			}
		})
	}
}
