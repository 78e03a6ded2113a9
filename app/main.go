// Package app is the storefront program: flag parsing, wiring of the store,
// pipeline and transports, and the subcommands. cmd/storefront is a thin
// wrapper around Main so that end-to-end tests can run the real program
// in-process.
package app

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/storefront/storefront/admin"
	"github.com/storefront/storefront/agent"
	"github.com/storefront/storefront/demo"
	"github.com/storefront/storefront/products"
	"github.com/storefront/storefront/server"
	"github.com/storefront/storefront/store"
	"github.com/storefront/storefront/store/memstore"
)

// Version is the storefront's build version.
var Version = "0.1.0-dev"

// Main is one run of the program.
type Main struct {
	Stdout, Stderr io.Writer

	// Flags, after ParseFlags.
	Command  string
	Addr     string
	Sandbox  bool
	LogLevel string
	LogJSON  bool
	// DemoBuyerToken and DemoAdminToken fix the demo tokens of the
	// embedded default instead of generating them.
	DemoBuyerToken string
	DemoAdminToken string

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

// ParseFlags reads the subcommand and flags. Environment variables give
// defaults; flags win.
func (m *Main) ParseFlags(args []string) error {
	m.Command = "serve"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		m.Command, args = args[0], args[1:]
	}
	switch m.Command {
	case "serve":
	default:
		return fmt.Errorf("unknown command %q (want serve)", m.Command)
	}
	fs := flag.NewFlagSet("storefront "+m.Command, flag.ContinueOnError)
	fs.SetOutput(m.Stderr)
	fs.StringVar(&m.Addr, "addr", envOr("STOREFRONT_ADDR", "127.0.0.1:8080"), "address to listen on (STOREFRONT_ADDR)")
	fs.BoolVar(&m.Sandbox, "sandbox", envBool("STOREFRONT_SANDBOX"), "sandbox mode: compliance controller and test-kit keys (STOREFRONT_SANDBOX=1)")
	fs.StringVar(&m.LogLevel, "log-level", envOr("STOREFRONT_LOG_LEVEL", "info"), "debug, info, warn or error (STOREFRONT_LOG_LEVEL)")
	fs.BoolVar(&m.LogJSON, "log-json", envBool("STOREFRONT_LOG_JSON"), "log as JSON lines (STOREFRONT_LOG_JSON=1)")
	fs.StringVar(&m.DemoBuyerToken, "demo-buyer-token", os.Getenv("STOREFRONT_DEMO_BUYER_TOKEN"), "fix the demo buyer token instead of generating one (STOREFRONT_DEMO_BUYER_TOKEN)")
	fs.StringVar(&m.DemoAdminToken, "demo-admin-token", os.Getenv("STOREFRONT_DEMO_ADMIN_TOKEN"), "fix the demo publisher's admin token instead of generating one (STOREFRONT_DEMO_ADMIN_TOKEN)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	return nil
}

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
	switch m.Command {
	case "serve":
		return m.serve(ctx)
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

func (m *Main) serve(ctx context.Context) error {
	s := memstore.New()
	m.Store = s
	m.log.Warn("using the in-memory store: every edit is lost when the storefront stops")
	if err := demo.Seed(ctx, s); err != nil {
		return fmt.Errorf("seeding the demo publisher: %w", err)
	}
	buyerToken := m.DemoBuyerToken
	if buyerToken == "" {
		buyerToken = "sf_buyer_" + randomHex(16)
	}
	if err := s.PutBuyerToken(ctx, demo.PublisherID, store.TokenDigest(buyerToken),
		store.Buyer{ID: "demo-buyer", Operator: "pinnacle-agency.example"}); err != nil {
		return err
	}
	adminToken := m.DemoAdminToken
	if adminToken == "" {
		adminToken = admin.NewToken("sf_admin_")
	}
	if err := s.PutAdminToken(ctx, store.TokenDigest(adminToken), store.Admin{Publisher: demo.PublisherID, Name: "demo"}); err != nil {
		return err
	}

	snaps := store.NewSnapshots(s)
	go snaps.Watch(ctx)
	svc := &products.Service{
		Snapshots:  snaps,
		Ledger:     store.Ledger{Store: s},
		Accounts:   store.Accounts{Store: s},
		Directives: store.Directives{Store: s},
		Now:        m.Now,
		Log:        m.log,
	}
	a := agent.New(s, svc, snaps, m.Sandbox, m.log)
	adm := &admin.Handler{
		Store: s, Snaps: snaps, Log: m.log, Now: m.Now,
		Preview: &products.Service{Snapshots: snaps, Accounts: admin.PreviewAccounts{Store: s}, Now: m.Now, Log: m.log},
	}
	m.Server = server.New(server.Config{
		Addr: m.Addr, DefaultPublisher: demo.PublisherID, Agent: a, Admin: adm, Store: s,
		StoreKind: "memory", Version: Version, Log: m.log,
	})
	if err := m.Server.Listen(); err != nil {
		return fmt.Errorf("listening on %s: %w", m.Addr, err)
	}
	m.log.Info("storefront serving", "addr", m.Server.Addr(), "mcp", m.Server.BaseURL()+"/mcp",
		"publisher", demo.PublisherID, "sandbox", m.Sandbox, "version", Version)
	fmt.Fprintf(m.Stdout, "demo buyer token (operator pinnacle-agency.example): %s\n", buyerToken)
	fmt.Fprintf(m.Stdout, "demo admin token (publisher %s): %s\n", demo.PublisherID, adminToken)
	close(m.Ready)
	err := m.Server.Serve(ctx)
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)
}
