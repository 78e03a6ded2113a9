package storetest

import (
	"fmt"
	"slices"
	"testing"

	"github.com/storefront/storefront/products"
	"github.com/storefront/storefront/store"
)

// seed calls SeedProduct, fails on an error, and checks that the version
// grew past last.
func seed(t *testing.T, s store.Store, publisher, principal, session string, p products.Product, last int64) int64 {
	t.Helper()
	v, err := s.SeedProduct(t.Context(), publisher, principal, session, p)
	wantErr(t, fmt.Sprintf("SeedProduct(%q, %q, %q, %q)", publisher, principal, session, p.ProductID), err, nil)
	if v <= last {
		t.Errorf("SeedProduct(%q, %q, %q, %q) = version %d, want above %d", publisher, principal, session, p.ProductID, v, last)
	}
	return v
}

// wantSeeded fails unless the principal's seeded catalogue is want, in
// order, at version.
func wantSeeded(t *testing.T, s store.Store, publisher, principal string, want []products.Product, version int64) {
	t.Helper()
	got, v, err := s.SeededCatalogue(t.Context(), publisher, principal)
	wantErr(t, fmt.Sprintf("SeededCatalogue(%q, %q)", publisher, principal), err, nil)
	if v != version {
		t.Errorf("SeededCatalogue(%q, %q) version = %d, want %d", publisher, principal, v, version)
	}
	sameJSON(t, fmt.Sprintf("SeededCatalogue(%q, %q) products %v", publisher, principal, productIDs(got)), got, want)
}

// testSeededCatalogue checks seeding: insertion order kept on replace, a
// version that only grows, a new session starting afresh, and catalogues
// that are each principal's own and apart from the publisher's.
func testSeededCatalogue(t *testing.T, s store.Store) {
	ctx := t.Context()
	withPublishers(t, s)
	ps := demoProducts(t, 3)
	_, _, err := s.SeededCatalogue(ctx, alpha.ID, "sandbox-buyer")
	wantErr(t, "SeededCatalogue(before any seed)", err, store.ErrNotFound)

	v := seed(t, s, alpha.ID, "sandbox-buyer", "run-1", ps[0], 0)
	v = seed(t, s, alpha.ID, "sandbox-buyer", "run-1", ps[1], v)
	wantSeeded(t, s, alpha.ID, "sandbox-buyer", ps[:2], v)

	// Replacing a product keeps its place.
	renamed := ps[0]
	renamed.Name = "Seeded MREC (renamed)"
	renamed.Channels = append([]string(nil), renamed.Channels...)
	v = seed(t, s, alpha.ID, "sandbox-buyer", "run-1", renamed, v)
	wantSeeded(t, s, alpha.ID, "sandbox-buyer", []products.Product{renamed, ps[1]}, v)

	// What the caller gets is its own to change.
	got, _, err := s.SeededCatalogue(ctx, alpha.ID, "sandbox-buyer")
	wantErr(t, "SeededCatalogue", err, nil)
	got[0].Name = "altered by the caller"
	if len(got[0].Channels) > 0 {
		got[0].Channels[0] = "altered"
	}
	wantSeeded(t, s, alpha.ID, "sandbox-buyer", []products.Product{renamed, ps[1]}, v)

	// Another principal's seeds, and the publisher's own catalogue, are
	// apart from these.
	other := seed(t, s, alpha.ID, "other-sandbox-buyer", "run-9", ps[2], 0)
	wantSeeded(t, s, alpha.ID, "other-sandbox-buyer", ps[2:3], other)
	wantSeeded(t, s, alpha.ID, "sandbox-buyer", []products.Product{renamed, ps[1]}, v)
	wantCatalogue(t, s, alpha.ID, []products.Product{}, 0)
	_, _, err = s.SeededCatalogue(ctx, beta.ID, "sandbox-buyer")
	wantErr(t, "SeededCatalogue(beta, alpha's principal)", err, store.ErrNotFound)

	// A seed from a new session empties the catalogue first; the version
	// still only grows.
	v = seed(t, s, alpha.ID, "sandbox-buyer", "run-2", ps[2], v)
	wantSeeded(t, s, alpha.ID, "sandbox-buyer", ps[2:3], v)
	v = seed(t, s, alpha.ID, "sandbox-buyer", "run-2", ps[0], v)
	wantSeeded(t, s, alpha.ID, "sandbox-buyer", []products.Product{ps[2], ps[0]}, v)
	// Going back to an earlier session is a new session too.
	v = seed(t, s, alpha.ID, "sandbox-buyer", "run-1", ps[1], v)
	wantSeeded(t, s, alpha.ID, "sandbox-buyer", ps[1:2], v)
	// Resetting one principal leaves the other's.
	wantSeeded(t, s, alpha.ID, "other-sandbox-buyer", ps[2:3], other)

	// The same principal at beta seeds a catalogue of beta's.
	bv := seed(t, s, beta.ID, "sandbox-buyer", "run-1", ps[0], 0)
	wantSeeded(t, s, beta.ID, "sandbox-buyer", ps[:1], bv)
	wantSeeded(t, s, alpha.ID, "sandbox-buyer", ps[1:2], v)
	wantCatalogue(t, s, beta.ID, []products.Product{}, 0)
}

// testSeedConcurrent checks that concurrent seeds take turns: seeds of one
// session all land, and seeds of different sessions each leave a
// catalogue of exactly one session.
func testSeedConcurrent(t *testing.T, s store.Store) {
	withPublishers(t, s)
	ps := demoProducts(t, 1)
	product := func(i int) products.Product {
		p := ps[0]
		p.ProductID = fmt.Sprintf("seeded-%02d", i)
		p.Name = fmt.Sprintf("Seeded product %d", i)
		return p
	}
	versions := make([]int64, 8)
	parallel(8, func(i int) {
		v, err := s.SeedProduct(t.Context(), alpha.ID, "sandbox-buyer", "run-1", product(i))
		if err != nil {
			t.Errorf("SeedProduct(racer %d) = %v", i, err)
		}
		versions[i] = v
	})
	got, v, err := s.SeededCatalogue(t.Context(), alpha.ID, "sandbox-buyer")
	wantErr(t, "SeededCatalogue", err, nil)
	ids := productIDs(got)
	slices.Sort(ids)
	if want := []string{"seeded-00", "seeded-01", "seeded-02", "seeded-03", "seeded-04", "seeded-05", "seeded-06", "seeded-07"}; !slices.Equal(ids, want) {
		t.Errorf("after 8 concurrent seeds of one session the catalogue holds %v, want %v", ids, want)
	}
	wantDistinctVersions(t, versions, v)

	// Eight sessions at once: each seed empties the catalogue before it
	// adds its product, so one product is left, and the version is the
	// last seed's.
	parallel(8, func(i int) {
		v, err := s.SeedProduct(t.Context(), alpha.ID, "sandbox-buyer", fmt.Sprintf("run-%d", i+10), product(i+10))
		if err != nil {
			t.Errorf("SeedProduct(session racer %d) = %v", i, err)
		}
		versions[i] = v
	})
	got, last, err := s.SeededCatalogue(t.Context(), alpha.ID, "sandbox-buyer")
	wantErr(t, "SeededCatalogue", err, nil)
	if len(got) != 1 {
		t.Errorf("after 8 concurrent seeds of different sessions the catalogue holds %v, want one product", productIDs(got))
	}
	wantDistinctVersions(t, versions, last)
	if slices.Min(versions) <= v {
		t.Errorf("versions after a reset %v, want all above %d", versions, v)
	}
}

// wantDistinctVersions fails unless every seed got a version of its own and
// the catalogue is at the highest.
func wantDistinctVersions(t *testing.T, versions []int64, current int64) {
	t.Helper()
	sorted := slices.Clone(versions)
	slices.Sort(sorted)
	if len(slices.Compact(sorted)) != len(versions) {
		t.Errorf("concurrent seeds returned versions %v, want each its own", versions)
	}
	if top := slices.Max(versions); current != top {
		t.Errorf("SeededCatalogue version = %d, want the highest seed's %d", current, top)
	}
}
