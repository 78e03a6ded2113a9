// Package app is the storefront program: flag parsing, wiring of the store,
// pipeline and transports, and the subcommands. cmd/storefront is a thin
// wrapper around Main so that end-to-end tests can run the real program
// in-process.
package app

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/storefront/storefront/bench"
	"github.com/storefront/storefront/server"
	"github.com/storefront/storefront/store"
	"github.com/storefront/storefront/store/memstore"
	"github.com/storefront/storefront/store/pgstore"
)

// Version is the storefront's build version.
var Version = "0.1.0-dev"

// Main is one run of the program.
type Main struct {
	Stdout, Stderr io.Writer

	// Command is the subcommand: serve, "admin token create", "ledger verify"...
	Command string
	// Flags, after ParseFlags.
	Addr    string
	Sandbox bool
	// AsyncDiscovery turns on background curation of briefs that
	// register a webhook.
	AsyncDiscovery bool
	LogLevel       string
	LogJSON        bool
	DatabaseURL    string
	SeedDemo       bool
	// DefaultPublisher is served at the plain paths.
	DefaultPublisher string
	// DemoBuyerToken and DemoAdminToken fix the demo tokens instead of
	// generating them.
	DemoBuyerToken string
	DemoAdminToken string
	// Subcommand arguments.
	Publisher     string
	Name          string
	Domain        string
	BuyerID       string
	Operator      string
	Accounts      stringList
	AnonDiscovery bool
	// DebugAddr, when set, serves pprof and expvar there (serve only).
	DebugAddr string
	// PublicURL is the origin agent cards advertise (serve only).
	PublicURL string
	// Fixture, for bench serve, sizes the generated publisher served
	// instead of the demo.
	Fixture string
	// Args are the unparsed arguments of commands that parse their own.
	Args []string

	// Now, when set, is the clock the pipeline uses (tests pin it).
	Now func() time.Time

	Store  store.Store
	Server *server.Server
	log    *slog.Logger
	cancel context.CancelFunc
	// Ready is closed once the server is listening (serve only).
	Ready chan struct{}
}

// NewMain returns a Main writing to the process's stdout and stderr.
func NewMain() *Main {
	return &Main{Stdout: os.Stdout, Stderr: os.Stderr, Ready: make(chan struct{})}
}

// commands maps each command to a one-line description, for usage.
var commands = []struct{ name, help string }{
	{"serve", "run the storefront (the default)"},
	{"bench serve", "run the storefront on a generated publisher for load tests (--fixture products=N,rules=N,deny=N)"},
	{"bench load", "drive get_products over MCP at a running storefront and report throughput and latency"},
	{"bench ceiling", "serve recorded answers from a bare net/http handler (started by bench)"},
	{"bench mcp-floor", "serve recorded answers through the MCP SDK with no pipeline (started by bench)"},
	{"bench", "measure the storefront against the bare-HTTP ceiling and the Node peer, with scaling runs and targets"},
	{"ledger verify", "walk each publisher's decision ledger and name the first broken entry"},
	{"admin token create", "create an admin API token for a publisher (--publisher)"},
	{"admin publisher create", "create a publisher (--publisher, --name, --domain)"},
	{"admin signing-key rotate", "give a publisher a new webhook-signing key, retiring the active one (--publisher)"},
	{"admin signing-key list", "list a publisher's webhook-signing keys as public JWKs (--publisher)"},
	{"buyer token create", "create a buyer token (--publisher, --buyer, --operator, --account)"},
}

// benchOwnFlags are the bench commands the bench package runs, flags and
// all; bench serve is the storefront's own serve.
var benchOwnFlags = map[string]bool{"bench": true, "bench load": true, "bench ceiling": true, "bench mcp-floor": true}

// ParseFlags reads the subcommand and flags. Environment variables give
// defaults; flags win.
func (m *Main) ParseFlags(args []string) error {
	m.Command = "serve"
	for _, c := range commands {
		words := strings.Fields(c.name)
		if len(args) >= len(words) && strings.Join(args[:len(words)], " ") == c.name {
			m.Command, args = c.name, args[len(words):]
			break
		}
	}
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		var names []string
		for _, c := range commands {
			names = append(names, c.name)
		}
		return fmt.Errorf("unknown command %q (want one of: %s)", strings.Join(args, " "), strings.Join(names, "; "))
	}
	if benchOwnFlags[m.Command] {
		// These parse their own flags.
		m.Args = args
		return nil
	}
	fs := flag.NewFlagSet("storefront "+m.Command, flag.ContinueOnError)
	fs.SetOutput(m.Stderr)
	fs.StringVar(&m.LogLevel, "log-level", envOr("STOREFRONT_LOG_LEVEL", "info"), "debug, info, warn or error (STOREFRONT_LOG_LEVEL)")
	fs.BoolVar(&m.LogJSON, "log-json", envBool("STOREFRONT_LOG_JSON"), "log as JSON lines (STOREFRONT_LOG_JSON=1)")
	fs.StringVar(&m.DatabaseURL, "database-url", os.Getenv("DATABASE_URL"), "PostgreSQL URL; without it the in-memory store is used (DATABASE_URL)")
	switch m.Command {
	case "serve", "bench serve":
		fs.StringVar(&m.PublicURL, "public-url", os.Getenv("STOREFRONT_PUBLIC_URL"), "origin the A2A agent cards advertise, e.g. https://seller.example when behind a proxy (STOREFRONT_PUBLIC_URL); default: each request's own host")
		fs.StringVar(&m.DebugAddr, "debug-addr", os.Getenv("STOREFRONT_DEBUG_ADDR"), "serve pprof and expvar on this address, e.g. 127.0.0.1:6060 (STOREFRONT_DEBUG_ADDR); off by default")
		if m.Command == "bench serve" {
			fs.StringVar(&m.Fixture, "fixture", bench.DefaultFixture.String(), "size of the generated publisher")
		}
		fs.StringVar(&m.Addr, "addr", envOr("STOREFRONT_ADDR", "127.0.0.1:8080"), "address to listen on (STOREFRONT_ADDR)")
		fs.BoolVar(&m.Sandbox, "sandbox", envBool("STOREFRONT_SANDBOX"), "sandbox mode: compliance controller and test-kit keys (STOREFRONT_SANDBOX=1)")
		fs.BoolVar(&m.AsyncDiscovery, "async-discovery", envBool("STOREFRONT_ASYNC_DISCOVERY"), "answer brief and refine get_products that register a webhook as tasks: submitted at once, decided in the background, the answer delivered to the webhook (STOREFRONT_ASYNC_DISCOVERY=1)")
		fs.BoolVar(&m.SeedDemo, "seed-demo", envBool("STOREFRONT_SEED_DEMO"), "with PostgreSQL, load the demo publisher if it is absent (STOREFRONT_SEED_DEMO=1); the in-memory store always has it")
		fs.StringVar(&m.DefaultPublisher, "default-publisher", os.Getenv("STOREFRONT_DEFAULT_PUBLISHER"), "publisher served at the plain paths (STOREFRONT_DEFAULT_PUBLISHER); default: the demo publisher if present, else the first")
		fs.StringVar(&m.DemoBuyerToken, "demo-buyer-token", os.Getenv("STOREFRONT_DEMO_BUYER_TOKEN"), "fix the demo buyer token instead of generating one (STOREFRONT_DEMO_BUYER_TOKEN)")
		fs.StringVar(&m.DemoAdminToken, "demo-admin-token", os.Getenv("STOREFRONT_DEMO_ADMIN_TOKEN"), "fix the demo publisher's admin token instead of generating one (STOREFRONT_DEMO_ADMIN_TOKEN)")
	case "ledger verify":
		fs.StringVar(&m.Publisher, "publisher", "", "verify one publisher (default: all)")
	case "admin token create":
		fs.StringVar(&m.Publisher, "publisher", "", "the publisher the token is scoped to (required)")
		fs.StringVar(&m.Name, "name", "admin", "a name for the token, recorded as the author of edits")
	case "admin publisher create":
		fs.StringVar(&m.Publisher, "publisher", "", "publisher id (required; letters, digits, - and _)")
		fs.StringVar(&m.Name, "name", "", "public name (required)")
		fs.StringVar(&m.Domain, "domain", "", "publisher domain (required)")
		fs.BoolVar(&m.AnonDiscovery, "anonymous-discovery", true, "allow get_products without credentials for public requests")
	case "admin signing-key rotate", "admin signing-key list":
		fs.StringVar(&m.Publisher, "publisher", "", "the publisher (required)")
	case "buyer token create":
		fs.StringVar(&m.Publisher, "publisher", "", "the publisher (required)")
		fs.StringVar(&m.BuyerID, "buyer", "", "buyer principal id (required)")
		fs.StringVar(&m.Operator, "operator", "", "operator domain the buyer acts for (required)")
		fs.Var(&m.Accounts, "account", "a seller-assigned account id the buyer may use (repeatable)")
	}
	fs.Usage = func() {
		fmt.Fprintf(m.Stderr, "usage: storefront [command] [flags]\n\ncommands:\n")
		for _, c := range commands {
			fmt.Fprintf(m.Stderr, "  %-24s %s\n", c.name, c.help)
		}
		fmt.Fprintf(m.Stderr, "\nflags for %q:\n", m.Command)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	if m.PublicURL != "" {
		if err := checkOrigin(m.PublicURL); err != nil {
			return fmt.Errorf("--public-url: %w", err)
		}
	}
	if m.DebugAddr != "" {
		if err := checkLoopback(m.DebugAddr); err != nil {
			return fmt.Errorf("--debug-addr: %w", err)
		}
	}
	return nil
}

// checkLoopback accepts only a loopback listening address: the debug
// endpoints have no authentication, and pprof shows the command line,
// database URL included. Reach them from elsewhere through a tunnel.
func checkLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%q is not host:port", addr)
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("%q is not a loopback address: the debug endpoints are unauthenticated, so they listen on 127.0.0.1 or ::1 only", addr)
}

// checkOrigin accepts an http or https origin: scheme and host, with an
// optional port, and nothing after.
func checkOrigin(s string) error {
	u, err := url.Parse(s)
	if err != nil {
		return fmt.Errorf("%q is not a URL", s)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("%q must start with https:// or http://", s)
	}
	if u.Host == "" || u.User != nil {
		return fmt.Errorf("%q needs a host and nothing before it", s)
	}
	if (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("%q must be an origin only, such as https://seller.example, with no path, query or fragment", s)
	}
	return nil
}

type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

func envBool(k string) bool {
	switch strings.ToLower(os.Getenv(k)) {
	case "1", "true", "yes", "on":
		return true
	}
	return false
}

func (m *Main) logger() *slog.Logger {
	var level slog.Level
	if err := level.UnmarshalText([]byte(m.LogLevel)); err != nil {
		level = slog.LevelInfo
	}
	opts := &slog.HandlerOptions{Level: level}
	if m.LogJSON {
		return slog.New(slog.NewJSONHandler(m.Stderr, opts))
	}
	return slog.New(slog.NewTextHandler(m.Stderr, opts))
}

// Run runs the command until ctx ends.
func (m *Main) Run(ctx context.Context) error {
	m.log = m.logger()
	ctx, m.cancel = context.WithCancel(ctx)
	if benchOwnFlags[m.Command] {
		return bench.Main(ctx, m.Command, m.Args, m.Stdout, m.Stderr)
	}
	switch m.Command {
	case "serve", "bench serve":
		return m.serve(ctx)

	case "ledger verify":
		return m.ledgerVerify(ctx)
	case "admin token create":
		return m.adminTokenCreate(ctx)
	case "admin publisher create":
		return m.publisherCreate(ctx)
	case "buyer token create":
		return m.buyerTokenCreate(ctx)
	case "admin signing-key rotate", "admin signing-key list":
		return m.signingKeys(ctx)
	}
	return fmt.Errorf("unknown command %q", m.Command)
}

// Close stops a running serve and releases the store.
func (m *Main) Close() error {
	if m.cancel != nil {
		m.cancel()
	}
	if m.Store != nil {
		return m.Store.Close()
	}
	return nil
}

// openStore opens PostgreSQL when a database URL is configured and the
// in-memory store otherwise, and says which.
func (m *Main) openStore(ctx context.Context) (kind string, err error) {
	if m.DatabaseURL == "" {
		m.Store = memstore.New()
		return "memory", nil
	}
	openCtx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	s, err := pgstore.Open(openCtx, m.DatabaseURL, m.log)
	if err != nil {
		return "", fmt.Errorf("cannot use the PostgreSQL database at %s: %w", redact(m.DatabaseURL), err)
	}
	m.Store = s
	return "postgres", nil
}

// needDatabase refuses admin commands on the in-memory store: a token made
// in one process would be lost with it.
func (m *Main) needDatabase() error {
	if m.DatabaseURL == "" {
		return errors.New("this command changes the database: set DATABASE_URL (or --database-url). The in-memory store of the embedded default lives in the serving process only; it prints its demo tokens at start-up")
	}
	return nil
}

// redact hides a password in a database URL for messages.
func redact(u string) string {
	at := strings.LastIndex(u, "@")
	scheme := strings.Index(u, "://")
	if at < 0 || scheme < 0 || at < scheme {
		return u
	}
	cred := u[scheme+3 : at]
	if user, _, ok := strings.Cut(cred, ":"); ok {
		return u[:scheme+3] + user + ":***" + u[at:]
	}
	return u
}
