package admin

import (
	"context"
	"errors"

	"github.com/storefront/storefront/jsonfield"
	"github.com/storefront/storefront/merch"
	"github.com/storefront/storefront/products"
	"github.com/storefront/storefront/sanitize"
)

// What is stored is what is served: every write of buyer-visible text is
// checked against the screen the saved state would serve with, and text
// the screen would change is refused, naming the field. These checks come
// after a document's structural validation.

var errNoSnapshots = errors.New("admin: no snapshots to lint against")

func (h *Handler) snapshot(ctx context.Context, publisher string) (*products.Snapshot, error) {
	if h.Snaps == nil {
		return nil, errNoSnapshots
	}
	return h.Snaps.Snapshot(ctx, publisher)
}

// servedRulebook refuses a rulebook whose seller name or templates the
// serving screen would change, or whose new confidential terms would
// change what the catalogue shows buyers.
func (h *Handler) servedRulebook(ctx context.Context, publisher string, rb *merch.Rulebook) error {
	snap, err := h.snapshot(ctx, publisher)
	if err != nil {
		return err
	}
	return products.LintRulebook(snap.Publisher, rb, snap.Rulebook, snap.Catalogue.Products()).Err()
}

// productLint checks catalogue writes of one publisher against the screen
// of its current snapshot. A product that brings a new internal reference
// is also checked against that reference, and so is every other product,
// which the reference would otherwise change once saved.
type productLint struct {
	snap    *products.Snapshot
	catalog []products.Product
	public  sanitize.Public
	// known are the references the snapshot's screen already holds.
	known map[string]bool
}

func (h *Handler) productLint(ctx context.Context, publisher string) (*productLint, error) {
	snap, err := h.snapshot(ctx, publisher)
	if err != nil {
		return nil, err
	}
	l := &productLint{snap: snap, catalog: snap.Catalogue.Products(), known: map[string]bool{}}
	l.public = products.ServingPublic(snap.Publisher, snap.Rulebook, l.catalog)
	for _, p := range l.catalog {
		l.known[p.InternalRef] = true
	}
	return l, nil
}

// check lints p alone: its own strings against the snapshot's screen and
// its reference.
func (l *productLint) check(p products.Product) (jsonfield.Invalid, *sanitize.Screen) {
	screens := []*sanitize.Screen{l.snap.Screen}
	var ref *sanitize.Screen
	if !l.known[p.InternalRef] {
		ref = products.RefScreen(p.InternalRef, l.public)
		if ref != nil {
			screens = append(screens, ref)
		}
	}
	return products.LintProduct(p, screens...), ref
}

// put lints a single product write: p itself, and the rest of the
// catalogue against a reference p brings.
func (l *productLint) put(p products.Product) error {
	v, ref := l.check(p)
	if ref != nil {
		for _, other := range l.catalog {
			if other.ProductID == p.ProductID {
				continue
			}
			for _, f := range products.LintProduct(other, ref) {
				v.Add("/internal_ref", "product %s shows buyers %s, which this internal reference would change; give the product another reference or reword the other product first",
					other.ProductID, f.Pointer)
			}
		}
	}
	return v.Err()
}

// line lints one product of an import. A product's text naming the new
// reference of a product later in the same file is not seen here; the
// serving screen still withholds it.
func (l *productLint) line(p *products.Product) error {
	v, _ := l.check(*p)
	return v.Err()
}

// servedPublisher refuses a publisher name or domain the current screen
// would change: both are shown to buyers (capabilities, agent card). The
// current screen is the right one: once saved they are public lexicon.
func (h *Handler) servedPublisher(ctx context.Context, p products.Publisher) error {
	snap, err := h.snapshot(ctx, p.ID)
	if err != nil {
		return err
	}
	var v jsonfield.Invalid
	if d := products.ServedChange(snap.Screen, p.Name); d != "" {
		v.Add("/name", "buyers would not be shown this name as saved: %s", d)
	}
	if d := products.ServedChange(snap.Screen, p.Domain); d != "" {
		v.Add("/domain", "buyers would not be shown this domain as saved: %s", d)
	}
	return v.Err()
}

// refused renders a lint's failures as the invalid-document problem, and
// passes any other error (an outage reading the snapshot) through.
func refused(err error, prefix string) error {
	var v jsonfield.Invalid
	if errors.As(err, &v) {
		return invalid(v, prefix)
	}
	return err
}
