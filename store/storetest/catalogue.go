package storetest

import (
	"errors"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/storefront/storefront/products"
	"github.com/storefront/storefront/store"
)

func productIDs(ps []products.Product) []string {
	ids := make([]string, len(ps))
	for i, p := range ps {
		ids[i] = p.ProductID
	}
	return ids
}

// wantCatalogue fails unless the publisher's catalogue is want, in order,
// at version.
func wantCatalogue(t *testing.T, s store.Store, publisher string, want []products.Product, version int64) {
	t.Helper()
	got, v, err := s.Catalogue(t.Context(), publisher)
	wantErr(t, fmt.Sprintf("Catalogue(%q)", publisher), err, nil)
	if v != version {
		t.Errorf("Catalogue(%q) version = %d, want %d", publisher, v, version)
	}
	sameJSON(t, fmt.Sprintf("Catalogue(%q) products %v", publisher, productIDs(got)), got, want)
	vs, err := s.Versions(t.Context(), publisher)
	wantErr(t, fmt.Sprintf("Versions(%q)", publisher), err, nil)
	if vs.Catalogue != version {
		t.Errorf("Versions(%q).Catalogue = %d, want %d", publisher, vs.Catalogue, version)
	}
}

func testCatalogue(t *testing.T, s store.Store) {
	ctx := t.Context()
	withPublishers(t, s)
	ps := demoProducts(t, 3)
	put := func(p products.Product, ifMatch, want int64) {
		t.Helper()
		v, err := s.PutProduct(ctx, alpha.ID, p, ifMatch)
		wantErr(t, fmt.Sprintf("PutProduct(%q, ifMatch=%d)", p.ProductID, ifMatch), err, nil)
		if v != want {
			t.Fatalf("PutProduct(%q, ifMatch=%d) = version %d, want %d", p.ProductID, ifMatch, v, want)
		}
	}
	put(ps[0], 0, 1)
	put(ps[1], 0, 2)
	put(ps[2], 2, 3) // If-Match on the current version
	wantCatalogue(t, s, alpha.ID, ps, 3)

	// Replacing a product keeps its place in the catalogue.
	renamed := ps[0]
	renamed.Name = "Run-of-Site MREC (renamed)"
	renamed.Channels = append([]string(nil), renamed.Channels...)
	put(renamed, 3, 4)
	want := []products.Product{renamed, ps[1], ps[2]}
	wantCatalogue(t, s, alpha.ID, want, 4)

	// A stale or future If-Match changes nothing.
	changed := ps[1]
	changed.Name = "never saved"
	for _, ifMatch := range []int64{3, 99} {
		_, err := s.PutProduct(ctx, alpha.ID, changed, ifMatch)
		wantErr(t, fmt.Sprintf("PutProduct(ifMatch=%d) at version 4", ifMatch), err, store.ErrConflict)
		_, err = s.DeleteProduct(ctx, alpha.ID, ps[1].ProductID, ifMatch)
		wantErr(t, fmt.Sprintf("DeleteProduct(ifMatch=%d) at version 4", ifMatch), err, store.ErrConflict)
	}
	_, err := s.DeleteProduct(ctx, alpha.ID, "no-such-product", 0)
	wantErr(t, "DeleteProduct(missing)", err, store.ErrNotFound)
	_, err = s.DeleteProduct(ctx, alpha.ID, "no-such-product", 4)
	wantErr(t, "DeleteProduct(missing, ifMatch=4)", err, store.ErrNotFound)
	wantCatalogue(t, s, alpha.ID, want, 4)

	v, err := s.DeleteProduct(ctx, alpha.ID, ps[1].ProductID, 4)
	wantErr(t, "DeleteProduct(ifMatch=4)", err, nil)
	if v != 5 {
		t.Fatalf("DeleteProduct(ifMatch=4) = version %d, want 5", v)
	}
	wantCatalogue(t, s, alpha.ID, []products.Product{renamed, ps[2]}, 5)
	_, err = s.DeleteProduct(ctx, alpha.ID, ps[1].ProductID, 0)
	wantErr(t, "DeleteProduct(already deleted)", err, store.ErrNotFound)

	// A product added back goes to the end.
	put(ps[1], 0, 6)
	wantCatalogue(t, s, alpha.ID, []products.Product{renamed, ps[2], ps[1]}, 6)

	// What a read returns is the caller's: changing it changes nothing
	// stored.
	got, _, err := s.Catalogue(ctx, alpha.ID)
	wantErr(t, "Catalogue(alpha)", err, nil)
	got[0].Name = "scribbled"
	got[0].Channels[0] = "scribbled"
	wantCatalogue(t, s, alpha.ID, []products.Product{renamed, ps[2], ps[1]}, 6)

	// Rulebook saves do not move the catalogue version, and other
	// publishers' catalogues are their own.
	if _, err := s.SaveRulebook(ctx, alpha.ID, rulebook("Alpha", 2), 0, "test", ""); err != nil {
		t.Fatal(err)
	}
	wantCatalogue(t, s, alpha.ID, []products.Product{renamed, ps[2], ps[1]}, 6)
	wantCatalogue(t, s, beta.ID, []products.Product{}, 0)
}

// testBulkCatalogue: a bulk load is one version, keeps the given order,
// replaces in place, and is all or nothing.
func testBulkCatalogue(t *testing.T, s store.Store) {
	bulk, ok := s.(store.BulkCatalogue)
	if !ok {
		t.Fatalf("%T has no bulk load: every store implements store.BulkCatalogue", s)
	}
	ctx := t.Context()
	withPublishers(t, s)
	ps := demoProducts(t, 6)
	if _, err := s.PutProduct(ctx, alpha.ID, ps[2], 0); err != nil {
		t.Fatal(err)
	}
	renamed := ps[2]
	renamed.Name = "Replaced in bulk"
	v, err := bulk.PutProducts(ctx, alpha.ID, []products.Product{ps[0], renamed, ps[1], ps[3]}, 1)
	wantErr(t, "PutProducts(ifMatch=1)", err, nil)
	if v != 2 {
		t.Fatalf("PutProducts = version %d, want 2", v)
	}
	want := []products.Product{renamed, ps[0], ps[1], ps[3]}
	wantCatalogue(t, s, alpha.ID, want, 2)

	// A stale If-Match, a duplicate id or an unknown publisher changes
	// nothing.
	_, err = bulk.PutProducts(ctx, alpha.ID, []products.Product{ps[4]}, 1)
	wantErr(t, "PutProducts(stale ifMatch)", err, store.ErrConflict)
	_, err = bulk.PutProducts(ctx, alpha.ID, []products.Product{ps[4], ps[5], ps[4]}, 0)
	wantErr(t, "PutProducts(duplicate id)", err, store.ErrDuplicate)
	_, err = bulk.PutProducts(ctx, "nobody", []products.Product{ps[4]}, 0)
	wantErr(t, "PutProducts(unknown publisher)", err, store.ErrNotFound)
	wantCatalogue(t, s, alpha.ID, want, 2)

	// Many products in one go, across the chunks a store may split them
	// into.
	many := make([]products.Product, 4500)
	for i := range many {
		many[i] = ps[i%len(ps)]
		many[i].ProductID = fmt.Sprintf("bulk_%05d", i)
	}
	v, err = bulk.PutProducts(ctx, beta.ID, many, 0)
	wantErr(t, "PutProducts(4500)", err, nil)
	wantCatalogue(t, s, beta.ID, many, v)
	if v != 1 {
		t.Errorf("4500 products in one load made version %d, want 1", v)
	}
}

// testCatalogueConcurrentIfMatch: writers that all read the same version
// and write with it as If-Match: exactly one wins; the rest conflict and
// leave no trace.
func testCatalogueConcurrentIfMatch(t *testing.T, s store.Store) {
	ctx := t.Context()
	withPublishers(t, s)
	ps := demoProducts(t, 9)
	if _, err := s.PutProduct(ctx, alpha.ID, ps[8], 0); err != nil {
		t.Fatal(err)
	}
	for round := range 3 {
		_, v, err := s.Catalogue(ctx, alpha.ID)
		wantErr(t, "Catalogue(alpha)", err, nil)
		var (
			wins, conflicts atomic.Int32
			winner          atomic.Int32
			errs            = make(chan error, 8)
		)
		parallel(8, func(i int) {
			p := ps[i]
			p.ProductID = fmt.Sprintf("%s-r%d", p.ProductID, round)
			got, err := s.PutProduct(ctx, alpha.ID, p, v)
			switch {
			case err == nil:
				wins.Add(1)
				winner.Store(int32(i))
				if got != v+1 {
					errs <- fmt.Errorf("winning PutProduct = version %d, want %d", got, v+1)
				}
			case errors.Is(err, store.ErrConflict):
				conflicts.Add(1)
			default:
				errs <- err
			}
		})
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		if wins.Load() != 1 || conflicts.Load() != 7 {
			t.Fatalf("round %d: 8 writers with If-Match %d: %d won and %d conflicted, want 1 and 7", round, v, wins.Load(), conflicts.Load())
		}
		cat, nv, err := s.Catalogue(ctx, alpha.ID)
		wantErr(t, "Catalogue(alpha)", err, nil)
		if nv != v+1 {
			t.Errorf("round %d: catalogue version = %d, want %d", round, nv, v+1)
		}
		wantID := fmt.Sprintf("%s-r%d", ps[winner.Load()].ProductID, round)
		if last := cat[len(cat)-1].ProductID; last != wantID || len(cat) != round+2 {
			t.Errorf("round %d: catalogue = %v, want %d products ending with the winner %s", round, productIDs(cat), round+2, wantID)
		}
	}
}

// testCatalogueConcurrentWriters: unconditional writers never lose an
// update: every write gets its own version and every product is kept.
func testCatalogueConcurrentWriters(t *testing.T, s store.Store) {
	ctx := t.Context()
	withPublishers(t, s)
	base := demoProducts(t, 1)[0]
	const writers, each = 8, 5
	versions := make([][]int64, writers)
	parallel(writers, func(w int) {
		for j := range each {
			p := base
			p.ProductID = fmt.Sprintf("w%d-p%d", w, j)
			v, err := s.PutProduct(ctx, alpha.ID, p, 0)
			if err != nil {
				t.Errorf("PutProduct(%s) = %v", p.ProductID, err)
				return
			}
			versions[w] = append(versions[w], v)
		}
	})
	seen := map[int64]bool{}
	for _, vs := range versions {
		for _, v := range vs {
			if seen[v] {
				t.Errorf("two writes got catalogue version %d", v)
			}
			seen[v] = true
		}
	}
	cat, v, err := s.Catalogue(ctx, alpha.ID)
	wantErr(t, "Catalogue(alpha)", err, nil)
	if v != writers*each || len(cat) != writers*each {
		t.Errorf("after %d concurrent writes: %d products at version %d, want %d at %d", writers*each, len(cat), v, writers*each, writers*each)
	}
	// Each writer's products appear in the order it wrote them.
	pos := map[string]int{}
	for i, p := range cat {
		pos[p.ProductID] = i
	}
	for w := range writers {
		for j := 1; j < each; j++ {
			a, b := fmt.Sprintf("w%d-p%d", w, j-1), fmt.Sprintf("w%d-p%d", w, j)
			if pos[a] >= pos[b] {
				t.Errorf("catalogue order puts %s (at %d) after %s (at %d), which was written later", a, pos[a], b, pos[b])
			}
		}
	}
}

func testRulebooks(t *testing.T, s store.Store) {
	ctx := t.Context()
	withPublishers(t, s)
	_, err := s.Rulebook(ctx, alpha.ID)
	wantErr(t, "Rulebook(alpha) with none saved", err, store.ErrNotFound)
	_, err = s.RulebookAt(ctx, alpha.ID, 1)
	wantErr(t, "RulebookAt(alpha, 1) with none saved", err, store.ErrNotFound)
	hist, err := s.RulebookHistory(ctx, alpha.ID)
	wantErr(t, "RulebookHistory(alpha)", err, nil)
	if len(hist) != 0 {
		t.Fatalf("RulebookHistory(alpha) with none saved = %d versions, want 0", len(hist))
	}

	// The first save must say there is none yet.
	_, err = s.SaveRulebook(ctx, alpha.ID, rulebook("Alpha v0", 1), 1, "mallory", "")
	wantErr(t, "SaveRulebook(ifMatch=1) with none saved", err, store.ErrConflict)
	wantRulebookVersion(t, s, alpha.ID, 0)

	rb1, rb2 := rulebook("Alpha v1", 3), rulebook("Alpha v2", 1)
	before := now(t, s)
	v1, err := s.SaveRulebook(ctx, alpha.ID, rb1, 0, "alice", "first draft")
	wantErr(t, "SaveRulebook(ifMatch=0)", err, nil)
	if v1.Version != 1 || v1.Author != "alice" || v1.Note != "first draft" {
		t.Errorf("SaveRulebook = version %d by %q (%q), want 1 by alice (first draft)", v1.Version, v1.Author, v1.Note)
	}
	wantNear(t, "SaveRulebook created_at", v1.CreatedAt, before, now(t, s))
	sameJSON(t, "SaveRulebook result's rulebook", v1.Rulebook, rb1)

	// Saving against a version that is no longer current saves nothing.
	_, err = s.SaveRulebook(ctx, alpha.ID, rb2, 0, "mallory", "")
	wantErr(t, "SaveRulebook(ifMatch=0) at version 1", err, store.ErrConflict)
	v2, err := s.SaveRulebook(ctx, alpha.ID, rb2, 1, "bob", "")
	wantErr(t, "SaveRulebook(ifMatch=1)", err, nil)
	if v2.Version != 2 {
		t.Fatalf("SaveRulebook(ifMatch=1) = version %d, want 2", v2.Version)
	}
	for _, stale := range []int64{0, 1, 3} {
		_, err = s.SaveRulebook(ctx, alpha.ID, rulebook("never", 1), stale, "mallory", "")
		wantErr(t, fmt.Sprintf("SaveRulebook(ifMatch=%d) at version 2", stale), err, store.ErrConflict)
	}
	wantRulebookVersion(t, s, alpha.ID, 2)

	cur, err := s.Rulebook(ctx, alpha.ID)
	wantErr(t, "Rulebook(alpha)", err, nil)
	sameJSON(t, "Rulebook(alpha)", cur, v2)
	at1, err := s.RulebookAt(ctx, alpha.ID, 1)
	wantErr(t, "RulebookAt(alpha, 1)", err, nil)
	sameJSON(t, "RulebookAt(alpha, 1)", at1, v1)
	for _, v := range []int64{0, -1, 3} {
		_, err := s.RulebookAt(ctx, alpha.ID, v)
		wantErr(t, fmt.Sprintf("RulebookAt(alpha, %d)", v), err, store.ErrNotFound)
	}
	hist, err = s.RulebookHistory(ctx, alpha.ID)
	wantErr(t, "RulebookHistory(alpha)", err, nil)
	sameJSON(t, "RulebookHistory(alpha), newest first", hist, []store.RulebookVersion{v2, v1})

	// A read is the caller's to change.
	cur.Rulebook.Rules[0].Name = "scribbled"
	again, _ := s.Rulebook(ctx, alpha.ID)
	sameJSON(t, "Rulebook(alpha) after changing a read", again, v2)

	// Versions count per publisher, and the catalogue version is apart.
	vs, _ := s.Versions(ctx, alpha.ID)
	if vs != (store.Versions{Catalogue: 0, Rulebook: 2}) {
		t.Errorf("Versions(alpha) = %+v, want catalogue 0, rulebook 2", vs)
	}
	b1, err := s.SaveRulebook(ctx, beta.ID, rulebook("Beta", 2), 0, "carol", "")
	wantErr(t, "SaveRulebook(beta, ifMatch=0)", err, nil)
	if b1.Version != 1 {
		t.Errorf("beta's first rulebook = version %d, want 1", b1.Version)
	}
}

// wantRulebookVersion fails unless the publisher's rulebook history holds
// exactly versions 1..n and Versions agrees.
func wantRulebookVersion(t *testing.T, s store.Store, publisher string, n int64) {
	t.Helper()
	ctx := t.Context()
	vs, err := s.Versions(ctx, publisher)
	wantErr(t, "Versions", err, nil)
	if vs.Rulebook != n {
		t.Errorf("Versions(%q).Rulebook = %d, want %d", publisher, vs.Rulebook, n)
	}
	hist, err := s.RulebookHistory(ctx, publisher)
	wantErr(t, "RulebookHistory", err, nil)
	if int64(len(hist)) != n {
		t.Fatalf("RulebookHistory(%q) has %d versions, want %d", publisher, len(hist), n)
	}
	for i, h := range hist {
		if h.Version != n-int64(i) {
			t.Errorf("RulebookHistory(%q)[%d].Version = %d, want %d", publisher, i, h.Version, n-int64(i))
		}
	}
	cur, err := s.Rulebook(ctx, publisher)
	if n == 0 {
		wantErr(t, "Rulebook with none saved", err, store.ErrNotFound)
		return
	}
	wantErr(t, "Rulebook", err, nil)
	if cur.Version != n {
		t.Errorf("Rulebook(%q).Version = %d, want %d", publisher, cur.Version, n)
	}
}

// testRulebookConcurrentIfMatch: editors racing from the same version:
// one version is saved, the others conflict and save nothing.
func testRulebookConcurrentIfMatch(t *testing.T, s store.Store) {
	ctx := t.Context()
	withPublishers(t, s)
	if _, err := s.SaveRulebook(ctx, alpha.ID, rulebook("base", 2), 0, "alice", ""); err != nil {
		t.Fatal(err)
	}
	var (
		wins      atomic.Int32
		conflicts atomic.Int32
		winner    atomic.Int32
	)
	parallel(8, func(i int) {
		_, err := s.SaveRulebook(ctx, alpha.ID, rulebook(fmt.Sprintf("editor %d", i), 1), 1, fmt.Sprintf("editor-%d", i), "")
		switch {
		case err == nil:
			wins.Add(1)
			winner.Store(int32(i))
		case errors.Is(err, store.ErrConflict):
			conflicts.Add(1)
		default:
			t.Errorf("SaveRulebook(ifMatch=1) = %v", err)
		}
	})
	if wins.Load() != 1 || conflicts.Load() != 7 {
		t.Fatalf("8 editors with If-Match 1: %d saved and %d conflicted, want 1 and 7", wins.Load(), conflicts.Load())
	}
	wantRulebookVersion(t, s, alpha.ID, 2)
	cur, err := s.Rulebook(ctx, alpha.ID)
	wantErr(t, "Rulebook(alpha)", err, nil)
	w := winner.Load()
	if cur.Author != fmt.Sprintf("editor-%d", w) {
		t.Errorf("Rulebook(alpha).Author = %q, want the winner editor-%d", cur.Author, w)
	}
	sameJSON(t, "the winner's rulebook", cur.Rulebook, rulebook(fmt.Sprintf("editor %d", w), 1))
}
