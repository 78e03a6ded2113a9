package outcome

import (
	"encoding/json"
	"errors"

	"github.com/storefront/storefront/adcp"
	"github.com/storefront/storefront/internal/jsonesc"
	"github.com/storefront/storefront/internal/verbatim"
	"github.com/storefront/storefront/sanitize"
	"github.com/storefront/storefront/vocab"
)

// Arm is which of the closed set of answers an outcome is.
type Arm int

const (
	Completed Arm = iota + 1
	Rejected
	Failed
	Submitted
)

func (a Arm) String() string {
	switch a {
	case Completed:
		return "completed"
	case Rejected:
		return "rejected"
	case Failed:
		return "failed"
	case Submitted:
		return "submitted"
	}
	return "unknown"
}

// Envelope is what every response carries whatever its arm.
type Envelope struct {
	// Version is the release served.
	Version adcp.Version
	// Context is the buyer's context object, echoed unchanged. Nil when
	// the request had none.
	Context json.RawMessage
}

// Outcome is one get_products answer. The zero Outcome is invalid; build
// one with NewCompleted, NewRejected, NewFailed or NewSubmitted.
type Outcome struct {
	arm Arm
	env Envelope

	completed *completedBody
	rejected  *rejectedBody
	failed    *failedBody
	submitted *submittedBody

	replayed bool
}

// Page is the pagination of a completed answer.
type Page struct {
	HasMore bool   `json:"has_more"`
	Cursor  string `json:"cursor,omitempty"`
	Total   *int   `json:"total_count,omitempty"`
}

// CompletedBody is the content of a completed answer. Products are the
// encoded, already screened product objects.
type CompletedBody struct {
	// Products are the encoded products, each compact as encoding/json
	// writes it: Encode splices them in as they are (EncodesCompact).
	Products []json.RawMessage
	// Writer, when set, writes the products instead, straight into the
	// encoded answer, so that they are not encoded into buffers of their
	// own first; Products is then ignored.
	Writer     ProductWriter
	CacheScope string // public or account
	Page       *Page
	Sandbox    bool
	// Diagnostics is an optional filter_diagnostics object.
	Diagnostics map[string]any
	// Refinement is the refinement_applied list, one per refine entry.
	Refinement []Refinement
	// Warnings are non-fatal advisories; they ride in errors[] on the
	// completed arm and never in adcp_error.
	Warnings []Error
}

// ProductWriter writes a completed answer's products into its encoding.
type ProductWriter interface {
	// Count is the number of products.
	Count() int
	// Size is about how many bytes Append writes, for sizing the
	// answer's buffer.
	Size() int
	// Append appends the products, compact as encoding/json writes them
	// and separated by commas, to dst: the same bytes on every call.
	Append(dst []byte) []byte
}

// EscapingWriter is a ProductWriter that knows, for some of what its last
// Append wrote, the escaped form a transport writing the answer as a JSON
// string would write (the MCP text mirror): its spans are of the answer
// that Append wrote into.
type EscapingWriter interface {
	ProductWriter
	Escaped() []jsonesc.Span
}

// Escaped is what o's product writer knows of the escaped form of the
// answer Encode last wrote (Sent.Escaped); nil when it knows nothing.
func (o Outcome) Escaped() []jsonesc.Span {
	if o.arm != Completed {
		return nil
	}
	if w, ok := o.completed.Writer.(EscapingWriter); ok {
		return w.Escaped()
	}
	return nil
}

// Refinement answers one refine entry.
type Refinement struct {
	Scope     string         `json:"scope"`
	ProductID string         `json:"product_id,omitempty"`
	Proposal  string         `json:"proposal_id,omitempty"`
	Status    string         `json:"status"`
	Notes     *sanitize.Text `json:"notes,omitempty"`
}

type completedBody struct{ CompletedBody }

// Receipt identifies the ledger entry that recorded a decision.
type Receipt struct {
	Sequence  int64  `json:"sequence"`
	EntryHash string `json:"entry_hash"`
}

// RejectedBody is the content of a rejected answer: a screened reason,
// screened suggestions, the public slug and the ledger receipt. There is no
// field for anything the rejected arm forbids.
type RejectedBody struct {
	Reason      sanitize.Text
	Suggestions []sanitize.Text
	Slug        vocab.Slug
	Fixable     bool
	Receipt     *Receipt
}

type rejectedBody struct{ RejectedBody }

type failedBody struct {
	errors []Error
	// bare marks an answer built by NewBareFailed.
	bare bool
}

type submittedBody struct {
	taskID  string
	message sanitize.Text
}

// ErrEmptyReason is returned by NewRejected for a reason with no text.
var ErrEmptyReason = errors.New("outcome: a rejected outcome needs a reason")

// NewCompleted builds a completed answer.
func NewCompleted(env Envelope, body CompletedBody) Outcome {
	if body.Products == nil {
		body.Products = []json.RawMessage{}
	}
	if body.CacheScope == "" {
		body.CacheScope = "public"
	}
	return Outcome{arm: Completed, env: env, completed: &completedBody{body}}
}

// NewRejected builds a rejected answer. The reason must not be empty.
func NewRejected(env Envelope, body RejectedBody) (Outcome, error) {
	if body.Reason.IsZero() {
		return Outcome{}, ErrEmptyReason
	}
	if len(body.Suggestions) > sanitize.MaxSuggestions {
		body.Suggestions = body.Suggestions[:sanitize.MaxSuggestions]
	}
	return Outcome{arm: Rejected, env: env, rejected: &rejectedBody{body}}, nil
}

// NewFailed builds a failed answer from one or more errors; the first is
// the one the envelope's adcp_error carries.
func NewFailed(env Envelope, first Error, more ...Error) Outcome {
	return Outcome{arm: Failed, env: env, failed: &failedBody{errors: append([]Error{first}, more...)}}
}

// NewBareFailed builds a failed answer whose one error carries only its
// code and message, without the recovery an error otherwise derives from
// its code, and whose context goes out as the request sent it, byte for
// byte, as a replayed answer's does: the answer to an idempotency key
// reused with another request, which is answered beside the key's replays.
// No recovery, though core/error.json says senders SHOULD give one: the
// AdCP storyboard runner allows an IDEMPOTENCY_CONFLICT only code and
// message (ADCP_ERROR_FIELD_ALLOWLIST) and fails the idempotency
// storyboards on any other member.
func NewBareFailed(env Envelope, code adcp.Code, message sanitize.Text) Outcome {
	return Outcome{arm: Failed, env: env, failed: &failedBody{errors: []Error{{Code: code, Message: message}}, bare: true}}
}

// NewSubmitted builds a submitted answer for an asynchronous task.
func NewSubmitted(env Envelope, taskID string, message sanitize.Text) Outcome {
	return Outcome{arm: Submitted, env: env, submitted: &submittedBody{taskID: taskID, message: message}}
}

// Arm reports which answer o is.
func (o Outcome) Arm() Arm { return o.arm }

// OK reports whether the exchange succeeded at the transport level: every
// arm but Failed. A rejection is a successful exchange.
func (o Outcome) OK() bool { return o.arm != Failed && o.arm != 0 }

// Envelope returns o's envelope.
func (o Outcome) Envelope() Envelope { return o.env }

// Slug returns the public decline slug of a rejected outcome, or "".
func (o Outcome) Slug() vocab.Slug {
	if o.rejected == nil {
		return ""
	}
	return o.rejected.Slug
}

// Errors returns the errors of a failed outcome.
func (o Outcome) Errors() []Error {
	if o.failed == nil {
		return nil
	}
	return append([]Error(nil), o.failed.errors...)
}

// TaskID returns the task id of a submitted outcome, or "".
func (o Outcome) TaskID() string {
	if o.submitted == nil {
		return ""
	}
	return o.submitted.taskID
}

// Rejection returns the body of a rejected outcome.
func (o Outcome) Rejection() (RejectedBody, bool) {
	if o.rejected == nil {
		return RejectedBody{}, false
	}
	return o.rejected.RejectedBody, true
}

// ProductCount is the number of products a completed outcome carries.
func (o Outcome) ProductCount() int {
	if o.completed == nil {
		return 0
	}
	if w := o.completed.Writer; w != nil {
		return w.Count()
	}
	return len(o.completed.Products)
}

// WithReceipt returns o with a ledger receipt attached, if o is rejected;
// other arms carry no receipt in their payload.
func (o Outcome) WithReceipt(r Receipt) Outcome {
	if o.rejected != nil {
		b := *o.rejected
		b.Receipt = &r
		o.rejected = &b
	}
	return o
}

// Replayed returns o marked as served from the idempotency cache.
func (o Outcome) Replayed() Outcome {
	o.replayed = true
	return o
}

// Namespace is the key under which the storefront writes its extension
// fields in `ext` and MCP `_meta`.
const Namespace = "io.github.storefront"

// The wire shapes of the four arms. Encode fills them; the published
// response schema (schemas/) is generated from them, so the schema cannot
// drift from what is sent. Field order is the order on the wire.
type (
	// CompletedWire is the completed arm.
	CompletedWire struct {
		Status            string            `json:"status" jsonschema:"enum=completed"`
		AdcpVersion       string            `json:"adcp_version"`
		Products          []json.RawMessage `json:"products" jsonschema:"description=AdCP core/product.json objects"`
		CacheScope        string            `json:"cache_scope" jsonschema:"enum=public,enum=account"`
		Pagination        *Page             `json:"pagination,omitempty"`
		RefinementApplied []Refinement      `json:"refinement_applied,omitempty"`
		FilterDiagnostics map[string]any    `json:"filter_diagnostics,omitempty"`
		Errors            []Error           `json:"errors,omitempty" jsonschema:"description=Non-fatal advisories only"`
		Sandbox           bool              `json:"sandbox,omitempty"`
		Replayed          bool              `json:"replayed,omitempty"`
		Context           json.RawMessage   `json:"context,omitempty" jsonschema:"description=The request's context object, echoed unchanged"`
	}
	// RejectedWire is the rejected arm.
	RejectedWire struct {
		Status      string          `json:"status" jsonschema:"enum=rejected"`
		AdcpVersion string          `json:"adcp_version"`
		Reason      sanitize.Text   `json:"reason" jsonschema:"minLength=1,maxLength=2000"`
		Suggestions []sanitize.Text `json:"suggestions,omitempty" jsonschema:"minItems=1,maxItems=20"`
		Ext         RejectedExt     `json:"ext"`
		Replayed    bool            `json:"replayed,omitempty"`
		Context     json.RawMessage `json:"context,omitempty" jsonschema:"description=The request's context object, echoed unchanged"`
	}
	// FailedWire is the error arm.
	FailedWire struct {
		Status      string          `json:"status" jsonschema:"enum=failed"`
		AdcpVersion string          `json:"adcp_version"`
		Errors      []Error         `json:"errors" jsonschema:"minItems=1"`
		AdcpError   Error           `json:"adcp_error"`
		Replayed    bool            `json:"replayed,omitempty"`
		Context     json.RawMessage `json:"context,omitempty" jsonschema:"description=The request's context object, echoed unchanged"`
	}
	// SubmittedWire is the asynchronous submitted arm.
	SubmittedWire struct {
		Status      string          `json:"status" jsonschema:"enum=submitted"`
		AdcpVersion string          `json:"adcp_version"`
		TaskID      string          `json:"task_id"`
		Message     *sanitize.Text  `json:"message,omitempty"`
		Replayed    bool            `json:"replayed,omitempty"`
		Context     json.RawMessage `json:"context,omitempty" jsonschema:"description=The request's context object, echoed unchanged"`
	}
	// RejectedExt is the rejected arm's ext: the storefront's namespace.
	RejectedExt struct {
		Storefront DeclineExt `json:"io.github.storefront"`
	}
	// DeclineExt is what the storefront adds to a rejection.
	DeclineExt struct {
		Decline DeclineSlug `json:"decline"`
		Receipt *Receipt    `json:"receipt,omitempty"`
	}
	// DeclineSlug names the public decline category. Its slug is a
	// vocab.Slug held as a string, on this wire type only: the published
	// response schema describes it as a string.
	DeclineSlug struct {
		Fixable bool   `json:"fixable"`
		Slug    string `json:"slug"`
	}
)

// bareFailedWire is the error arm NewBareFailed builds, but for its
// context, which is appended verbatim.
type bareFailedWire struct {
	Status      string      `json:"status"`
	AdcpVersion string      `json:"adcp_version"`
	Errors      []bareError `json:"errors"`
	AdcpError   bareError   `json:"adcp_error"`
	Replayed    bool        `json:"replayed,omitempty"`
}

// bareError is an error of only code and message.
type bareError struct {
	Code    adcp.Code     `json:"code"`
	Message sanitize.Text `json:"message"`
}

// EncodesCompact reports whether what Encode writes for o has no
// whitespace outside its strings: every arm is encoding/json's output,
// raw members and the spliced products included, but for the bare error
// arm, whose context is appended as the buyer spelled it.
func (o Outcome) EncodesCompact() bool {
	return o.arm != Failed || !o.failed.bare
}

// Encode writes o as the flat AdCP object every transport carries. The
// same outcome always encodes to the same bytes.
func (o Outcome) Encode() ([]byte, error) { return o.AppendEncode(nil) }

// AppendEncode appends Encode's bytes to dst. A completed answer is
// written into dst's room when it has enough (the rest are encoded apart
// and copied), so that a caller can encode into a buffer it reuses.
// Escaped's spans count from the start of the answer: dst should be empty
// when they are read.
func (o Outcome) AppendEncode(dst []byte) ([]byte, error) {
	if o.arm == Completed {
		return o.appendCompleted(dst, o.env.Version.String())
	}
	b, err := o.encode()
	if err != nil {
		return dst, err
	}
	if dst == nil {
		return b, nil
	}
	return append(dst, b...), nil
}

// encode writes the arms AppendEncode does not write in place.
func (o Outcome) encode() ([]byte, error) {
	v := o.env.Version.String()
	switch o.arm {
	case Rejected:
		return o.encodeRejected(v)
	case Failed:
		if o.failed.bare {
			e := bareError{Code: o.failed.errors[0].Code, Message: o.failed.errors[0].Message}
			return verbatim.Marshal(bareFailedWire{Status: "failed", AdcpVersion: v, Errors: []bareError{e}, AdcpError: e, Replayed: o.replayed},
				verbatim.Member{Key: "context", Value: o.env.Context})
		}
		return json.Marshal(FailedWire{
			Status: "failed", AdcpVersion: v, Errors: o.failed.errors, AdcpError: o.failed.errors[0],
			Replayed: o.replayed, Context: o.env.Context,
		})
	case Submitted:
		w := SubmittedWire{Status: "submitted", AdcpVersion: v, TaskID: o.submitted.taskID, Replayed: o.replayed, Context: o.env.Context}
		if !o.submitted.message.IsZero() {
			m := o.submitted.message
			w.Message = &m
		}
		return json.Marshal(w)
	}
	return nil, errors.New("outcome: encoding the zero Outcome")
}
