package a2aserver

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"github.com/a2aproject/a2a-go/v2/errordetails"
	"github.com/labstack/echo/v4"

	"github.com/storefront/storefront/agent"
	"github.com/storefront/storefront/internal/jsonobj"
	"github.com/storefront/storefront/internal/jsonrpc"
	"github.com/storefront/storefront/internal/recovery"
)

// The fast path answers the one request buyers send all day, a single
// SendMessage (A2A 1.0, the AdCP profile activated) or message/send (0.3)
// carrying one invocation of one of the agent's tools, without a2a-go:
// the body is read once (by serveRPC), the call admitted and dispatched
// exactly as handler.send does, and the JSON-RPC answer written around the
// already-encoded AdCP payload in one pass. Everything else (other
// methods, other message shapes, configuration, metadata, task ids, ids
// a2a-go would re-spell, a missing profile, refused credentials, unknown
// skills) goes to a2a-go, which stays the reference:
// TestA2AFastPathMatchesA2AGo sends a corpus through both.
//
// What differs on the wire, byte for byte, and is the same to a client:
//   - the task, context, artifact and message ids are fresh UUIDs on
//     either path (a2a-go's generators, called in the same order), and the
//     status timestamp is the agent's clock on either;
//   - over 0.3, a2a-go decodes the AdCP object into a map and encodes it
//     again, so its members come sorted by name; the fast path writes the
//     agent's JSON as it is, members in the agent's order, as 1.0 and MCP
//     carry it. The values are the same; JSON objects are unordered.
//   - the fast path writes the agent's JSON verbatim, where a2a-go's
//     encoder compacts it and escapes <, > and & in its strings; the
//     agent's payload is encoding/json's output, compact and escaped
//     already, so only a payload written otherwise would differ, and then
//     only in the spelling of the same strings.

// fastCall is a message-send the fast path answers.
type fastCall struct {
	// id is the JSON-RPC id as sent, one a2a-go echoes unchanged.
	id json.RawMessage
	// legacy is A2A 0.3 (message/send).
	legacy bool
	// contextID is the message's contextId, "" when it has none.
	contextID string
	skill     string
	// args is the invocation's input as the buyer sent it, or {}.
	args []byte
}

// readFast reads body as a call the fast path answers, or reports false
// for anything it has not been proven to read as a2a-go and handler.send
// read it. Member names are matched exactly: a2a-go's struct decoding
// would also take "Method" for "method", so a body with any member
// outside the set goes to a2a-go.
func readFast(body []byte) (fastCall, bool) {
	var c fastCall
	// Validated once here; every level below is a slice of body, which is
	// all jsonobj needs to read it as json.Unmarshal would.
	if !json.Valid(body) {
		return c, false
	}
	env, ok := members(body, "jsonrpc", "id", "method", "params")
	if !ok || len(env) != 4 || string(env["jsonrpc"]) != `"2.0"` || !jsonrpc.PlainID(env["id"]) {
		return c, false
	}
	c.id = env["id"]
	switch string(env["method"]) {
	case `"SendMessage"`:
	case `"message/send"`:
		c.legacy = true
	default:
		return c, false
	}
	params, ok := members(env["params"], "message")
	if !ok || len(params) != 1 {
		return c, false
	}
	role := `"ROLE_USER"`
	allowed := []string{"messageId", "role", "parts", "contextId"}
	if c.legacy {
		role = `"user"`
		allowed = append(allowed, "kind")
	}
	msg, ok := members(params["message"], allowed...)
	if !ok || string(msg["role"]) != role {
		return c, false
	}
	if k, has := msg["kind"]; has && string(k) != `"message"` {
		return c, false
	}
	if messageID, ok := jsonobj.String(msg["messageId"]); !ok || messageID == "" {
		return c, false
	}
	if raw, has := msg["contextId"]; has {
		if c.contextID, ok = jsonobj.String(raw); !ok {
			return c, false
		}
	}
	var parts []json.RawMessage
	if json.Unmarshal(msg["parts"], &parts) != nil {
		return c, false
	}
	var data json.RawMessage
	for _, raw := range parts {
		kind, value, ok := readPart(raw, c.legacy)
		switch {
		case !ok:
			return c, false
		case kind == "data":
			if data != nil {
				return c, false // several data parts: a profile breach
			}
			data = value
		}
	}
	if data == nil {
		return c, false
	}
	fields := []string{"skill", "input"}
	if c.legacy {
		fields = append(fields, "parameters")
	}
	inv, ok := members(data, fields...)
	if !ok {
		return c, false
	}
	if c.skill, ok = jsonobj.String(inv["skill"]); !ok || c.skill == "" {
		return c, false
	}
	in, hasInput := inv["input"]
	if params, has := inv["parameters"]; has {
		if hasInput {
			return c, false // both: a profile breach
		}
		in, hasInput = params, true
	}
	c.args = []byte("{}")
	if hasInput {
		if len(in) == 0 || in[0] != '{' {
			return c, false
		}
		c.args = in
	}
	return c, true
}

// readPart reads one part: a text part (advisory, ignored) or a data part
// holding an object, in the binding's spelling: {"text": ...} and
// {"data": ...} for 1.0, with "kind" beside them for 0.3.
func readPart(raw json.RawMessage, legacy bool) (kind string, data json.RawMessage, ok bool) {
	p, ok := members(raw, "kind", "text", "data")
	if !ok {
		return "", nil, false
	}
	n := 1
	if legacy {
		n = 2
	}
	if len(p) != n {
		return "", nil, false
	}
	if text, has := p["text"]; has && len(text) > 0 && text[0] == '"' && (!legacy || string(p["kind"]) == `"text"`) {
		return "text", nil, true
	}
	if d, has := p["data"]; has && len(d) > 0 && d[0] == '{' && (!legacy || string(p["kind"]) == `"data"`) {
		return "data", d, true
	}
	return "", nil, false
}

// members decodes raw, a JSON object, and reports false unless it is one
// and every member is named in allowed (exactly, not case-folded).
func members(raw json.RawMessage, allowed ...string) (map[string]json.RawMessage, bool) {
	if len(raw) == 0 || raw[0] != '{' {
		return nil, false
	}
	m, ok := jsonobj.Members(raw)
	if !ok {
		return nil, false
	}
next:
	for k := range m {
		for _, a := range allowed {
			if k == a {
				continue next
			}
		}
		return nil, false
	}
	return m, true
}

// fastParams are the headers as a2a-go gives them to handler.send, or false
// when they would be read differently by chance: a2a-go's 0.3 binding
// folds X-A2A-Extensions and A2A-Extensions into one key, and which wins
// when both are sent depends on map order.
func fastParams(h http.Header, legacy bool) (*a2asrv.ServiceParams, bool) {
	if !legacy {
		return a2asrv.NewServiceParams(h), true
	}
	if len(h.Values(a2a.SvcParamExtensions)) > 0 && len(h.Values("X-"+a2a.SvcParamExtensions)) > 0 {
		return nil, false
	}
	return a2av0.ToServiceParams(h), true
}

// Fast reports whether the fast path reads the request of body and
// header h as one it answers, should admission and dispatch let it; a2a-go
// answers every other. For tests and diagnostics: serving reads it the
// same way.
func Fast(body []byte, h http.Header) bool {
	_, _, ok := fastRequest(body, h)
	return ok
}

// fastRequest reads the request of body and header h as a call the fast
// path answers, with the extensions the caller asked for, or reports
// false.
func fastRequest(body []byte, h http.Header) (fastCall, *a2asrv.ServiceParams, bool) {
	call, ok := readFast(body)
	if !ok {
		return call, nil, false
	}
	sp, ok := fastParams(h, call.legacy)
	if !ok || (!call.legacy && !requestedExtensions(sp)[ProfileURI]) {
		return call, nil, false
	}
	return call, sp, true
}

// serveFast answers body on the fast path and reports true, or reports
// false having written nothing, for a2a-go to answer. ctx is the request's,
// admitted for publisher by route.
func (h *handler) serveFast(ctx context.Context, c echo.Context, publisher string, body []byte) bool {
	call, sp, ok := fastRequest(body, c.Request().Header)
	if !ok {
		return false
	}
	requested := requestedExtensions(sp)
	refusals := requested[RefusalURI]
	auth := first(sp, "Authorization")
	// The work of handler.send from admission on, under the same recover
	// boundary as SendMessage's, answered the same way.
	var (
		plan             taskPlan
		answered         bool
		echoName, echoed string
	)
	if recovery.Run(ctx, h.log, "a2a", "A2A SendMessage", func() {
		callCtx, err := h.agent.Admit(ctx, publisher, auth, call.skill, call.args)
		if err != nil || !h.agent.Has(call.skill) {
			return // a2a-go's refusal, with its challenge or profile error
		}
		reply, err := h.agent.Dispatch(callCtx, call.skill, agent.Call{
			Publisher:     publisher,
			Authorization: auth,
			Args:          call.args,
			Transport:     "a2a",
		})
		if err != nil {
			// Dispatch fails only for a tool it does not have, before
			// it calls anything: a2a-go's unknown skill.
			return
		}
		plan, answered = h.plan(callCtx, reply, refusals), true
		echoName, echoed = activated(requested, call.legacy)
	}) {
		plan, answered, echoed = h.plan(ctx, h.agent.InternalReply(call.args), false), true, ""
	}
	if !answered {
		return false
	}
	buf := answers.Get().(*bytes.Buffer)
	defer answers.Put(buf)
	buf.Reset()
	now := h.agent.Now().UTC()
	w := c.Response()
	if !writeTask(buf, call, plan, now) {
		h.log.ErrorContext(ctx, "a2a encode", "skill", call.skill, "err", "agent payload is not a JSON object")
		buf.Reset()
		writeInternalError(buf, call.id, now)
	} else if echoed != "" {
		w.Header().Set(echoName, echoed)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(buf.Bytes())
	return true
}

var answers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// writeTask writes the JSON-RPC response to call carrying plan as the
// terminal task handler.task builds and a2a-go encodes: members in
// a2a-go's order and spelling for the call's binding, the AdCP object and
// typed error as the agent wrote them, stamped now. It reports false,
// having written part of it, if the payload is not a JSON object, which
// a2a-go's 0.3 binding could not carry and handler.task refuses.
func writeTask(buf *bytes.Buffer, call fastCall, p taskPlan, now time.Time) bool {
	if !object(p.payload) || (p.status != nil && p.status.typed != nil && !object(p.status.typed)) {
		return false
	}
	taskID := a2a.NewTaskID()
	contextID := call.contextID
	if contextID == "" {
		contextID = a2a.NewContextID()
	}
	artifactID := a2a.NewArtifactID()
	v := binding{buf: buf, legacy: call.legacy}

	buf.WriteString(`{"jsonrpc":"2.0","id":`)
	buf.Write(call.id)
	if v.legacy {
		buf.WriteString(`,"result":{"kind":"task","id":"`)
	} else {
		buf.WriteString(`,"result":{"task":{"id":"`)
	}
	buf.WriteString(string(taskID))
	buf.WriteString(`","artifacts":[{"artifactId":"`)
	buf.WriteString(string(artifactID))
	buf.WriteString(`","name":"`)
	buf.WriteString(p.artifactName())
	buf.WriteString(`","parts":[`)
	if p.summary != "" {
		v.text(p.summary)
		buf.WriteByte(',')
	}
	v.data(p.payload)
	buf.WriteString(`]}],"contextId":`)
	writeString(buf, contextID)
	buf.WriteString(`,"status":{`)
	if st := p.status; st != nil {
		if v.legacy {
			buf.WriteString(`"message":{"kind":"message","messageId":"`)
		} else {
			buf.WriteString(`"message":{"messageId":"`)
		}
		buf.WriteString(a2a.NewMessageID())
		buf.WriteString(`","contextId":`)
		writeString(buf, contextID)
		buf.WriteString(`,"parts":[`)
		v.text(st.text)
		switch {
		case st.typed != nil:
			buf.WriteByte(',')
			v.data(st.typed)
		case st.refusal != nil:
			buf.WriteByte(',')
			v.refusal(*st.refusal)
		}
		if v.legacy {
			buf.WriteString(`],"role":"agent","taskId":"`)
		} else {
			buf.WriteString(`],"role":"ROLE_AGENT","taskId":"`)
		}
		buf.WriteString(string(taskID))
		buf.WriteString(`"},`)
	}
	buf.WriteString(`"state":"`)
	buf.WriteString(v.state(p.failed))
	buf.WriteString(`","timestamp":"`)
	buf.Write(now.AppendFormat(buf.AvailableBuffer(), time.RFC3339Nano))
	if v.legacy {
		buf.WriteString("\"}}}\n")
	} else {
		buf.WriteString("\"}}}}\n")
	}
	return true
}

// binding writes parts and states in one binding's spelling.
type binding struct {
	buf    *bytes.Buffer
	legacy bool
}

func (b binding) text(s string) {
	if b.legacy {
		b.buf.WriteString(`{"kind":"text","text":`)
	} else {
		b.buf.WriteString(`{"text":`)
	}
	writeString(b.buf, s)
	b.buf.WriteByte('}')
}

func (b binding) data(obj []byte) {
	if b.legacy {
		b.buf.WriteString(`{"kind":"data","data":`)
	} else {
		b.buf.WriteString(`{"data":`)
	}
	b.buf.Write(obj)
	b.buf.WriteByte('}')
}

// refusal writes the typed refusal, its members sorted by name as a2a-go
// writes the map handler.task gives it.
func (b binding) refusal(r refusal) {
	if b.legacy {
		b.buf.WriteString(`{"kind":"data","data":{`)
	} else {
		b.buf.WriteString(`{"data":{`)
	}
	if r.detail != "" {
		b.buf.WriteString(`"detail":`)
		writeString(b.buf, r.detail)
		b.buf.WriteByte(',')
	}
	b.buf.WriteString(`"reason":`)
	writeString(b.buf, r.reason)
	b.buf.WriteString(`,"rule":`)
	writeString(b.buf, r.rule)
	if b.legacy {
		b.buf.WriteString(`},"metadata":{"mediaType":"` + RefusalMediaType + `"}}`)
	} else {
		b.buf.WriteString(`},"mediaType":"` + RefusalMediaType + `"}`)
	}
}

func (b binding) state(failed bool) string {
	switch {
	case b.legacy && failed:
		return "failed"
	case b.legacy:
		return "completed"
	case failed:
		return string(a2a.TaskStateFailed)
	}
	return string(a2a.TaskStateCompleted)
}

// object reports whether b, the agent's JSON, is an object.
func object(b []byte) bool {
	b = bytes.TrimSpace(b)
	return len(b) > 1 && b[0] == '{' && b[len(b)-1] == '}'
}

// writeString writes s as a JSON string, as a2a-go's encoder spells it.
func writeString(buf *bytes.Buffer, s string) {
	b, _ := json.Marshal(s) // a string always encodes
	buf.Write(b)
}

// writeInternalError writes the JSON-RPC internal error a2a-go answers
// for handler.send's a2a.ErrInternalError: its message, and the ErrorInfo
// it attaches, stamped now.
func writeInternalError(buf *bytes.Buffer, id json.RawMessage, now time.Time) {
	info := errordetails.NewErrorInfo(a2a.ErrorReason(a2a.ErrInternalError), a2a.ProtocolDomain,
		map[string]string{"timestamp": now.Format(time.RFC3339)})
	buf.Write(jsonrpc.Error(id, jsonrpc.InternalError, a2a.ErrInternalError.Error(), []*errordetails.Typed{info}))
	buf.WriteByte('\n')
}
