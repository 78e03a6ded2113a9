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
	"github.com/storefront/storefront/jsonfield"
	"github.com/storefront/storefront/ledger"
	"github.com/storefront/storefront/merch"
	"github.com/storefront/storefront/outcome"
	"github.com/storefront/storefront/sanitize"
	"github.com/storefront/storefront/vocab"
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
	Disclosure vocab.Level
}

// Call is one buyer task's invocation once its caller is known: the
// get_products pipeline's and every media-buy task's. Before
// authentication a transport's call is an agent.Call.
type Call struct {
	Publisher string
	Principal Principal
	Args      []byte
	// Doc is Args as jsonfield.Parse read them, when the caller already
	// parsed them (the agent's schema door does); nil otherwise. It must
	// be a parse of Args.
	Doc *jsonfield.Value
	// Caller is the storefront's agent URL as the buyer reached it, which
	// a governance check names; get_products does not read it.
	Caller string
	// Lent says the caller keeps no part of the payload once it has
	// written it, and then calls Result.Release: a completed answer is
	// encoded into a reused buffer rather than one of its own.
	Lent bool
}

// Result is the pipeline's account of a call: the outcome, its wire bytes,
// and the internal trace a publisher's preview shows. It never reaches a
// transport: agent.ReplyFor makes the outcome.Sent that does, keeping the
// trace behind.
type Result struct {
	Outcome outcome.Outcome
	// Payload is exactly what the transport sends as the AdCP object.
	Payload []byte
	Trace   Trace
	// Release is set when Payload is lent (Call.Lent): it hands the
	// buffer back for another answer, after which neither Payload nor
	// anything sliced from it may be read. Calling it again does nothing.
	Release func()
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
	ID         string     `json:"id"`
	Name       string     `json:"name"`
	Slug       vocab.Slug `json:"slug"`
	Disclosure string     `json:"disclosure"`
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

// GetProducts answers one call. It always returns a result: failures are
// the error arm, never a Go error and never products.
func (s *Service) GetProducts(ctx context.Context, c Call) Result {
	return s.run(ctx, c, nil, Live)
}

// Preview answers a call the way GetProducts would, against snap (for
// example a snapshot of a draft rulebook), without consuming directives or
// writing to the ledger.
func (s *Service) Preview(ctx context.Context, c Call, snap *Snapshot) Result {
	return s.run(ctx, c, snap, Preview)
}

// Mode is how a pass through the pipeline answers: what it may claim or
// start, and how its answer is recorded.
type Mode int

const (
	// Live answers a buyer. It may be answered with a compliance
	// directive or accept a brief as a task, and its decision is recorded.
	Live Mode = iota
	// Curating decides in the background a brief a live call accepted as
	// a task. Recorded as a live answer is, it takes no directive and
	// starts no task.
	Curating
	// Forced is a live answer a compliance directive chose (its arm, or a
	// stale cache). It is recorded as forced, without the request a
	// backtest would replay, since the rulebook did not decide it, and
	// once recorded it spends the directive.
	Forced
	// Preview answers as a live call would, touching nothing: no
	// directive, no task, no ledger.
	Preview
)

// records reports whether answers in mode m go to the ledger.
func (m Mode) records() bool { return m != Preview }

// pass is one call on its way through the pipeline: what each stage found,
// for the stages after it. A stage that ends the pass sets result.
type pass struct {
	call Call
	mode Mode
	// kept is the request as it may be kept at rest and digested
	// (KeptRequest).
	kept []byte
	// decoded is the request as decode read it, and decodeErr its faults;
	// req is the request once it is admitted under a version the
	// storefront speaks.
	decoded   *Request
	decodeErr error
	req       *Request
	env       outcome.Envelope
	version   adcp.Version
	snap      *Snapshot
	// given marks a snapshot the caller supplied (a preview's): sandbox
	// fixtures replace only the snapshot the pass loaded itself.
	given bool
	acct  Account
	// claim is the directive the pass holds. The answer carrying it spends
	// it (finish); run releases it otherwise.
	claim    *Claim
	brief    merch.Brief
	decision merch.Decision
	trace    Trace
	result   Result
}

// end ends the pass with r; stages return it to stop the pipeline.
func (p *pass) end(r Result) bool {
	p.result = r
	return false
}

// force marks the pass as answered by its directive.
func (p *pass) force() {
	p.mode = Forced
	p.trace.Forced = true
}

// run takes a call through the pipeline's stages, in order: decode,
// negotiate, admit, load, resolve, seed, ready, claim and evaluate, then
// answer (forced, curate, compose or match) and finish (encode, record).
// Each stage either hands the pass on or ends it with the answer. There is
// no screening stage: a stage that writes buyer-visible text screens it as
// it writes it (ErrorOf, decline.Compose, project), sanitize being the only
// way to make such text.
func (s *Service) run(ctx context.Context, c Call, snap *Snapshot, mode Mode) Result {
	p := &pass{call: c, mode: mode, snap: snap, given: snap != nil}
	defer func() { Settle(ctx, s.Directives, p.claim, s.log()) }()
	s.decode(p)
	if s.negotiate(ctx, p) &&
		s.admit(ctx, p) &&
		s.load(ctx, p) &&
		s.resolve(ctx, p) &&
		s.seed(ctx, p) &&
		s.ready(ctx, p) &&
		s.claim(ctx, p) &&
		s.evaluate(ctx, p) {
		p.result = s.answer(ctx, p)
	}
	return p.result
}

// decode reads the call's arguments. Its faults are reported only once a
// version is agreed (admit).
func (s *Service) decode(p *pass) {
	p.decoded, p.decodeErr = decodeRequest(p.call.Args, p.call.Doc)
	p.kept = p.call.Args
	if p.decoded == nil || p.decoded.Push != nil {
		// Only a request with a webhook has secrets to keep out.
		p.kept = KeptRequest(p.call.Args)
	}
	if p.decoded != nil {
		p.env.Context = p.decoded.Context
	}
}

// negotiate picks the version to answer in. It comes first: a buyer on
// another major cannot read the errors of this one.
func (s *Service) negotiate(ctx context.Context, p *pass) bool {
	pin, major := "", 0
	if p.decoded != nil {
		pin, major = p.decoded.AdcpVersion, p.decoded.AdcpMajorVersion
	}
	version, err := adcp.Negotiate(pin, major)
	if err != nil {
		p.env.Version = adcp.Default()
		var ne *adcp.NegotiationError
		field := ""
		if errors.As(err, &ne) {
			field = ne.Field
		}
		p.trace = Trace{Error: err.Error()}
		return p.end(s.fail(ctx, p, ErrorOf(sanitize.Vendor(), adcp.VersionUnsupported, field, err.Error(), outcome.VersionDetails())))
	}
	p.env.Version, p.version = version, version
	p.trace = Trace{Version: version.String()}
	return true
}

// admit takes the decoded request, or refuses it with each of its faults.
func (s *Service) admit(ctx context.Context, p *pass) bool {
	p.req = p.decoded
	if p.decodeErr == nil {
		return true
	}
	var re *RequestError
	errs := []outcome.Error{ErrorOf(sanitize.Vendor(), adcp.InvalidRequest, "", "the request could not be read", nil)}
	if errors.As(p.decodeErr, &re) {
		errs = errs[:0]
		for _, f := range re.Problems {
			errs = append(errs, ErrorOf(sanitize.Vendor(), f.Code, f.Path, f.Detail, nil))
		}
	}
	p.trace.Error = p.decodeErr.Error()
	return p.end(s.fail(ctx, p, errs[0], errs[1:]...))
}

// load reads the publisher's snapshot, unless the caller gave one.
func (s *Service) load(ctx context.Context, p *pass) bool {
	if p.snap == nil {
		snap, err := s.Snapshots.Snapshot(ctx, p.call.Publisher)
		if err != nil {
			s.log().Error("snapshot unavailable", "publisher", p.call.Publisher, "err", err)
			p.trace.Error = err.Error()
			return p.end(s.outage(p))
		}
		p.snap = snap
	}
	p.trace.RulebookVersion, p.trace.CatalogueVersion = p.snap.RulebookVersion, p.snap.CatalogueVersion
	return true
}

// resolve resolves and authorises the account the request names.
func (s *Service) resolve(ctx context.Context, p *pass) bool {
	acct, failure := s.account(ctx, p.call, p.req, p.snap)
	if failure != nil {
		p.trace.Error = failure.Message.String()
		return p.end(s.fail(ctx, p, *failure))
	}
	p.acct = acct
	return true
}

// seed serves a principal that seeded compliance fixtures only them, but
// only on sandbox accounts (every account of a test-kit key is one): live
// accounts are served as they would be without sandbox mode.
func (s *Service) seed(ctx context.Context, p *pass) bool {
	c := p.call
	if p.given || s.Seeds == nil || !(c.Principal.Sandbox || p.acct.Sandbox) || c.Principal.Anonymous() {
		return true
	}
	seeded, err := s.Seeds.SeededSnapshot(ctx, c.Publisher, c.Principal.ID)
	if err != nil {
		s.log().Error("seeded snapshot unavailable", "publisher", c.Publisher, "err", err)
		return p.end(s.outage(p))
	}
	if seeded != nil {
		p.snap = seeded
		p.trace.CatalogueVersion = seeded.CatalogueVersion
	}
	return true
}

// ready refuses to serve products without a rulebook.
func (s *Service) ready(ctx context.Context, p *pass) bool {
	if p.snap.Rulebook != nil {
		return true
	}
	p.trace.Error = merch.ErrNoRulebook.Error()
	s.log().Error("no rulebook: refusing to serve products", "publisher", p.call.Publisher)
	return p.end(s.fail(ctx, p, outcome.Error{Code: adcp.ServiceUnavailable, Message: sanitize.Unavailable}))
}

// claim holds the compliance directive a live brief or refine request may
// be answered with, if there is one.
func (s *Service) claim(ctx context.Context, p *pass) bool {
	c, req := p.call, p.req
	if p.mode != Live || s.Directives == nil || (p.acct.Key == "" && !c.Principal.Sandbox) || (req.BuyingMode != "brief" && req.BuyingMode != "refine") {
		return true
	}
	key := p.acct.Key
	if c.Principal.Sandbox {
		// A test-kit principal has one sandbox, whatever account a
		// call names; its directives are kept under no account.
		key = ""
	}
	claim, err := s.Directives.Claim(ctx, c.Publisher, key, c.Principal.ID)
	if err != nil {
		p.trace.Error = err.Error()
		return p.end(s.outage(p))
	}
	p.claim = claim
	return true
}

// evaluate runs the rulebook on the request's brief.
func (s *Service) evaluate(ctx context.Context, p *pass) bool {
	p.brief = NormaliseBrief(p.req, s.now())
	d, err := p.snap.Rules.Evaluate(p.brief, p.snap.Catalogue.Market())
	if err != nil {
		p.trace.Error = err.Error()
		s.log().Error("rulebook evaluation failed", "publisher", p.call.Publisher, "err", err)
		return p.end(s.fail(ctx, p, outcome.Error{Code: adcp.ServiceUnavailable, Message: sanitize.Unavailable}))
	}
	p.decision = d
	for _, r := range d.Reasons() {
		p.trace.Fired = append(p.trace.Fired, FiredRule{ID: r.RuleID, Name: r.RuleName, Slug: r.Slug, Disclosure: r.Level.String()})
	}
	return true
}

// answer answers the evaluated pass: with the arm its directive forces, as
// a task for a brief to curate, with the composed decline, or with the
// matched products.
func (s *Service) answer(ctx context.Context, p *pass) Result {
	req := p.req
	switch {
	case p.claim != nil && p.claim.Arm != "stale":
		return s.forced(ctx, p)
	case p.mode == Live && p.claim == nil && s.Curation != nil && req.Push != nil && !p.call.Principal.Anonymous() &&
		(req.BuyingMode == "brief" || req.BuyingMode == "refine"):
		return s.curate(ctx, p)
	case p.decision.Declined():
		return s.finish(ctx, p, s.compose(p))
	}
	o, failure := s.match(p)
	if failure != nil {
		return s.fail(ctx, p, *failure)
	}
	return s.finish(ctx, p, o)
}

// forced answers with the arm the pass's directive forces: a submitted
// task, or a decline in the compliance caller's words.
func (s *Service) forced(ctx context.Context, p *pass) Result {
	p.force()
	directive := &p.claim.Directive
	if directive.Arm == "submitted" {
		if _, failure := s.submit(ctx, p, directive); failure != nil {
			p.trace.Error = failure.Message.String()
			return s.fail(ctx, p, *failure)
		}
		return s.finish(ctx, p, outcome.NewSubmitted(p.env, directive.TaskID, screenOptional(sanitize.Vendor(), directive.Message)))
	}
	// A forced reason is the compliance caller's own words: cleaned of
	// markup and vendor names, never matched against the deny-list,
	// whose verdict would confirm which of them are the publisher's
	// secrets.
	composed := decline.Compose(decline.Input{
		Grounds: p.decision.Grounds(),
		Voice:   p.snap.Rulebook.Voice,
		Cap:     p.acct.Disclosure,
		Forced:  &decline.Forced{Reason: directive.Reason, Suggestions: directive.Suggestions},
	}, sanitize.Vendor())
	return s.finish(ctx, p, s.declined(p.env, p.version, composed))
}

// compose words the rulebook's decline for the account's disclosure cap,
// with the suggestions verified against the catalogue.
func (s *Service) compose(p *pass) outcome.Outcome {
	snap, req := p.snap, p.req
	p.trace.Disclosure = p.acct.Disclosure.String()
	key, keep := declineKey(p.call.Principal.ID+"\x00"+p.acct.Key, p.acct.Disclosure, p.brief, req)
	composed := snap.keptDeclines().compose(key, keep, func() decline.Composed {
		return decline.Compose(decline.Input{
			Grounds:      DeclineGrounds(snap, req, p.decision),
			Voice:        snap.Rulebook.Voice,
			Cap:          p.acct.Disclosure,
			Verify:       Verifier(snap, req, p.brief),
			VerifyFigure: FigureVerifier(snap, req, p.brief),
		}, snap.Screen)
	})
	p.trace.Checks = composed.Checks
	for i, ch := range composed.Offered {
		tc := TracedChange{Text: composed.Suggestions[i].String()}
		for _, e := range ch.Edits {
			tc.Kinds = append(tc.Kinds, string(e.Kind))
		}
		p.trace.Suggestions = append(p.trace.Suggestions, tc)
	}
	return s.declined(p.env, p.version, composed)
}

// match matches the catalogue for an accepted request: the completed arm,
// or the error a bad cursor or refine entry earns.
func (s *Service) match(p *pass) (outcome.Outcome, *outcome.Error) {
	var warnings []outcome.Error
	if p.claim != nil && p.claim.Arm == "stale" {
		// A compliance run forced an upstream outage: answer from the
		// snapshot in hand and say so, without failing the call.
		age := 0
		if !p.snap.BuiltAt.IsZero() {
			age = max(0, int(s.now().Sub(p.snap.BuiltAt).Seconds()))
		}
		w := ErrorOf(p.snap.Screen, adcp.StaleResponse, "", "Served from cache: an upstream inventory service is temporarily unavailable.",
			&outcome.Details{Staleness: &outcome.Staleness{ServedFromCache: true, CacheAgeSeconds: age}})
		warnings = append(warnings, w)
		p.force()
	}
	return s.completed(p.env, p.req, p.acct, p.snap, &p.trace, warnings)
}

// submit records the task a submitted directive creates. A webhook the
// storefront cannot honour is refused, never silently dropped.
func (s *Service) submit(ctx context.Context, p *pass, d *Directive) (Submission, *outcome.Error) {
	c, req := p.call, p.req
	sub := Submission{TaskID: d.TaskID, Account: p.acct.Key, Principal: c.Principal.ID, Message: d.Message, Request: p.kept, Push: req.Push}
	if req.Push != nil {
		if req.Push.OperationID == "" {
			e := ErrorOf(sanitize.Vendor(), adcp.InvalidRequest, "push_notification_config.operation_id", "a task that registers a webhook needs push_notification_config.operation_id", nil)
			return sub, &e
		}
		if s.WebhookAllowed != nil {
			if err := s.WebhookAllowed(req.Push.URL); err != nil {
				e := ErrorOf(sanitize.Vendor(), adcp.InvalidRequest, "push_notification_config.url", err.Error(), nil)
				return sub, &e
			}
		}
	}
	if s.Tasks == nil {
		e := ErrorOf(sanitize.Vendor(), adcp.UnsupportedFeature, "", "this seller does not run asynchronous tasks", nil)
		return sub, &e
	}
	err := s.Tasks.Submit(ctx, c.Publisher, sub)
	switch {
	case errors.Is(err, ErrTaskExists):
		e := ErrorOf(sanitize.Vendor(), adcp.InvalidRequest, "", "a task with the forced task_id already exists for this account", nil)
		return sub, &e
	case err != nil:
		s.log().Error("recording a task failed", "publisher", c.Publisher, "err", err)
		return sub, &outcome.Error{Code: adcp.ServiceUnavailable, Message: sanitize.Unavailable}
	}
	return sub, nil
}

// curate accepts a brief as a task: the answer now is submitted, with a
// new task id, and the brief is decided in the background by the same
// pipeline (Curating), its answer delivered to the buyer's webhook.
func (s *Service) curate(ctx context.Context, p *pass) Result {
	id, err := newTaskID()
	if err != nil {
		return s.fail(ctx, p, outcome.Error{Code: adcp.ServiceUnavailable, Message: sanitize.Unavailable})
	}
	sub, failure := s.submit(ctx, p, &Directive{Arm: "submitted", TaskID: id, Message: curatingMessage})
	if failure != nil {
		p.trace.Error = failure.Message.String()
		return s.fail(ctx, p, *failure)
	}
	res := s.finish(ctx, p, outcome.NewSubmitted(p.env, id, screenOptional(p.snap.Screen, curatingMessage)))
	if res.Outcome.Arm() == outcome.Submitted {
		c := p.call
		// A new Call, never p.call: the curated answer is stored with the
		// task, so it must not be lent (Lent).
		bg := Call{Publisher: c.Publisher, Principal: c.Principal, Args: c.Args}
		s.Curation.Curate(c.Publisher, sub, func(ctx context.Context) Result { return s.run(ctx, bg, nil, Curating) })
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
		Slug:        c.Slug,
		Fixable:     !c.Final(),
	})
	if err != nil {
		// Compose never returns an empty reason; keep the invariant anyway.
		o, _ = outcome.NewRejected(env, outcome.RejectedBody{Reason: sanitize.Declined, Slug: vocab.CommerciallyDeclined})
	}
	return o
}

// DeclineError is a composed decline as the typed, correctable error that
// carries it where there is no rejected arm: to buyers before 3.2, and on
// tasks without one (a refused media buy). The message is the composed
// reason, the suggestion the first composed suggestion.
func DeclineError(c decline.Composed) outcome.Error {
	entry, _ := vocab.Lookup(c.Slug)
	e := outcome.Error{
		Code:    entry.LegacyCode,
		Message: c.Reason,
		Details: &outcome.Details{Declined: &outcome.Declined{Decline: outcome.DeclineDetail{Slug: c.Slug, Fixable: !c.Final()}}},
	}
	if len(c.Suggestions) > 0 {
		e.Suggestion = c.Suggestions[0]
		e.Details.Suggestions = c.Suggestions
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
func FigureVerifier(snap *Snapshot, req *Request, brief merch.Brief) func(decline.Change, vocab.Slug) bool {
	return func(ch decline.Change, slug vocab.Slug) bool {
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
		case vocab.RaiseBudget:
			v := e.Budget
			b.Budget = &merch.Budget{Max: &v, Currency: e.Currency}
			f.Budget = &BudgetRange{Max: &v, Currency: e.Currency}
		case vocab.SwitchChannel:
			b.Channels = []string{e.Channel}
			f.Channels = []string{e.Channel}
		case vocab.MoveFlight, vocab.LaterStart:
			b.Flight = e.Flight
			f.StartDate, f.EndDate = e.Flight.Start, e.Flight.End
		case vocab.TargetMarket:
			b.Countries = []string{e.Country}
			geo, f.Countries = []string{e.Country}, nil
		case vocab.ChangeFormat:
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
	// The page writer below holds entries, never the match's words, so
	// it may encode the page after they are handed back.
	defer m.Release()
	trace.Considered, trace.Matched, trace.Excluded = m.Considered, m.Total, m.Excluded

	// The cursor's fingerprint is needed only to read a cursor or to
	// issue one.
	var fp [8]byte
	fingered := false
	finger := func() [8]byte {
		if !fingered {
			fp, fingered = queryFingerprint(snap, req), true
		}
		return fp
	}
	offset := 0
	if req.Pagination.Cursor != "" {
		o, err := decodeCursor(req.Pagination.Cursor, finger())
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
		page.Cursor = cursor{offset: end, fingerprint: finger()}.encode()
	}
	entries := m.Page(offset, end-offset)
	products := &pageWriter{entries: entries, fields: req.Fields, currencies: req.Filters.PricingCurrencies, relevance: make([]json.RawMessage, len(entries)), texts: &snap.Catalogue.texts}
	if projects(req.Fields, "brief_relevance") {
		var rel []string
		var line []byte
		for i, e := range entries {
			// brief_relevance lists the buyer's own words that the
			// product's public text matched, screened as relevanceLines
			// says.
			if rel = m.appendRelevance(rel[:0], e); len(rel) > 0 {
				line = append(line[:0], "Matches brief terms: "...)
				for j, w := range rel {
					if j > 0 {
						line = append(line, ", "...)
					}
					line = append(line, w...)
				}
				products.relevance[i] = snap.Catalogue.lines.encoded(append(line, '.'))
			}
		}
	}
	scope := "public"
	if req.Account != nil {
		scope = "account"
	}
	body := outcome.CompletedBody{Writer: products, CacheScope: scope, Page: page, Sandbox: acct.Sandbox, Refinement: refinement, Warnings: warnings}
	if len(entries) == 0 && len(m.Excluded) > 0 {
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
			err := ErrorOf(sanitize.Vendor(), adcp.ProposalNotFound, fmt.Sprintf("refine[%d].proposal_id", i), "proposal "+e.ProposalID+" was not issued by this seller", nil)
			return &err
		}
	}
	return nil
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
			e := ErrorOf(sanitize.Vendor(), adcp.AuthMissing, "", "this seller requires credentials: send an Authorization: Bearer header", nil)
			return Account{}, &e
		}
		return Account{Disclosure: vocab.Exact}, nil
	}
	if c.Principal.Anonymous() {
		e := ErrorOf(sanitize.Vendor(), adcp.AuthMissing, "account", "an account can only be used with credentials: send an Authorization: Bearer header", nil)
		return Account{}, &e
	}
	if s.Accounts == nil {
		e := ErrorOf(sanitize.Vendor(), adcp.AccountNotFound, "account", "the account could not be resolved", nil)
		return Account{}, &e
	}
	a, err := s.Accounts.Resolve(ctx, c.Publisher, c.Principal, req.Account)
	switch {
	case errors.Is(err, ErrAccountNotFound):
		e := ErrorOf(sanitize.Vendor(), adcp.AccountNotFound, "account", "the account could not be resolved for these credentials", nil)
		return Account{}, &e
	case err != nil:
		s.log().Error("account lookup failed", "publisher", c.Publisher, "err", err)
		return Account{}, &outcome.Error{Code: adcp.ServiceUnavailable, Message: sanitize.Unavailable}
	}
	return a, nil
}

// finish ends a pass with its answer: encoded, recorded in the ledger
// (unless previewing), the directive that forced it spent, and a decline
// given its receipt. If the ledger append fails, the buyer gets the
// transient error arm: no answer leaves unrecorded.
func (s *Service) finish(ctx context.Context, p *pass, o outcome.Outcome) Result {
	c := p.call
	var lent *lease
	var payload []byte
	var err error
	if c.Lent && o.Arm() == outcome.Completed {
		lent = lend()
		payload, err = o.AppendEncode(lent.buf[:0])
	} else {
		payload, err = o.Encode()
	}
	if err != nil {
		p.trace.Error = err.Error()
		return s.internal(p, o.Envelope())
	}
	if !p.mode.records() {
		return Result{Outcome: o, Payload: payload, Trace: p.trace, Release: lent.hold(payload)}
	}
	entry, err := s.Ledger.Append(ctx, s.record(p, o, payload))
	if err != nil {
		s.log().Error("ledger append failed: answering with the error arm", "publisher", c.Publisher, "err", err)
		p.trace.Error = "ledger: " + err.Error()
		return s.unavailable(o.Envelope(), p.trace)
	}
	if p.mode == Forced && p.claim != nil {
		// The answer carrying the directive is recorded: spend it now,
		// before the answer leaves. A claim that no longer holds is not
		// answered with, and the recorded decision has no reply, as
		// when a caller goes away mid-append.
		if err := SpendClaim(ctx, s.Directives, p.claim); err != nil {
			s.log().Error("spending a directive failed: answering with the error arm", "publisher", c.Publisher, "err", err)
			p.trace.Error = "directive: " + err.Error()
			return s.unavailable(o.Envelope(), p.trace)
		}
	}
	if o.Arm() == outcome.Rejected {
		o = o.WithReceipt(outcome.Receipt{Sequence: entry.Sequence, EntryHash: entry.Hash})
		if payload, err = o.Encode(); err != nil {
			return s.internal(p, o.Envelope())
		}
	}
	return Result{Outcome: o, Payload: payload, Trace: p.trace, Release: lent.hold(payload)}
}

// unavailable is the transient error arm for an answer that could not be
// settled.
func (s *Service) unavailable(env outcome.Envelope, trace Trace) Result {
	f := outcome.NewFailed(env, outcome.Error{Code: adcp.ServiceUnavailable, Message: sanitize.Unavailable})
	p, _ := f.Encode()
	return Result{Outcome: f, Payload: p, Trace: trace}
}

// record is the ledger record of a pass's answer.
func (s *Service) record(p *pass, o outcome.Outcome, payload []byte) ledger.Record {
	c, acct, trace, d, forced := p.call, p.acct, p.trace, p.decision, p.mode == Forced
	r := ledger.Record{
		Publisher:       c.Publisher,
		Account:         acct.Key,
		Principal:       c.Principal.ID,
		RequestDigest:   ledger.Digest(p.kept),
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
		r.Request = p.kept
	}
	if r.Slug == "" {
		for _, e := range o.Errors() {
			if s := e.DeclineSlug(); s != "" {
				r.Slug = s
			}
		}
	}
	return r
}

// fail ends a pass with the error arm. Failures are recorded when the mode
// records; a failure to record a failure does not change the answer.
func (s *Service) fail(ctx context.Context, p *pass, first outcome.Error, more ...outcome.Error) Result {
	c := p.call
	o := outcome.NewFailed(p.env, first, more...)
	payload, err := o.Encode()
	if err != nil {
		return s.internal(p, p.env)
	}
	if p.mode.records() && s.Ledger != nil {
		acctKey := ""
		if p.req != nil {
			acctKey = p.req.Account.Key()
		}
		rec := ledger.Record{
			Publisher: c.Publisher, Account: acctKey, Principal: c.Principal.ID,
			RequestDigest: ledger.Digest(p.kept), RulebookVersion: p.trace.RulebookVersion,
			Arm: "failed", ResponseDigest: ledger.Digest(payload),
		}
		if _, err := s.Ledger.Append(ctx, rec); err != nil {
			s.log().Warn("could not record a failed decision", "publisher", c.Publisher, "err", err)
		}
	}
	return Result{Outcome: o, Payload: payload, Trace: p.trace}
}

// outage ends a pass the storefront cannot serve for want of something of
// its own (the snapshot, a sandbox catalogue, the directives): the
// transient error arm, which is logged and not recorded.
func (s *Service) outage(p *pass) Result {
	o := outcome.NewFailed(p.env, outcome.Error{Code: adcp.ServiceUnavailable, Message: sanitize.Unavailable})
	payload, err := o.Encode()
	if err != nil {
		return s.internal(p, p.env)
	}
	return Result{Outcome: o, Payload: payload, Trace: p.trace}
}

func (s *Service) internal(p *pass, env outcome.Envelope) Result {
	s.log().Error("encoding a response failed", "publisher", p.call.Publisher, "err", p.trace.Error)
	o := outcome.NewFailed(env, outcome.Error{Code: adcp.ServiceUnavailable, Message: sanitize.Internal})
	out, _ := o.Encode()
	return Result{Outcome: o, Payload: out, Trace: p.trace}
}

// ErrorOf builds an error whose message and field pass the screen.
func ErrorOf(screen *sanitize.Screen, code adcp.Code, field, msg string, details *outcome.Details) outcome.Error {
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
