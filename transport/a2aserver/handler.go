package a2aserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"iter"
	"log/slog"
	"strings"
	"sync/atomic"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"

	"github.com/storefront/storefront/agent"
	"github.com/storefront/storefront/internal/recovery"
	"github.com/storefront/storefront/sanitize"
	"github.com/storefront/storefront/vocab"
)

// handler implements a2asrv.RequestHandler directly instead of running an
// a2asrv.AgentExecutor: every call is answered synchronously with a
// terminal task, so there is nothing to queue, stream or store. (The
// executor path keeps every task in an in-memory store that never evicts,
// keyed by a user name that is empty for bearer callers, so any caller
// could read any other's tasks back.)
type handler struct {
	agent *agent.Agent
	log   *slog.Logger
}

var _ a2asrv.RequestHandler = (*handler)(nil)

// exchange is one HTTP request's transport facts, set by the endpoint
// before a2a-go decodes the JSON-RPC envelope.
type exchange struct {
	publisher string
	// legacy is true for A2A 0.3 (method names with a slash).
	legacy bool
	// header is the response header, written before the body.
	header interface{ Set(k, v string) }
	// realm is the URL called, for an authentication challenge.
	realm string
	// challenge turns the response into a 401 with a challenge.
	challenge *challengeWriter
	// input is the invocation's input as the buyer sent it (rawInput).
	input json.RawMessage
	// reached is set once a method of the handler runs: an error a2a-go
	// writes before that is a2a-go's own (sdkAnswer).
	reached atomic.Bool
}

type exchangeKey struct{}

func exchangeFrom(ctx context.Context) *exchange {
	x, _ := ctx.Value(exchangeKey{}).(*exchange)
	return x
}

// reach marks the exchange of ctx as having reached the handler; every
// method of the handler calls it first.
func reach(ctx context.Context) {
	if x := exchangeFrom(ctx); x != nil {
		x.reached.Store(true)
	}
}

// profileError is a breach of the invocation profile: JSON-RPC invalid
// params, with the breach named in the ErrorInfo metadata as the AdCP A2A
// test vectors name it.
func profileError(breach, message string) error {
	return a2a.NewError(a2a.ErrInvalidParams, message).
		WithErrorInfoMeta(map[string]string{"adcp_profile_error": breach})
}

// SendMessage decodes the invocation, dispatches it and encodes the reply.
// It is the A2A surface's recover boundary: a panic is logged and counted
// (internal/recovery) and answered as a panic in Dispatch is, with the
// agent's InternalReply as a failed task, the same AdCP object MCP sends.
func (h *handler) SendMessage(ctx context.Context, req *a2a.SendMessageRequest) (res a2a.SendMessageResult, err error) {
	reach(ctx)
	var inv invocation
	if !recovery.Run(ctx, h.log, "a2a", "A2A SendMessage", func() { res, err = h.send(ctx, req, &inv) }) {
		return res, err
	}
	x := exchangeFrom(ctx)
	if x == nil || req == nil || req.Message == nil {
		return nil, a2a.ErrInternalError
	}
	task, err := h.task(ctx, req.Message, h.agent.InternalReply(inv.args), x.legacy, false)
	if err != nil {
		return nil, a2a.ErrInternalError
	}
	return task, nil
}

// send is SendMessage's work; it sets inv once the invocation is read.
func (h *handler) send(ctx context.Context, req *a2a.SendMessageRequest, inv *invocation) (a2a.SendMessageResult, error) {
	x := exchangeFrom(ctx)
	callCtx, ok := a2asrv.CallContextFrom(ctx)
	if x == nil || !ok {
		return nil, a2a.ErrInternalError
	}
	switch {
	case req == nil || req.Message == nil:
		return nil, a2a.NewError(a2a.ErrInvalidParams, "message is required")
	case req.Message.ID == "":
		return nil, profileError("invalid_a2a_message", "message.messageId is required")
	case req.Message.Role == "":
		return nil, profileError("invalid_a2a_message", "message.role is required")
	case req.Message.Role != a2a.MessageRoleUser:
		// A buyer's message is the user's; a2a-go reads any string.
		return nil, profileError("invalid_a2a_message", "message.role must be ROLE_USER (user in A2A 0.3)")
	case len(req.Message.Parts) == 0:
		return nil, profileError("missing_invocation_datapart", "message has no parts; send one data part {skill, input}")
	case req.Message.TaskID != "":
		// Every reply is terminal, so there is no task to continue.
		return nil, a2a.NewError(a2a.ErrTaskNotFound, "tasks are not kept: every reply is a terminal task; send a new message without taskId")
	}

	requested := requestedExtensions(callCtx.ServiceParams())
	if !x.legacy && !requested[ProfileURI] {
		return nil, a2a.NewError(a2a.ErrExtensionSupportRequired,
			"activate the AdCP v3 profile: send the header A2A-Extensions: "+ProfileURI).
			WithErrorInfoMeta(map[string]string{"adcp_profile_error": "extension_not_activated", "extension": ProfileURI})
	}
	var err error
	if *inv, err = parseInvocation(req.Message, x.legacy); err != nil {
		return nil, err
	}
	if x.input != nil {
		// The buyer's bytes, not a2a-go's decoding of them: decoded,
		// invalid UTF-8 reads as U+FFFD and could not be refused.
		inv.args = x.input
	}
	auth := first(callCtx.ServiceParams(), "Authorization")
	if ctx, err = h.agent.Admit(ctx, x.publisher, auth, inv.skill, inv.args); err != nil {
		x.challenge.refuse(x.realm, err)
		return nil, authError(err)
	}
	if !h.agent.Has(inv.skill) {
		return nil, profileError("unknown_skill", "unknown skill "+quote(inv.skill)+"; the agent card lists the skills")
	}
	reply, err := h.agent.Dispatch(ctx, inv.skill, agent.Call{
		Publisher:     x.publisher,
		Authorization: auth,
		Args:          inv.args,
		Transport:     "a2a",
	})
	if errors.Is(err, agent.ErrUnknownTool) {
		return nil, profileError("unknown_skill", "unknown skill "+quote(inv.skill))
	}
	if err != nil {
		h.log.ErrorContext(ctx, "a2a dispatch", "skill", inv.skill, "err", err)
		return nil, a2a.ErrInternalError
	}
	task, err := h.task(ctx, req.Message, reply, x.legacy, requested[RefusalURI])
	if err != nil {
		h.log.ErrorContext(ctx, "a2a encode", "skill", inv.skill, "err", err)
		return nil, a2a.ErrInternalError
	}
	if name, value := activated(requested, x.legacy); value != "" {
		x.header.Set(name, value)
	}
	return task, nil
}

// activated is the response header naming the extensions of requested
// this surface serves, A2A-Extensions (X-A2A-Extensions for 0.3), and its
// value; "" when none is active.
func activated(requested map[string]bool, legacy bool) (name, value string) {
	var uris []string
	for _, uri := range []string{ProfileURI, RefusalURI} {
		if requested[uri] {
			uris = append(uris, uri)
		}
	}
	name = a2a.SvcParamExtensions
	if legacy {
		name = "X-" + name
	}
	return name, strings.Join(uris, ", ")
}

// invocation is a decoded {skill, input} data part.
type invocation struct {
	skill string
	args  []byte
}

// parseInvocation finds the one data part and decodes it. Text parts are
// advisory and ignored; any other kind of part, no data part or several
// are breaches. legacy (A2A 0.3) also accepts "parameters" for "input", as
// the @adcp/sdk client sends it.
func parseInvocation(m *a2a.Message, legacy bool) (invocation, error) {
	var data []any
	for _, p := range m.Parts {
		if p == nil {
			return invocation{}, profileError("invalid_a2a_message", "message.parts holds an empty part")
		}
		switch c := p.Content.(type) {
		case a2a.Text:
		case a2a.Data:
			data = append(data, c.Value)
		default:
			return invocation{}, profileError("unsupported_part_type", "only data and text parts are accepted")
		}
	}
	switch len(data) {
	case 0:
		return invocation{}, profileError("missing_invocation_datapart", "message has no data part; send one data part {skill, input}")
	case 1:
	default:
		return invocation{}, profileError("multiple_invocation_dataparts", "message has several data parts; send exactly one {skill, input}")
	}
	obj, ok := data[0].(map[string]any)
	if !ok {
		return invocation{}, profileError("invalid_invocation_shape", "the data part must be an object {skill, input}")
	}
	skill, ok := obj["skill"].(string)
	if !ok || skill == "" {
		return invocation{}, profileError("invalid_invocation_shape", "the data part's skill must be a task name")
	}
	input, hasInput := obj["input"]
	if params, has := obj["parameters"]; has {
		switch {
		case !legacy:
			return invocation{}, profileError("invalid_invocation_shape", "parameters is not part of the AdCP v3 profile; name the arguments input")
		case hasInput:
			return invocation{}, profileError("invalid_invocation_shape", "send input or parameters, not both")
		}
		input, hasInput = params, true
	}
	inv := invocation{skill: skill, args: []byte("{}")}
	if !hasInput {
		return inv, nil
	}
	in, ok := input.(map[string]any)
	if !ok {
		return invocation{}, profileError("invalid_input", "the data part's input must be a JSON object: the AdCP request")
	}
	b, err := json.Marshal(in)
	if err != nil {
		return invocation{}, profileError("invalid_input", "the data part's input is not valid JSON")
	}
	inv.args = b
	return inv, nil
}

// rawInput is the input of the one data part of a message-send body, as
// the buyer's bytes; nil unless the body holds exactly one data part and
// it has an input (parameters for A2A 0.3, as parseInvocation reads it).
func rawInput(body []byte, legacy bool) json.RawMessage {
	var m struct {
		Params struct {
			Message struct {
				Parts []map[string]json.RawMessage `json:"parts"`
			} `json:"message"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &m) != nil {
		return nil
	}
	var input json.RawMessage
	parts := 0
	for _, p := range m.Params.Message.Parts {
		raw, ok := p["data"]
		if !ok {
			continue
		}
		parts++
		var d map[string]json.RawMessage
		if json.Unmarshal(raw, &d) != nil {
			return nil
		}
		input = d["input"]
		if params, ok := d["parameters"]; ok && legacy {
			input = params
		}
	}
	if t := bytes.TrimSpace(input); parts != 1 || len(t) == 0 || t[0] != '{' {
		return nil
	}
	return input
}

// plan is what the terminal task for reply r says, before an encoder
// writes it: the a2a-go task (task) or the fast path's bytes (fast.go).
// refusals is whether the caller activated the refusal extension.
//
// The screened summary (a decline's reason, a failure's first message)
// goes first in the artifact as text, for plain clients; the AdCP object
// is the last part, where AdCP clients read it. A completed arm has no
// summary, so its data part stands alone. AdCP clients written against 3.0
// (the @adcp/sdk among them) take a first data part's status as the task's
// status and would count a rejected arm as a failed task; with the text
// first they read the task state, completed, as the profile intends.
func (h *handler) plan(ctx context.Context, r agent.Reply, refusals bool) taskPlan {
	p := taskPlan{failed: r.Failed, summary: summary(r), payload: r.Payload}
	switch {
	case r.Failed:
		// A failed task says why in its status message as well: A2A
		// clients that know nothing of AdCP show a failed task's status
		// message, not its artifacts. The same screened line, and the
		// typed error as AdCP's transport error mapping reads it there.
		p.status = &statusPlan{text: p.summary, typed: typedError(r.Payload)}
	case refusals:
		if rf, ok := h.refusal(ctx, r); ok {
			p.status = &statusPlan{text: p.summary, refusal: &rf}
		}
	}
	return p
}

// taskPlan is a terminal task's content.
type taskPlan struct {
	// failed makes the task state failed and the artifact "error".
	failed bool
	// summary is the artifact's leading text part; "" for none.
	summary string
	// payload is the AdCP object, the artifact's last part.
	payload []byte
	// status is the status message's content; nil for none.
	status *statusPlan
}

// artifactName is the name of the task's one artifact.
func (p taskPlan) artifactName() string {
	if p.failed {
		return "error"
	}
	return "result"
}

// statusPlan is a status message: a text part, then either the typed
// error (the failed arm) or the typed refusal (the refusal extension).
type statusPlan struct {
	text string
	// typed is {"adcp_error": ...}; nil when the failure has none.
	typed []byte
	// refusal is the refusal extension's data part.
	refusal *refusal
}

// refusal is the refusal extension's typed refusal, {rule, reason,
// detail?}: rule a key of the card's map, reason its line, and detail the
// screened reason when it says more than that line.
type refusal struct {
	rule, reason, detail string
}

// value is the refusal as a data part's value: a map, which a2a-go's 0.3
// encoder needs (anything else is wrapped in {"value": ...}), and which it
// writes with sorted keys.
func (r refusal) value() map[string]any {
	v := map[string]any{"rule": r.rule, "reason": r.reason}
	if r.detail != "" {
		v["detail"] = r.detail
	}
	return v
}

// task encodes a reply as a terminal a2a-go task.
func (h *handler) task(ctx context.Context, msg *a2a.Message, r agent.Reply, legacy, refusals bool) (*a2a.Task, error) {
	p := h.plan(ctx, r, refusals)
	data, err := payloadValue(p.payload, legacy)
	if err != nil {
		return nil, err
	}
	now := h.agent.Now().UTC()
	t := &a2a.Task{
		ID:        a2a.NewTaskID(),
		ContextID: msg.ContextID,
		Status:    a2a.TaskStatus{State: a2a.TaskStateCompleted, Timestamp: &now},
	}
	if t.ContextID == "" {
		t.ContextID = a2a.NewContextID()
	}
	art := &a2a.Artifact{ID: a2a.NewArtifactID(), Name: p.artifactName()}
	if p.summary != "" {
		art.Parts = append(art.Parts, a2a.NewTextPart(p.summary))
	}
	art.Parts = append(art.Parts, a2a.NewDataPart(data))
	if p.failed {
		t.Status.State = a2a.TaskStateFailed
	}
	t.Artifacts = []*a2a.Artifact{art}
	if st := p.status; st != nil {
		parts := a2a.ContentParts{a2a.NewTextPart(st.text)}
		switch {
		case st.typed != nil:
			typed, err := payloadValue(st.typed, legacy)
			if err != nil {
				return nil, err
			}
			parts = append(parts, a2a.NewDataPart(typed))
		case st.refusal != nil:
			part := a2a.NewDataPart(st.refusal.value())
			part.MediaType = RefusalMediaType
			if legacy {
				// A2A 0.3 has no mediaType on data parts; a2a-go drops it.
				part.Metadata = map[string]any{"mediaType": RefusalMediaType}
			}
			parts = append(parts, part)
		}
		t.Status.Message = &a2a.Message{
			ID: a2a.NewMessageID(), Role: a2a.MessageRoleAgent,
			TaskID: t.ID, ContextID: t.ContextID, Parts: parts,
		}
	}
	return t, nil
}

// typedError is the error arm's typed error alone, {"adcp_error": {...}},
// as the agent wrote it: the shape AdCP's transport error mapping reads
// from a failed task's status message. A failure with no adcp_error (the
// compliance controller's own failure shape) has none to give: nil.
func typedError(payload []byte) []byte {
	var arm struct {
		Error json.RawMessage `json:"adcp_error"`
	}
	if err := json.Unmarshal(payload, &arm); err != nil || len(arm.Error) == 0 {
		return nil
	}
	return append(append([]byte(`{"adcp_error":`), arm.Error...), '}')
}

// declined is the vocabulary entry of a rejected reply's slug (from the
// agent's metadata), and the slug itself.
func declined(r agent.Reply) (vocab.Entry, string, bool) {
	slug := r.Slug
	if slug == "" {
		return vocab.Entry{}, "", false
	}
	e, ok := vocab.Lookup(slug)
	return e, string(slug), ok
}

// summary is the reply's short buyer-visible line: the agent's screened
// summary, or for a reply that has none (an idempotent replay) the
// decline's published line or the fixed internal-error line.
func summary(r agent.Reply) string {
	if !r.Summary.IsZero() {
		return r.Summary.String()
	}
	if e, _, ok := declined(r); ok {
		return e.Reason
	}
	if r.Failed {
		return sanitize.Internal.String()
	}
	return ""
}

// refusal is the refusal extension's typed refusal for a rejected reply;
// false for any other arm.
func (h *handler) refusal(ctx context.Context, r agent.Reply) (refusal, bool) {
	e, slug, ok := declined(r)
	if !ok {
		if slug != "" {
			// The rule must be a key of the card's map; a slug outside
			// the vocabulary cannot be one, so no refusal part is sent.
			h.log.ErrorContext(ctx, "a2a refusal: decline slug outside the vocabulary", "slug", slug)
		}
		return refusal{}, false
	}
	rf := refusal{rule: e.Slug.Kebab(), reason: e.Reason}
	if text := summary(r); text != e.Reason {
		rf.detail = text
	}
	return rf, true
}

// payloadValue is the AdCP object as a data part's value. For A2A 1.0 it
// is the agent's JSON itself, so the bytes MCP sends are the bytes A2A
// sends. a2a-go's 0.3 encoder needs a map (anything else is wrapped in
// {"value": ...}); numbers are kept as written with json.Number.
func payloadValue(payload []byte, legacy bool) (any, error) {
	if !legacy {
		if !json.Valid(payload) {
			return nil, errors.New("agent payload is not JSON")
		}
		return json.RawMessage(payload), nil
	}
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, err
	}
	if m == nil {
		return nil, errors.New("agent payload is not an object")
	}
	return m, nil
}

// requestedExtensions reads both header spellings (A2A-Extensions for 1.0,
// X-A2A-Extensions for 0.3) and splits comma-separated values, which
// a2a-go does not.
func requestedExtensions(sp *a2asrv.ServiceParams) map[string]bool {
	out := map[string]bool{}
	for _, key := range []string{a2a.SvcParamExtensions, "X-" + a2a.SvcParamExtensions} {
		vals, _ := sp.Get(key)
		for _, v := range vals {
			for _, uri := range strings.Split(v, ",") {
				if uri = strings.TrimSpace(uri); uri != "" {
					out[uri] = true
				}
			}
		}
	}
	return out
}

func first(sp *a2asrv.ServiceParams, key string) string {
	vals, _ := sp.Get(key)
	if len(vals) == 0 {
		return ""
	}
	return vals[0]
}

// quote bounds and quotes a caller-supplied name for an error message.
func quote(s string) string {
	if r := []rune(s); len(r) > 64 {
		s = string(r[:64]) + "…"
	}
	b, _ := json.Marshal(s)
	return string(b)
}

// The rest of the A2A surface: nothing is kept, nothing streams, nothing
// is pushed.

func errNoTasks() error {
	return a2a.NewError(a2a.ErrTaskNotFound, "tasks are not kept: every reply is a terminal task")
}

func (h *handler) GetTask(ctx context.Context, _ *a2a.GetTaskRequest) (*a2a.Task, error) {
	reach(ctx)
	return nil, errNoTasks()
}

func (h *handler) ListTasks(ctx context.Context, _ *a2a.ListTasksRequest) (*a2a.ListTasksResponse, error) {
	reach(ctx)
	return nil, a2a.ErrUnsupportedOperation
}

func (h *handler) CancelTask(ctx context.Context, _ *a2a.CancelTaskRequest) (*a2a.Task, error) {
	reach(ctx)
	return nil, errNoTasks()
}

func (h *handler) SubscribeToTask(ctx context.Context, _ *a2a.SubscribeToTaskRequest) iter.Seq2[a2a.Event, error] {
	reach(ctx)
	return func(yield func(a2a.Event, error) bool) { yield(nil, errNoTasks()) }
}

func (h *handler) SendStreamingMessage(ctx context.Context, _ *a2a.SendMessageRequest) iter.Seq2[a2a.Event, error] {
	reach(ctx)
	return func(yield func(a2a.Event, error) bool) { yield(nil, a2a.ErrUnsupportedOperation) }
}

func (h *handler) GetTaskPushConfig(ctx context.Context, _ *a2a.GetTaskPushConfigRequest) (*a2a.PushConfig, error) {
	reach(ctx)
	return nil, a2a.ErrPushNotificationNotSupported
}

func (h *handler) ListTaskPushConfigs(ctx context.Context, _ *a2a.ListTaskPushConfigRequest) (*a2a.ListTaskPushConfigResponse, error) {
	reach(ctx)
	return nil, a2a.ErrPushNotificationNotSupported
}

func (h *handler) CreateTaskPushConfig(ctx context.Context, _ *a2a.PushConfig) (*a2a.PushConfig, error) {
	reach(ctx)
	return nil, a2a.ErrPushNotificationNotSupported
}

func (h *handler) DeleteTaskPushConfig(ctx context.Context, _ *a2a.DeleteTaskPushConfigRequest) error {
	reach(ctx)
	return a2a.ErrPushNotificationNotSupported
}

func (h *handler) GetExtendedAgentCard(ctx context.Context, _ *a2a.GetExtendedAgentCardRequest) (*a2a.AgentCard, error) {
	reach(ctx)
	return nil, a2a.ErrExtendedCardNotConfigured
}
