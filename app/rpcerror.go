package app

import (
	"errors"
	"net/http"
	"regexp"

	"github.com/labstack/echo/v4"

	"github.com/storefront/storefront/internal/jsonrpc"
)

// rpcPath matches the JSON-RPC endpoints: /mcp and /a2a, plain or under a
// publisher's prefix.
var rpcPath = regexp.MustCompile(`^(/p/[^/]+)?/(mcp|a2a)/?$`)

// httpError renders an error no handler answered (an unknown publisher, a
// method the route does not serve, a refused body) in the terms of the
// surface asked: a JSON-RPC error on /mcp and /a2a, echo's JSON
// elsewhere (the admin API renders its own as problem+json).
func (s *Server) httpError(err error, c echo.Context) {
	if c.Response().Committed || !rpcPath.MatchString(c.Request().URL.Path) {
		s.Echo.DefaultHTTPErrorHandler(err, c)
		return
	}
	status, message := http.StatusInternalServerError, http.StatusText(http.StatusInternalServerError)
	var he *echo.HTTPError
	if errors.As(err, &he) {
		status = he.Code
		message = http.StatusText(he.Code)
		if m, ok := he.Message.(string); ok && m != "" {
			message = m
		}
	} else {
		s.cfg.Log.ErrorContext(c.Request().Context(), "http", "path", c.Request().URL.Path, "err", err)
	}
	code := jsonrpc.InvalidRequest
	if status >= 500 {
		code = jsonrpc.InternalError
	}
	if c.Request().Method == http.MethodHead {
		_ = c.NoContent(status)
		return
	}
	jsonrpc.WriteError(c.Response(), status, nil, code, message, nil)
}
