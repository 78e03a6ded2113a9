// This file is the storefront's HTTP surface: it mounts the buyer
// transports, the admin API and console, health and metrics on one echo
// instance, routes each request to its publisher, and shuts down
// gracefully. It holds no business logic.

package app

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/storefront/storefront/admin"
	"github.com/storefront/storefront/agent"
	"github.com/storefront/storefront/console"
	"github.com/storefront/storefront/internal/clock"
	"github.com/storefront/storefront/internal/origin"
	"github.com/storefront/storefront/internal/recovery"
	"github.com/storefront/storefront/internal/requestid"
	"github.com/storefront/storefront/sanitize"
	"github.com/storefront/storefront/signing"
	"github.com/storefront/storefront/store"
	"github.com/storefront/storefront/transport/a2aserver"
	"github.com/storefront/storefront/transport/mcpserver"
)

// ServerConfig configures the HTTP server.
type ServerConfig struct {
	Addr string
	// DefaultPublisher is served at the plain paths.
	DefaultPublisher string
	Agent            *agent.Agent
	// Admin, when set, serves the admin API under /admin/v1.
	Admin *admin.Handler
	// Store says which publishers are served, and whether the storage
	// answers (the health check).
	Store     store.Publishers
	StoreKind string
	Version   string
	// PublicURL, when set, is the origin agent cards advertise, for a
	// storefront behind a proxy. Otherwise a card advertises the request's
	// host if it is one of AllowedHosts, and the listening address if not.
	PublicURL    string
	AllowedHosts []string
	// Keys, when set, publishes each publisher's webhook-signing keys as
	// a JWKS.
	Keys *signing.Keys
	// Metrics, when set, is served at /metrics.
	Metrics http.Handler
	// Limits bound connections and requests; the zero value means
	// DefaultLimits().
	Limits Limits
	// MCPSDKOnly turns the MCP fast path for tools/call off: the SDK
	// answers every request (mcpserver.Guard).
	MCPSDKOnly bool
	// A2ASDKOnly turns the A2A fast path for message-sends off: a2a-go
	// answers every request (a2aserver.Config.SDKOnly).
	A2ASDKOnly bool
	Log        *slog.Logger
}

// Server is the running HTTP server.
type Server struct {
	cfg  ServerConfig
	Echo *echo.Echo
	ln   net.Listener
	http *http.Server
	// publishers remembers publishers known to exist.
	publishers sync.Map
	// origin decides the scheme and host public URLs name.
	origin origin.Policy
	// base is BaseURL once Listen has bound the address.
	base   string
	limits Limits
	// readOnlyRoutes are the routes (method and path) that take no body.
	readOnlyRoutes map[string]bool
}

// NewServer builds the server and its routes.
func NewServer(cfg ServerConfig) *Server {
	e := echo.New()
	e.HideBanner = true
	e.HidePort = true
	s := &Server{cfg: cfg, Echo: e, limits: cfg.Limits}
	if s.limits == (Limits{}) {
		s.limits = DefaultLimits()
	}
	s.origin = origin.Policy{PublicURL: cfg.PublicURL, AllowedHosts: cfg.AllowedHosts, Listen: s.BaseURL}
	e.HTTPErrorHandler = s.httpError
	e.Use(s.edge)

	e.GET("/healthz", s.health)
	if cfg.Metrics != nil {
		e.GET("/metrics", echo.WrapHandler(cfg.Metrics))
	}

	mcpHandler := echo.WrapHandler(mcpserver.Guard(cfg.Agent, s.origin, !cfg.MCPSDKOnly, mcpserver.Handler(mcpserver.New(cfg.Agent, cfg.Version))))
	mcpBody := rpcBody(s.limits.MCPBody, mcpserver.RefuseBody)
	// Stateless MCP is POST only: the SDK would answer GET (no SSE
	// stream) and DELETE (no session) with a 405 anyway, so the router
	// answers every other method, as a JSON-RPC error (httpError).
	e.POST("/mcp", mcpHandler, mcpBody, s.publisher(""))
	e.POST("/p/:publisher/mcp", mcpHandler, mcpBody, s.publisher("publisher"))
	a2aserver.Mount(e, a2aserver.Config{Agent: cfg.Agent, DefaultPublisher: cfg.DefaultPublisher, Version: cfg.Version,
		PublicURL: cfg.PublicURL, AllowedHosts: cfg.AllowedHosts, ListenOrigin: s.BaseURL, Log: cfg.Log, SDKOnly: cfg.A2ASDKOnly},
		rpcBody(s.limits.A2ABody, a2aserver.RefuseBody), s.publisher)
	e.GET(agent.BrandPath, s.brand, s.publisher(""))
	e.GET("/p/:publisher"+agent.BrandPath, s.brand, s.publisher("publisher"))

	if cfg.Keys != nil {
		// The default publisher's keys are the origin's JWKS, where a
		// verifier looks by default; each publisher's are under its prefix.
		e.GET(signing.JWKSPath, s.jwks, s.publisher(""))
		e.GET("/p/:publisher"+signing.JWKSPath, s.jwks, s.publisher("publisher"))
	}

	if cfg.Admin != nil {
		cfg.Admin.MaxBody, cfg.Admin.MaxImport = s.limits.AdminBody, s.limits.ImportBody
		cfg.Admin.Mount(e)
		// The console is static pages that use the admin API.
		console.Mount(e, cfg.Log)
	}
	s.noteReadOnlyRoutes()
	return s
}

// publisher resolves the publisher a request is for: the path parameter
// when param is set, the default publisher otherwise. An unknown publisher
// is a 404, the same as an unknown path. Publishers already seen are
// remembered, so that losing the database turns into the tools' own
// transient errors rather than a transport failure.
func (s *Server) publisher(param string) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			id, prefix := s.cfg.DefaultPublisher, ""
			if param != "" {
				id = c.Param(param)
				prefix = "/p/" + url.PathEscape(id)
			}
			if !s.known(id) {
				if _, err := s.cfg.Store.Publisher(c.Request().Context(), id); err != nil {
					if errors.Is(err, store.ErrNotFound) {
						return echo.NewHTTPError(http.StatusNotFound, "not found")
					}
					return echo.NewHTTPError(http.StatusServiceUnavailable, "storage unavailable")
				}
				s.publishers.Store(id, true)
			}
			r := c.Request()
			if base := s.origin.Of(r) + prefix; !agent.SetRoute(r.Context(), id, base) {
				c.SetRequest(r.WithContext(agent.WithRoute(r.Context(), id, base)))
			}
			return next(c)
		}
	}
}

// jwks serves a publisher's webhook-signing keys, creating its first key
// if it has none yet, so a verifier never finds an empty set.
func (s *Server) jwks(c echo.Context) error {
	id := s.cfg.DefaultPublisher
	if p := c.Param("publisher"); p != "" {
		id = p
	}
	set, err := s.cfg.Keys.JWKS(c.Request().Context(), id)
	if err != nil {
		s.cfg.Log.WarnContext(c.Request().Context(), "jwks", "publisher", id, "err", err)
		return echo.NewHTTPError(http.StatusServiceUnavailable, "temporarily unavailable")
	}
	h := c.Response().Header()
	// Short enough that a rotation is seen soon; verifiers also refetch
	// when a signature names a key they do not have.
	h.Set("Cache-Control", "public, max-age=300")
	h.Set("Access-Control-Allow-Origin", "*")
	b, err := json.Marshal(set)
	if err != nil {
		return err
	}
	return c.Blob(http.StatusOK, "application/jwk-set+json", b)
}

func (s *Server) known(id string) bool {
	_, ok := s.publishers.Load(id)
	return ok
}

func (s *Server) health(c echo.Context) error {
	ctx, cancel := context.WithTimeout(c.Request().Context(), 2*time.Second)
	defer cancel()
	if _, err := s.cfg.Store.Versions(ctx, s.cfg.DefaultPublisher); err != nil {
		return c.JSON(http.StatusServiceUnavailable, map[string]string{"status": "unavailable", "store": s.cfg.StoreKind})
	}
	return c.JSON(http.StatusOK, map[string]string{"status": "ok", "store": s.cfg.StoreKind, "version": s.cfg.Version})
}

// edge is every route's first middleware, five steps in one, since echo
// wraps each request in each middleware anew: it names the request
// (internal/requestid: its context carries the id, for every log line
// about it, and the response echoes it in X-Request-Id, so that a caller's
// report finds those lines), gives it its deadlines (deadlines), logs it
// (accessLog), recovers its panics (recovered) and refuses a body sent to
// a read-only route (readOnly), in that order. The id, the deadline and
// the slot for the route (agent.WithRouteSlot, which publisher fills in)
// share one context, set on the request once.
func (s *Server) edge(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		id := requestid.Of(r.Header.Get(requestid.Header))
		c.Response().Header().Set(requestid.Header, id)
		ctx, cancel := s.deadlines(c, agent.WithRouteSlot(requestid.With(r.Context(), id)))
		defer cancel()
		c.SetRequest(r.WithContext(ctx))
		return s.accessLog(c, next)
	}
}

// recovered is the recover boundary of every route, under the surfaces'
// own (MCP, A2A, admin, console): a panic is logged and counted
// (internal/recovery) on the http surface and answered as a plain 500.
func (s *Server) recovered(c echo.Context, next echo.HandlerFunc) (err error) {
	defer func() {
		what := func() string { return c.Request().Method + " " + c.Path() }
		if recovery.Recovered(c.Request().Context(), s.cfg.Log, "http", what, recover()) {
			err = echo.NewHTTPError(http.StatusInternalServerError, sanitize.Internal.String())
		}
	}()
	return s.readOnly(c, next)
}

// accessLog logs each request at debug level and server errors at warn.
func (s *Server) accessLog(c echo.Context, next echo.HandlerFunc) error {
	watch := clock.Start()
	err := s.recovered(c, next)
	if err != nil {
		c.Error(err)
	}
	status := c.Response().Status
	level := slog.LevelDebug
	if status >= 500 {
		level = slog.LevelWarn
	}
	if !s.cfg.Log.Enabled(c.Request().Context(), level) {
		// The line's values are not even boxed for a level not logged.
		return nil
	}
	s.cfg.Log.Log(c.Request().Context(), level, "http",
		"method", c.Request().Method, "path", c.Request().URL.Path, "status", status,
		"request_id", c.Response().Header().Get(requestid.Header),
		"duration_ms", float64(watch.Elapsed().Microseconds())/1000)
	return nil
}

// Listen binds the address. It is separate from Serve so callers (and
// tests) learn the bound address, even for port 0, before serving.
func (s *Server) Listen() error {
	ln, err := net.Listen("tcp", s.cfg.Addr)
	if err != nil {
		return err
	}
	s.ln = ln
	// Every routed request names its base URL: it is spelled once the
	// address is bound, before anything is served.
	s.base = s.baseURL()
	return nil
}

// Addr is the bound address.
func (s *Server) Addr() string {
	if s.ln == nil {
		return s.cfg.Addr
	}
	return s.ln.Addr().String()
}

// Serve serves until ctx ends, then shuts down gracefully, letting
// in-flight requests finish for up to ten seconds.
func (s *Server) Serve(ctx context.Context) error {
	if s.ln == nil {
		if err := s.Listen(); err != nil {
			return err
		}
	}
	l := s.limits
	s.http = &http.Server{Handler: s.Echo, ReadHeaderTimeout: l.ReadHeaderTimeout, ReadTimeout: l.ReadTimeout,
		WriteTimeout: l.WriteTimeout, IdleTimeout: l.IdleTimeout, MaxHeaderBytes: int(l.MaxHeaderBytes)}
	errc := make(chan error, 1)
	go func() { errc <- s.http.Serve(s.ln) }()
	select {
	case err := <-errc:
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		return err
	case <-ctx.Done():
	}
	shut, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := s.http.Shutdown(shut); err != nil {
		return err
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// Agent is the agent the buyer transports dispatch to.
func (s *Server) Agent() *agent.Agent { return s.cfg.Agent }

// BaseURL is the server's http:// base.
func (s *Server) BaseURL() string {
	if s.base != "" {
		return s.base
	}
	return s.baseURL()
}

func (s *Server) baseURL() string {
	addr := s.Addr()
	if strings.HasPrefix(addr, "[::]") || strings.HasPrefix(addr, "0.0.0.0") {
		_, port, _ := net.SplitHostPort(addr)
		addr = "127.0.0.1:" + port
	}
	return "http://" + addr
}
