package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"time"

	"github.com/storefront/storefront/adcp"
	"github.com/storefront/storefront/admin"
	"github.com/storefront/storefront/audit"
	"github.com/storefront/storefront/internal/clock"
	"github.com/storefront/storefront/ledger"
	"github.com/storefront/storefront/products"
	"github.com/storefront/storefront/signing"
)

// exitError carries a command's exit status.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

// ExitCode is the process exit status for the error.
func (e *exitError) ExitCode() int { return e.code }

// ledgerVerify walks every publisher's chain (or one), printing progress
// to stderr, and exits 1 naming the first broken entry.
func (m *Main) ledgerVerify(ctx context.Context) error {
	pubs, err := m.publishersToCheck(ctx)
	if err != nil {
		return err
	}
	broken := 0
	for _, p := range pubs {
		watch := clock.Start()
		var last clock.Stopwatch
		res, err := ledger.Verify(ctx, m.Store, p, func(checked, total int64) {
			if last.Elapsed() >= 250*time.Millisecond || checked == total {
				last = clock.Start()
				pct := 100.0
				if total > 0 {
					pct = float64(checked) * 100 / float64(total)
				}
				fmt.Fprintf(m.Stderr, "\rverifying %s: %d/%d entries (%.0f%%)", p, checked, total, pct)
			}
		})
		if err != nil {
			return fmt.Errorf("verifying %s: %w", p, err)
		}
		fmt.Fprintf(m.Stderr, "\r\033[K")
		if res.OK && res.From > 1 {
			fmt.Fprintf(m.Stdout, "%s: ok, entries %d to %d, chain intact from there (the store keeps the most recent %d) (%s)\n",
				p, res.From, res.Total, res.Checked, watch.Elapsed().Round(time.Millisecond))
			continue
		}
		if res.OK {
			fmt.Fprintf(m.Stdout, "%s: ok, %d entries, chain intact (%s)\n", p, res.Checked, watch.Elapsed().Round(time.Millisecond))
			continue
		}
		broken++
		fmt.Fprintf(m.Stdout, "%s: BROKEN at sequence %d: %s (%d entries before it verified)\n", p, res.Break.Sequence, res.Break.Reason, res.Checked)
	}
	if broken > 0 {
		return &exitError{1, fmt.Sprintf("%d ledger(s) broken", broken)}
	}
	return nil
}

// publishersToCheck opens the database and returns --publisher, or every
// publisher.
func (m *Main) publishersToCheck(ctx context.Context) ([]string, error) {
	if err := m.needDatabase(); err != nil {
		return nil, err
	}
	if _, err := m.openStore(ctx); err != nil {
		return nil, err
	}
	if m.Publisher != "" {
		return []string{m.Publisher}, nil
	}
	ps, err := m.Store.Publishers(ctx)
	if err != nil {
		return nil, err
	}
	var pubs []string
	for _, p := range ps {
		pubs = append(pubs, p.ID)
	}
	return pubs, nil
}

var publisherIDRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

func (m *Main) publisherCreate(ctx context.Context) error {
	if err := m.needDatabase(); err != nil {
		return err
	}
	switch {
	case !publisherIDRE.MatchString(m.Publisher):
		return errors.New("--publisher must be 1-64 letters, digits, - or _")
	case m.Name == "":
		return errors.New("--name is required")
	case !adcp.IsDomain(m.Domain):
		return errors.New("--domain must be a lower-case domain name")
	}
	if _, err := m.openStore(ctx); err != nil {
		return err
	}
	if _, err := m.Store.Publisher(ctx, m.Publisher); err == nil {
		return fmt.Errorf("publisher %q already exists", m.Publisher)
	}
	if err := m.Store.PutPublisher(ctx, products.Publisher{ID: m.Publisher, Name: m.Name, Domain: m.Domain, AnonymousDiscovery: m.AnonDiscovery}); err != nil {
		return err
	}
	if err := m.record(ctx, audit.Record{Action: audit.PublisherCreate, Target: m.Publisher, Detail: map[string]string{
		"name": m.Name, "domain": m.Domain, "anonymous_discovery": strconv.FormatBool(m.AnonDiscovery),
	}}); err != nil {
		return err
	}
	fmt.Fprintf(m.Stdout, "publisher %s created; it serves no products until it has a rulebook (PUT /admin/v1/publishers/%s/rulebook)\n", m.Publisher, m.Publisher)
	return nil
}

// signingKeys rotates a publisher's webhook-signing key (admin signing-key
// rotate), recording the rotation on the audit trail, or lists its keys
// (admin signing-key list), printing the public JWKs as JSON. Replicas
// sharing the database sign with the new key from their next webhook on.
func (m *Main) signingKeys(ctx context.Context) error {
	if err := m.openPublisher(ctx); err != nil {
		return err
	}
	if err := m.checkSecrets(ctx); err != nil {
		return err
	}
	keys := &signing.Keys{Store: m.Store, Now: m.Now}
	if m.Command == "admin signing-key rotate" {
		k, err := keys.Rotate(ctx, m.Publisher)
		if err != nil {
			return err
		}
		if err := m.record(ctx, audit.Record{Action: audit.SigningKeyRotate, Target: k.KID, Detail: admin.SigningKeyDetail(k)}); err != nil {
			return err
		}
		fmt.Fprintf(m.Stderr, "publisher %s now signs webhooks with key %s; the key it replaces stays in the JWKS for %s\n", m.Publisher, k.KID, signing.RetiredGrace)
	}
	listed, err := keys.List(ctx, m.Publisher)
	if err != nil {
		return err
	}
	type row struct {
		signing.JWK
		CreatedAt time.Time  `json:"created_at"`
		RetiredAt *time.Time `json:"retired_at,omitempty"`
		Published bool       `json:"published"`
	}
	rows := make([]row, len(listed))
	for i, l := range listed {
		rows[i] = row{signing.PublicJWK(l.Key), l.Key.CreatedAt, l.Key.RetiredAt, l.Published}
	}
	enc := json.NewEncoder(m.Stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(map[string]any{"keys": rows})
}

// retentionRun runs one retention pass over every publisher and says what
// it dropped. Run it from cron when serve's own passes are not wanted.
func (m *Main) retentionRun(ctx context.Context) error {
	if err := m.needDatabase(); err != nil {
		return err
	}
	if _, err := m.openStore(ctx); err != nil {
		return err
	}
	n, err := purge(ctx, m.Store, m.Retention, m.now(), nil)
	if err != nil {
		return err
	}
	fmt.Fprintf(m.Stdout, "retention %s: dropped %d finished tasks, %d seeded catalogues, %d idempotency records, %d ledger requests (the ledger's entries are kept)\n",
		m.Retention, n.Tasks, n.Seeds, n.Replays, n.Requests)
	return nil
}

// now is the program's clock.
func (m *Main) now() time.Time {
	return clock.Read(m.Now)
}
