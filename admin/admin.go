package admin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/storefront/storefront/buying"
	"github.com/storefront/storefront/internal/clock"
	"github.com/storefront/storefront/internal/limit"
	"github.com/storefront/storefront/internal/recovery"
	"github.com/storefront/storefront/jsonfield"
	"github.com/storefront/storefront/metrics"
	"github.com/storefront/storefront/products"
	"github.com/storefront/storefront/signing"
	"github.com/storefront/storefront/store"
)

// Store is what the admin API reads and writes: publishers' settings,
// catalogues and rulebooks, accounts, tokens, the audit trail, the ledger,
// and the order desk's buys. Catalogue history, bulk loads and backtests
// use the optional roles (store.Catalogues, store.Recordings) when the
// store has them.
type Store interface {
	store.Publishers
	store.Products
	store.Rulebooks
	store.Accounts
	store.Tokens
	store.Audit
	store.Ledgers
	store.MediaBuys
}

// Handler serves the admin API.
type Handler struct {
	Store Store
	// Preview answers preview requests; it must have no ledger and no
	// directives, so previews change nothing.
	Preview *products.Service
	Snaps   *store.Snapshots
	// Keys manages the publishers' webhook-signing keys.
	Keys *signing.Keys
	Log  *slog.Logger
	Now  func() time.Time
	// Metrics, when set, counts imports and backtests.
	Metrics *metrics.Metrics

	backtestOnce sync.Once
	backtestSlot chan struct{}
	// Buying decides orders (orders.go); Notify sends the buyer the
	// webhook of a decided order's task.
	Buying *buying.Service
	Notify buying.Notify
	// MaxBody bounds an admin request body and MaxImport a catalogue
	// import's, in bytes; zero means DefaultMaxBody and DefaultMaxImport.
	MaxBody, MaxImport int64
}

// DefaultMaxBody is the largest admin request body by default, in bytes.
const DefaultMaxBody = 2 << 20

// importRoute is the catalogue import's route: it streams a file far
// larger than any other body.
const importRoute = "/admin/v1/publishers/:publisher/catalogue/import"

// bulkRoutes move or walk whole catalogues and ledgers: an import, the
// exports, the chain verifications and backtests. They may take far longer
// than other requests.
var bulkRoutes = map[string]bool{
	importRoute: true,
	"/admin/v1/publishers/:publisher/catalogue/export": true,
	"/admin/v1/publishers/:publisher/decisions/export": true,
	"/admin/v1/publishers/:publisher/ledger/verify":    true,
	"/admin/v1/publishers/:publisher/audit/verify":     true,
	"/admin/v1/publishers/:publisher/backtest":         true,
}

// Bulk reports whether route (an echo route path, as Context.Path names
// it) is one of the bulk routes, which the server gives its bulk deadline
// instead of the usual read and write timeouts.
func Bulk(route string) bool { return bulkRoutes[route] }

// Mount adds the admin API to e under /admin/v1.
func (h *Handler) Mount(e *echo.Echo) {
	// An import streams a file far larger than any other body, so it is
	// outside the group's body limit and has its own (MaxImport).
	e.POST(importRoute, h.importCatalogue, h.problems, h.limitBody(h.maxImport()), sameOrigin(), h.authenticate, h.params, h.scope)
	g := e.Group("/admin/v1", h.problems, h.limitBody(h.maxBody()), sameOrigin(), h.authenticate, h.params)
	g.GET("/whoami", h.whoami)
	p := g.Group("/publishers/:publisher", h.scope)
	p.GET("", h.getPublisher)
	p.PUT("", h.putPublisher)

	p.GET("/products", h.listProducts)
	p.GET("/products/:id", h.getProduct)
	p.PUT("/products/:id", h.putProduct)
	p.DELETE("/products/:id", h.deleteProduct)
	p.GET("/catalogue/versions", h.catalogueVersions)
	p.GET("/catalogue/diff", h.catalogueDiff)
	p.POST("/catalogue/rollback", h.catalogueRollback)

	p.GET("/rulebook", h.getRulebook)
	p.PUT("/rulebook", h.putRulebook)
	p.POST("/rulebook/validate", h.validateRulebook)
	p.POST("/rulebook/preview", h.previewDraft)
	p.GET("/rulebook/versions", h.listVersions)
	p.GET("/rulebook/versions/:version", h.getVersion)
	p.GET("/rulebook/diff", h.diff)
	p.POST("/rulebook/rollback", h.rollback)
	p.GET("/voice", h.getVoice)
	p.PUT("/voice", h.putVoice)

	p.POST("/preview", h.preview)
	p.POST("/backtest", h.backtest)

	p.GET("/catalogue/export", h.exportCatalogue)
	p.GET("/decisions/export", h.exportDecisions)
	p.GET("/decisions", h.decisions)
	p.GET("/decisions/stats", h.stats)
	p.GET("/ledger/verify", h.verify)
	p.GET("/charts/declines.svg", h.chartDeclines)
	p.GET("/charts/arms.svg", h.chartArms)
	p.GET("/charts/returns.svg", h.chartReturns)

	p.GET("/accounts", h.listAccounts)
	p.PUT("/accounts/:id", h.putAccount)
	p.POST("/buyer-tokens", h.createBuyerToken)
	h.mountBuying(p)

	p.GET("/tokens", h.listTokens)
	p.POST("/tokens", h.createToken)
	p.GET("/tokens/:id", h.getToken)
	p.POST("/tokens/:id/revoke", h.revokeToken)
	p.POST("/tokens/:id/rotate", h.rotateToken)
	p.GET("/audit", h.auditTrail)
	p.GET("/audit/verify", h.auditVerify)

	if h.Keys != nil {
		p.GET("/signing-keys", h.listSigningKeys)
		p.POST("/signing-keys/rotate", h.rotateSigningKey)
	}
}

// problems makes every error in the group render as problem+json. It is
// the admin API's recover boundary: a panic is logged and counted
// (internal/recovery) and answered as the internal-error problem, 500,
// which names nothing of it.
func (h *Handler) problems(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		var err error
		if recovery.Run(c.Request().Context(), h.Log, "admin", c.Request().Method+" "+c.Path(), func() { err = next(c) }) {
			err = errPanicked
		}
		if err != nil {
			h.errorHandler(err, c)
		}
		return nil
	}
}

// errPanicked stands for a recovered panic, which the boundary has logged.
var errPanicked = errors.New("recovered a panic")

// authenticate resolves the admin bearer token.
func (h *Handler) authenticate(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		scheme, token, ok := strings.Cut(c.Request().Header.Get("Authorization"), " ")
		token = strings.TrimSpace(token)
		if !ok || !strings.EqualFold(scheme, "bearer") || token == "" {
			c.Response().Header().Set("WWW-Authenticate", `Bearer realm="storefront-admin"`)
			return newProblem(http.StatusUnauthorized, "unauthorized", "Unauthorized", "send Authorization: Bearer <admin token>")
		}
		// Read from the store on every request, never cached: a revoked
		// or expired token is refused from the next request on, on every
		// replica.
		t, err := h.Store.UseToken(c.Request().Context(), store.AdminToken, "", store.TokenDigest(token), h.now())
		if errors.Is(err, store.ErrNotFound) {
			c.Response().Header().Set("WWW-Authenticate", `Bearer realm="storefront-admin", error="invalid_token"`)
			return newProblem(http.StatusUnauthorized, "unauthorized", "Unauthorized", "the admin token was not accepted")
		}
		if err != nil {
			return err
		}
		c.Set("admin", t.Admin())
		return next(c)
	}
}

// scope refuses any publisher but the token's with the same 404 as a
// publisher that does not exist.
func (h *Handler) scope(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if c.Param("publisher") != admin(c).Publisher {
			return notFound()
		}
		return next(c)
	}
}

func admin(c echo.Context) store.Admin {
	a, _ := c.Get("admin").(store.Admin)
	return a
}

func pub(c echo.Context) string { return admin(c).Publisher }

func (h *Handler) whoami(c echo.Context) error {
	a := admin(c)
	return c.JSON(http.StatusOK, map[string]string{"publisher": a.Publisher, "token_name": a.Name, "token_id": a.TokenID})
}

func (h *Handler) now() time.Time {
	return clock.Read(h.Now)
}

func (h *Handler) maxBody() int64 {
	if h.MaxBody > 0 {
		return h.MaxBody
	}
	return DefaultMaxBody
}

func (h *Handler) maxImport() int64 {
	if h.MaxImport > 0 {
		return h.MaxImport
	}
	return DefaultMaxImport
}

// limitBody refuses a body declared larger than max bytes before it is
// read, and bounds the rest, which body and the import read.
func (h *Handler) limitBody(max int64) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			r := c.Request()
			if r.ContentLength > max {
				c.Response().Header().Set("Connection", "close")
				return bodyProblem(limit.TooLarge(max))
			}
			r.Body = http.MaxBytesReader(c.Response(), r.Body, max)
			return next(c)
		}
	}
}

// bodyProblem is the problem for a body that could not be taken.
func bodyProblem(f *limit.Failure) error {
	switch f.Status {
	case http.StatusRequestEntityTooLarge:
		return newProblem(f.Status, "too-large", "Body too large", f.Detail+"; nothing was saved")
	case http.StatusRequestTimeout:
		return newProblem(f.Status, "too-slow", "Body too slow", f.Detail+"; nothing was saved")
	}
	return newProblem(f.Status, "unreadable", "Unreadable body", f.Detail+"; nothing was saved")
}

// body reads the request body whole.
func body(c echo.Context) ([]byte, error) {
	b, err := io.ReadAll(c.Request().Body)
	if err != nil {
		c.Response().Header().Set("Connection", "close")
		return nil, bodyProblem(limit.Classify(err))
	}
	return b, nil
}

// decodeBody reads the request body and decodes it strictly into v. An
// empty body leaves v as it is, for requests whose fields are all
// optional.
func decodeBody(c echo.Context, v any) error {
	b, err := body(c)
	if err != nil || len(bytes.TrimSpace(b)) == 0 {
		return err
	}
	if err := jsonfield.Decode(b, v); err != nil {
		return invalid(err, "")
	}
	return nil
}

// ifMatch reads the If-Match version. Writes require it: without it a
// concurrent edit could be lost.
// versionedWrite reads a write that edits a versioned document: the
// version its If-Match names, and its body decoded strictly into v.
func versionedWrite(c echo.Context, v any) (int64, error) {
	match, err := ifMatch(c)
	if err != nil {
		return 0, err
	}
	b, err := body(c)
	if err != nil {
		return 0, err
	}
	if err := jsonfield.Decode(b, v); err != nil {
		return 0, invalid(err, "")
	}
	return match, nil
}

func ifMatch(c echo.Context) (int64, error) {
	h := strings.TrimSpace(c.Request().Header.Get("If-Match"))
	if h == "" {
		return 0, newProblem(http.StatusPreconditionRequired, "precondition-required", "If-Match required",
			"send the version you edited in If-Match (the ETag of your last read) so that a concurrent edit cannot be lost")
	}
	h = strings.TrimPrefix(h, "W/")
	h = strings.Trim(h, `"`)
	v, err := strconv.ParseInt(h, 10, 64)
	if err != nil || v < 0 {
		return 0, newProblem(http.StatusBadRequest, "bad-if-match", "Bad If-Match", "If-Match must be a version number such as \"3\"")
	}
	return v, nil
}

func etag(c echo.Context, v int64) {
	c.Response().Header().Set("ETag", `"`+strconv.FormatInt(v, 10)+`"`)
}

func jsonMarshal(v any) ([]byte, error) { return json.Marshal(v) }

// isUnavailable reports errors that mean the storage cannot serve now:
// the store says so by type (store.ErrUnavailable), or the request ran
// out of time waiting for it.
func isUnavailable(err error) bool {
	return errors.Is(err, store.ErrUnavailable) || errors.Is(err, context.DeadlineExceeded)
}
