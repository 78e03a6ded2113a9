package app

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/user"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/storefront/storefront/adcp"
	"github.com/storefront/storefront/audit"
	"github.com/storefront/storefront/store"
	"github.com/storefront/storefront/tokens"
)

// LifecycleFlags are the flags of the token and audit commands.
type LifecycleFlags struct {
	// ExpiresIn, when set, makes a new token expire that long after it
	// is made.
	ExpiresIn time.Duration
	// Overlap is how long a rotated token keeps working.
	Overlap time.Duration
	// TokenID names the token to revoke or rotate; FromStdin reads its
	// secret from standard input instead.
	TokenID   string
	FromStdin bool
	// Token and Action filter audit list; Limit bounds it.
	Token  string
	Action string
	Limit  int
}

// lifecycleCommands run the token and audit commands.
var lifecycleCommands = map[string]func(*Main, context.Context) error{
	"admin token create": func(m *Main, ctx context.Context) error { return m.tokenCreate(ctx, store.AdminToken) },
	"admin token list":   func(m *Main, ctx context.Context) error { return m.tokenList(ctx, store.AdminToken) },
	"admin token revoke": func(m *Main, ctx context.Context) error { return m.tokenRevoke(ctx, store.AdminToken) },
	"admin token rotate": func(m *Main, ctx context.Context) error { return m.tokenRotate(ctx, store.AdminToken) },
	"buyer token create": func(m *Main, ctx context.Context) error { return m.tokenCreate(ctx, store.BuyerToken) },
	"buyer token list":   func(m *Main, ctx context.Context) error { return m.tokenList(ctx, store.BuyerToken) },
	"buyer token revoke": func(m *Main, ctx context.Context) error { return m.tokenRevoke(ctx, store.BuyerToken) },
	"buyer token rotate": func(m *Main, ctx context.Context) error { return m.tokenRotate(ctx, store.BuyerToken) },
	"audit list":         (*Main).auditList,
	"audit verify":       (*Main).auditVerify,
}

// lifecycleFlags declares the flags of m.Command, one of lifecycleCommands.
func (m *Main) lifecycleFlags(fs *flag.FlagSet) {
	l := &m.Lifecycle
	required := "(required)"
	if m.Command == "audit verify" {
		required = "(default: every publisher)"
	}
	fs.StringVar(&m.Publisher, "publisher", "", "the publisher "+required)
	words := strings.Fields(m.Command)
	switch words[len(words)-1] {
	case "create":
		fs.DurationVar(&l.ExpiresIn, "expires-in", 0, "make the token expire this long after now, e.g. 720h (default: never; revoke it instead)")
		if m.Command == "admin token create" {
			fs.StringVar(&m.Name, "name", "admin", "a name for the token, recorded as the author of its edits")
		} else {
			fs.StringVar(&m.Name, "name", "", "a name for the token (default: the buyer id)")
			fs.StringVar(&m.BuyerID, "buyer", "", "buyer principal id (required)")
			fs.StringVar(&m.Operator, "operator", "", "operator domain the buyer acts for (required)")
			fs.Var(&m.Accounts, "account", "a seller-assigned account id the buyer may use (repeatable)")
		}
	case "revoke", "rotate":
		fs.StringVar(&l.TokenID, "id", "", "the token's id, as token list shows it")
		fs.BoolVar(&l.FromStdin, "stdin", false, "read the token's secret from standard input instead of naming its id (for a leaked secret: it stays out of the shell's history and the process list)")
		if words[len(words)-1] == "rotate" {
			fs.DurationVar(&l.Overlap, "overlap", 24*time.Hour, "how long the old token keeps working beside the new one; 0 revokes it at once")
			fs.DurationVar(&l.ExpiresIn, "expires-in", 0, "make the new token expire this long after now (default: the old token's lifetime, if it had one)")
		}
	case "list":
		if m.Command == "audit list" {
			fs.StringVar(&l.Token, "token", "", "only the actions of this token id, and those done to it")
			fs.StringVar(&l.Action, "action", "", "only this action, e.g. token.revoke")
			fs.IntVar(&l.Limit, "limit", 50, "at most this many entries")
		}
	}
}

// openPublisher checks the flags common to the token commands and opens
// the database.
func (m *Main) openPublisher(ctx context.Context) error {
	if err := m.needDatabase(); err != nil {
		return err
	}
	if m.Publisher == "" {
		return errors.New("--publisher is required")
	}
	if _, err := m.openStore(ctx); err != nil {
		return err
	}
	if _, err := m.Store.Publisher(ctx, m.Publisher); errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("there is no publisher %q", m.Publisher)
	} else if err != nil {
		return err
	}
	return nil
}

// commandLineActor names who runs a command: the operating-system user
// and host, as well as they can be known.
func commandLineActor() string {
	name := "unknown user"
	if u, err := user.Current(); err == nil && u.Username != "" {
		name = u.Username
	}
	if h, err := os.Hostname(); err == nil && h != "" {
		name += "@" + h
	}
	return audit.CommandLine + " (" + name + ")"
}

// record appends an action taken on this machine to a publisher's audit
// trail: by default the action of a command, by the command line's user,
// on --publisher. A command whose action cannot be recorded fails, saying
// the action was applied.
func (m *Main) record(ctx context.Context, r audit.Record) error {
	if r.Actor == "" {
		r.Actor = commandLineActor()
	}
	if r.Publisher == "" {
		r.Publisher = m.Publisher
	}
	r.Address = audit.Local
	if _, err := m.Store.AppendAudit(ctx, r, m.now()); err != nil {
		return fmt.Errorf("%s %s was applied, but the audit trail could not record it: %w", r.Action, r.Target, err)
	}
	return nil
}

func (m *Main) tokenCreate(ctx context.Context, kind store.TokenKind) error {
	if err := m.openPublisher(ctx); err != nil {
		return err
	}
	now := m.now()
	t := store.Token{Kind: kind, Publisher: m.Publisher, Name: m.Name, CreatedAt: now, CreatedBy: audit.CommandLine}
	if kind == store.BuyerToken {
		switch {
		case m.BuyerID == "" || len(m.BuyerID) > 128:
			return errors.New("--buyer is required (at most 128 characters)")
		case !adcp.IsDomain(m.Operator):
			return errors.New("--operator must be a lower-case domain name")
		}
		if t.Name == "" {
			t.Name = m.BuyerID
		}
		t.Buyer = &store.Buyer{ID: m.BuyerID, Operator: m.Operator, Accounts: m.Accounts}
	}
	if err := tokens.CheckName(t.Name); err != nil {
		return fmt.Errorf("--name: %w", err)
	}
	if m.Lifecycle.ExpiresIn < 0 {
		return errors.New("--expires-in must be more than zero")
	}
	t.ExpiresAt = tokens.Expiry(now, m.Lifecycle.ExpiresIn)
	secret, stored, err := tokens.Mint(ctx, m.Store, t)
	if err != nil {
		return err
	}
	if err := m.record(ctx, audit.Record{Action: audit.TokenCreate, Target: stored.ID, Detail: tokens.Detail(stored)}); err != nil {
		return err
	}
	fmt.Fprintln(m.Stdout, secret)
	until := "until revoked"
	if stored.ExpiresAt != nil {
		until = "until " + stored.ExpiresAt.UTC().Format(time.RFC3339)
	}
	fmt.Fprintf(m.Stderr, "%s token %s %q for publisher %s created, valid %s; it is shown once (the database keeps only its digest)\n",
		kind, stored.ID, stored.Name, m.Publisher, until)
	return nil
}

func (m *Main) tokenList(ctx context.Context, kind store.TokenKind) error {
	if err := m.openPublisher(ctx); err != nil {
		return err
	}
	ts, err := m.Store.ListTokens(ctx, m.Publisher)
	if err != nil {
		return err
	}
	now := m.now()
	w := tabwriter.NewWriter(m.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "ID\tNAME\tPREFIX\tSCOPE\tCREATED\tLAST USED\tEXPIRES\tSTATUS")
	for _, t := range ts {
		if t.Kind != kind {
			continue
		}
		prefix := t.Prefix
		if prefix == "" {
			prefix = "(not kept)"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", t.ID, t.Name, prefix, scope(t),
			stamp(&t.CreatedAt, "-"), stamp(t.LastUsedAt, "never"), stamp(t.ExpiresAt, "never"), status(t, now))
	}
	return w.Flush()
}

// scope says what a token opens.
func scope(t store.Token) string {
	if t.Buyer == nil {
		return "admin API of " + t.Publisher
	}
	s := "buyer " + t.Buyer.ID + " for " + t.Buyer.Operator
	if len(t.Buyer.Accounts) > 0 {
		s += " (accounts " + strings.Join(t.Buyer.Accounts, ", ") + ")"
	}
	return s
}

func stamp(t *time.Time, none string) string {
	if t == nil {
		return none
	}
	return t.UTC().Format("2006-01-02 15:04Z")
}

func status(t store.Token, now time.Time) string {
	s := t.Status(now)
	if t.ReplacedBy != "" {
		s += " (replaced by " + t.ReplacedBy + ")"
	}
	return s
}

// findToken resolves --id or --stdin to one of the publisher's tokens of
// kind.
func (m *Main) findToken(ctx context.Context, kind store.TokenKind) (store.Token, error) {
	l := m.Lifecycle
	var (
		t   store.Token
		err error
	)
	switch {
	case l.FromStdin == (l.TokenID != ""):
		return t, errors.New("name the token with --id, or give its secret on standard input with --stdin")
	case l.FromStdin:
		line, rerr := bufio.NewReader(m.Stdin).ReadString('\n')
		secret := strings.TrimSpace(line)
		if secret == "" {
			return t, fmt.Errorf("--stdin: no secret on standard input (%v)", rerr)
		}
		t, err = m.Store.TokenByDigest(ctx, store.TokenDigest(secret))
	default:
		t, err = m.Store.Token(ctx, m.Publisher, l.TokenID)
	}
	if errors.Is(err, store.ErrNotFound) || (err == nil && (t.Publisher != m.Publisher || t.Kind != kind)) {
		return store.Token{}, fmt.Errorf("publisher %s has no such %s token", m.Publisher, kind)
	}
	return t, err
}

func (m *Main) tokenRevoke(ctx context.Context, kind store.TokenKind) error {
	if err := m.openPublisher(ctx); err != nil {
		return err
	}
	t, err := m.findToken(ctx, kind)
	if err != nil {
		return err
	}
	was := t.RevokedAt
	if t, err = m.Store.RevokeToken(ctx, m.Publisher, t.ID, m.now()); err != nil {
		return err
	}
	if was != nil {
		fmt.Fprintf(m.Stdout, "%s token %s %q was already revoked at %s\n", kind, t.ID, t.Name, stamp(was, ""))
		return nil
	}
	if err := m.record(ctx, audit.Record{Action: audit.TokenRevoke, Target: t.ID, Detail: tokens.Detail(t)}); err != nil {
		return err
	}
	fmt.Fprintf(m.Stdout, "%s token %s %q (%s) revoked: every replica refuses it from its next request\n", kind, t.ID, t.Name, t.Prefix)
	fmt.Fprintf(m.Stderr, "its last actions: storefront audit list --publisher %s --token %s\n", m.Publisher, t.ID)
	return nil
}

func (m *Main) tokenRotate(ctx context.Context, kind store.TokenKind) error {
	if err := m.openPublisher(ctx); err != nil {
		return err
	}
	l := m.Lifecycle
	if l.Overlap < 0 || l.ExpiresIn < 0 {
		return errors.New("--overlap and --expires-in cannot be negative")
	}
	old, err := m.findToken(ctx, kind)
	if err != nil {
		return err
	}
	now := m.now()
	next := store.Token{CreatedAt: now, CreatedBy: audit.CommandLine, ExpiresAt: tokens.Expiry(now, l.ExpiresIn)}
	secret, old, created, err := tokens.Rotate(ctx, m.Store, m.Publisher, old.ID, next, now.Add(l.Overlap))
	if errors.Is(err, store.ErrConflict) {
		return fmt.Errorf("%s token %s is revoked, expired or already rotated: create a new token instead", kind, old.ID)
	}
	if err != nil {
		return err
	}
	if err := m.record(ctx, audit.Record{Action: audit.TokenRotate, Target: old.ID, Detail: tokens.RotationDetail(old, created)}); err != nil {
		return err
	}
	fmt.Fprintln(m.Stdout, secret)
	until := "is revoked"
	if old.RevokedAt == nil {
		until = "works until " + stamp(old.ExpiresAt, "")
	}
	fmt.Fprintf(m.Stderr, "%s token %s replaces %s %q; the old token %s. The new secret is shown once.\n", kind, created.ID, old.ID, old.Name, until)
	return nil
}

func (m *Main) auditList(ctx context.Context) error {
	if err := m.openPublisher(ctx); err != nil {
		return err
	}
	l := m.Lifecycle
	f := audit.Filter{Token: l.Token, Limit: l.Limit}
	if l.Action != "" {
		a, ok := audit.ParseAction(l.Action)
		if !ok {
			return fmt.Errorf("--action %q is not an audit action", l.Action)
		}
		f.Action = a
	}
	es, err := m.Store.AuditTrail(ctx, m.Publisher, f)
	if err != nil {
		return err
	}
	w := tabwriter.NewWriter(m.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "SEQ\tTIME\tACTION\tTARGET\tACTOR\tTOKEN\tADDRESS\tDETAIL")
	for _, e := range es {
		var detail []string
		for _, k := range sortedKeys(e.Detail) {
			detail = append(detail, k+"="+e.Detail[k])
		}
		token := e.TokenID
		if token == "" {
			token = "-"
		}
		fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", e.Sequence, e.Time.UTC().Format(time.RFC3339), e.Action, e.Target,
			e.Actor, token, e.Address, strings.Join(detail, " "))
	}
	return w.Flush()
}

func (m *Main) auditVerify(ctx context.Context) error {
	pubs, err := m.publishersToCheck(ctx)
	if err != nil {
		return err
	}
	broken := 0
	for _, p := range pubs {
		res, err := store.VerifyAudit(ctx, m.Store, p)
		if err != nil {
			return fmt.Errorf("verifying %s: %w", p, err)
		}
		if res.OK {
			fmt.Fprintf(m.Stdout, "%s: ok, %d audit entries, chain intact\n", p, res.Checked)
			continue
		}
		broken++
		fmt.Fprintf(m.Stdout, "%s: BROKEN at sequence %d: %s (%d entries before it verified)\n", p, res.Break.Sequence, res.Break.Reason, res.Checked)
	}
	if broken > 0 {
		return &exitError{1, fmt.Sprintf("%d audit trail(s) broken", broken)}
	}
	return nil
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
