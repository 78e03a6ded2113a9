package app

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/storefront/storefront/admin"
	"github.com/storefront/storefront/agent"
	"github.com/storefront/storefront/bench"
	"github.com/storefront/storefront/buying"
	"github.com/storefront/storefront/compliance"
	"github.com/storefront/storefront/demo"
	"github.com/storefront/storefront/products"
	"github.com/storefront/storefront/server"
	"github.com/storefront/storefront/signing"
	"github.com/storefront/storefront/store"
	"github.com/storefront/storefront/webhook"
)

func (m *Main) serve(ctx context.Context) error {
	kind, err := m.openStore(ctx)
	if err != nil {
		return err
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
		start := time.Now()
		if err := f.Seed(ctx, s); err != nil {
			return fmt.Errorf("seeding the generated publisher: %w", err)
		}
		m.log.Info("generated publisher seeded", "publisher", bench.PublisherID, "fixture", f.String(), "took", time.Since(start).Round(time.Millisecond))
		if m.DefaultPublisher == "" {
			m.DefaultPublisher = bench.PublisherID
		}
	} else if kind == "memory" || m.SeedDemo {
		if _, err := s.Publisher(ctx, demo.PublisherID); errors.Is(err, store.ErrNotFound) {
			if err := demo.Seed(ctx, s); err != nil {
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
	go snaps.Watch(ctx)
	policy := webhook.Policy{AllowLoopback: m.Sandbox}
	hooks := webhook.New(s, policy, m.log)
	keys := &signing.Keys{Store: s, Now: m.Now}
	hooks.Signer = keys
	defer hooks.Wait(context.Background())
	svc := &products.Service{
		Snapshots:      snaps,
		Ledger:         store.Ledger{Store: s},
		Accounts:       store.Accounts{Store: s},
		Directives:     store.Directives{Store: s},
		Tasks:          store.Tasks{Store: s},
		WebhookAllowed: policy.Check,
		Now:            m.Now,
		Log:            m.log,
	}
	if m.AsyncDiscovery {
		curator := &agent.Curator{Store: s, Webhooks: hooks, Now: m.Now, Log: m.log}
		svc.Curation = curator
		// Before the webhooks' Wait (defers run last first): a decision
		// in flight still delivers.
		defer curator.Wait(context.Background())
	}
	var controller *compliance.Controller
	if m.Sandbox {
		svc.Seeds = snaps
		controller = &compliance.Controller{Store: s, Snaps: snaps, Webhooks: hooks, Log: m.log, Now: m.Now}
		m.log.Warn("sandbox mode: comply_test_controller is served and compliance test-kit keys (demo-...) are accepted")
	}
	a := agent.New(s, svc, snaps, controller, m.log)
	a.WebhooksSigned = true
	buy := &buying.Service{Store: s, Snapshots: snaps, Accounts: store.Accounts{Store: s}, Ledger: store.Ledger{Store: s},
		WebhookAllowed: policy.Check, Now: m.Now, Log: m.log}
	if m.Sandbox {
		buy.Seeds, buy.Directives = snaps, store.Directives{Store: s}
	}
	a.EnableBuying(buy)
	adm := &admin.Handler{
		Store: s, Snaps: snaps, Keys: keys, Log: m.log, Now: m.Now, Buying: buy, Notify: hooks.Deliver,
		Preview: &products.Service{Snapshots: snaps, Accounts: admin.PreviewAccounts{Store: s}, Now: m.Now, Log: m.log},
	}
	m.Server = server.New(server.Config{
		Addr: m.Addr, DefaultPublisher: def, Agent: a, Admin: adm, Store: s,
		StoreKind: kind, Version: Version, PublicURL: m.PublicURL, Keys: keys, Log: m.log,
	})
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
		start := time.Now()
		if _, err := snaps.Snapshot(ctx, def); err != nil {
			return fmt.Errorf("building the generated publisher's snapshot: %w", err)
		}
		m.log.Info("snapshot built", "took", time.Since(start).Round(time.Millisecond))
	}
	if err := m.Server.Listen(); err != nil {
		return fmt.Errorf("listening on %s: %w", m.Addr, err)
	}
	m.log.Info("storefront serving", "addr", m.Server.Addr(), "mcp", m.Server.BaseURL()+"/mcp",
		"default_publisher", def, "store", kind, "sandbox", m.Sandbox, "version", Version)
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
	if memory || seeded || m.DemoBuyerToken != "" {
		token := m.DemoBuyerToken
		if token == "" {
			token = admin.NewToken("sf_buyer_")
		}
		if err := m.Store.PutBuyerToken(ctx, demo.PublisherID, store.TokenDigest(token),
			store.Buyer{ID: "demo-buyer", Operator: "pinnacle-agency.example"}); err != nil {
			return err
		}
		fmt.Fprintf(m.Stdout, "demo buyer token (operator pinnacle-agency.example): %s\n", token)
	}
	if memory || seeded || m.DemoAdminToken != "" {
		token := m.DemoAdminToken
		if token == "" {
			token = admin.NewToken("sf_admin_")
		}
		if err := m.Store.PutAdminToken(ctx, store.TokenDigest(token), store.Admin{Publisher: demo.PublisherID, Name: "demo"}); err != nil {
			return err
		}
		fmt.Fprintf(m.Stdout, "demo admin token (publisher %s): %s\n", demo.PublisherID, token)
	}
	return nil
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
