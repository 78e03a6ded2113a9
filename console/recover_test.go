package console

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/storefront/storefront/metrics"
)

// TestRecoverPanics: a panic while serving a console page is a plain 500
// that shows nothing of it, with the console's security headers, and is
// counted.
func TestRecoverPanics(t *testing.T) {
	e := echo.New()
	g := e.Group("/console", headers, recoverPanics(slog.New(slog.DiscardHandler)))
	g.GET("/boom", func(echo.Context) error { panic("xyzzy-internal-panic-detail") })
	before := metrics.RecoveredPanics("console")
	w := httptest.NewRecorder()
	e.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/console/boom", nil))
	if w.Code != http.StatusInternalServerError || w.Body.String() != "Internal error." {
		t.Errorf("status %d, body %q; want 500 and the fixed line", w.Code, w.Body)
	}
	if w.Header().Get("Content-Security-Policy") != Policy {
		t.Errorf("the 500 lacks the console's headers: %v", w.Header())
	}
	if got := metrics.RecoveredPanics("console") - before; got != 1 {
		t.Errorf("recovered panics on console moved by %v, want 1", got)
	}
}
