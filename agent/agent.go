package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/storefront/storefront/adcp"
	"github.com/storefront/storefront/buying"
	"github.com/storefront/storefront/compliance"
	"github.com/storefront/storefront/field"
	"github.com/storefront/storefront/internal/clock"
	"github.com/storefront/storefront/internal/jsonobj"
	"github.com/storefront/storefront/internal/recovery"
	"github.com/storefront/storefront/internal/requestschema"
	"github.com/storefront/storefront/jsonfield"
	"github.com/storefront/storefront/metrics"
	"github.com/storefront/storefront/outcome"
	"github.com/storefront/storefront/products"
	"github.com/storefront/storefront/sanitize"
	"github.com/storefront/storefront/store"
	"github.com/storefront/storefront/vocab"
)

// Call is one tool invocation as a transport hands it over, before its
// credentials are checked: the raw Authorization header stands where the
// principal will. Dispatch admits it and passes the tools a products.Call,
// the one call type of every buyer task after authentication.
type Call struct {
	Publisher string
	// Authorization is the raw Authorization header ("" when absent).
	Authorization string
	Args          []byte
	// Transport names the transport, for logs ("mcp" or "a2a").
	Transport string
	// Doc is Args parsed (jsonfield.Parse of exactly Args), by the
	// transport when it parsed them already or else by the schema door,
	// for the door and the tool to read without parsing them again; nil
	// when neither did.
	Doc *jsonfield.Value
	// Lent says the transport keeps no part of the reply's payload once
	// it has written it, and then calls the reply's Release, so that the
	// payload may be encoded into a reused buffer (products.Call.Lent).
	// The reply of a call whose answer is cached for replay is not lent.
	Lent bool
}

// Reply is a tool's answer: the answer as sent, with nothing a transport
// would have to read back from its bytes.
type Reply = outcome.Sent

// Meta is a reply's transport metadata, under the project's namespace:
// MCP sends it as the tool result's _meta, and A2A reads the decline from
// it. Its JSON encoding is that _meta object. Members are declared in the
// order of their names, the order in which the MCP SDK writes a map, so
// that the fast path's _meta (mcpserver) is the SDK's byte for byte.
type Meta struct {
	// Decline names the public decline category of a declined answer;
	// nil for any other.
	Decline *DeclineMeta `json:"io.github.storefront/decline,omitempty"`
}

// DeclineKey is the _meta key of Meta.Decline.
const DeclineKey = outcome.Namespace + "/decline"

// DeclineMeta is the decline in a reply's metadata.
type DeclineMeta struct {
	Slug vocab.Slug `json:"slug"`
}

// IsZero reports whether m carries nothing.
func (m Meta) IsZero() bool { return m.Decline == nil }

// Slug is the decline slug m carries, or "".
func (m Meta) Slug() vocab.Slug {
	if m.Decline == nil {
		return ""
	}
	return m.Decline.Slug
}

// MetaOf is the metadata a transport sends beside r: its decline, if it
// is one.
func MetaOf(r Reply) Meta {
	if r.Slug == "" {
		return Meta{}
	}
	return Meta{Decline: &DeclineMeta{Slug: r.Slug}}
}

// Tool is one entry of the catalogue.
type Tool struct {
	Name        string
	Description string
	InputSchema json.RawMessage
	Meta        map[string]any
	handle      func(ctx context.Context, c Call, p products.Principal, authErr error) Reply
	// Anonymous tools answer without credentials.
	Anonymous bool
	// public, when set, narrows Anonymous: whether this call is one an
	// anonymous caller may make.
	public func(ctx context.Context, publisher string, args []byte) bool
	// task is the AdCP task whose official request schema the arguments
	// are checked against at the door (door.go); "" when the tool checks
	// its own.
	task string
}

// Store is what the agent itself reads and writes: buyer tokens,
// idempotency records, the tasks buyers poll, and the accounts they name.
// The tools' services (Products, Buying, Controller) hold their own.
type Store interface {
	store.Tokens
	store.Replays
	store.AsyncTasks
	store.Accounts
}

// Agent is the storefront's buyer-facing agent.
type Agent struct {
	Store    Store
	Products *products.Service
	Snaps    *store.Snapshots
	// Sandbox turns on the compliance surfaces and the test-kit keys.
	Sandbox bool
	// Controller serves comply_test_controller; it is registered only in
	// sandbox mode.
	Controller *compliance.Controller
	// Buying runs the media-buy tools once EnableBuying registers them.
	Buying *buying.Service
	// WebhooksSigned is set when task webhooks are signed under the RFC
	// 9421 webhook profile; the capabilities then declare it, as a seller
	// that emits webhooks must.
	WebhooksSigned bool
	Log            *slog.Logger
	// Metrics, when set, counts every answered call.
	Metrics *metrics.Metrics

	tools  []*Tool
	byName map[string]*Tool
	// settling counts idempotency records being settled in the
	// background (idempotency.go).
	settling sync.WaitGroup
}

// ErrUnknownTool is returned by Dispatch for a tool the agent does not have.
var ErrUnknownTool = errors.New("unknown tool")

// New builds the agent and its tool catalogue.
func New(s Store, svc *products.Service, snaps *store.Snapshots, controller *compliance.Controller, log *slog.Logger) *Agent {
	// Compiled here, once, so that a request never waits for it. The
	// schemas are embedded and their own tests compile them, so an error
	// is a broken build; every checked call then fails closed.
	if _, err := requestschema.Official(); err != nil {
		if log == nil {
			log = slog.Default()
		}
		log.Error("the embedded AdCP request schemas do not compile", "error", err)
	}
	a := &Agent{Store: s, Products: svc, Snaps: snaps, Sandbox: controller != nil, Controller: controller, Log: log, byName: map[string]*Tool{}}
	a.register(a.capabilitiesTool())
	a.register(a.getProductsTool())
	a.register(a.taskStatusTool("get_task_status"))
	a.register(a.listTasksTool("list_tasks"))
	// The AdCP client polls tasks under these names.
	a.register(a.taskStatusTool("tasks/get"))
	a.register(a.listTasksTool("tasks/list"))
	if controller != nil {
		a.register(a.controllerTool())
	}
	return a
}

func (a *Agent) register(t *Tool) {
	t.task = taskOf(t.Name)
	a.tools = append(a.tools, t)
	a.byName[t.Name] = t
}

// Tools lists the catalogue in registration order.
func (a *Agent) Tools() []Tool {
	out := make([]Tool, len(a.tools))
	for i, t := range a.tools {
		out[i] = *t
	}
	return out
}

// Has reports whether the agent has a tool.
func (a *Agent) Has(name string) bool { _, ok := a.byName[name]; return ok }

// Dispatch runs one tool call. It is the buyer transports' recover
// boundary: a panic in the call is logged and counted on the call's
// transport, and answered as InternalReply, the same over MCP and A2A.
func (a *Agent) Dispatch(ctx context.Context, name string, c Call) (Reply, error) {
	t, ok := a.byName[name]
	if !ok {
		return Reply{}, ErrUnknownTool
	}
	watch := clock.Start()
	var r Reply
	if recovery.Run(ctx, a.Log, c.Transport, "tool "+name, func() {
		p, err := a.principalFor(ctx, c)
		if err == nil {
			var refused bool
			if r, refused = a.refuseInvalid(t, &c); refused {
				return
			}
		}
		r = t.handle(ctx, c, p, err)
	}) {
		r = a.InternalReply(c.Args)
	}
	a.observe(name, c, r, watch.Elapsed())
	return r, nil
}

// InternalReply is the answer to a call that failed inside the storefront
// (a recovered panic): the error arm, SERVICE_UNAVAILABLE with recovery
// transient and the fixed internal line, in the call's envelope. It says
// nothing of what failed.
func (a *Agent) InternalReply(args []byte) Reply { return internalReply(args) }

func internalReply(args []byte) Reply {
	return failedReply(envelope(args), outcome.Error{Code: adcp.ServiceUnavailable, Message: sanitize.Internal})
}

// envelope is the envelope of an answer to args that could not be read
// whole: the version they negotiate (the default if none) and their
// context.
func envelope(args []byte) outcome.Envelope {
	pin, major, ctxRaw, _ := envelopeOf(args)
	v, err := adcp.Negotiate(pin, major)
	if err != nil {
		v = adcp.Default()
	}
	return outcome.Envelope{Version: v, Context: ctxRaw}
}

// Errors of authentication.
var (
	errAuthInvalid = errors.New("credentials rejected")
	errAuthScheme  = errors.New("unsupported authorization scheme")
)

// Authenticate resolves the Authorization header to a principal. No header
// is the anonymous principal. In sandbox mode a compliance test-kit key
// (prefix "demo-") is a sandbox principal.
func (a *Agent) Authenticate(ctx context.Context, publisher, header string) (products.Principal, error) {
	header = strings.TrimSpace(header)
	if header == "" {
		return products.Principal{}, nil
	}
	scheme, token, ok := strings.Cut(header, " ")
	if !ok || !strings.EqualFold(scheme, "bearer") || strings.TrimSpace(token) == "" {
		return products.Principal{}, errAuthScheme
	}
	token = strings.TrimSpace(token)
	if a.Sandbox && strings.HasPrefix(token, "demo-") && field.Identifier(token) == nil {
		// Compliance test-kit keys: demo-<kit>-... is a sandbox caller,
		// except a kit's -live- key, which stands for a live account.
		// The key is the principal's id, kept with every decision, so it
		// must be an identifier (field.Identifier); any other demo- key
		// is an unknown token.
		return products.Principal{ID: token, Sandbox: !strings.Contains(token, "-live-")}, nil
	}
	// Read from the store on every call, never cached: a revoked or
	// expired token is refused from the next request on, on every
	// replica.
	t, err := a.Store.UseToken(ctx, store.BuyerToken, publisher, store.TokenDigest(token), a.Now())
	if errors.Is(err, store.ErrNotFound) || (err == nil && t.Buyer == nil) {
		return products.Principal{}, errAuthInvalid
	}
	if err != nil {
		return products.Principal{}, err
	}
	return products.Principal{ID: t.Buyer.ID, Operator: t.Buyer.Operator, Accounts: t.Buyer.Accounts}, nil
}

// Now reads the pipeline's clock, for the transports' own timestamps
// (an A2A task's status time).
func (a *Agent) Now() time.Time {
	var now func() time.Time
	if a.Products != nil {
		now = a.Products.Now
	}
	return clock.Read(now)
}

// authFailure is the error arm for a call whose credentials failed.
func authFailure(env outcome.Envelope, err error) outcome.Outcome {
	switch {
	case errors.Is(err, errAuthInvalid), errors.Is(err, errAuthScheme):
		return outcome.NewFailed(env, outcome.Error{Code: adcp.AuthInvalid, Message: sanitize.Const("the bearer token was not accepted")})
	}
	return outcome.NewFailed(env, outcome.Error{Code: adcp.ServiceUnavailable, Message: sanitize.Unavailable})
}

// ReplyFor is the reply a transport sends for a get_products result: the
// result's exact payload, its failure marker and its _meta. The payload is
// the outcome already encoded, so it is not encoded again.
func ReplyFor(res products.Result) Reply {
	if len(res.Payload) == 0 {
		return reply(res.Outcome)
	}
	r := sent(res.Outcome, res.Payload)
	r.Release = res.Release
	return r
}

func reply(o outcome.Outcome) Reply {
	payload, err := o.Encode()
	if err != nil {
		f := outcome.NewFailed(o.Envelope(), outcome.Error{Code: adcp.ServiceUnavailable, Message: sanitize.Internal})
		payload, _ = f.Encode()
		return Reply{Payload: payload, Failed: true, Summary: sanitize.Internal}
	}
	return sent(o, payload)
}

// sent is the reply carrying payload, o encoded, with o's failure marker,
// slug and summary.
func sent(o outcome.Outcome, payload []byte) Reply {
	r := Reply{Payload: payload, Failed: !o.OK(), Compact: o.EncodesCompact(), Escaped: o.Escaped()}
	switch o.Arm() {
	case outcome.Rejected:
		r.Slug = o.Slug()
		if rej, ok := o.Rejection(); ok {
			r.Summary = rej.Reason
		}
	case outcome.Failed:
		if errs := o.Errors(); len(errs) > 0 {
			r.Summary = errs[0].Message
		}
	}
	return r
}

// envelopeOf extracts the version pins and context of any request, for
// tools whose own decoding failed or that need only the envelope.
func envelopeOf(args []byte) (pin string, major int, ctxRaw json.RawMessage, ok bool) {
	if len(bytes.TrimSpace(args)) == 0 {
		return "", 0, nil, true
	}
	if !json.Valid(args) {
		return "", 0, nil, false
	}
	top, _ := jsonobj.Members(args)
	if top == nil {
		return "", 0, nil, false
	}
	pin, major, ctxRaw = envelopeFrom(func(name string) (json.RawMessage, bool) {
		raw, has := top[name]
		return raw, has
	})
	return pin, major, ctxRaw, true
}

// parsedEnvelopeOf is envelopeOf of arguments doc is the parse of.
func parsedEnvelopeOf(doc jsonfield.Value) (pin string, major int, ctxRaw json.RawMessage, ok bool) {
	if !doc.IsObject() {
		return "", 0, nil, false
	}
	pin, major, ctxRaw = envelopeFrom(func(name string) (json.RawMessage, bool) {
		v, has := doc.Lookup(name)
		return v.Raw(), has
	})
	return pin, major, ctxRaw, true
}

// envelopeFrom reads the version pins and context of a request object
// whose members member looks up by name.
func envelopeFrom(member func(string) (json.RawMessage, bool)) (pin string, major int, ctxRaw json.RawMessage) {
	if raw, has := member("adcp_version"); has {
		pin, _ = jsonobj.String(raw)
	}
	if raw, has := member("adcp_major_version"); has {
		_ = json.Unmarshal(raw, &major)
	}
	// A context that is not valid Unicode is refused with its request
	// and never echoed.
	if raw, has := member("context"); has && len(raw) > 0 && raw[0] == '{' && products.Echoable(raw) {
		ctxRaw = raw
	}
	return pin, major, ctxRaw
}
