package pgstore

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/storefront/storefront/products"
	"github.com/storefront/storefront/store"
)

// SeedProduct writes one product into the principal's seeded catalogue
// under a lock on the catalogue row: a session reset, the version bump and
// the product write happen as one, and concurrent seeds take turns.
func (s *Store) SeedProduct(ctx context.Context, publisher, principal, session string, p products.Product) (_ int64, err error) {
	if err := store.CheckStored(p, principal, session); err != nil {
		return 0, err
	}
	defer wrap(&err, "SeedProduct(%q, %q, %q, %q)", publisher, principal, session, p.ProductID)
	body, err := json.Marshal(p)
	if err != nil {
		return 0, err
	}
	var version int64
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		// The first seed creates the catalogue (a missing publisher fails
		// its foreign key); a concurrent first seed waits for it here.
		if _, err := tx.Exec(ctx, `
			INSERT INTO seeded_catalogues (publisher_id, principal, session, seeded_at) VALUES ($1, $2, $3, $4)
			ON CONFLICT DO NOTHING`, publisher, principal, session, s.now().UTC()); err != nil {
			return err
		}
		var current string
		if err := tx.QueryRow(ctx, `
			SELECT session FROM seeded_catalogues WHERE publisher_id = $1 AND principal = $2 FOR UPDATE`,
			publisher, principal).Scan(&current); err != nil {
			return err
		}
		if current != session {
			if _, err := tx.Exec(ctx, `DELETE FROM seeded_products WHERE publisher_id = $1 AND principal = $2`,
				publisher, principal); err != nil {
				return err
			}
		}
		if err := tx.QueryRow(ctx, `
			UPDATE seeded_catalogues SET session = $3, version = version + 1, seeded_at = $4
			WHERE publisher_id = $1 AND principal = $2
			RETURNING version`, publisher, principal, session, s.now().UTC()).Scan(&version); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `
			INSERT INTO seeded_products (publisher_id, principal, product_id, body) VALUES ($1, $2, $3, $4)
			ON CONFLICT (publisher_id, principal, product_id) DO UPDATE SET body = EXCLUDED.body`,
			publisher, principal, p.ProductID, body)
		return err
	})
	if err != nil {
		return 0, err
	}
	return version, nil
}

// SeededCatalogue reads the products and the version in one statement, so
// they come from one snapshot. No row means nothing seeded, or no such
// publisher: ErrNotFound either way.
func (s *Store) SeededCatalogue(ctx context.Context, publisher, principal string) (_ []products.Product, _ int64, err error) {
	if store.Unkeepable(publisher, principal) {
		return nil, 0, store.ErrNotFound
	}
	defer wrap(&err, "SeededCatalogue(%q, %q)", publisher, principal)
	rows, err := s.pool.Query(ctx, `
		SELECT c.version, p.body
		FROM seeded_catalogues c
		JOIN seeded_products p ON p.publisher_id = c.publisher_id AND p.principal = c.principal
		WHERE c.publisher_id = $1 AND c.principal = $2
		ORDER BY p.position`, publisher, principal)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	var (
		version int64
		out     []products.Product
	)
	for rows.Next() {
		var body []byte
		if err := rows.Scan(&version, &body); err != nil {
			return nil, 0, err
		}
		var p products.Product
		if err := json.Unmarshal(body, &p); err != nil {
			return nil, 0, fmt.Errorf("decoding a seeded product: %w", err)
		}
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, err
	}
	if len(out) == 0 {
		return nil, 0, pgx.ErrNoRows
	}
	return out, version, nil
}
