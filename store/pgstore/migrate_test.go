package pgstore_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"testing"

	"github.com/pressly/goose/v3"

	"github.com/storefront/storefront/demo"
	"github.com/storefront/storefront/store"
	"github.com/storefront/storefront/store/pgstore"
	"github.com/storefront/storefront/store/pgstore/pgtest"
)

// TestHistoryBeginsWithTheCatalogueItFinds: a database from before
// catalogue history (schema version 2) with a catalogue in it is migrated;
// its catalogue becomes the first version of the history, and a later
// edit can be rolled back to it.
func TestHistoryBeginsWithTheCatalogueItFinds(t *testing.T) {
	ctx := context.Background()
	url := pgtest.NewDatabase(t)
	db, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	p, err := goose.NewProvider(goose.DialectPostgres, db, pgstore.Migrations(), goose.WithDisableGlobalRegistry(true))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.DownTo(ctx, 2); err != nil {
		t.Fatalf("migrating down to the schema before history: %v", err)
	}
	settings, _ := json.Marshal(alpha)
	if _, err := db.ExecContext(ctx, `INSERT INTO publishers (id, settings, catalogue_version) VALUES ($1, $2, 7)`, alpha.ID, settings); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO ledger_heads (publisher_id) VALUES ($1)`, alpha.ID); err != nil {
		t.Fatal(err)
	}
	ps := demo.Products()[:3]
	for _, pr := range ps {
		body, _ := json.Marshal(pr)
		if _, err := db.ExecContext(ctx, `INSERT INTO products (publisher_id, product_id, body) VALUES ($1, $2, $3)`, alpha.ID, pr.ProductID, body); err != nil {
			t.Fatal(err)
		}
	}
	if err := pgstore.Migrate(ctx, db, nil); err != nil {
		t.Fatalf("migrating up: %v", err)
	}

	s := pgtest.OpenURL(t, url)
	hist, err := s.CatalogueHistory(ctx, alpha.ID, 0, 0)
	if err != nil || len(hist) != 1 || hist[0].Version != 7 || hist[0].Put != 3 {
		t.Fatalf("the history after the migration = %+v, %v; want version 7 holding the 3 products", hist, err)
	}
	v, err := s.EditCatalogue(ctx, alpha.ID, store.CatalogueEdit{Delete: []string{ps[1].ProductID}, IfMatch: 7})
	if err != nil || v.Version != 8 {
		t.Fatalf("EditCatalogue after the migration = %+v, %v", v, err)
	}
	if _, err := s.RollbackCatalogue(ctx, alpha.ID, 7, 8, "ops"); err != nil {
		t.Fatalf("rolling back to the version the migration found: %v", err)
	}
	got, version, err := s.Catalogue(ctx, alpha.ID)
	if err != nil || version != 9 || len(got) != 3 {
		t.Errorf("after the rollback: %d products at version %d (%v), want 3 at 9", len(got), version, err)
	}
}
