package storetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/storefront/storefront/ledger"
	"github.com/storefront/storefront/products"
	"github.com/storefront/storefront/store"
)

// catalogues returns the store's history role, failing the test when the
// store lacks it: both stores must have it.
func catalogues(t *testing.T, s store.Store) store.Catalogues {
	t.Helper()
	c, ok := s.(store.Catalogues)
	if !ok {
		t.Fatalf("%T does not keep catalogue history (store.Catalogues)", s)
	}
	return c
}

// stream yields ps one at a time, then io.EOF, as an import reads a file.
func stream(ps []products.Product) func() (products.Product, error) {
	i := 0
	return func() (products.Product, error) {
		if i == len(ps) {
			return products.Product{}, io.EOF
		}
		i++
		return ps[i-1], nil
	}
}

func wantVersion(t *testing.T, what string, got store.CatalogueVersion, version, put, deleted int64, author string) {
	t.Helper()
	if got.Version != version || got.Put != put || got.Deleted != deleted || got.Author != author {
		t.Errorf("%s = version %d (%d put, %d deleted, by %q), want version %d (%d put, %d deleted, by %q)",
			what, got.Version, got.Put, got.Deleted, got.Author, version, put, deleted, author)
	}
	if got.CreatedAt.IsZero() || got.CreatedAt.Location() != time.UTC {
		t.Errorf("%s: created_at %v, want a UTC time", what, got.CreatedAt)
	}
}

// testCatalogueHistory checks that every catalogue write is a version:
// listed with author and counts, compared with another, rolled back to as
// a new version; and that the older write methods keep history too.
func testCatalogueHistory(t *testing.T, s store.Store) {
	ctx := t.Context()
	c := catalogues(t, s)
	withPublishers(t, s)
	ps := demoProducts(t, 4)

	// Version 1: the older bulk method, with no author.
	v, err := s.PutProduct(ctx, alpha.ID, ps[0], 0)
	wantErr(t, "PutProduct", err, nil)
	if v != 1 {
		t.Fatalf("PutProduct = version %d, want 1", v)
	}
	// Version 2: two products by an author.
	got, err := c.EditCatalogue(ctx, alpha.ID, store.CatalogueEdit{Put: ps[1:3], IfMatch: 1, Author: "sales desk", Note: "two more"})
	wantErr(t, "EditCatalogue(put 2)", err, nil)
	wantVersion(t, "EditCatalogue(put 2)", got, 2, 2, 0, "sales desk")
	// Version 3: one changed, one unchanged (not a change), one deleted.
	renamed := ps[1]
	renamed.Name = "Renamed in version 3"
	got, err = c.EditCatalogue(ctx, alpha.ID, store.CatalogueEdit{Put: []products.Product{renamed, ps[2]}, Delete: []string{ps[0].ProductID}, IfMatch: 2, Author: "sales desk"})
	wantErr(t, "EditCatalogue(change, keep, delete)", err, nil)
	wantVersion(t, "EditCatalogue(change, keep, delete)", got, 3, 1, 1, "sales desk")
	wantCatalogue(t, s, alpha.ID, []products.Product{renamed, ps[2]}, 3)

	// Refused edits change nothing: stale, duplicate, unknown delete,
	// the same id put and deleted.
	_, err = c.EditCatalogue(ctx, alpha.ID, store.CatalogueEdit{Put: ps[3:4], IfMatch: 2})
	wantErr(t, "EditCatalogue(stale)", err, store.ErrConflict)
	_, err = c.EditCatalogue(ctx, alpha.ID, store.CatalogueEdit{Put: []products.Product{ps[3], ps[3]}})
	wantErr(t, "EditCatalogue(duplicate)", err, store.ErrDuplicate)
	_, err = c.EditCatalogue(ctx, alpha.ID, store.CatalogueEdit{Put: ps[3:4], Delete: []string{"no-such-product"}})
	wantErr(t, "EditCatalogue(unknown delete)", err, store.ErrNotFound)
	_, err = c.EditCatalogue(ctx, alpha.ID, store.CatalogueEdit{Put: ps[3:4], Delete: []string{ps[3].ProductID}})
	wantErr(t, "EditCatalogue(put and delete one id)", err, store.ErrDuplicate)
	_, err = c.EditCatalogue(ctx, ghost, store.CatalogueEdit{Put: ps[3:4]})
	wantErr(t, "EditCatalogue(ghost)", err, store.ErrNotFound)
	wantCatalogue(t, s, alpha.ID, []products.Product{renamed, ps[2]}, 3)

	hist, err := c.CatalogueHistory(ctx, alpha.ID, 0, 0)
	wantErr(t, "CatalogueHistory", err, nil)
	if len(hist) != 3 || hist[0].Version != 3 || hist[2].Version != 1 || hist[1].Note != "two more" || hist[2].Author != "" {
		t.Errorf("CatalogueHistory = %+v, want versions 3, 2, 1 with their notes and authors", hist)
	}
	page, err := c.CatalogueHistory(ctx, alpha.ID, 3, 1)
	wantErr(t, "CatalogueHistory(before 3, limit 1)", err, nil)
	if len(page) != 1 || page[0].Version != 2 {
		t.Errorf("CatalogueHistory(before 3, limit 1) = %+v, want version 2", page)
	}
	_, err = c.CatalogueHistory(ctx, ghost, 0, 0)
	wantErr(t, "CatalogueHistory(ghost)", err, store.ErrNotFound)
	empty, err := c.CatalogueHistory(ctx, beta.ID, 0, 0)
	wantErr(t, "CatalogueHistory(beta)", err, nil)
	if len(empty) != 0 {
		t.Errorf("CatalogueHistory of an empty catalogue = %+v", empty)
	}

	// The diff from 1 to 3: product 0 deleted, 1 created and renamed, 2
	// created; in id order; limited.
	changes, total, err := c.CatalogueDiff(ctx, alpha.ID, 1, 3, 0)
	wantErr(t, "CatalogueDiff(1, 3)", err, nil)
	if total != 3 || len(changes) != 3 {
		t.Fatalf("CatalogueDiff(1, 3) = %d changes of %d, want 3", len(changes), total)
	}
	byID := map[string]store.ProductChange{}
	for i, ch := range changes {
		byID[ch.ProductID] = ch
		if i > 0 && changes[i-1].ProductID >= ch.ProductID {
			t.Errorf("CatalogueDiff is not in product id order: %q before %q", changes[i-1].ProductID, ch.ProductID)
		}
	}
	if ch := byID[ps[0].ProductID]; ch.Before == nil || ch.After != nil {
		t.Errorf("CatalogueDiff: the deleted product = %+v", ch)
	}
	if ch := byID[ps[1].ProductID]; ch.Before != nil || ch.After == nil || ch.After.Name != renamed.Name {
		t.Errorf("CatalogueDiff: the created and renamed product = %+v", ch)
	}
	changes, total, err = c.CatalogueDiff(ctx, alpha.ID, 2, 3, 1)
	wantErr(t, "CatalogueDiff(2, 3, limit 1)", err, nil)
	if total != 2 || len(changes) != 1 {
		t.Errorf("CatalogueDiff(2, 3, limit 1) = %d changes of %d, want 1 of 2", len(changes), total)
	}
	_, _, err = c.CatalogueDiff(ctx, alpha.ID, 1, 9, 0)
	wantErr(t, "CatalogueDiff(1, 9)", err, store.ErrNotFound)

	// Roll back to version 2: product 0, deleted in 3, comes back, and
	// product 1 gets its old name, as a new version.
	_, err = c.RollbackCatalogue(ctx, alpha.ID, 2, 1, "sales desk")
	wantErr(t, "RollbackCatalogue(stale)", err, store.ErrConflict)
	_, err = c.RollbackCatalogue(ctx, alpha.ID, 9, 3, "sales desk")
	wantErr(t, "RollbackCatalogue(to 9)", err, store.ErrNotFound)
	got, err = c.RollbackCatalogue(ctx, alpha.ID, 2, 3, "sales desk")
	wantErr(t, "RollbackCatalogue(to 2)", err, nil)
	wantVersion(t, "RollbackCatalogue(to 2)", got, 4, 2, 0, "sales desk")
	if got.Note != "rollback to version 2" {
		t.Errorf("RollbackCatalogue note = %q", got.Note)
	}
	cat, _, err := s.Catalogue(ctx, alpha.ID)
	wantErr(t, "Catalogue", err, nil)
	gotIDs := map[string]string{}
	for _, p := range cat {
		gotIDs[p.ProductID] = p.Name
	}
	if len(cat) != 3 || gotIDs[ps[0].ProductID] != ps[0].Name || gotIDs[ps[1].ProductID] != ps[1].Name || gotIDs[ps[2].ProductID] != ps[2].Name {
		t.Errorf("after rolling back to 2 the catalogue is %v, want the three products of version 2 as they were", gotIDs)
	}
	if changes, _, _ := c.CatalogueDiff(ctx, alpha.ID, 2, 4, 0); len(changes) != 0 {
		t.Errorf("version 4 differs from version 2 in %d products, want none", len(changes))
	}
	// Roll back to version 1: the products created after it go.
	got, err = c.RollbackCatalogue(ctx, alpha.ID, 1, 4, "sales desk")
	wantErr(t, "RollbackCatalogue(to 1)", err, nil)
	wantVersion(t, "RollbackCatalogue(to 1)", got, 5, 0, 2, "sales desk")
	wantCatalogue(t, s, alpha.ID, ps[:1], 5)

	var walked []products.Product
	wv, err := c.WalkCatalogue(ctx, alpha.ID, func(p products.Product) error { walked = append(walked, p); return nil })
	wantErr(t, "WalkCatalogue", err, nil)
	if wv != 5 {
		t.Errorf("WalkCatalogue version = %d, want 5", wv)
	}
	sameJSON(t, "WalkCatalogue products", walked, ps[:1])
	_, err = c.WalkCatalogue(ctx, ghost, func(products.Product) error { return nil })
	wantErr(t, "WalkCatalogue(ghost)", err, store.ErrNotFound)
}

// testCatalogueImport checks imports: merge and replace, one version
// each, all or nothing when the stream fails, duplicates and stale
// versions refused, and re-importing the same file changing nothing.
func testCatalogueImport(t *testing.T, s store.Store) {
	ctx := t.Context()
	c := catalogues(t, s)
	withPublishers(t, s)
	ps := demoProducts(t, 5)
	_, err := c.EditCatalogue(ctx, alpha.ID, store.CatalogueEdit{Put: ps[:2]})
	wantErr(t, "EditCatalogue", err, nil)

	// Merge: two new, one changed; the others stay, in order.
	changed := ps[1]
	changed.Description = "Changed by the import."
	file := []products.Product{changed, ps[2], ps[3]}
	got, err := c.ImportCatalogue(ctx, alpha.ID, store.CatalogueImport{IfMatch: 1, Author: "importer", Note: "feed"}, stream(file))
	wantErr(t, "ImportCatalogue(merge)", err, nil)
	wantVersion(t, "ImportCatalogue(merge)", got, 2, 3, 0, "importer")
	wantCatalogue(t, s, alpha.ID, []products.Product{ps[0], changed, ps[2], ps[3]}, 2)

	// The same file again changes no product, but is a version.
	got, err = c.ImportCatalogue(ctx, alpha.ID, store.CatalogueImport{IfMatch: 2}, stream(file))
	wantErr(t, "ImportCatalogue(again)", err, nil)
	wantVersion(t, "ImportCatalogue(again)", got, 3, 0, 0, "")

	// A failing stream saves nothing, whatever it had sent.
	bad := errors.New("line 2: bad")
	n := 0
	_, err = c.ImportCatalogue(ctx, alpha.ID, store.CatalogueImport{Replace: true}, func() (products.Product, error) {
		n++
		if n == 2 {
			return products.Product{}, bad
		}
		return ps[4], nil
	})
	wantErr(t, "ImportCatalogue(replace, stream fails on line 2)", err, bad)
	n = 0
	_, err = c.ImportCatalogue(ctx, alpha.ID, store.CatalogueImport{}, func() (products.Product, error) {
		n++
		if n == 2 {
			return products.Product{}, bad
		}
		return ps[4], nil
	})
	wantErr(t, "ImportCatalogue(stream fails on line 2)", err, bad)
	_, err = c.ImportCatalogue(ctx, alpha.ID, store.CatalogueImport{}, stream([]products.Product{ps[4], ps[4]}))
	wantErr(t, "ImportCatalogue(duplicate)", err, store.ErrDuplicate)
	_, err = c.ImportCatalogue(ctx, alpha.ID, store.CatalogueImport{IfMatch: 2}, stream(ps[4:]))
	wantErr(t, "ImportCatalogue(stale)", err, store.ErrConflict)
	_, err = c.ImportCatalogue(ctx, ghost, store.CatalogueImport{}, stream(ps[4:]))
	wantErr(t, "ImportCatalogue(ghost)", err, store.ErrNotFound)
	wantCatalogue(t, s, alpha.ID, []products.Product{ps[0], changed, ps[2], ps[3]}, 3)

	// Replace: what the file does not name goes.
	got, err = c.ImportCatalogue(ctx, alpha.ID, store.CatalogueImport{Replace: true, IfMatch: 3}, stream([]products.Product{ps[3], ps[4]}))
	wantErr(t, "ImportCatalogue(replace)", err, nil)
	wantVersion(t, "ImportCatalogue(replace)", got, 4, 1, 3, "")
	wantCatalogue(t, s, alpha.ID, []products.Product{ps[3], ps[4]}, 4)
	changes, total, err := c.CatalogueDiff(ctx, alpha.ID, 3, 4, 0)
	wantErr(t, "CatalogueDiff(3, 4)", err, nil)
	if total != 4 || len(changes) != 4 {
		t.Errorf("CatalogueDiff(3, 4) = %d of %d changes, want 4 (three deleted, one created)", len(changes), total)
	}
}

func recordings(t *testing.T, s store.Store) store.Recordings {
	t.Helper()
	r, ok := s.(store.Recordings)
	if !ok {
		t.Fatalf("%T does not serve recorded requests (store.Recordings)", s)
	}
	return r
}

// testRecordedRequests checks that the request of each decision is kept
// beside the chain (not in it), read back with its entry, not kept when
// it is too large, and counted; decisions of other tasks than
// get_products (a media buy) are not briefs and are neither counted nor
// walked.
func testRecordedRequests(t *testing.T, s store.Store) {
	ctx := t.Context()
	r := recordings(t, s)
	withPublishers(t, s)
	before := now(t, s).Add(-time.Hour)
	var want [][]byte
	for i := range 6 {
		rec := record(alpha.ID, i)
		switch i {
		case 2:
			// Not kept.
		case 4:
			rec.Request = make([]byte, store.MaxKeptRequest+1)
		default:
			rec.Request = fmt.Appendf(nil, `{"brief":"request %d"}`, i)
			rec.RequestDigest = ledger.Digest(rec.Request)
		}
		e, err := s.Append(ctx, rec)
		wantErr(t, "Append", err, nil)
		if e.Request != nil {
			t.Errorf("Append returned an entry holding its request")
		}
		if i == 4 {
			want = append(want, nil)
		} else {
			want = append(want, rec.Request)
		}
		if i == 3 {
			buy := record(alpha.ID, i)
			buy.Task, buy.Request = "create_media_buy", []byte(`{"packages":[]}`)
			buy.RequestDigest = ledger.Digest(buy.Request)
			_, err := s.Append(ctx, buy)
			wantErr(t, "Append(create_media_buy)", err, nil)
		}
	}
	_, err := s.Append(ctx, ledger.Record{Publisher: beta.ID, Arm: "completed", Request: []byte(`{"brief":"beta"}`)})
	wantErr(t, "Append(beta)", err, nil)

	n, kept, err := r.CountRecorded(ctx, alpha.ID, before)
	wantErr(t, "CountRecorded", err, nil)
	if n != 6 || kept != 4 {
		t.Errorf("CountRecorded = %d decisions, %d with requests; want 6 and 4", n, kept)
	}
	n, kept, err = r.CountRecorded(ctx, alpha.ID, now(t, s).Add(time.Hour))
	wantErr(t, "CountRecorded(from an hour ahead)", err, nil)
	if n != 0 || kept != 0 {
		t.Errorf("CountRecorded(from an hour ahead) = %d, %d; want none", n, kept)
	}
	var got [][]byte
	err = r.WalkRecorded(ctx, alpha.ID, before, func(e ledger.Entry) error {
		if e.Publisher != alpha.ID {
			t.Errorf("WalkRecorded(alpha) gave an entry of %q", e.Publisher)
		}
		if e.Task != "" {
			t.Errorf("WalkRecorded gave entry %d of %s, which is not a brief", e.Sequence, e.Task)
		}
		if e.Request != nil && ledger.Digest(e.Request) != e.RequestDigest {
			t.Errorf("entry %d: the kept request does not match its digest", e.Sequence)
		}
		got = append(got, e.Request)
		return nil
	})
	wantErr(t, "WalkRecorded", err, nil)
	sameJSON(t, "WalkRecorded requests", got, want)
	_, _, err = r.CountRecorded(ctx, ghost, before)
	wantErr(t, "CountRecorded(ghost)", err, store.ErrNotFound)
	// The chain is unchanged by what is kept beside it.
	verify(t, s, alpha.ID)
}

// testRetention checks that a purge drops old finished tasks, old seeded
// catalogues, old replays and old ledger requests, and nothing newer or
// unfinished; and that the chain still verifies once requests are gone.
func testRetention(t *testing.T, s store.Store) {
	ctx := t.Context()
	rt, ok := s.(store.Retention)
	if !ok {
		t.Fatalf("%T has no retention (store.Retention)", s)
	}
	r := recordings(t, s)
	withPublishers(t, s)
	owner := store.TaskOwner{Account: "acct_1", Principal: "buyer"}
	createTask(t, s, alpha.ID, newTask("old", owner, "get_products", "submitted", false))
	createTask(t, s, alpha.ID, newTask("new", owner, "get_products", "submitted", false))
	createTask(t, s, alpha.ID, newTask("open", owner, "get_products", "submitted", false))
	old := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	_, err := s.FinishTask(ctx, alpha.ID, owner, "old", "completed", []byte(`{}`), old)
	wantErr(t, "FinishTask(old)", err, nil)
	_, err = s.FinishTask(ctx, alpha.ID, owner, "new", "completed", []byte(`{}`), old.AddDate(0, 0, 10))
	wantErr(t, "FinishTask(new)", err, nil)
	seedVersion := seed(t, s, alpha.ID, "sandbox-buyer", "session-1", demoProducts(t, 1)[0], 0)
	for i := range 3 {
		rec := record(alpha.ID, i)
		rec.Request = fmt.Appendf(nil, `{"brief":"request %d"}`, i)
		_, err := s.Append(ctx, rec)
		wantErr(t, "Append", err, nil)
	}

	// A cutoff before everything purges nothing.
	earlier := now(t, s).Add(-time.Hour)
	got, err := rt.Purge(ctx, alpha.ID, store.RetainBefore{Tasks: old.Add(-time.Hour), Seeds: earlier, Replays: earlier, Requests: earlier})
	wantErr(t, "Purge(nothing old)", err, nil)
	if got != (store.Purged{}) {
		t.Errorf("Purge(nothing old) = %+v, want nothing", got)
	}
	// Zero times keep everything.
	got, err = rt.Purge(ctx, alpha.ID, store.RetainBefore{})
	wantErr(t, "Purge(keep all)", err, nil)
	if got != (store.Purged{}) {
		t.Errorf("Purge(keep all) = %+v, want nothing", got)
	}

	later := now(t, s).Add(time.Hour)
	got, err = rt.Purge(ctx, alpha.ID, store.RetainBefore{Tasks: old.AddDate(0, 0, 1), Seeds: later, Requests: later})
	wantErr(t, "Purge", err, nil)
	if got.Tasks != 1 || got.Seeds != 1 || got.Requests != 3 || got.Replays != 0 {
		t.Errorf("Purge = %+v, want 1 task, 1 seeded catalogue, 3 requests", got)
	}
	_, err = s.Task(ctx, alpha.ID, owner, "old")
	wantErr(t, "Task(old) after the purge", err, store.ErrNotFound)
	getTask(t, s, alpha.ID, owner, "new")
	getTask(t, s, alpha.ID, owner, "open")
	_, _, err = s.SeededCatalogue(ctx, alpha.ID, "sandbox-buyer")
	wantErr(t, "SeededCatalogue after the purge", err, store.ErrNotFound)
	// A later seed starts afresh, and its version still grows.
	seed(t, s, alpha.ID, "sandbox-buyer", "session-1", demoProducts(t, 2)[1], seedVersion)
	n, kept, err := r.CountRecorded(ctx, alpha.ID, earlier)
	wantErr(t, "CountRecorded after the purge", err, nil)
	if n != 3 || kept != 0 {
		t.Errorf("after the purge: %d decisions, %d with requests; want 3 and 0", n, kept)
	}
	// The entries and their digests stay: the chain verifies.
	if es := verify(t, s, alpha.ID); len(es) != 3 {
		t.Errorf("the chain has %d entries after the purge, want 3", len(es))
	}
	_, err = rt.Purge(ctx, ghost, store.RetainBefore{Tasks: later})
	wantErr(t, "Purge(ghost)", err, store.ErrNotFound)
}

// scribble writes into every list of p that a store might share between
// products or keep for its history.
func scribble(p *products.Product) {
	p.Name = "scribbled"
	for i := range p.Channels {
		p.Channels[i] = "scribbled"
	}
	for i := range p.Keywords {
		p.Keywords[i] = "scribbled"
	}
	for i := range p.Countries {
		p.Countries[i] = "ZZ"
	}
	for i := range p.PublisherProperties {
		p.PublisherProperties[i].PublisherDomain = "scribbled.example"
	}
	for i := range p.FormatOptions {
		p.FormatOptions[i].FormatKind = "scribbled"
		// Still JSON, so a store that shared it would return it.
		if raw := p.FormatOptions[i].Params; len(raw) >= 2 {
			raw[0], raw[len(raw)-1] = '[', ']'
			for k := 1; k < len(raw)-1; k++ {
				raw[k] = ' '
			}
		}
	}
	for i := range p.PricingOptions {
		p.PricingOptions[i].Currency = "XXX"
		if f := p.PricingOptions[i].FixedPrice; f != nil {
			*f = -1
		}
	}
	for i := range p.ReportingCapabilities.AvailableMetrics {
		p.ReportingCapabilities.AvailableMetrics[i] = "scribbled"
	}
}

// testCatalogueCopies checks that what a store keeps is its own and what
// it hands out is the caller's: writing into products after putting them,
// or into the lists of products read back (the catalogue, a walk, a diff),
// changes nothing stored, even where two stored products have equal lists
// that a store may keep once.
func testCatalogueCopies(t *testing.T, s store.Store) {
	ctx := t.Context()
	c := catalogues(t, s)
	withPublishers(t, s)
	fresh := func() []products.Product {
		ps := demoProducts(t, 2)
		twin := ps[0]
		twin.ProductID += "_twin"
		ps = append(ps, twin)
		var out []products.Product
		b, err := json.Marshal(ps)
		if err == nil {
			err = json.Unmarshal(b, &out)
		}
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	want := fresh()
	put := fresh()
	v1, err := c.EditCatalogue(ctx, alpha.ID, store.CatalogueEdit{Put: put[:1], Author: "ed", Note: "first"})
	wantErr(t, "EditCatalogue", err, nil)
	v2, err := c.EditCatalogue(ctx, alpha.ID, store.CatalogueEdit{Put: put[1:], Author: "ed", Note: "the rest"})
	wantErr(t, "EditCatalogue", err, nil)
	for i := range put {
		scribble(&put[i])
	}
	wantCatalogue(t, s, alpha.ID, want, v2.Version)

	got, _, err := s.Catalogue(ctx, alpha.ID)
	wantErr(t, "Catalogue", err, nil)
	for i := range got {
		scribble(&got[i])
	}
	_, err = c.WalkCatalogue(ctx, alpha.ID, func(p products.Product) error {
		scribble(&p)
		return nil
	})
	wantErr(t, "WalkCatalogue", err, nil)
	for _, d := range [][2]int64{{v1.Version, v2.Version}, {v2.Version, v1.Version}} {
		changes, _, err := c.CatalogueDiff(ctx, alpha.ID, d[0], d[1], 0)
		wantErr(t, "CatalogueDiff", err, nil)
		for _, ch := range changes {
			for _, p := range []*products.Product{ch.Before, ch.After} {
				if p != nil {
					scribble(p)
				}
			}
		}
	}
	wantCatalogue(t, s, alpha.ID, want, v2.Version)
	changes, _, err := c.CatalogueDiff(ctx, alpha.ID, v1.Version, v2.Version, 0)
	wantErr(t, "CatalogueDiff", err, nil)
	var after []products.Product
	for _, ch := range changes {
		if ch.Before != nil || ch.After == nil {
			t.Fatalf("CatalogueDiff(%d, %d): %s changed from %v, want a product added", v1.Version, v2.Version, ch.ProductID, ch.Before)
		}
		after = append(after, *ch.After)
	}
	sameJSON(t, "CatalogueDiff after writes into what it returned", after, []products.Product{want[1], want[2]})
}
