package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/storefront/storefront/access"
	"github.com/storefront/storefront/adcp"
	"github.com/storefront/storefront/admin"
	"github.com/storefront/storefront/agent"
	"github.com/storefront/storefront/audit"
	"github.com/storefront/storefront/bench"
	"github.com/storefront/storefront/buying"
	"github.com/storefront/storefront/compliance"
	"github.com/storefront/storefront/demo"
	"github.com/storefront/storefront/governance"
	"github.com/storefront/storefront/internal/clock"
	"github.com/storefront/storefront/internal/recovery"
	"github.com/storefront/storefront/metrics"
	"github.com/storefront/storefront/products"
	"github.com/storefront/storefront/sanitize"
	"github.com/storefront/storefront/signing"
	"github.com/storefront/storefront/store"
	"github.com/storefront/storefront/store/pgstore"
	"github.com/storefront/storefront/tokens"
	"github.com/storefront/storefront/vocab"
	"github.com/storefront/storefront/webhook"
)

func (m *Main) serve(ctx context.Context) error {
	kind, err := m.openStore(ctx)
	if err != nil {
		return err
	}
	if err := m.checkSecrets(ctx); err != nil {
		return err
	}
	if m.WrapStore != nil {
		m.Store = m.WrapStore(m.Store)
	}
	s := m.Store
	if kind == "memory" {
		m.log.Warn("using the in-memory store: every edit is lost when the storefront stops; set DATABASE_URL to keep them")
	} else {
		m.log.Info("using the PostgreSQL store", "database", redact(m.DatabaseURL))
	}
	seeded := false
	if m.Command == "bench serve" {
		f, err := bench.ParseFixture(m.Fixture)
		if err != nil {
			return err
		}
		watch := clock.Start()
		if err := f.Seed(ctx, s); err != nil {
			return fmt.Errorf("seeding the generated publisher: %w", err)
		}
		m.log.Info("generated publisher seeded", "publisher", bench.PublisherID, "fixture", f.String(), "took", watch.Elapsed().Round(time.Millisecond))
		if m.DefaultPublisher == "" {
			m.DefaultPublisher = bench.PublisherID
		}
	} else if kind == "memory" || m.SeedDemo {
		if _, err := s.Publisher(ctx, demo.PublisherID); errors.Is(err, store.ErrNotFound) {
			if err := demo.Seed(ctx, s, m.now()); err != nil {
				return fmt.Errorf("seeding the demo publisher: %w", err)
			}
			seeded = true
		} else if err != nil {
			return err
		}
	}
	if err := m.demoTokens(ctx, seeded); err != nil {
		return err
	}
	def, err := m.defaultPublisher(ctx)
	if err != nil {
		return err
	}

	snaps := store.NewSnapshots(s)
	snaps.Log = m.log
	snaps.Now = m.Now
	snaps.Watch(ctx)
	policy := webhook.Policy{AllowLoopback: m.Sandbox}
	hooks := webhook.New(s, policy, m.log)
	hooks.Now = m.Now
	keys := &signing.Keys{Store: s, Now: m.Now}
	hooks.Signer = keys
	defer hooks.Wait(context.Background())
	mx := metrics.New(metrics.Labels{Versions: adcp.SupportedStrings(), Slugs: vocab.Slugs(), Codes: adcp.Codes()})
	mx.WatchScreen(sanitize.Withheld)
	if pg, ok := s.(*pgstore.Store); ok {
		pg.ObserveBatches(mx.LedgerBatch)
		mx.WatchPool(func() metrics.PoolStats {
			st := pg.Pool().Stat()
			return metrics.PoolStats{Max: st.MaxConns(), Total: st.TotalConns(), Idle: st.IdleConns(), Acquired: st.AcquiredConns(),
				Acquires: st.AcquireCount(), EmptyAcquires: st.EmptyAcquireCount(), CanceledAcquires: st.CanceledAcquireCount(),
				AcquireWait: st.AcquireDuration()}
		})
		mx.WatchResyncs(pg.ResyncFailures)
	}
	// The buyer side's store counts appends, directives and tasks.
	buyers := store.Observed{Store: s, Metrics: mx}
	svc := &products.Service{
		Snapshots:      snaps,
		Ledger:         store.Ledger{Store: buyers, KeepRequests: m.Retention.KeepRequests},
		Accounts:       access.Accounts{Store: buyers},
		Directives:     store.Directives{Store: buyers},
		Tasks:          store.Tasks{Store: buyers},
		WebhookAllowed: policy.Check,
		Now:            m.Now,
		Log:            m.log,
	}
	if m.AsyncDiscovery {
		// Through the counting store, so finished tasks are on /metrics.
		curator := &agent.Curator{Store: buyers, Webhooks: hooks, Now: m.Now, Log: m.log}
		svc.Curation = curator
		// Before the webhooks' Wait (defers run last first): a decision
		// in flight still delivers.
		defer curator.Wait(context.Background())
	}
	var controller *compliance.Controller
	if m.Sandbox {
		svc.Seeds = snaps
		controller = &compliance.Controller{Store: buyers, Snaps: snaps, Webhooks: hooks, Log: m.log, Now: m.Now}
		m.log.Warn("sandbox mode: comply_test_controller is served and compliance test-kit keys (demo-...) are accepted")
	}
	a := agent.New(buyers, svc, snaps, controller, m.log)
	a.WebhooksSigned = true
	// Idempotency keys still being settled after an outage get a moment
	// before the process exits; any left then end with their lease.
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		a.Wait(ctx)
	}()
	// The media-buy tools run through the same counting store as
	// get_products, and are registered before the tool label's set is
	// read from the agent.
	// Governance agents are called under the webhooks' URL policy.
	gov := &governance.Client{Policy: policy, Transport: m.GovernanceTransport, Now: m.Now, Name: "storefront", Version: adcp.Build}
	buy := &buying.Service{Store: buyers, Snapshots: snaps, Accounts: access.Accounts{Store: buyers}, Ledger: store.Ledger{Store: buyers},
		WebhookAllowed: policy.Check, Governance: gov, Now: m.Now, Log: m.log}
	if m.Sandbox {
		buy.Seeds, buy.Directives = snaps, store.Directives{Store: buyers}
	}
	a.EnableBuying(buy)
	a.Metrics = mx
	var tools []string
	for _, t := range a.Tools() {
		tools = append(tools, t.Name)
	}
	mx.SetTools(tools)
	adm := &admin.Handler{
		Store: s, Snaps: snaps, Keys: keys, Log: m.log, Now: m.Now, Metrics: mx, Buying: buy, Notify: hooks.Deliver,
		Preview: &products.Service{Snapshots: snaps, Accounts: admin.PreviewAccounts{Store: s}, Now: m.Now, Log: m.log},
	}
	m.Server = NewServer(ServerConfig{
		Addr: m.Addr, DefaultPublisher: def, Agent: a, Admin: adm, Store: s,
		StoreKind: kind, Version: version, PublicURL: m.PublicURL, AllowedHosts: m.AllowedHosts, Keys: keys, Log: m.log,
		Metrics: mx.Handler(m.MetricsToken), Limits: m.Limits, MCPSDKOnly: m.MCPSDKOnly, A2ASDKOnly: m.A2ASDKOnly,
	})
	recovery.Go(ctx, m.log, "background", "retention", func() { retain(ctx, s, m.Retention, m.RetentionEvery, m.now, mx, m.log) })
	if m.DebugAddr != "" {
		stop, err := serveDebug(ctx, m.DebugAddr, m.log)
		if err != nil {
			return err
		}
		defer stop()
	}
	if m.Command == "bench serve" {
		// Build the snapshot before taking load, so the first requests do
		// not measure the deny-list build.
		watch := clock.Start()
		if _, err := snaps.Snapshot(ctx, def); err != nil {
			return fmt.Errorf("building the generated publisher's snapshot: %w", err)
		}
		m.log.Info("snapshot built", "took", watch.Elapsed().Round(time.Millisecond))
	}
	if err := m.Server.Listen(); err != nil {
		return fmt.Errorf("listening on %s: %w", m.Addr, err)
	}
	m.warnCardOrigin(m.Server.Addr(), m.Server.BaseURL())
	m.log.Info("storefront serving", "addr", m.Server.Addr(), "mcp", m.Server.BaseURL()+"/mcp",
		"default_publisher", def, "store", kind, "sandbox", m.Sandbox, "version", version, "retention", m.Retention.String())
	// go run starts the program as a child: stopping go run with a signal
	// other than Ctrl-C leaves this process serving, so say which it is.
	fmt.Fprintf(m.Stdout, "storefront serving at %s (process %d; stop it with Ctrl-C or kill %d)\n", m.Server.BaseURL(), os.Getpid(), os.Getpid())
	close(m.Ready)
	err = m.Server.Serve(ctx)
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// demoTokens gives the demo publisher a buyer and an admin token and prints
// them. On the in-memory store that happens at every start (the tokens are
// random unless fixed by flag); on PostgreSQL only when the demo publisher
// was just seeded or a token is fixed by flag, since stored tokens are kept
// as digests and cannot be printed again.
func (m *Main) demoTokens(ctx context.Context, seeded bool) error {
	if _, err := m.Store.Publisher(ctx, demo.PublisherID); err != nil {
		return nil
	}
	memory := m.DatabaseURL == ""
	if !memory && !seeded && m.DemoBuyerToken == "" && m.DemoAdminToken == "" {
		fmt.Fprintf(m.Stdout, "the demo publisher %s is already in the database: its tokens were printed when it was first seeded and cannot be shown again (only their digests are kept).\n"+
			"Make a new admin token with: storefront admin token create --publisher %s (or fix one with --demo-admin-token).\n", demo.PublisherID, demo.PublisherID)
		return nil
	}
	if memory || seeded || m.DemoBuyerToken != "" {
		secret, note, err := m.demoToken(ctx, m.DemoBuyerToken, store.Token{Kind: store.BuyerToken, Name: "demo-buyer",
			Buyer: &store.Buyer{ID: "demo-buyer", Operator: "pinnacle-agency.example"}})
		if err != nil {
			return err
		}
		fmt.Fprintf(m.Stdout, "demo buyer token (operator pinnacle-agency.example): %s%s\n", secret, note)
	}
	if memory || seeded || m.DemoAdminToken != "" {
		secret, note, err := m.demoToken(ctx, m.DemoAdminToken, store.Token{Kind: store.AdminToken, Name: "demo"})
		if err != nil {
			return err
		}
		fmt.Fprintf(m.Stdout, "demo admin token (publisher %s): %s%s\n", demo.PublisherID, secret, note)
	}
	return nil
}

// demoToken stores the demo publisher's token t under secret, a fresh one
// when secret is empty, and records it in the audit trail. A fixed secret
// that is already stored is left exactly as it is: kept if it is the demo
// publisher's token of t's kind (a revoked or expired one stays refused,
// and note says so), refused if it is another publisher's or kind's, whose
// scope a demo flag must never change.
func (m *Main) demoToken(ctx context.Context, secret string, t store.Token) (string, string, error) {
	t.Publisher, t.CreatedAt, t.CreatedBy = demo.PublisherID, m.now(), audit.Serve
	var (
		stored store.Token
		err    error
	)
	if secret == "" {
		secret, stored, err = tokens.Mint(ctx, m.Store, t)
	} else {
		t.Prefix = tokens.Prefix(secret)
		stored, err = m.Store.CreateToken(ctx, store.TokenDigest(secret), t)
	}
	if errors.Is(err, store.ErrExists) {
		have, err := m.Store.TokenByDigest(ctx, store.TokenDigest(secret))
		if err != nil {
			return "", "", err
		}
		if have.Publisher != t.Publisher || have.Kind != t.Kind {
			return "", "", fmt.Errorf("the fixed demo %s token is already stored as a %s token of publisher %q, and a token's scope is never changed: choose another secret",
				t.Kind, have.Kind, have.Publisher)
		}
		if !have.Usable(m.now()) {
			return secret, " (" + have.Status(m.now()) + ": it is refused)", nil
		}
		return secret, "", nil
	}
	if err != nil {
		return "", "", err
	}
	err = m.record(ctx, audit.Record{Publisher: t.Publisher, Actor: audit.Serve, Action: audit.TokenCreate, Target: stored.ID,
		Detail: tokens.Detail(stored)})
	return secret, "", err
}

func (m *Main) defaultPublisher(ctx context.Context) (string, error) {
	if m.DefaultPublisher != "" {
		if _, err := m.Store.Publisher(ctx, m.DefaultPublisher); err != nil {
			return "", fmt.Errorf("default publisher %q: %w", m.DefaultPublisher, err)
		}
		return m.DefaultPublisher, nil
	}
	if _, err := m.Store.Publisher(ctx, demo.PublisherID); err == nil {
		return demo.PublisherID, nil
	}
	ps, err := m.Store.Publishers(ctx)
	if err != nil {
		return "", err
	}
	if len(ps) == 0 {
		return "", errors.New("the database has no publisher: create one with `storefront admin publisher create`, or start with --seed-demo")
	}
	return ps[0].ID, nil
}
