// Package console is the publisher console: the web pages at /console/
// where a publisher's sales team signs in with its admin token, edits the
// rulebook as forms, previews what a buyer would receive, reads the
// version history and rolls back, reads the decision ledger and its
// charts, manages its admin and buyer tokens, and reads the audit trail.
//
// The console is static files embedded in the binary (HTML, CSS and plain
// JavaScript modules; no build step) plus vocabulary.json, the public
// vocabulary its forms offer, generated from the same Go values the
// validator uses. Every read and write of publisher data goes from the
// browser to the admin API under /admin/v1, so the API can do everything
// the console can.
//
// It must never hold publisher data, tokens or sessions on the server,
// never accept a token in a URL, and never let a page render data as
// markup: its pages run under a Content-Security-Policy that allows only
// its own scripts and requires Trusted Types, so an innerHTML assignment
// fails outright.
package console

import (
	"embed"
	"encoding/json"
	"io/fs"
	"log/slog"
	"net/http"
	"sort"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/storefront/storefront/adcp"
	"github.com/storefront/storefront/audit"
	"github.com/storefront/storefront/internal/recovery"
	"github.com/storefront/storefront/merch"
	"github.com/storefront/storefront/products"
	"github.com/storefront/storefront/vocab"
)

//go:embed static
var static embed.FS

// Prefix is where the console is served.
const Prefix = "/console/"

// Policy is the Content-Security-Policy of every console response. Scripts
// and styles come only from the console's own files (no inline code, no
// eval); charts are fetched with the bearer token and shown from blob:
// URLs; the pages may talk only to their own origin, may not be framed,
// and Trusted Types turn every string-to-markup sink into an error.
const Policy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' blob:; connect-src 'self'; " +
	"form-action 'none'; base-uri 'none'; frame-ancestors 'none'; " +
	"require-trusted-types-for 'script'; trusted-types 'none'"

// Mount serves the console under /console/. log is where a recovered
// panic is logged.
func Mount(e *echo.Echo, log *slog.Logger) {
	files, err := fs.Sub(static, "static")
	if err != nil {
		panic(err)
	}
	vocab, err := Vocabulary()
	if err != nil {
		panic(err)
	}
	fileServer := http.StripPrefix(strings.TrimSuffix(Prefix, "/"), http.FileServerFS(files))
	g := e.Group(strings.TrimSuffix(Prefix, "/"), headers, recoverPanics(log))
	g.GET("", func(c echo.Context) error { return c.Redirect(http.StatusMovedPermanently, Prefix) })
	g.GET("/vocabulary.json", func(c echo.Context) error {
		return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, vocab)
	})
	g.Match([]string{http.MethodGet, http.MethodHead}, "/*", echo.WrapHandler(fileServer))
}

// headers sets the security headers on every console response.
func headers(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		h := c.Response().Header()
		h.Set("Content-Security-Policy", Policy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		h.Set("Cross-Origin-Resource-Policy", "same-origin")
		h.Set("Permissions-Policy", "camera=(), microphone=(), geolocation=(), payment=()")
		// A new binary's console takes effect on the next load.
		h.Set("Cache-Control", "no-cache")
		return next(c)
	}
}

// recoverPanics is the console's recover boundary: a panic is logged and
// counted (internal/recovery) and answered with a plain 500 that names
// nothing of it.
func recoverPanics(log *slog.Logger) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) (err error) {
			if recovery.Run(c.Request().Context(), log, "console", c.Request().Method+" "+c.Path(), func() { err = next(c) }) {
				if c.Response().Committed {
					return nil
				}
				return c.String(http.StatusInternalServerError, "Internal error.")
			}
			return err
		}
	}
}

// Slug is one decline slug as the forms offer it.
type Slug struct {
	Slug     vocab.Slug `json:"slug"`
	Reason   string     `json:"reason"`
	Fixable  bool       `json:"fixable"`
	Suggests []string   `json:"suggests"`
}

// Vocab is what the console's forms offer: the values the rulebook
// validator accepts, from the Go values it checks against.
type Vocab struct {
	Format          string   `json:"format"`
	Slugs           []Slug   `json:"slugs"`
	Disclosure      []string `json:"disclosure_levels"`
	SuggestionKinds []string `json:"suggestion_kinds"`
	Tones           []string `json:"tones"`
	Placeholders    []string `json:"template_placeholders"`
	Channels        []string `json:"channels"`
	FormatKinds     []string `json:"format_kinds"`
	DeliveryTypes   []string `json:"delivery_types"`
	Versions        []string `json:"adcp_versions"`
	// AuditActions are the actions the audit trail records.
	AuditActions []string `json:"audit_actions"`
	// Product holds the values the product form offers.
	Product products.FieldValues `json:"product"`
}

// Vocabulary returns vocabulary.json.
func Vocabulary() ([]byte, error) {
	v := Vocab{
		Format: merch.Format, Disclosure: vocab.Levels(),
		Channels: adcp.Channels(), FormatKinds: adcp.FormatKinds(), DeliveryTypes: adcp.DeliveryTypes(),
	}
	for _, e := range vocab.Vocabulary() {
		s := Slug{Slug: e.Slug, Reason: e.Reason, Fixable: e.Fixable, Suggests: []string{}}
		for _, k := range e.Suggests {
			s.Suggests = append(s.Suggests, string(k))
		}
		v.Slugs = append(v.Slugs, s)
	}
	for _, k := range vocab.SuggestionKinds() {
		v.SuggestionKinds = append(v.SuggestionKinds, string(k))
	}
	for _, t := range vocab.Tones() {
		v.Tones = append(v.Tones, string(t))
	}
	for name := range vocab.Placeholders() {
		v.Placeholders = append(v.Placeholders, name)
	}
	sort.Strings(v.Placeholders)
	v.Versions = adcp.SupportedStrings()
	for _, a := range audit.Actions() {
		v.AuditActions = append(v.AuditActions, string(a))
	}
	v.Product = products.Values()
	return json.Marshal(v)
}
