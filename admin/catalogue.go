package admin

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/storefront/storefront/audit"
	"github.com/storefront/storefront/field"
	"github.com/storefront/storefront/jsonfield"
	"github.com/storefront/storefront/products"
	"github.com/storefront/storefront/store"
)

// PublisherSettings are the publisher fields an admin may change.
type PublisherSettings struct {
	Name   string `json:"name"`
	Domain string `json:"domain"`
	// AnonymousDiscovery lets buyers call get_products without
	// credentials for public (account-less) requests.
	AnonymousDiscovery bool `json:"anonymous_discovery"`
}

func (h *Handler) getPublisher(c echo.Context) error {
	p, err := h.Store.Publisher(c.Request().Context(), pub(c))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, p)
}

func (h *Handler) putPublisher(c echo.Context) error {
	b, err := body(c)
	if err != nil {
		return err
	}
	var s PublisherSettings
	if err := jsonfield.Decode(b, &s); err != nil {
		return invalid(err, "")
	}
	var v jsonfield.Invalid
	v.Check("/name", field.Name.Check(s.Name))
	v.Check("/domain", field.Hostname(s.Domain))
	if err := v.Err(); err != nil {
		return invalid(err, "")
	}
	p := products.Publisher{ID: pub(c), Name: s.Name, Domain: s.Domain, AnonymousDiscovery: s.AnonymousDiscovery}
	if err := h.servedPublisher(c.Request().Context(), p); err != nil {
		return refused(err, "")
	}
	if err := h.Store.PutPublisher(c.Request().Context(), p); err != nil {
		return err
	}
	if err := h.Record(c, audit.PublisherUpdate, p.ID, map[string]string{
		"name": p.Name, "domain": p.Domain, "anonymous_discovery": strconv.FormatBool(p.AnonymousDiscovery),
	}); err != nil {
		return err
	}
	return c.JSON(http.StatusOK, p)
}

// Catalogue is the product list with its version.
type Catalogue struct {
	Version  int64              `json:"catalogue_version"`
	Products []products.Product `json:"products"`
}

func (h *Handler) listProducts(c echo.Context) error {
	q := c.QueryParams()
	for _, k := range []string{"q", "channel", "country", "delivery_type", "limit", "offset"} {
		if q.Has(k) {
			return h.searchProducts(c)
		}
	}
	ps, v, err := h.Store.Catalogue(c.Request().Context(), pub(c))
	if err != nil {
		return err
	}
	if ps == nil {
		ps = []products.Product{}
	}
	etag(c, v)
	return c.JSON(http.StatusOK, Catalogue{Version: v, Products: ps})
}

func (h *Handler) getProduct(c echo.Context) error {
	ps, v, err := h.Store.Catalogue(c.Request().Context(), pub(c))
	if err != nil {
		return err
	}
	for _, p := range ps {
		if p.ProductID == c.Param("id") {
			etag(c, v)
			return c.JSON(http.StatusOK, p)
		}
	}
	return notFound()
}

func (h *Handler) putProduct(c echo.Context) error {
	var p products.Product
	match, err := versionedWrite(c, &p)
	if err != nil {
		return err
	}
	if p.ProductID == "" {
		p.ProductID = c.Param("id")
	}
	if p.ProductID != c.Param("id") {
		return invalid(jsonfield.Invalid{{Pointer: "/product_id", Detail: "product_id must equal the id in the URL"}}, "")
	}
	if err := h.checkProduct(&p); err != nil {
		return invalid(err, "")
	}
	lint, err := h.productLint(c.Request().Context(), pub(c))
	if err != nil {
		return err
	}
	if err := lint.put(p); err != nil {
		return refused(err, "")
	}
	if match, err = h.catalogueMatch(c, match); err != nil {
		return err
	}
	v, err := h.saveProducts(c, store.CatalogueEdit{Put: []products.Product{p}, IfMatch: match})
	if err != nil {
		return err
	}
	if err := h.Record(c, audit.ProductPut, p.ProductID, catalogueDetail(v)); err != nil {
		return err
	}
	etag(c, v.Version)
	return c.JSON(http.StatusOK, map[string]any{"catalogue_version": v.Version, "version": v, "product": p})
}

func (h *Handler) deleteProduct(c echo.Context) error {
	match, err := ifMatch(c)
	if err != nil {
		return err
	}
	if match, err = h.catalogueMatch(c, match); err != nil {
		return err
	}
	v, err := h.saveProducts(c, store.CatalogueEdit{Delete: []string{c.Param("id")}, IfMatch: match})
	if err != nil {
		return err
	}
	if err := h.Record(c, audit.ProductDelete, c.Param("id"), catalogueDetail(v)); err != nil {
		return err
	}
	etag(c, v.Version)
	return c.JSON(http.StatusOK, map[string]any{"catalogue_version": v.Version, "version": v})
}

// catalogueDetail is what the audit trail keeps of a catalogue write: the
// version it saved, how many products it put and deleted, and its note.
func catalogueDetail(v store.CatalogueVersion) map[string]string {
	d := map[string]string{
		"catalogue_version": strconv.FormatInt(v.Version, 10),
		"products_put":      strconv.FormatInt(v.Put, 10),
		"products_deleted":  strconv.FormatInt(v.Deleted, 10),
	}
	if v.Note != "" {
		d["note"] = v.Note
	}
	return d
}

// catalogueMatch turns the If-Match version into the store's ifMatch. The
// store reads 0 as "no check", so If-Match "0" (an empty catalogue) is
// checked here by reading the version first.
func (h *Handler) catalogueMatch(c echo.Context, v int64) (int64, error) {
	if v != 0 {
		return v, nil
	}
	vs, err := h.Store.Versions(c.Request().Context(), pub(c))
	if err != nil {
		return 0, err
	}
	if vs.Catalogue != 0 {
		return 0, stale(vs.Catalogue)
	}
	return 0, nil
}

// writeErr turns a store conflict into the stale-edit problem carrying the
// current version.
func (h *Handler) writeErr(c echo.Context, err error) error {
	if errors.Is(err, store.ErrConflict) {
		vs, verr := h.Store.Versions(c.Request().Context(), pub(c))
		if verr != nil {
			return verr
		}
		return stale(vs.Catalogue)
	}
	return err
}
