package products

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/storefront/storefront/adcp"
	"github.com/storefront/storefront/decline"
	"github.com/storefront/storefront/internal/clock"
	"github.com/storefront/storefront/ledger"
	"github.com/storefront/storefront/merch"
	"github.com/storefront/storefront/outcome"
	"github.com/storefront/storefront/sanitize"
)

// Snapshots yields the current snapshot of a publisher.
type Snapshots interface {
	// Snapshot returns the publisher's current snapshot. It returns
	// ErrUnknownPublisher for a publisher the storefront does not serve,
	// and any other error for an outage.
	Snapshot(ctx context.Context, publisherID string) (*Snapshot, error)
}

// Ledger appends decisions to a publisher's chain. Append returns only
// once the entry is durable.
type Ledger interface {
	Append(ctx context.Context, r ledger.Record) (ledger.Entry, error)
}

// Accounts resolves the account a request names, for the principal making
// it.
type Accounts interface {
	// Resolve returns the account, or ErrAccountNotFound when it does not
	// exist or the principal may not use it (the two are not told apart),
	// or another error for an outage.
	Resolve(ctx context.Context, publisherID string, p Principal, ref *AccountRef) (Account, error)
}

// Errors the interfaces above return.
var (
	ErrUnknownPublisher = errors.New("unknown publisher")
	ErrAccountNotFound  = errors.New("account not found")
)

// Principal is the authenticated caller.
type Principal struct {
	// ID names the principal; "" is an anonymous caller.
	ID string
	// Operator is the domain the principal operates as: it may use
	// natural-key accounts with this operator.
	Operator string
	// Accounts are seller-assigned account ids it may use.
	Accounts []string
	// Sandbox marks a compliance test-kit principal: it may use sandbox
	// accounts only.
	Sandbox bool
}

// Anonymous reports whether the caller presented no credentials.
func (p Principal) Anonymous() bool { return p.ID == "" }

// Account is a resolved account.
type Account struct {
	Key     string
	Sandbox bool
	// Disclosure caps what any rule may disclose to this account.
	Disclosure decline.Level
}

// Call is one get_products invocation.
type Call struct {
	PublisherID string
	Principal   Principal
	Args        []byte

	// curating marks the background run of a brief the storefront
	// accepted as a task: it takes no directive and starts no task.
	curating bool
	// claim is the directive this call claimed, spent by the answer
	// that carries it (finish) and released otherwise.
	claim *Claim
	// kept is Args as they may be kept and digested (KeptRequest);
	// nil until run has decoded them.
	kept []byte
}

// keptArgs is c's request as it may be kept at rest and digested.
func (c Call) keptArgs() []byte {
	if c.kept != nil {
		return c.kept
	}
	return c.Args
}

// Result is the answer to a call: the outcome, its wire bytes, and the
// internal trace a publisher's preview shows.
type Result struct {
	Outcome outcome.Outcome
	// Payload is exactly what the transport sends as the AdCP object.
	Payload []byte
	Trace   Trace
}

// Trace is the internal account of a decision. It names internal rules and
// must never reach a buyer.
type Trace struct {
	Version          string         `json:"served_version"`
	RulebookVersion  int64          `json:"rulebook_version"`
	CatalogueVersion int64          `json:"catalogue_version"`
	Fired            []FiredRule    `json:"rules_fired"`
	Disclosure       string         `json:"disclosure_cap,omitempty"`
	Suggestions      []TracedChange `json:"suggestions_offered,omitempty"`
	Checks           int            `json:"suggestion_checks"`
	Considered       int            `json:"products_considered"`
	Matched          int            `json:"products_matched"`
	Excluded         map[string]int `json:"excluded_by,omitempty"`
	Error            string         `json:"error,omitempty"`
	Forced           bool           `json:"forced,omitempty"`
}

// FiredRule is one rule in a trace.
type FiredRule struct {
	ID         string `json:"id"`
	Name       string `json:"name"`
	Slug       string `json:"slug"`
	Disclosure string `json:"disclosure"`
}

// TracedChange is a verified suggestion in a trace.
type TracedChange struct {
	Kinds []string `json:"kinds"`
	Text  string   `json:"text"`
}

// Service runs get_products.
type Service struct {
	Snapshots Snapshots
	Ledger    Ledger
	Accounts  Accounts
	// Directives, when set, supplies compliance directives.
	Directives Directives
	// Tasks, when set, records submitted tasks.
	Tasks Tasks
	// Seeds, when set, serves sandbox principals their seeded catalogue.
	Seeds Seeds
	// WebhookAllowed, when set, vets a push_notification_config URL
	// before a task registers it.
	WebhookAllowed func(rawURL string) error
	// Curation, when set, turns a brief or refine request that registers
	// a webhook into a task: it is answered submitted at once, decided in
	// the background, and its answer delivered to the webhook.
	Curation Curation
	// Now is the program's clock; nil means the machine's (internal/clock).
	Now func() time.Time
	Log *slog.Logger
}

// Tasks records asynchronous tasks.
type Tasks interface {
	// Submit records a submitted task. It returns ErrTaskExists when the
	// owner already has a task with that id.
	Submit(ctx context.Context, publisher string, sub Submission) error
}

// Curation runs the briefs the storefront accepts as tasks.
type Curation interface {
	// Curate decides a submitted task in the background: it runs decide
	// and finishes the task sub names with its answer, delivering the
	// task's webhook. It returns at once.
	Curate(publisher string, sub Submission, decide func(context.Context) Result)
}

// curatingMessage is a curated task's message while it is being decided.
const curatingMessage = "The brief is being curated; the answer will be delivered to the registered webhook and is readable with get_task_status."

// ErrTaskExists is returned by Tasks.Submit for a duplicate task id.
var ErrTaskExists = errors.New("task exists")

// Submission is a task entering the asynchronous lifecycle.
type Submission struct {
	TaskID    string
	Account   string
	Principal string
	Message   string
	// Request is the originating get_products arguments.
	Request []byte
	// Push is where the terminal notification goes, if anywhere.
	Push *PushConfig
}

// Seeds serves the catalogues that sandbox principals seed through the
// compliance controller.
type Seeds interface {
	// SeededSnapshot returns the principal's seeded snapshot, or nil
	// when the principal has seeded nothing.
	SeededSnapshot(ctx context.Context, publisher, principal string) (*Snapshot, error)
}

// Directives hands out one-shot compliance directives. A call claims the
// directive it may answer with; once the answer carrying it is recorded
// the call spends it, and any call refused along the way (its push
// config, an outage, the ledger) releases it, so that a directive is
// spent only by a call answered with it.
type Directives interface {
	// Claim holds the directive for (account, principal), if any, for
	// this call alone: nil when there is none or another call holds it.
	Claim(ctx context.Context, publisherID, accountKey, principalID string) (*Claim, error)
	// Spend consumes the claimed directive. An error means the claim no
	// longer holds (replaced, or taken over once its lease ran out) or
	// could not be settled: the call must not answer with it.
	Spend(ctx context.Context, c *Claim) error
	// Release gives the directive back for the next call.
	Release(ctx context.Context, c *Claim) error
}

// Claim is one call's hold on a directive.
type Claim struct {
	Directive
	Publisher, Account, Principal string
	// Token names the claimant; only it spends or releases the claim.
	Token string
	// spent is set once the claim is spent.
	spent bool
}

// Settle releases c unless the call spent it. Callers defer it right
// after claiming, so that every refusal gives the directive back.
func Settle(ctx context.Context, d Directives, c *Claim, log *slog.Logger) {
	if c == nil || c.spent {
		return
	}
	if err := d.Release(context.WithoutCancel(ctx), c); err != nil {
		// The claim runs out on its own: the directive is the next
		// call's once its lease ends.
		log.Warn("releasing a directive failed; it returns when its claim runs out", "publisher", c.Publisher, "err", err)
	}
}

// SpendClaim spends c, marking it spent for Settle.
func SpendClaim(ctx context.Context, d Directives, c *Claim) error {
	if err := d.Spend(context.WithoutCancel(ctx), c); err != nil {
		return err
	}
	c.spent = true
	return nil
}

// Directive forces the next eligible get_products into an arm.
type Directive struct {
	// Arm is rejected or submitted, or stale: answer from the cached
	// snapshot as if an upstream were unavailable, with a STALE_RESPONSE
	// advisory.
	Arm         string
	Reason      string
	Suggestions []string
	TaskID      string
	Message     string
}

func (s *Service) now() time.Time {
	return clock.Read(s.Now)
}

func (s *Service) log() *slog.Logger {
	if s.Log != nil {
		return s.Log
	}
	return slog.Default()
}

// baseScreen screens text made before a publisher's snapshot is loaded:
// errors about the request itself. It knows the vendor names only.
var baseScreen = sanitize.Vendor()

// GetProducts answers one call. It always returns a result: failures are
// the error arm, never a Go error and never products.
func (s *Service) GetProducts(ctx context.Context, c Call) Result {
	return s.run(ctx, c, nil, true)
}

// Preview answers a call the way GetProducts would, against snap (for
// example a snapshot of a draft rulebook), without consuming directives or
// writing to the ledger.
func (s *Service) Preview(ctx context.Context, c Call, snap *Snapshot) Result {
	return s.run(ctx, c, snap, false)
}

func (s *Service) run(ctx context.Context, c Call, snap *Snapshot, live bool) Result {
	req, reqErr := DecodeRequest(c.Args)
	if req == nil || req.Push != nil {
		// Only a request with a webhook has secrets to keep out.
		c.kept = KeptRequest(c.Args)
	}
	var env outcome.Envelope
	if req != nil {
		env.Context = req.Context
	}
	// Negotiate first: a buyer on another major cannot read the errors
	// of this one.
	pin, major := "", 0
	if req != nil {
		pin, major = req.AdcpVersion, req.AdcpMajorVersion
	}
	version, verr := adcp.Negotiate(pin, major)
	if verr != nil {
		env.Version = adcp.Default
		var ne *adcp.NegotiationError
		field := ""
		if errors.As(verr, &ne) {
			field = ne.Field
		}
		return s.fail(ctx, c, env, nil, Trace{Error: verr.Error()}, live, ErrorOf(baseScreen, adcp.VersionUnsupported, field, verr.Error(), outcome.VersionDetails()))
	}
	env.Version = version
	if reqErr != nil {
		var re *RequestError
		errs := []outcome.Error{ErrorOf(baseScreen, adcp.InvalidRequest, "", "the request could not be read", nil)}
		if errors.As(reqErr, &re) {
			errs = errs[:0]
			for _, p := range re.Problems {
				errs = append(errs, ErrorOf(baseScreen, p.Code, p.Field, p.Message, nil))
			}
		}
		return s.fail(ctx, c, env, req, Trace{Version: version.String(), Error: reqErr.Error()}, live, errs[0], errs[1:]...)
	}

	previewing := snap != nil
	if snap == nil {
		var err error
		snap, err = s.Snapshots.Snapshot(ctx, c.PublisherID)
		if err != nil {
			s.log().Error("snapshot unavailable", "publisher", c.PublisherID, "err", err)
			return s.fail(ctx, c, env, req, Trace{Version: version.String(), Error: err.Error()}, false,
				outcome.Error{Code: adcp.ServiceUnavailable, Message: sanitize.Unavailable})
		}
	}
	trace := Trace{Version: version.String(), RulebookVersion: snap.RulebookVersion, CatalogueVersion: snap.CatalogueVersion}

	acct, failure := s.account(ctx, c, req, snap)
	if failure != nil {
		trace.Error = failure.Message.String()
		return s.fail(ctx, c, env, req, trace, live, *failure)
	}

	// A principal that seeded compliance fixtures sees only them, but only
	// on sandbox accounts (every account of a test-kit key is one): live
	// accounts are served as they would be without sandbox mode.
	if !previewing && s.Seeds != nil && (c.Principal.Sandbox || acct.Sandbox) && !c.Principal.Anonymous() {
		seeded, err := s.Seeds.SeededSnapshot(ctx, c.PublisherID, c.Principal.ID)
		if err != nil {
			s.log().Error("seeded snapshot unavailable", "publisher", c.PublisherID, "err", err)
			return s.fail(ctx, c, env, req, trace, false, outcome.Error{Code: adcp.ServiceUnavailable, Message: sanitize.Unavailable})
		}
		if seeded != nil {
			snap = seeded
			trace.CatalogueVersion = seeded.CatalogueVersion
		}
	}

	if snap.Rulebook == nil {
		trace.Error = merch.ErrNoRulebook.Error()
		s.log().Error("no rulebook: refusing to serve products", "publisher", c.PublisherID)
		return s.fail(ctx, c, env, req, trace, live, outcome.Error{Code: adcp.ServiceUnavailable, Message: sanitize.Unavailable})
	}

	var directive *Directive
	if live && !c.curating && s.Directives != nil && (acct.Key != "" || c.Principal.Sandbox) && (req.BuyingMode == "brief" || req.BuyingMode == "refine") {
		key := acct.Key
		if c.Principal.Sandbox {
			// A test-kit principal has one sandbox, whatever account a
			// call names; its directives are kept under no account.
			key = ""
		}
		claim, err := s.Directives.Claim(ctx, c.PublisherID, key, c.Principal.ID)
		if err != nil {
			trace.Error = err.Error()
			return s.fail(ctx, c, env, req, trace, false, outcome.Error{Code: adcp.ServiceUnavailable, Message: sanitize.Unavailable})
		}
		if claim != nil {
			defer Settle(ctx, s.Directives, claim, s.log())
			directive, c.claim = &claim.Directive, claim
		}
	}

	brief := NormaliseBrief(req, s.now())
	d, err := snap.Rules.Evaluate(brief, snap.Catalogue.Market())
	if err != nil {
		trace.Error = err.Error()
		s.log().Error("rulebook evaluation failed", "publisher", c.PublisherID, "err", err)
		return s.fail(ctx, c, env, req, trace, live, outcome.Error{Code: adcp.ServiceUnavailable, Message: sanitize.Unavailable})
	}
	for _, r := range d.Reasons() {
		trace.Fired = append(trace.Fired, FiredRule{ID: r.RuleID, Name: r.RuleName, Slug: string(r.Slug), Disclosure: r.Level.String()})
	}

	stale := directive != nil && directive.Arm == "stale"
	if directive != nil && !stale {
		trace.Forced = true
		if directive.Arm == "submitted" {
			if _, failure := s.submit(ctx, c, req, acct, directive); failure != nil {
				trace.Error = failure.Message.String()
				return s.fail(ctx, c, env, req, trace, live, *failure)
			}
			o := outcome.NewSubmitted(env, directive.TaskID, screenOptional(baseScreen, directive.Message))
			return s.finish(ctx, c, o, req, acct, trace, d, live, true)
		}
		// A forced reason is the compliance caller's own words: cleaned of
		// markup and vendor names, never matched against the deny-list,
		// whose verdict would confirm which of them are the publisher's
		// secrets.
		composed := decline.Compose(decline.Input{
			Grounds: d.Grounds(),
			Voice:   snap.Rulebook.Voice,
			Cap:     acct.Disclosure,
			Forced:  &decline.Forced{Reason: directive.Reason, Suggestions: directive.Suggestions},
		}, baseScreen)
		return s.finish(ctx, c, s.declined(env, version, composed), req, acct, trace, d, live, true)
	}

	if directive == nil && live && !c.curating && s.Curation != nil && req.Push != nil && !c.Principal.Anonymous() &&
		(req.BuyingMode == "brief" || req.BuyingMode == "refine") {
		return s.curate(ctx, c, env, req, acct, trace, d, snap)
	}

	if d.Declined() {
		trace.Disclosure = acct.Disclosure.String()
		composed := decline.Compose(decline.Input{
			Grounds:      DeclineGrounds(snap, req, d),
			Voice:        snap.Rulebook.Voice,
			Cap:          acct.Disclosure,
			Verify:       Verifier(snap, req, brief),
			VerifyFigure: FigureVerifier(snap, req, brief),
		}, snap.Screen)
		trace.Checks = composed.Checks
		for i, ch := range composed.Offered {
			tc := TracedChange{Text: composed.Suggestions[i].String()}
			for _, e := range ch.Edits {
				tc.Kinds = append(tc.Kinds, string(e.Kind))
			}
			trace.Suggestions = append(trace.Suggestions, tc)
		}
		return s.finish(ctx, c, s.declined(env, version, composed), req, acct, trace, d, live, false)
	}

	var warnings []outcome.Error
	if stale {
		// A compliance run forced an upstream outage: answer from the
		// snapshot in hand and say so, without failing the call.
		age := 0
		if !snap.BuiltAt.IsZero() {
			age = max(0, int(s.now().Sub(snap.BuiltAt).Seconds()))
		}
		w := ErrorOf(snap.Screen, adcp.StaleResponse, "", "Served from cache: an upstream inventory service is temporarily unavailable.",
			map[string]any{"served_from_cache": true, "cache_age_seconds": age})
		warnings = append(warnings, w)
		trace.Forced = true
	}
	o, failure := s.completed(env, req, acct, snap, &trace, warnings)
	if failure != nil {
		return s.fail(ctx, c, env, req, trace, live, *failure)
	}
	return s.finish(ctx, c, o, req, acct, trace, d, live, stale)
}

// submit records the task a submitted directive creates. A webhook the
// storefront cannot honour is refused, never silently dropped.
func (s *Service) submit(ctx context.Context, c Call, req *Request, acct Account, d *Directive) (Submission, *outcome.Error) {
	sub := Submission{TaskID: d.TaskID, Account: acct.Key, Principal: c.Principal.ID, Message: d.Message, Request: c.keptArgs(), Push: req.Push}
	if req.Push != nil {
		if req.Push.OperationID == "" {
			e := ErrorOf(baseScreen, adcp.InvalidRequest, "push_notification_config.operation_id", "a task that registers a webhook needs push_notification_config.operation_id", nil)
			return sub, &e
		}
		if s.WebhookAllowed != nil {
			if err := s.WebhookAllowed(req.Push.URL); err != nil {
				e := ErrorOf(baseScreen, adcp.InvalidRequest, "push_notification_config.url", err.Error(), nil)
				return sub, &e
			}
		}
	}
	if s.Tasks == nil {
		e := ErrorOf(baseScreen, adcp.UnsupportedFeature, "", "this seller does not run asynchronous tasks", nil)
		return sub, &e
	}
	err := s.Tasks.Submit(ctx, c.PublisherID, sub)
	switch {
	case errors.Is(err, ErrTaskExists):
		e := ErrorOf(baseScreen, adcp.InvalidRequest, "", "a task with the forced task_id already exists for this account", nil)
		return sub, &e
	case err != nil:
		s.log().Error("recording a task failed", "publisher", c.PublisherID, "err", err)
		return sub, &outcome.Error{Code: adcp.ServiceUnavailable, Message: sanitize.Unavailable}
	}
	return sub, nil
}

// curate accepts a brief as a task: the answer now is submitted, with a
// new task id, and the brief is decided in the background by the same
// pipeline, its answer delivered to the buyer's webhook.
func (s *Service) curate(ctx context.Context, c Call, env outcome.Envelope, req *Request, acct Account, trace Trace, d merch.Decision, snap *Snapshot) Result {
	id, err := newTaskID()
	if err != nil {
		return s.fail(ctx, c, env, req, trace, true, outcome.Error{Code: adcp.ServiceUnavailable, Message: sanitize.Unavailable})
	}
	sub, failure := s.submit(ctx, c, req, acct, &Directive{Arm: "submitted", TaskID: id, Message: curatingMessage})
	if failure != nil {
		trace.Error = failure.Message.String()
		return s.fail(ctx, c, env, req, trace, true, *failure)
	}
	res := s.finish(ctx, c, outcome.NewSubmitted(env, id, screenOptional(snap.Screen, curatingMessage)), req, acct, trace, d, true, false)
	if res.Outcome.Arm() == outcome.Submitted {
		bg := Call{PublisherID: c.PublisherID, Principal: c.Principal, Args: c.Args, curating: true}
		s.Curation.Curate(c.PublisherID, sub, func(ctx context.Context) Result { return s.run(ctx, bg, nil, true) })
	}
	return res
}

// newTaskID returns a fresh task id.
func newTaskID() (string, error) {
	b := make([]byte, 12)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return "task_" + hex.EncodeToString(b), nil
}

// declined turns a composed decline into the outcome the served version
// can carry: the rejected arm from 3.2, a typed correctable error before.
func (s *Service) declined(env outcome.Envelope, v adcp.Version, c decline.Composed) outcome.Outcome {
	if !v.AtLeast(3, 2) {
		return outcome.NewFailed(env, DeclineError(c))
	}
	o, err := outcome.NewRejected(env, outcome.RejectedBody{
		Reason:      c.Reason,
		Suggestions: c.Suggestions,
		Slug:        string(c.Slug),
		Fixable:     !c.Final(),
	})
	if err != nil {
		// Compose never returns an empty reason; keep the invariant anyway.
		o, _ = outcome.NewRejected(env, outcome.RejectedBody{Reason: sanitize.Declined, Slug: string(decline.CommerciallyDeclined)})
	}
	return o
}

// DeclineError is a composed decline as the typed, correctable error that
// carries it where there is no rejected arm: to buyers before 3.2, and on
// tasks without one (a refused media buy). The message is the composed
// reason, the suggestion the first composed suggestion.
func DeclineError(c decline.Composed) outcome.Error {
	entry, _ := decline.Lookup(c.Slug)
	e := outcome.Error{
		Code:    entry.LegacyCode,
		Message: c.Reason,
		Details: map[string]any{"decline": map[string]any{"slug": string(c.Slug), "fixable": !c.Final()}},
	}
	if len(c.Suggestions) > 0 {
		e.Suggestion = c.Suggestions[0]
		e.Details["suggestions"] = c.Suggestions
	}
	return e
}

// Verifier returns the function the composer uses to check a suggestion:
// apply it to the brief and filters, run the rulebook again, and ask the
// catalogue for at least one product. A media buy verifies its suggestions
// with it too, so a refused buy is offered what a declined brief would be.
func Verifier(snap *Snapshot, req *Request, brief merch.Brief) func(decline.Change) bool {
	return func(ch decline.Change) bool {
		b, f, geo := applied(req, brief, ch)
		d, err := snap.Rules.Evaluate(b, snap.Catalogue.Market())
		if err != nil || d.Declined() {
			return false
		}
		return snap.Catalogue.Any(f, geo)
	}
}

// FigureVerifier returns the function the composer checks a figure of a
// reason with: the change the figure stands for, applied as Verifier
// does, must stop the rule with the slug from declining, and the
// catalogue must have a product for the changed brief.
func FigureVerifier(snap *Snapshot, req *Request, brief merch.Brief) func(decline.Change, decline.Slug) bool {
	return func(ch decline.Change, slug decline.Slug) bool {
		b, f, geo := applied(req, brief, ch)
		d, err := merch.Evaluate(snap.Rulebook, b, snap.Catalogue.Market())
		if err != nil {
			return false
		}
		for _, r := range d.Reasons() {
			if r.Slug == slug {
				return false
			}
		}
		return snap.Catalogue.Any(f, geo)
	}
}

// applied is the brief, filters and markets of req with ch applied.
func applied(req *Request, brief merch.Brief, ch decline.Change) (merch.Brief, Filters, []string) {
	b := brief.Clone()
	f := req.Filters
	geo := append([]string(nil), req.GeoCountries...)
	for _, e := range ch.Edits {
		switch e.Kind {
		case decline.RaiseBudget:
			v := e.Budget
			b.Budget = &merch.Budget{Max: &v, Currency: e.Currency}
			f.Budget = &BudgetRange{Max: &v, Currency: e.Currency}
		case decline.SwitchChannel:
			b.Channels = []string{e.Channel}
			f.Channels = []string{e.Channel}
		case decline.MoveFlight, decline.LaterStart:
			b.Flight = e.Flight
			f.StartDate, f.EndDate = e.Flight.Start, e.Flight.End
		case decline.TargetMarket:
			b.Countries = []string{e.Country}
			geo, f.Countries = []string{e.Country}, nil
		case decline.ChangeFormat:
			b.FormatKinds = []string{e.FormatKind}
			f.FormatKinds = []string{e.FormatKind}
		}
	}
	return b, f, geo
}

// completed matches the catalogue and builds the completed arm.
func (s *Service) completed(env outcome.Envelope, req *Request, acct Account, snap *Snapshot, trace *Trace, warnings []outcome.Error) (outcome.Outcome, *outcome.Error) {
	text := ""
	if req.Brief != nil {
		text = *req.Brief
	}
	refinement, omit, extraText := refine(req.Refine, snap.Screen)
	if extraText != "" {
		text = strings.TrimSpace(text + " " + extraText)
	}
	if e := unknownProposal(req.Refine); e != nil {
		return outcome.Outcome{}, e
	}
	m := snap.Catalogue.Find(req.Filters, req.GeoCountries, text, req.BuyingMode != "wholesale", omit)
	trace.Considered, trace.Matched, trace.Excluded = m.Considered, m.Total, m.Excluded

	fp := fingerprint([]byte(fmt.Sprintf("%s|%d|%d", snap.Publisher.ID, snap.CatalogueVersion, snap.RulebookVersion)), queryKey(req))
	offset := 0
	if req.Pagination.Cursor != "" {
		o, err := decodeCursor(req.Pagination.Cursor, fp)
		if err != nil || o > m.Total {
			e := ErrorOf(snap.Screen, adcp.InvalidRequest, "pagination.cursor", errBadCursor.Error(), nil)
			return outcome.Outcome{}, &e
		}
		offset = o
	}
	end := min(offset+req.Pagination.MaxResults, m.Total)
	page := &outcome.Page{HasMore: end < m.Total}
	total := m.Total
	page.Total = &total
	if page.HasMore {
		page.Cursor = cursor{offset: end, fingerprint: fp}.encode()
	}
	entries := m.Page(offset, end-offset)
	products := make([]json.RawMessage, 0, len(entries))
	lines := map[string]json.RawMessage{}
	for _, e := range entries {
		// brief_relevance lists the buyer's own words that the product's
		// public text matched: it is screened like the buyer's words,
		// never with the deny-list, or whether it appears would tell the
		// buyer which words it typed form a confidential phrase.
		products = append(products, project(e, req.Fields, req.Filters.PricingCurrencies, relevance(m.c, e, m.terms), baseScreen, lines))
	}
	scope := "public"
	if req.Account != nil {
		scope = "account"
	}
	body := outcome.CompletedBody{Products: products, CacheScope: scope, Page: page, Sandbox: acct.Sandbox, Refinement: refinement, Warnings: warnings}
	if len(products) == 0 && len(m.Excluded) > 0 {
		excluded := map[string]any{}
		for k, n := range m.Excluded {
			excluded[k] = map[string]any{"count": n}
		}
		body.Diagnostics = map[string]any{"semantics": "only", "total_candidates": m.Considered, "excluded_by": excluded}
	}
	return outcome.NewCompleted(env, body), nil
}

// refine answers the refine entries: product omits take effect, product
// includes and request asks steer ranking, and proposal entries cannot
// apply because this storefront issues no proposals.
func refine(entries []RefineEntry, screen *sanitize.Screen) ([]outcome.Refinement, map[string]bool, string) {
	omit := map[string]bool{}
	var out []outcome.Refinement
	var asks []string
	for _, e := range entries {
		r := outcome.Refinement{Scope: e.Scope, ProductID: e.ProductID, Proposal: e.ProposalID, Status: "applied"}
		switch e.Scope {
		case "request":
			asks = append(asks, e.Ask)
		case "product":
			if e.Action == "omit" {
				omit[e.ProductID] = true
			} else if e.Ask != "" {
				asks = append(asks, e.Ask)
			}
		case "proposal":
			r.Status = "unable"
			if t, ok := screen.Line("This seller does not issue proposals.", 200); ok {
				r.Notes = &t
			}
		}
		out = append(out, r)
	}
	return out, omit, strings.Join(asks, " ")
}

func unknownProposal(entries []RefineEntry) *outcome.Error {
	for i, e := range entries {
		if e.Scope == "proposal" && e.Action == "finalize" {
			err := ErrorOf(baseScreen, adcp.ProposalNotFound, fmt.Sprintf("refine[%d].proposal_id", i), "proposal "+e.ProposalID+" was not issued by this seller", nil)
			return &err
		}
	}
	return nil
}

// queryKey is the part of the request a cursor is bound to.
func queryKey(r *Request) []byte {
	b, _ := json.Marshal(struct {
		Mode, Brief string
		F           Filters
		Geo, Fields []string
		Refine      []RefineEntry
		Size        int
	}{r.BuyingMode, deref(r.Brief), r.Filters, r.GeoCountries, r.Fields, r.Refine, r.Pagination.MaxResults})
	return b
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// account resolves and authorises the account a request names.
func (s *Service) account(ctx context.Context, c Call, req *Request, snap *Snapshot) (Account, *outcome.Error) {
	if req.Account == nil {
		if c.Principal.Anonymous() && !snap.Publisher.AnonymousDiscovery {
			e := ErrorOf(baseScreen, adcp.AuthMissing, "", "this seller requires credentials: send an Authorization: Bearer header", nil)
			return Account{}, &e
		}
		return Account{Disclosure: decline.Exact}, nil
	}
	if c.Principal.Anonymous() {
		e := ErrorOf(baseScreen, adcp.AuthMissing, "account", "an account can only be used with credentials: send an Authorization: Bearer header", nil)
		return Account{}, &e
	}
	if s.Accounts == nil {
		e := ErrorOf(baseScreen, adcp.AccountNotFound, "account", "the account could not be resolved", nil)
		return Account{}, &e
	}
	a, err := s.Accounts.Resolve(ctx, c.PublisherID, c.Principal, req.Account)
	switch {
	case errors.Is(err, ErrAccountNotFound):
		e := ErrorOf(baseScreen, adcp.AccountNotFound, "account", "the account could not be resolved for these credentials", nil)
		return Account{}, &e
	case err != nil:
		s.log().Error("account lookup failed", "publisher", c.PublisherID, "err", err)
		return Account{}, &outcome.Error{Code: adcp.ServiceUnavailable, Message: sanitize.Unavailable}
	}
	return a, nil
}

// finish records the decision and returns the answer. If the ledger append
// fails, the buyer gets the transient error arm: no answer leaves
// unrecorded.
func (s *Service) finish(ctx context.Context, c Call, o outcome.Outcome, req *Request, acct Account, trace Trace, d merch.Decision, live, forced bool) Result {
	payload, err := o.Encode()
	if err != nil {
		trace.Error = err.Error()
		return s.internal(ctx, c, o.Envelope(), req, trace)
	}
	if !live {
		return Result{Outcome: o, Payload: payload, Trace: trace}
	}
	entry, err := s.Ledger.Append(ctx, s.record(c, o, req, acct, trace, d, payload, forced))
	if err != nil {
		s.log().Error("ledger append failed: answering with the error arm", "publisher", c.PublisherID, "err", err)
		trace.Error = "ledger: " + err.Error()
		return s.unavailable(o.Envelope(), trace)
	}
	if forced && c.claim != nil {
		// The answer carrying the directive is recorded: spend it now,
		// before the answer leaves. A claim that no longer holds is not
		// answered with, and the recorded decision has no reply, as
		// when a caller goes away mid-append.
		if err := SpendClaim(ctx, s.Directives, c.claim); err != nil {
			s.log().Error("spending a directive failed: answering with the error arm", "publisher", c.PublisherID, "err", err)
			trace.Error = "directive: " + err.Error()
			return s.unavailable(o.Envelope(), trace)
		}
	}
	if o.Arm() == outcome.Rejected {
		o = o.WithReceipt(outcome.Receipt{Sequence: entry.Sequence, EntryHash: entry.Hash})
		if payload, err = o.Encode(); err != nil {
			return s.internal(ctx, c, o.Envelope(), req, trace)
		}
	}
	return Result{Outcome: o, Payload: payload, Trace: trace}
}

// unavailable is the transient error arm for an answer that could not be
// settled.
func (s *Service) unavailable(env outcome.Envelope, trace Trace) Result {
	f := outcome.NewFailed(env, outcome.Error{Code: adcp.ServiceUnavailable, Message: sanitize.Unavailable})
	p, _ := f.Encode()
	return Result{Outcome: f, Payload: p, Trace: trace}
}

func (s *Service) record(c Call, o outcome.Outcome, req *Request, acct Account, trace Trace, d merch.Decision, payload []byte, forced bool) ledger.Record {
	r := ledger.Record{
		Publisher:       c.PublisherID,
		Account:         acct.Key,
		Principal:       c.Principal.ID,
		RequestDigest:   ledger.Digest(c.keptArgs()),
		RulebookVersion: trace.RulebookVersion,
		Arm:             o.Arm().String(),
		Slug:            o.Slug(),
		RuleIDs:         d.RuleIDs(),
		ResponseDigest:  ledger.Digest(payload),
		Sandbox:         acct.Sandbox,
		Forced:          forced,
	}
	if !forced {
		// Kept beside the chain for backtests, which replay what the
		// rulebook decided; forced answers it did not decide.
		r.Request = c.keptArgs()
	}
	if r.Slug == "" {
		for _, e := range o.Errors() {
			if det, ok := e.Details["decline"].(map[string]any); ok {
				r.Slug, _ = det["slug"].(string)
			}
		}
	}
	return r
}

// fail builds the error arm. Failures are recorded when they can be; a
// failure to record a failure does not change the answer.
func (s *Service) fail(ctx context.Context, c Call, env outcome.Envelope, req *Request, trace Trace, live bool, first outcome.Error, more ...outcome.Error) Result {
	o := outcome.NewFailed(env, first, more...)
	payload, err := o.Encode()
	if err != nil {
		return s.internal(ctx, c, env, req, trace)
	}
	if live && s.Ledger != nil {
		acctKey := ""
		if req != nil {
			acctKey = req.Account.Key()
		}
		rec := ledger.Record{
			Publisher: c.PublisherID, Account: acctKey, Principal: c.Principal.ID,
			RequestDigest: ledger.Digest(c.keptArgs()), RulebookVersion: trace.RulebookVersion,
			Arm: "failed", ResponseDigest: ledger.Digest(payload),
		}
		if _, err := s.Ledger.Append(ctx, rec); err != nil {
			s.log().Warn("could not record a failed decision", "publisher", c.PublisherID, "err", err)
		}
	}
	return Result{Outcome: o, Payload: payload, Trace: trace}
}

func (s *Service) internal(ctx context.Context, c Call, env outcome.Envelope, req *Request, trace Trace) Result {
	s.log().Error("encoding a response failed", "publisher", c.PublisherID, "err", trace.Error)
	o := outcome.NewFailed(env, outcome.Error{Code: adcp.ServiceUnavailable, Message: sanitize.Internal})
	p, _ := o.Encode()
	return Result{Outcome: o, Payload: p, Trace: trace}
}

// ErrorOf builds an error whose message and field pass the screen.
func ErrorOf(screen *sanitize.Screen, code adcp.Code, field, msg string, details map[string]any) outcome.Error {
	e := outcome.Error{Code: code, Details: details}
	// A buyer's bad value quoted in the message is described instead when
	// it names a term (a vendor, say): the message keeps its meaning.
	e.Message = screen.Message(msg, sanitize.MaxMessage, sanitize.Internal)
	if field != "" {
		e.Field, _ = screen.Line(field, 500)
	}
	return e
}

func screenOptional(screen *sanitize.Screen, s string) sanitize.Text {
	if s == "" {
		return sanitize.Text{}
	}
	t, _ := screen.Line(s, sanitize.MaxMessage)
	return t
}

// NormaliseBrief turns a request into the brief rules are written against.
func NormaliseBrief(r *Request, now time.Time) merch.Brief {
	b := merch.Brief{
		Mode:         r.BuyingMode,
		Channels:     r.Filters.Channels,
		FormatKinds:  r.Filters.FormatKinds,
		DeliveryType: r.Filters.DeliveryType,
		Flight:       adcp.DateRange{Start: r.Filters.StartDate, End: r.Filters.EndDate},
		Currencies:   r.Filters.PricingCurrencies,
		Countries:    r.GeoCountries,
		Today:        adcp.DateOf(now),
	}
	if len(b.Countries) == 0 {
		b.Countries = r.Filters.Countries
	}
	if r.Brief != nil {
		b.Text = *r.Brief
	}
	for _, e := range r.Refine {
		if e.Ask != "" {
			b.Text = strings.TrimSpace(b.Text + " " + e.Ask)
		}
	}
	if br := r.Filters.Budget; br != nil {
		b.Budget = &merch.Budget{Min: br.Min, Max: br.Max, Currency: br.Currency}
	}
	brand := r.Brand
	if brand == nil && r.Account != nil {
		brand = r.Account.Brand
	}
	if brand != nil {
		b.BrandDomain = brand.Domain
		b.Industries = brand.Industries
	}
	return b
}
