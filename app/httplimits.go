package app

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/storefront/storefront/admin"
	"github.com/storefront/storefront/internal/clock"
	"github.com/storefront/storefront/internal/limit"
)

// Limits bound what one connection and one request may take. Each has a
// serve flag and an environment variable (app), and the README lists their
// values.
type Limits struct {
	// ReadHeaderTimeout bounds reading a request's head, ReadTimeout its
	// head and body together: a client that dribbles either is cut.
	ReadHeaderTimeout time.Duration
	ReadTimeout       time.Duration
	// WriteTimeout bounds a request from the end of its head to the end
	// of its answer; the request's work is cancelled when it passes.
	WriteTimeout time.Duration
	// IdleTimeout bounds a kept-alive connection between requests.
	IdleTimeout time.Duration
	// BulkTimeout replaces ReadTimeout and WriteTimeout on the admin API's
	// bulk routes (admin.Bulk): catalogue import and export, ledger export,
	// ledger and audit verification, backtests.
	BulkTimeout time.Duration
	// MaxHeaderBytes bounds a request's head on every surface: net/http
	// reads the whole head before a route is chosen, and answers 431 past
	// it.
	MaxHeaderBytes int64
	// Body limits, in bytes, per surface: MCP, A2A, the admin API, a
	// catalogue import, and the read-only surfaces (console, /healthz,
	// /metrics, agent cards, brand.json, JWKS), which read no body.
	MCPBody, A2ABody, AdminBody, ImportBody, ReadOnlyBody int64
}

// DefaultLimits() returns the limits serve uses unless told otherwise.
func DefaultLimits() Limits { return defaultLimits }

var defaultLimits = Limits{
	ReadHeaderTimeout: 10 * time.Second,
	ReadTimeout:       30 * time.Second,
	WriteTimeout:      60 * time.Second,
	IdleTimeout:       2 * time.Minute,
	BulkTimeout:       time.Hour,
	MaxHeaderBytes:    32 << 10,
	MCPBody:           1 << 20,
	A2ABody:           1 << 20,
	AdminBody:         admin.DefaultMaxBody,
	ImportBody:        admin.DefaultMaxImport,
	ReadOnlyBody:      0,
}

// Check refuses limits that would cut ordinary requests or contradict each
// other, naming the values.
func (l Limits) Check() error {
	for _, t := range []struct {
		name string
		d    time.Duration
	}{{"read-header", l.ReadHeaderTimeout}, {"read", l.ReadTimeout}, {"write", l.WriteTimeout}, {"idle", l.IdleTimeout}, {"bulk", l.BulkTimeout}} {
		if t.d < time.Second {
			return fmt.Errorf("the %s timeout is %s: every timeout is a second or more", t.name, t.d)
		}
	}
	for _, b := range []struct {
		name string
		n    int64
	}{{"header", l.MaxHeaderBytes}, {"MCP body", l.MCPBody}, {"A2A body", l.A2ABody}, {"admin body", l.AdminBody}, {"import body", l.ImportBody}} {
		if b.n < 4<<10 {
			return fmt.Errorf("the %s limit is %s: it must be 4 KiB or more, as ordinary clients send a few KiB", b.name, limit.Size(b.n))
		}
	}
	switch {
	case l.ReadHeaderTimeout > l.ReadTimeout:
		return fmt.Errorf("the read-header timeout (%s) is part of the read timeout (%s), so it cannot be longer", l.ReadHeaderTimeout, l.ReadTimeout)
	case l.WriteTimeout < l.ReadTimeout:
		return fmt.Errorf("the write timeout (%s) is shorter than the read timeout (%s): a body read in time could leave no time to answer", l.WriteTimeout, l.ReadTimeout)
	case l.BulkTimeout < l.WriteTimeout:
		return fmt.Errorf("the bulk timeout (%s) is shorter than the write timeout (%s): bulk routes get more time than others, not less", l.BulkTimeout, l.WriteTimeout)
	case l.ReadOnlyBody < 0:
		return errors.New("the read-only body limit cannot be negative")
	}
	return nil
}

// deadlines gives the request c its deadlines: the write deadline, which
// also ends the request's work (the context it returns, of ctx), and for a
// bulk route a read deadline as long. (net/http clears the read deadline
// once a body is read, so the read timeout never cuts work that is still
// within its time to answer.)
func (s *Server) deadlines(c echo.Context, ctx context.Context) (context.Context, context.CancelFunc) {
	l := s.limits
	answer := l.WriteTimeout
	bulk := admin.Bulk(c.Path())
	if bulk {
		answer = l.BulkTimeout
	}
	by := clock.Deadline(answer)
	if bulk {
		// net/http gave the connection a write deadline WriteTimeout from
		// when the request's header was read (Serve's server has
		// WriteTimeout); only a bulk route's, longer, is set again.
		rc := http.NewResponseController(c.Response())
		_ = rc.SetWriteDeadline(by)
		_ = rc.SetReadDeadline(by)
	}
	return context.WithDeadline(ctx, by)
}

// readOnly refuses a request to a read-only route (a GET or HEAD of the
// console, /healthz, /metrics, an agent card, brand.json or a JWKS) that
// declares a body of more than ReadOnlyBody bytes, and passes any other
// to next: those surfaces read none, so such a request is not one they
// serve.
func (s *Server) readOnly(c echo.Context, next echo.HandlerFunc) error {
	r := c.Request()
	if get := r.Method == http.MethodGet || r.Method == http.MethodHead; get && r.ContentLength > s.limits.ReadOnlyBody && s.readOnlyRoutes[r.Method+" "+c.Path()] {
		c.Response().Header().Set("Connection", "close")
		detail := "this endpoint takes no request body"
		if s.limits.ReadOnlyBody > 0 {
			detail = limit.TooLarge(s.limits.ReadOnlyBody).Detail
		}
		return echo.NewHTTPError(http.StatusRequestEntityTooLarge, detail)
	}
	return next(c)
}

// noteReadOnlyRoutes records the read-only routes among e's: every GET
// and HEAD route but the admin API's, whose own body limit applies.
func (s *Server) noteReadOnlyRoutes() {
	s.readOnlyRoutes = map[string]bool{}
	for _, rt := range s.Echo.Routes() {
		if (rt.Method == http.MethodGet || rt.Method == http.MethodHead) && !strings.HasPrefix(rt.Path, "/admin/") {
			s.readOnlyRoutes[rt.Method+" "+rt.Path] = true
		}
	}
}

// rpcBody reads a JSON-RPC surface's body whole, within max bytes, before
// the transport sees it; a body it cannot take is answered by refuse in
// the surface's own terms.
func rpcBody(max int64, refuse func(http.ResponseWriter, []byte, *limit.Failure)) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			r := c.Request()
			b, f := limit.Body(c.Response(), r, max)
			if f != nil {
				refuse(c.Response(), b, f)
				return nil
			}
			if b != nil {
				r.Body = limit.NewBuffered(b)
			}
			return next(c)
		}
	}
}
