package a2aserver

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/url"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	a2alog "github.com/a2aproject/a2a-go/v2/log"
	"github.com/labstack/echo/v4"

	"github.com/storefront/storefront/agent"
	"github.com/storefront/storefront/internal/jsonrpc"
	"github.com/storefront/storefront/internal/limit"
	"github.com/storefront/storefront/internal/recovery"
)

// CardPath is where the agent card is served, at the origin and, because
// A2A clients look for it relative to the URL they are given, under /a2a.
const CardPath = "/.well-known/agent-card.json"

// Config configures the A2A surface.
type Config struct {
	Agent *agent.Agent
	// DefaultPublisher is served at the plain paths; others under
	// /p/:publisher.
	DefaultPublisher string
	// Version is the storefront build, shown on the card.
	Version string
	// PublicURL, when set, is the origin the card advertises (for example
	// behind a TLS-terminating proxy). Without it the card never takes
	// its origin from an arbitrary Host header (see Server.origin).
	PublicURL string
	// AllowedHosts are the Host values the card may advertise when
	// PublicURL is not set: a request naming one of them gets a card with
	// its own host; any other gets ListenOrigin.
	AllowedHosts []string
	// ListenOrigin returns the origin of the address the storefront
	// listens on, such as http://127.0.0.1:8080.
	ListenOrigin func() string
	Log          *slog.Logger
	// SDKOnly answers every request through a2a-go, the fast path for
	// message-sends (fast.go) off.
	SDKOnly bool
}

// internalErrorCode is JSON-RPC's internal error.
const internalErrorCode = -32603

// Server is the A2A surface of one storefront.
type Server struct {
	cfg      Config
	h        *handler
	v10, v03 http.Handler
}

// New builds the A2A surface.
func New(cfg Config) *Server {
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	h := &handler{agent: cfg.Agent, log: cfg.Log}
	// What SendMessage's own boundary does not catch: a2a-go's decoding
	// and encoding, and the other methods.
	recovered := a2asrv.WithTransportPanicHandler(func(r any) error {
		recovery.Report(context.Background(), cfg.Log, "a2a", "A2A transport", r)
		return a2a.ErrInternalError
	})
	return &Server{
		cfg: cfg,
		h:   h,
		v10: a2asrv.NewJSONRPCHandler(h, recovered),
		v03: a2av0.NewJSONRPCHandler(h, recovered),
	}
}

// Mount adds the A2A routes to e: the JSON-RPC endpoint and the agent card
// for the default publisher at the plain paths and for the others under
// /p/:publisher. limit bounds the request body; publisher(param) is the
// server's middleware that resolves the publisher (param "" for the
// default) and answers 404 for an unknown one.
func Mount(e *echo.Echo, cfg Config, limit echo.MiddlewareFunc, publisher func(param string) echo.MiddlewareFunc) *Server {
	s := New(cfg)
	e.POST("/a2a", s.serveRPC, limit, publisher(""))
	e.POST("/p/:publisher/a2a", s.serveRPC, limit, publisher("publisher"))
	for _, p := range []string{CardPath, "/a2a" + CardPath} {
		e.GET(p, s.serveCard, publisher(""))
		e.GET("/p/:publisher"+p, s.serveCard, publisher("publisher"))
	}
	return s
}

func (s *Server) publisherOf(c echo.Context) (id string, prefix string) {
	if id := c.Param("publisher"); id != "" {
		return id, "/p/" + url.PathEscape(id)
	}
	return s.cfg.DefaultPublisher, ""
}

// serveRPC routes one JSON-RPC request to the 1.0 or the 0.3 binding. The
// method name decides: 0.3 methods have a slash (message/send), 1.0
// methods do not (SendMessage). 0.3 clients send no A2A-Version header, so
// the header cannot decide.
//
// It is the A2A surface's recover boundary on the HTTP request's goroutine
// (admission, routing, the fast path's reading and writing): a panic there
// is answered as a JSON-RPC internal error. Calls are answered under
// SendMessage's own boundary, or on the fast path under one that answers
// the same way.
func (s *Server) serveRPC(c echo.Context) (err error) {
	r := c.Request()
	body, err := limit.ReadAll(r.Body)
	if err != nil {
		return err // the body limit's 413
	}
	var probe struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	_ = json.Unmarshal(body, &probe) // a2a-go reports malformed bodies
	if code, why := jsonrpc.Unreadable(body); code != 0 {
		// Text no request may carry, which a2a-go would decode into
		// U+FFFD or pass on: refused whole, before any method reads it.
		var id json.RawMessage
		if code != jsonrpc.ParseError {
			id = jsonrpc.Peek(body).ID
		}
		jsonrpc.WriteError(c.Response(), http.StatusOK, id, code, why, nil)
		return nil
	}
	if recovery.Run(r.Context(), s.cfg.Log, "a2a", "A2A "+probe.Method, func() { err = s.route(c, body, probe.ID, probe.Method) }) &&
		!c.Response().Committed {
		jsonrpc.Write(c.Response(), http.StatusInternalServerError, jsonrpc.Error(probe.ID, internalErrorCode, "Internal error", nil))
	}
	return err
}

// route is serveRPC's work, for the request of JSON-RPC id and method.
func (s *Server) route(c echo.Context, body []byte, rpcID json.RawMessage, method string) error {
	r := c.Request()
	id, _ := s.publisherOf(c)
	realm := s.origin(r) + r.URL.EscapedPath()
	// Credentials that name no principal are refused whatever the method,
	// before a2a-go reads the call.
	ctx, err := s.cfg.Agent.Admit(r.Context(), id, r.Header.Get("Authorization"), "", nil)
	if err != nil {
		return unauthenticated(c.Response(), realm, rpcID, err)
	}
	if !s.cfg.SDKOnly && s.h.serveFast(ctx, c, id, body) {
		return nil
	}
	w := &challengeWriter{Response: c.Response()}
	x := &exchange{publisher: id, legacy: strings.Contains(method, "/"), header: w.Header(), realm: realm, challenge: w}
	x.input = rawInput(body, x.legacy)
	ctx = context.WithValue(ctx, exchangeKey{}, x)
	ctx = a2alog.AttachLogger(ctx, s.cfg.Log)
	r = r.WithContext(ctx)
	r.Body = limit.NewBuffered(body)
	// a2a-go's 0.3 binding leaves Content-Type unset on errors.
	w.Header().Set("Content-Type", "application/json")
	held := &sdkAnswer{header: w.Header()}
	if x.legacy {
		s.v03.ServeHTTP(held, r)
	} else {
		s.v10.ServeHTTP(held, r)
	}
	return held.answer(w, body, x.reached.Load(), s.cfg.Agent.Now())
}

// serveCard writes the publisher's agent card.
func (s *Server) serveCard(c echo.Context) error {
	id, prefix := s.publisherOf(c)
	ctx := c.Request().Context()
	snap, err := s.cfg.Agent.Snaps.Snapshot(ctx, id)
	if err != nil {
		s.cfg.Log.WarnContext(ctx, "a2a card: snapshot", "publisher", id, "err", err)
		return echo.NewHTTPError(http.StatusServiceUnavailable, "temporarily unavailable")
	}
	name := "Storefront"
	if n, ok := snap.Screen.Line(snap.Publisher.Name, 200); ok {
		name = n.String()
	}
	// The fallback line holds no publisher data, so it cannot leak any.
	const about = "get_products answers a brief with products, declines it with a reason and suggestions, or fails with a typed error. Send a bearer token in the Authorization header for account-scoped answers."
	desc := "AdCP seller agent: " + about
	if d, ok := snap.Screen.Line("AdCP seller agent for "+name+": "+about, 1000); ok {
		desc = d.String()
	}
	b, err := BuildCard(CardInfo{
		Endpoint:    s.origin(c.Request()) + prefix + "/a2a",
		Name:        name,
		Description: desc,
		Version:     s.cfg.Version,
		Tools:       s.cfg.Agent.Tools(),
	})
	if err != nil {
		return err
	}
	cardHeaders(c.Response().Header(), s.cfg)
	return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, b)
}
