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
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/storefront/storefront/bench"
	"github.com/storefront/storefront/store"
	"github.com/storefront/storefront/store/keyring"
	"github.com/storefront/storefront/store/memstore"
	"github.com/storefront/storefront/store/pgstore"
)

// version is the storefront's build version. It is a variable only so a
// release build can set it (-ldflags "-X github.com/storefront/storefront/app.version=1.2.3").
var version = "0.1.0-dev"

// Main is one run of the program.
type Main struct {
	Stdout, Stderr io.Writer
	// Stdin is where --stdin reads a token's secret from.
	Stdin io.Reader

	// Command is the subcommand: serve, "admin token create", "ledger verify"...
	Command string
	// Flags, after ParseFlags.
	Addr    string
	Sandbox bool
	// MCPSDKOnly answers every MCP request through the MCP SDK, the
	// fast path for tools/call off.
	MCPSDKOnly bool
	// A2ASDKOnly answers every A2A request through a2a-go, the fast path
	// for message-sends off.
	A2ASDKOnly bool
	// AsyncDiscovery turns on background curation of briefs that
	// register a webhook.
	AsyncDiscovery bool
	LogLevel       string
	LogJSON        bool
	DatabaseURL    string
	// SecretKeys (STOREFRONT_SECRET_KEYS) or SecretKeysFile are the keys
	// that seal stored secrets (secrets.go).
	SecretKeys     string
	SecretKeysFile string
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
	// AllowedHosts are Host values agent cards may advertise when there
	// is no PublicURL (serve only).
	AllowedHosts []string
	// Fixture, for bench serve, sizes the generated publisher served
	// instead of the demo.
	Fixture string
	// Retention is how long tasks, seeds, replays and ledger requests are
	// kept, and RetentionEvery how often a pass runs (serve).
	Retention      Retention
	RetentionEvery time.Duration
	// MetricsToken, when set, is the bearer /metrics requires.
	MetricsToken string
	// Limits are serve's timeouts and size limits.
	Limits Limits
	// The file commands' settings: the storefront they talk to and the
	// admin token they use, the file, its format, and their options.
	URL          string
	AdminToken   string
	File         string
	Format       string
	Out          string
	IfMatch      string
	ReportFile   string
	Note         string
	Replace      bool
	SkipBadLines bool
	// Filters are a ledger export's decision filters.
	Filters map[string]string
	// Args are the unparsed arguments of commands that parse their own.
	Args []string
	// Lifecycle holds the flags of the token and audit commands.
	Lifecycle LifecycleFlags

	// Now, when set, is the clock the pipeline uses (tests pin it).
	Now func() time.Time
	// GovernanceTransport, when set, is the HTTP transport governance
	// agents are called through (tests trust their stub agent's
	// certificate with it); the URL policy applies whatever it is.
	GovernanceTransport *http.Transport
	// WrapStore, when set, wraps the store serve serves from: tests inject
	// a failing or panicking dependency with it.
	WrapStore func(store.Store) store.Store

	Store  store.Store
	Server *Server
	// keys is the loaded keyring, nil without one (openStore).
	keys   *keyring.Keyring
	log    *slog.Logger
	cancel context.CancelFunc
	// Ready is closed once the server is listening (serve only).
	Ready chan struct{}
}

// NewMain returns a Main writing to the process's stdout and stderr.
func NewMain() *Main {
	return &Main{Stdout: os.Stdout, Stderr: os.Stderr, Stdin: os.Stdin, Ready: make(chan struct{})}
}

// commands maps each command to a one-line description, for usage.
var commands = []struct{ name, help string }{
	{"serve", "run the storefront (the default)"},
	{"bench serve", "run the storefront on a generated publisher for load tests (--fixture products=N,rules=N,deny=N)"},
	{"bench load", "drive get_products over MCP (or A2A, --a2a) at a running storefront and report throughput and latency"},
	{"bench ceiling", "serve recorded answers from a bare net/http handler (started by bench)"},
	{"bench mcp-floor", "serve recorded answers through the MCP SDK with no pipeline (started by bench)"},
	{"bench", "measure the storefront against the bare-HTTP ceiling and the Node peer, with scaling runs and targets"},
	{"ledger verify", "walk each publisher's decision ledger and name the first broken entry"},
	{"retention run", "drop what the retention settings no longer keep, once (serve does it hourly)"},
	{"catalogue import", "import a catalogue file (JSON Lines or CSV) into a running storefront, with progress and every bad line reported"},
	{"catalogue export", "download a running storefront's catalogue as JSON Lines or CSV"},
	{"ledger export", "download the decision ledger as JSON Lines or CSV, filtered like the decisions table"},
	{"admin token create", "create an admin API token for a publisher (--publisher, --name, --expires-in)"},
	{"admin token list", "list a publisher's admin tokens: prefix, created, last used, expiry, state; never secrets (--publisher)"},
	{"admin token revoke", "revoke an admin token, refused by every replica from its next request (--publisher, --id or --stdin)"},
	{"admin token rotate", "replace an admin token with a new one; the old one works for --overlap, then is refused"},
	{"admin publisher create", "create a publisher (--publisher, --name, --domain)"},
	{"admin signing-key rotate", "give a publisher a new webhook-signing key, retiring the active one (--publisher)"},
	{"admin signing-key list", "list a publisher's webhook-signing keys as public JWKs (--publisher)"},
	{"buyer token create", "create a buyer token (--publisher, --buyer, --operator, --account, --expires-in)"},
	{"buyer token list", "list a publisher's buyer tokens (--publisher)"},
	{"buyer token revoke", "revoke a buyer token (--publisher, --id or --stdin)"},
	{"buyer token rotate", "replace a buyer token with a new one (--publisher, --id or --stdin, --overlap)"},
	{"audit list", "show a publisher's audit trail of admin actions, newest first (--publisher, --token, --action)"},
	{"audit verify", "walk each publisher's audit trail and name the first broken entry"},
	{"secrets rewrap", "seal every stored secret under the newest secret key, after a key rotation (PostgreSQL)"},
	{"secrets status", "count the stored secrets by the key that seals them (PostgreSQL)"},
	{"secrets generate-key", "print a new random secret key to list in STOREFRONT_SECRET_KEYS or --secret-keys-file (--id)"},
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
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") && m.Command != "catalogue import" {
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
	var env envFlags
	var badLimits []string
	retention := DefaultRetention
	filters := map[string]*string{}
	fs.StringVar(&m.LogLevel, "log-level", envOr("STOREFRONT_LOG_LEVEL", "info"), "debug, info, warn or error (STOREFRONT_LOG_LEVEL)")
	fs.BoolVar(&m.LogJSON, "log-json", env.bool("STOREFRONT_LOG_JSON"), "log as JSON lines (STOREFRONT_LOG_JSON=1)")
	fs.StringVar(&m.DatabaseURL, "database-url", os.Getenv("DATABASE_URL"), "PostgreSQL URL; without it the in-memory store is used (DATABASE_URL)")
	fs.StringVar(&m.SecretKeysFile, "secret-keys-file", os.Getenv("STOREFRONT_SECRET_KEYS_FILE"), "file of the keys that seal stored secrets, <id>:<base64 32 bytes> per line, newest first (STOREFRONT_SECRET_KEYS_FILE); or give the keys in STOREFRONT_SECRET_KEYS")
	if v := os.Getenv(secretKeysEnv); v != "" {
		m.SecretKeys = v
	}
	switch m.Command {
	case "serve", "bench serve":
		fs.StringVar(&m.PublicURL, "public-url", os.Getenv("STOREFRONT_PUBLIC_URL"), "origin the A2A agent cards advertise, e.g. https://seller.example when behind a proxy (STOREFRONT_PUBLIC_URL); default: the listening address, or an --allowed-hosts host")
		fs.Func("allowed-hosts", "comma-separated Host values, e.g. seller.example:8080,10.0.0.5:8080, that agent cards may advertise when a request names one and there is no --public-url (STOREFRONT_ALLOWED_HOSTS)", m.setAllowedHosts)
		fs.StringVar(&m.DebugAddr, "debug-addr", os.Getenv("STOREFRONT_DEBUG_ADDR"), "serve pprof and expvar on this address, e.g. 127.0.0.1:6060 (STOREFRONT_DEBUG_ADDR); off by default")
		if m.Command == "bench serve" {
			fs.StringVar(&m.Fixture, "fixture", bench.DefaultFixture().String(), "size of the generated publisher")
		}
		fs.StringVar(&m.Addr, "addr", envOr("STOREFRONT_ADDR", "127.0.0.1:8080"), "address to listen on (STOREFRONT_ADDR)")
		fs.BoolVar(&m.Sandbox, "sandbox", env.bool("STOREFRONT_SANDBOX"), "sandbox mode: compliance controller and test-kit keys (STOREFRONT_SANDBOX=1)")
		fs.BoolVar(&m.MCPSDKOnly, "mcp-sdk-only", env.bool("STOREFRONT_MCP_SDK_ONLY"), "answer every MCP request through the MCP SDK, without the fast path for tools/call (STOREFRONT_MCP_SDK_ONLY=1)")
		fs.BoolVar(&m.A2ASDKOnly, "a2a-sdk-only", env.bool("STOREFRONT_A2A_SDK_ONLY"), "answer every A2A request through a2a-go, without the fast path for SendMessage and message/send (STOREFRONT_A2A_SDK_ONLY=1)")
		fs.BoolVar(&m.AsyncDiscovery, "async-discovery", env.bool("STOREFRONT_ASYNC_DISCOVERY"), "answer brief and refine get_products that register a webhook as tasks: submitted at once, decided in the background, the answer delivered to the webhook (STOREFRONT_ASYNC_DISCOVERY=1)")
		fs.BoolVar(&m.SeedDemo, "seed-demo", env.bool("STOREFRONT_SEED_DEMO"), "with PostgreSQL, load the demo publisher if it is absent (STOREFRONT_SEED_DEMO=1); the in-memory store always has it")
		fs.StringVar(&m.MetricsToken, "metrics-token", os.Getenv("STOREFRONT_METRICS_TOKEN"), "require this bearer token to scrape /metrics (STOREFRONT_METRICS_TOKEN); default: /metrics is open")
		fs.StringVar(&retention, "retention", envOr("STOREFRONT_RETENTION", DefaultRetention), "how long to keep tasks, seeded catalogues, idempotency records and the requests kept beside the ledger for backtests: kind=30d|12h|keep, ledger-requests=off records none (STOREFRONT_RETENTION)")
		fs.DurationVar(&m.RetentionEvery, "retention-every", time.Hour, "how often serve runs a retention pass")
		fs.StringVar(&m.DefaultPublisher, "default-publisher", os.Getenv("STOREFRONT_DEFAULT_PUBLISHER"), "publisher served at the plain paths (STOREFRONT_DEFAULT_PUBLISHER); default: the demo publisher if present, else the first")
		fs.StringVar(&m.DemoBuyerToken, "demo-buyer-token", os.Getenv("STOREFRONT_DEMO_BUYER_TOKEN"), "fix the demo buyer token instead of generating one (STOREFRONT_DEMO_BUYER_TOKEN)")
		fs.StringVar(&m.DemoAdminToken, "demo-admin-token", os.Getenv("STOREFRONT_DEMO_ADMIN_TOKEN"), "fix the demo publisher's admin token instead of generating one (STOREFRONT_DEMO_ADMIN_TOKEN)")
		badLimits = m.defineLimits(fs)
	case "ledger verify":
		fs.StringVar(&m.Publisher, "publisher", "", "verify one publisher (default: all)")
	case "retention run":
		fs.StringVar(&retention, "retention", envOr("STOREFRONT_RETENTION", DefaultRetention), "what to keep, as for serve (STOREFRONT_RETENTION)")
	case "catalogue import", "catalogue export", "ledger export":
		fs.StringVar(&m.URL, "url", envOr("STOREFRONT_URL", "http://127.0.0.1:8080"), "the storefront's address (STOREFRONT_URL)")
		fs.StringVar(&m.AdminToken, "token", os.Getenv("STOREFRONT_ADMIN_TOKEN"), "an admin token of the publisher (STOREFRONT_ADMIN_TOKEN)")
		fs.StringVar(&m.Publisher, "publisher", "", "the publisher (default: the token's)")
		fs.StringVar(&m.Format, "format", "", "jsonl or csv (default: from the file name for an import, jsonl for an export)")
		if m.Command == "catalogue import" {
			fs.BoolVar(&m.Replace, "replace", false, "delete the products the file does not name (default: merge)")
			fs.BoolVar(&m.SkipBadLines, "skip-bad-lines", false, "save the good lines of a file that has bad ones (default: a bad line saves nothing)")
			fs.StringVar(&m.Note, "note", "", "a change note kept with the catalogue version")
			fs.StringVar(&m.IfMatch, "if-match", "", "the catalogue version the file was made against; refused if someone changed the catalogue since (default: the version just before the upload)")
			fs.StringVar(&m.ReportFile, "report", "", "write every bad line to this CSV file")
		} else {
			fs.StringVar(&m.Out, "out", "", "write to this file (default: standard output)")
		}
		if m.Command == "ledger export" {
			m.Filters = map[string]string{}
			for _, f := range []struct{ name, help string }{
				{"arm", "only this arm: completed, rejected, failed or submitted"}, {"slug", "only this decline slug"},
				{"account", "only this account id"}, {"since", "from this RFC 3339 time"}, {"until", "before this RFC 3339 time"},
			} {
				filters[f.name] = fs.String(f.name, "", f.help)
			}
		}
	case "admin token create", "admin token list", "admin token revoke", "admin token rotate",
		"buyer token create", "buyer token list", "buyer token revoke", "buyer token rotate", "audit list", "audit verify":
		m.lifecycleFlags(fs)
	case "admin publisher create":
		fs.StringVar(&m.Publisher, "publisher", "", "publisher id (required; letters, digits, - and _)")
		fs.StringVar(&m.Name, "name", "", "public name (required)")
		fs.StringVar(&m.Domain, "domain", "", "publisher domain (required)")
		fs.BoolVar(&m.AnonDiscovery, "anonymous-discovery", true, "allow get_products without credentials for public requests")
	case "admin signing-key rotate", "admin signing-key list":
		fs.StringVar(&m.Publisher, "publisher", "", "the publisher (required)")
	case "secrets generate-key":
		fs.StringVar(&m.Name, "id", "", "the key's id (default: a random one); list keys newest first")
	}
	fs.Usage = func() {
		fmt.Fprintf(m.Stderr, "usage: storefront [command] [flags]\n\ncommands:\n")
		for _, c := range commands {
			fmt.Fprintf(m.Stderr, "  %-24s %s\n", c.name, c.help)
		}
		fmt.Fprintf(m.Stderr, "\nflags for %q:\n", m.Command)
		fs.PrintDefaults()
	}
	if v := os.Getenv("STOREFRONT_ALLOWED_HOSTS"); v != "" && (m.Command == "serve" || m.Command == "bench serve") {
		if err := m.setAllowedHosts(v); err != nil {
			return fmt.Errorf("STOREFRONT_ALLOWED_HOSTS: %w", err)
		}
	}
	if m.Command == "catalogue import" && len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		// The file may come before the flags as well as after them.
		m.File, args = args[0], args[1:]
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	for k, v := range filters {
		m.Filters[k] = *v
	}
	if m.Command == "catalogue import" && fs.NArg() == 1 && m.File == "" {
		m.File = fs.Arg(0)
	} else if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	if err := env.err(); err != nil {
		return err
	}
	if len(badLimits) > 0 {
		return errors.New(strings.Join(badLimits, "; "))
	}
	if m.Command == "serve" || m.Command == "bench serve" {
		if err := m.Limits.Check(); err != nil {
			return fmt.Errorf("timeouts and limits: %w", err)
		}
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(m.LogLevel)); err != nil {
		return fmt.Errorf("--log-level %q: want debug, info, warn or error", m.LogLevel)
	}
	var err error
	if m.Retention, err = ParseRetention(retention); err != nil {
		return fmt.Errorf("--retention: %w", err)
	}
	if m.RetentionEvery < time.Minute && (m.Command == "serve" || m.Command == "bench serve") {
		return fmt.Errorf("--retention-every %s: a minute or more", m.RetentionEvery)
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

// envFlags reads boolean environment variables strictly: a value that is
// neither true nor false is an error, not a silent false.
type envFlags struct{ bad []string }

func (e *envFlags) bool(k string) bool {
	v := os.Getenv(k)
	switch strings.ToLower(v) {
	case "1", "true", "yes", "on":
		return true
	case "", "0", "false", "no", "off":
		return false
	}
	e.bad = append(e.bad, fmt.Sprintf("%s=%s", k, v))
	return false
}

func (e *envFlags) err() error {
	if len(e.bad) == 0 {
		return nil
	}
	return fmt.Errorf("%s: want 1, true, yes or on, or 0, false, no or off", strings.Join(e.bad, ", "))
}

func (m *Main) logger() *slog.Logger {
	// ParseFlags has checked the level.
	var level slog.Level
	_ = level.UnmarshalText([]byte(m.LogLevel))
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
		err := bench.Main(ctx, m.Command, m.Args, m.Stdout, m.Stderr)
		if errors.Is(err, flag.ErrHelp) {
			// The usage was asked for and printed: that is success.
			return nil
		}
		return err
	}
	switch m.Command {
	case "serve", "bench serve":
		return m.serve(ctx)

	case "ledger verify":
		return m.ledgerVerify(ctx)
	case "retention run":
		return m.retentionRun(ctx)
	case "catalogue import":
		return m.catalogueImport(ctx)
	case "catalogue export":
		return m.export(ctx, "/catalogue/export")
	case "ledger export":
		return m.export(ctx, "/decisions/export")
	case "admin publisher create":
		return m.publisherCreate(ctx)
	case "admin signing-key rotate", "admin signing-key list":
		return m.signingKeys(ctx)
	case "secrets rewrap":
		return m.secretsRewrap(ctx)
	case "secrets status":
		return m.secretsStatus(ctx)
	case "secrets generate-key":
		return m.secretsGenerateKey()
	}
	if run, ok := lifecycleCommands[m.Command]; ok {
		return run(m, ctx)
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
//
// The store stamps its records (ledger entries, decisions, history,
// idempotency records) from the program's one clock.
//
// Its secrets are sealed with the configured keys; the in-memory store
// makes a key of its own when none is.
func (m *Main) openStore(ctx context.Context) (kind string, err error) {
	if m.keys, err = m.loadKeyring(); err != nil {
		return "", err
	}
	if m.DatabaseURL == "" {
		s := memstore.New()
		s.SetClock(m.now)
		if m.keys != nil {
			s.SetKeyring(m.keys)
		}
		m.Store = s
		return "memory", nil
	}
	openCtx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	s, err := pgstore.Open(openCtx, m.DatabaseURL, m.log)
	if err != nil {
		return "", fmt.Errorf("cannot use the PostgreSQL database at %s: %w", redact(m.DatabaseURL), err)
	}
	s.SetClock(m.now)
	s.SetKeyring(m.keys)
	m.Store = s
	return "postgres", nil
}

// needDatabase refuses the commands that work on the database when none is
// configured, rather than run them on a fresh in-memory store: a token made
// there would be lost with the process, and a verify there would check
// nothing and say all is well.
func (m *Main) needDatabase() error {
	if m.DatabaseURL == "" {
		return fmt.Errorf("storefront %s works on the database: set DATABASE_URL (or --database-url). The in-memory store of the embedded default lives in the serving process only; it prints its demo tokens at start-up", m.Command)
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
