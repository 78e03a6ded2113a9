package admin

import (
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/storefront/storefront/audit"
	"github.com/storefront/storefront/jsonfield"
	"github.com/storefront/storefront/products"
	"github.com/storefront/storefront/store"
)

// catalogues is the store's catalogue history, which both stores keep.
func (h *Handler) catalogues() (store.Catalogues, error) {
	c, ok := h.Store.(store.Catalogues)
	if !ok {
		return nil, newProblem(http.StatusNotImplemented, "no-history", "No catalogue history", "this store keeps no catalogue history")
	}
	return c, nil
}

// intParam reads an optional integer query parameter within [lo, hi].
func intParam(c echo.Context, name string, def, lo, hi int64) (int64, error) {
	s := c.QueryParam(name)
	if s == "" {
		return def, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < lo || n > hi {
		return 0, badQuery("/"+name, name+" must be a whole number from "+strconv.FormatInt(lo, 10)+" to "+strconv.FormatInt(hi, 10))
	}
	return n, nil
}

// ProductPage is one page of a catalogue search.
type ProductPage struct {
	Version int64 `json:"catalogue_version"`
	// Total is how many products match; Offset where this page starts.
	Total    int                `json:"total"`
	Offset   int                `json:"offset"`
	Products []products.Product `json:"products"`
}

// searchProducts answers GET /products with a query (q, channel, country,
// delivery_type, limit, offset): a page of the catalogue in force, from the
// snapshot buyers are served, so a large catalogue is searched in memory
// and not re-read from the database.
func (h *Handler) searchProducts(c echo.Context) error {
	limit, err := intParam(c, "limit", 50, 1, 500)
	if err != nil {
		return err
	}
	offset, err := intParam(c, "offset", 0, 0, 1<<31)
	if err != nil {
		return err
	}
	snap, err := h.Snaps.Snapshot(c.Request().Context(), pub(c))
	if err != nil {
		return err
	}
	q := strings.ToLower(strings.TrimSpace(c.QueryParam("q")))
	channel, country, delivery := c.QueryParam("channel"), strings.ToUpper(c.QueryParam("country")), c.QueryParam("delivery_type")
	page := ProductPage{Version: snap.CatalogueVersion, Offset: int(offset), Products: []products.Product{}}
	for _, p := range snap.Catalogue.Products() {
		switch {
		case channel != "" && !slices.Contains(p.Channels, channel),
			country != "" && !slices.Contains(p.Countries, country),
			delivery != "" && p.DeliveryType != delivery,
			q != "" && !strings.Contains(strings.ToLower(p.ProductID+"\x00"+p.Name+"\x00"+p.Description+"\x00"+strings.Join(p.Keywords, " ")+"\x00"+p.InternalRef), q):
			continue
		}
		if page.Total >= int(offset) && len(page.Products) < int(limit) {
			page.Products = append(page.Products, p)
		}
		page.Total++
	}
	etag(c, snap.CatalogueVersion)
	return c.JSON(http.StatusOK, page)
}

// saveProducts writes a catalogue edit as a version by the token's
// holder, with the X-Change-Note, and answers with the new version.
func (h *Handler) saveProducts(c echo.Context, e store.CatalogueEdit) (store.CatalogueVersion, error) {
	cats, err := h.catalogues()
	if err != nil {
		return store.CatalogueVersion{}, err
	}
	e.Author = admin(c).Name
	if e.Note, err = changeNote(c); err != nil {
		return store.CatalogueVersion{}, err
	}
	v, err := cats.EditCatalogue(c.Request().Context(), pub(c), e)
	if err != nil {
		return v, h.writeErr(c, err)
	}
	return v, nil
}

func (h *Handler) catalogueVersions(c echo.Context) error {
	cats, err := h.catalogues()
	if err != nil {
		return err
	}
	before, err := intParam(c, "before", 0, 0, 1<<62)
	if err != nil {
		return err
	}
	limit, err := intParam(c, "limit", 50, 1, 500)
	if err != nil {
		return err
	}
	vs, err := cats.CatalogueHistory(c.Request().Context(), pub(c), before, int(limit))
	if err != nil {
		return err
	}
	cur, err := h.Store.Versions(c.Request().Context(), pub(c))
	if err != nil {
		return err
	}
	next := int64(0)
	if len(vs) == int(limit) {
		next = vs[len(vs)-1].Version
	}
	return c.JSON(http.StatusOK, map[string]any{"versions": vs, "current": cur.Catalogue, "next_before": next})
}

// ProductDiff is one product's difference between two catalogue versions.
type ProductDiff struct {
	ProductID string `json:"product_id"`
	// Op is add (the product is new), remove or change.
	Op      string   `json:"op"`
	Changes []Change `json:"changes,omitempty"`
	// InternalOnly says every change is to the confidential internal
	// reference, which buyers never see.
	InternalOnly bool `json:"internal_only,omitempty"`
}

func (h *Handler) catalogueDiff(c echo.Context) error {
	cats, err := h.catalogues()
	if err != nil {
		return err
	}
	from, to, err := diffRange(c)
	if err != nil {
		return err
	}
	limit, err := intParam(c, "limit", 200, 1, 1000)
	if err != nil {
		return err
	}
	changes, total, err := cats.CatalogueDiff(c.Request().Context(), pub(c), from, to, int(limit))
	if err != nil {
		return err
	}
	out := make([]ProductDiff, 0, len(changes))
	for _, ch := range changes {
		d := ProductDiff{ProductID: ch.ProductID}
		switch {
		case ch.Before == nil:
			d.Op = "add"
		case ch.After == nil:
			d.Op = "remove"
		default:
			d.Op = "change"
			a, b := generic(ch.Before), generic(ch.After)
			walk(&d.Changes, "", a, b)
			d.InternalOnly = len(d.Changes) > 0
			for _, fc := range d.Changes {
				if fc.Path != "/internal_ref" {
					d.InternalOnly = false
				}
			}
		}
		out = append(out, d)
	}
	return c.JSON(http.StatusOK, map[string]any{"from": from, "to": to, "total": total, "changes": out})
}

// generic is a product as generic JSON, for walk.
func generic(p *products.Product) any {
	b, _ := json.Marshal(p)
	var v any
	_ = json.Unmarshal(b, &v)
	return v
}

// catalogueRollback saves the catalogue as it was at an earlier version
// as the newest version.
func (h *Handler) catalogueRollback(c echo.Context) error {
	req, match, err := rollbackRequest(c)
	if err != nil {
		return err
	}
	if match, err = h.catalogueMatch(c, match); err != nil {
		return err
	}
	cats, err := h.catalogues()
	if err != nil {
		return err
	}
	v, err := cats.RollbackCatalogue(c.Request().Context(), pub(c), req.Version, match, admin(c).Name)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return invalid(jsonfield.Invalid{{Pointer: "/version", Detail: "there is no catalogue version " + strconv.FormatInt(req.Version, 10) + " in the history"}}, "")
	case err != nil:
		return h.writeErr(c, err)
	}
	if err := h.Record(c, audit.CatalogueRollback, "catalogue", catalogueDetail(v)); err != nil {
		return err
	}
	etag(c, v.Version)
	return c.JSON(http.StatusOK, v)
}
