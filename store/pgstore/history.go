package pgstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/jackc/pgx/v5"

	"github.com/storefront/storefront/products"
	"github.com/storefront/storefront/store"
)

var _ store.Catalogues = (*Store)(nil)

// bulkChunk is how many products one statement of a catalogue edit
// carries.
const bulkChunk = 2000

// EditCatalogue implements store.Catalogues.
func (s *Store) EditCatalogue(ctx context.Context, publisher string, e store.CatalogueEdit) (_ store.CatalogueVersion, err error) {
	defer wrap(&err, "EditCatalogue(%q, %d put, %d deleted, %d)", publisher, len(e.Put), len(e.Delete), e.IfMatch)
	return s.editCatalogue(ctx, publisher, e)
}

// editCatalogue writes an edit as one version in one transaction: the
// products and deletions are staged (see applyStage), then applied.
func (s *Store) editCatalogue(ctx context.Context, publisher string, e store.CatalogueEdit) (store.CatalogueVersion, error) {
	if err := errors.Join(store.CheckChange(e.Author, e.Note), store.CheckStored(e.Put, e.Delete)); err != nil {
		return store.CatalogueVersion{}, err
	}
	if err := store.DistinctProducts(e.Put); err != nil {
		return store.CatalogueVersion{}, err
	}
	ids := make([]string, len(e.Put))
	bodies := make([]string, len(e.Put))
	seen := make(map[string]bool, len(e.Put))
	for i, p := range e.Put {
		b, err := json.Marshal(p)
		if err != nil {
			return store.CatalogueVersion{}, err
		}
		ids[i], bodies[i] = p.ProductID, string(b)
		seen[p.ProductID] = true
	}
	for _, id := range e.Delete {
		if seen[id] {
			return store.CatalogueVersion{}, fmt.Errorf("product %q: %w", id, store.ErrDuplicate)
		}
		seen[id] = true
	}
	var v store.CatalogueVersion
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if err := createStage(ctx, tx); err != nil {
			return err
		}
		for lo := 0; lo < len(ids); lo += bulkChunk {
			hi := min(lo+bulkChunk, len(ids))
			if _, err := tx.Exec(ctx, `
				INSERT INTO catalogue_stage (n, product_id, body)
				SELECT $3::bigint + n, id, body FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS t(id, body, n)`,
				ids[lo:hi], bodies[lo:hi], lo); err != nil {
				return err
			}
		}
		if _, err := tx.Exec(ctx, `INSERT INTO catalogue_stage (n, product_id) SELECT 0, unnest($1::text[])`, e.Delete); err != nil {
			return err
		}
		var err error
		if v, err = s.newCatalogueVersion(ctx, tx, publisher, e.IfMatch, e.Author, e.Note); err != nil {
			return err
		}
		if err := s.applyStage(ctx, tx, publisher, &v, false); err != nil {
			return err
		}
		if v.Deleted < int64(len(e.Delete)) {
			// Returning an error rolls the whole edit back.
			return store.ErrNotFound
		}
		return nil
	})
	return v, err
}

// createStage makes the transaction's staging table: the products a write
// puts, in order (n), and the ids it deletes (body NULL).
func createStage(ctx context.Context, tx pgx.Tx) error {
	_, err := tx.Exec(ctx, `CREATE TEMPORARY TABLE catalogue_stage (n bigint NOT NULL, product_id text NOT NULL, body text) ON COMMIT DROP`)
	return err
}

// applyStage applies the staged write as version v, and records each
// product it changes: deletions (and, with replace, every product the
// stage does not name), then puts whose body differs from the stored one,
// then the products themselves. New products take positions in stage
// order; replaced ones keep theirs. A product put with the body it
// already has is not a change.
func (s *Store) applyStage(ctx context.Context, tx pgx.Tx, publisher string, v *store.CatalogueVersion, replace bool) error {
	if _, err := tx.Exec(ctx, `CREATE INDEX ON catalogue_stage (product_id); ANALYZE catalogue_stage`); err != nil {
		return err
	}
	tag, err := tx.Exec(ctx, `
		WITH gone AS (
			DELETE FROM products p WHERE p.publisher_id = $1 AND (
				EXISTS (SELECT 1 FROM catalogue_stage s WHERE s.product_id = p.product_id AND s.body IS NULL)
				OR ($3 AND NOT EXISTS (SELECT 1 FROM catalogue_stage s WHERE s.product_id = p.product_id)))
			RETURNING p.product_id)
		INSERT INTO catalogue_changes (publisher_id, product_id, version, body)
		SELECT $1, product_id, $2, NULL FROM gone`, publisher, v.Version, replace)
	if err != nil {
		return err
	}
	v.Deleted = tag.RowsAffected()
	if tag, err = tx.Exec(ctx, `
		INSERT INTO catalogue_changes (publisher_id, product_id, version, body)
		SELECT $1, s.product_id, $2, s.body::json FROM catalogue_stage s
		LEFT JOIN products p ON p.publisher_id = $1 AND p.product_id = s.product_id
		WHERE s.body IS NOT NULL AND (p.body IS NULL OR p.body::text <> s.body)`, publisher, v.Version); err != nil {
		return err
	}
	v.Put = tag.RowsAffected()
	if _, err := tx.Exec(ctx, `
		INSERT INTO products (publisher_id, product_id, body)
		SELECT $1, product_id, body::json FROM catalogue_stage WHERE body IS NOT NULL ORDER BY n
		ON CONFLICT (publisher_id, product_id) DO UPDATE SET body = EXCLUDED.body
		WHERE products.body::text <> EXCLUDED.body::text`, publisher); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `
		UPDATE catalogue_versions SET products_put = $3, products_deleted = $4
		WHERE publisher_id = $1 AND version = $2`, publisher, v.Version, v.Put, v.Deleted); err != nil {
		return err
	}
	return notify(ctx, tx, publisher)
}

// newCatalogueVersion advances the catalogue version (the If-Match check)
// and inserts its row, with counts to be filled in by
// finishCatalogueVersion in the same transaction.
func (s *Store) newCatalogueVersion(ctx context.Context, tx pgx.Tx, publisher string, ifMatch int64, author, note string) (store.CatalogueVersion, error) {
	version, err := bumpCatalogue(ctx, tx, publisher, ifMatch)
	if err != nil {
		return store.CatalogueVersion{}, err
	}
	v := store.CatalogueVersion{Version: version, Author: author, Note: note}
	if err := tx.QueryRow(ctx, `
		INSERT INTO catalogue_versions (publisher_id, version, author, note, created_at)
		VALUES ($1, $2, $3, $4, $5) RETURNING created_at`,
		publisher, version, author, note, s.now().UTC()).Scan(&v.CreatedAt); err != nil {
		return store.CatalogueVersion{}, err
	}
	v.CreatedAt = v.CreatedAt.UTC()
	return v, nil
}

// importSource feeds an import's products to COPY one at a time, so the
// import is never held in memory whole: pgx sends the rows in buffers of
// about 64 KiB as it reads them.
type importSource struct {
	next func() (products.Product, error)
	seen map[string]struct{}
	n    int64
	row  []any
	err  error
}

func (src *importSource) Next() bool {
	p, err := src.next()
	if errors.Is(err, io.EOF) {
		return false
	}
	if err == nil {
		err = store.CheckStored(p)
	}
	if err == nil {
		if _, dup := src.seen[p.ProductID]; dup {
			err = fmt.Errorf("product %q: %w", p.ProductID, store.ErrDuplicate)
		}
	}
	var body []byte
	if err == nil {
		body, err = json.Marshal(p)
	}
	if err != nil {
		src.err = err
		return false
	}
	src.seen[p.ProductID] = struct{}{}
	src.n++
	src.row = []any{src.n, p.ProductID, string(body)}
	return true
}

func (src *importSource) Values() ([]any, error) { return src.row, nil }
func (src *importSource) Err() error             { return src.err }

// ImportCatalogue implements store.Catalogues. The products stream into the
// staging table by COPY inside the transaction; once the stream ends
// the catalogue is changed by a few set-wise statements and the version
// is taken, so the publisher row is locked only for that last part, not
// for the upload. A stale If-Match fails before the stream is read and
// again, decisively, at the end.
func (s *Store) ImportCatalogue(ctx context.Context, publisher string, opts store.CatalogueImport, next func() (products.Product, error)) (_ store.CatalogueVersion, err error) {
	if err := store.CheckChange(opts.Author, opts.Note); err != nil {
		return store.CatalogueVersion{}, err
	}
	defer wrap(&err, "ImportCatalogue(%q, replace=%v, %d)", publisher, opts.Replace, opts.IfMatch)
	vs, err := s.Versions(ctx, publisher)
	if err != nil {
		return store.CatalogueVersion{}, err
	}
	if opts.IfMatch != 0 && opts.IfMatch != vs.Catalogue {
		return store.CatalogueVersion{}, store.ErrConflict
	}
	var v store.CatalogueVersion
	src := &importSource{next: next, seen: map[string]struct{}{}}
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if err := createStage(ctx, tx); err != nil {
			return err
		}
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{"catalogue_stage"}, []string{"n", "product_id", "body"}, src); err != nil {
			if src.err != nil {
				return src.err
			}
			return err
		}
		var err error
		if v, err = s.newCatalogueVersion(ctx, tx, publisher, opts.IfMatch, opts.Author, opts.Note); err != nil {
			return err
		}
		return s.applyStage(ctx, tx, publisher, &v, opts.Replace)
	})
	return v, err
}

const catalogueVersionColumns = `version, created_at, author, note, products_put, products_deleted`

func scanCatalogueVersion(row pgx.CollectableRow) (store.CatalogueVersion, error) {
	var v store.CatalogueVersion
	err := row.Scan(&v.Version, &v.CreatedAt, &v.Author, &v.Note, &v.Put, &v.Deleted)
	v.CreatedAt = v.CreatedAt.UTC()
	return v, err
}

// CatalogueHistory implements store.Catalogues.
func (s *Store) CatalogueHistory(ctx context.Context, publisher string, before int64, limit int) (_ []store.CatalogueVersion, err error) {
	defer wrap(&err, "CatalogueHistory(%q, %d, %d)", publisher, before, limit)
	if limit <= 0 {
		limit = 1 << 30
	}
	out, err := listScoped(ctx, s, publisher, scanCatalogueVersion, `
		SELECT `+catalogueVersionColumns+` FROM catalogue_versions
		WHERE publisher_id = $1 AND ($2::bigint <= 0 OR version < $2)
		ORDER BY version DESC LIMIT $3`, publisher, before, limit)
	if out == nil && err == nil {
		out = []store.CatalogueVersion{}
	}
	return out, err
}

// requireCatalogueVersions returns ErrNotFound unless every version is in
// the history.
func requireCatalogueVersions(ctx context.Context, q querier, publisher string, versions ...int64) error {
	for _, v := range versions {
		var ok bool
		if err := q.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM catalogue_versions WHERE publisher_id = $1 AND version = $2)`,
			publisher, v).Scan(&ok); err != nil {
			return err
		}
		if !ok {
			return store.ErrNotFound
		}
	}
	return nil
}

// stateAt is the SQL for a product's body at a version: its newest change
// at or below it (NULL when there is none or that change deleted it).
const stateAt = `(SELECT c.body::text FROM catalogue_changes c
	WHERE c.publisher_id = $1 AND c.product_id = ids.product_id AND c.version <= %s
	ORDER BY c.version DESC LIMIT 1)`

func decodeProduct(body *string) (*products.Product, error) {
	if body == nil {
		return nil, nil
	}
	var p products.Product
	if err := json.Unmarshal([]byte(*body), &p); err != nil {
		return nil, fmt.Errorf("decoding a product of the history: %w", err)
	}
	return &p, nil
}

// CatalogueDiff implements store.Catalogues.
func (s *Store) CatalogueDiff(ctx context.Context, publisher string, from, to int64, limit int) (_ []store.ProductChange, _ int, err error) {
	defer wrap(&err, "CatalogueDiff(%q, %d, %d)", publisher, from, to)
	if err := requirePublisher(ctx, s.pool, publisher); err != nil {
		return nil, 0, err
	}
	if err := requireCatalogueVersions(ctx, s.pool, publisher, from, to); err != nil {
		return nil, 0, err
	}
	if limit <= 0 {
		limit = 1 << 30
	}
	rows, err := s.pool.Query(ctx, `
		WITH ids AS (
			SELECT DISTINCT product_id FROM catalogue_changes
			WHERE publisher_id = $1 AND version > least($2::bigint, $3::bigint) AND version <= greatest($2::bigint, $3::bigint)),
		states AS (
			SELECT ids.product_id, `+fmt.Sprintf(stateAt, "$2")+` AS before, `+fmt.Sprintf(stateAt, "$3")+` AS after FROM ids)
		SELECT product_id, before, after, count(*) OVER () FROM states
		WHERE before IS DISTINCT FROM after
		ORDER BY product_id COLLATE "C" LIMIT $4`, publisher, from, to, limit)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	out := []store.ProductChange{}
	total := 0
	for rows.Next() {
		var (
			id            string
			before, after *string
		)
		if err := rows.Scan(&id, &before, &after, &total); err != nil {
			return nil, 0, err
		}
		c := store.ProductChange{ProductID: id}
		if c.Before, err = decodeProduct(before); err != nil {
			return nil, 0, err
		}
		if c.After, err = decodeProduct(after); err != nil {
			return nil, 0, err
		}
		out = append(out, c)
	}
	return out, total, rows.Err()
}

// RollbackCatalogue implements store.Catalogues: every product changed
// after version to goes back to its state at to, as one new version.
func (s *Store) RollbackCatalogue(ctx context.Context, publisher string, to, ifMatch int64, author string) (_ store.CatalogueVersion, err error) {
	if err := store.CheckChange(author, ""); err != nil {
		return store.CatalogueVersion{}, err
	}
	defer wrap(&err, "RollbackCatalogue(%q, %d, %d)", publisher, to, ifMatch)
	var v store.CatalogueVersion
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var err error
		if v, err = s.newCatalogueVersion(ctx, tx, publisher, ifMatch, author, fmt.Sprintf("rollback to version %d", to)); err != nil {
			return err
		}
		if err := requireCatalogueVersions(ctx, tx, publisher, to); err != nil {
			return err
		}
		if err := createStage(ctx, tx); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `
			INSERT INTO catalogue_stage (n, product_id, body)
			SELECT row_number() OVER (ORDER BY ids.product_id COLLATE "C"), ids.product_id, `+fmt.Sprintf(stateAt, "$2")+`
			FROM (SELECT DISTINCT product_id FROM catalogue_changes WHERE publisher_id = $1 AND version > $2) ids`,
			publisher, to); err != nil {
			return err
		}
		return s.applyStage(ctx, tx, publisher, &v, false)
	})
	return v, err
}

// WalkCatalogue implements store.Catalogues: one statement, its rows read
// as they arrive, so the products and the version come from one snapshot
// and are never all in memory.
func (s *Store) WalkCatalogue(ctx context.Context, publisher string, fn func(products.Product) error) (_ int64, err error) {
	defer wrap(&err, "WalkCatalogue(%q)", publisher)
	return s.walkCatalogue(ctx, publisher, fn)
}

func (s *Store) walkCatalogue(ctx context.Context, publisher string, fn func(products.Product) error) (int64, error) {
	rows, err := s.pool.Query(ctx, `
		SELECT p.catalogue_version, pr.body
		FROM publishers p LEFT JOIN products pr ON pr.publisher_id = p.id
		WHERE p.id = $1
		ORDER BY pr.position`, publisher)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	var (
		version int64
		found   bool
	)
	for rows.Next() {
		var body []byte
		if err := rows.Scan(&version, &body); err != nil {
			return 0, err
		}
		found = true
		if body == nil {
			continue
		}
		var p products.Product
		if err := json.Unmarshal(body, &p); err != nil {
			return 0, fmt.Errorf("decoding a product: %w", err)
		}
		if err := fn(p); err != nil {
			return version, err
		}
	}
	if err := rows.Err(); err != nil {
		return 0, err
	}
	if !found {
		return 0, store.ErrNotFound
	}
	return version, nil
}
