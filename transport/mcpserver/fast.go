package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"mime"
	"net/http"
	"strings"
	"sync"

	"github.com/storefront/storefront/agent"
	"github.com/storefront/storefront/internal/jsonesc"
	"github.com/storefront/storefront/internal/jsonrpc"
	"github.com/storefront/storefront/jsonfield"
)

// The fast path answers the one request buyers send all day, a stateless
// POST of a single tools/call for one of the agent's tools, without the
// MCP SDK: the body is read once (by Guard), the call dispatched, and the
// JSON-RPC answer written around the already-encoded AdCP payload in one
// pass, byte for byte what the SDK writes for it. Everything else
// (initialize, tools/list, notifications, batches, unknown tools, params
// beyond a name and arguments, ids the SDK would re-spell, headers the
// SDK refuses or reads, the 2026 protocol) goes to the SDK, which stays
// the reference: TestFastPathMatchesTheSDK sends a corpus through both.

// fastVersions are the MCP-Protocol-Version headers a call is answered on
// the fast path for: the versions before the 2026 protocol that the SDK
// serves, and none (which the SDK reads as 2025-03-26).
var fastVersions = map[string]bool{"2025-11-25": true, "2025-06-18": true, "2025-03-26": true, "2024-11-05": true}

// plainCall reports whether a tools/call with params p is one the fast
// path answers: a plain id, a tool name, and arguments that are an object
// or absent; nothing else in params.
func plainCall(c rpcCall, p jsonfield.Value) bool {
	if c.id == nil || !jsonrpc.PlainID(c.id) || c.tool == "tools/call" {
		return false
	}
	for _, m := range p.Kids() {
		if k := string(m.Name()); k != "name" && k != "arguments" {
			return false
		}
	}
	if a, ok := p.Lookup("arguments"); ok {
		return a.IsObject()
	}
	return true
}

// fastHeaders reports whether the SDK would take r's headers as they are
// and read nothing from them but the protocol version: a JSON body, an
// Accept it serves (after Handler's widening of a JSON-only Accept), an
// old protocol version or none, and no session, origin or fetch metadata.
func fastHeaders(r *http.Request) bool {
	h := r.Header
	if ct := h.Get("Content-Type"); ct != "application/json" {
		// Only a Content-Type other than the one buyers send is parsed.
		if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
			return false
		}
	}
	if vs := h.Values("Mcp-Protocol-Version"); len(vs) > 1 || (len(vs) == 1 && !fastVersions[vs[0]]) {
		return false
	}
	for _, k := range []string{"Mcp-Session-Id", "Origin", "Sec-Fetch-Site", "Last-Event-Id"} {
		if len(h.Values(k)) > 0 {
			return false
		}
	}
	accept := h.Get("Accept")
	if !strings.Contains(accept, "text/event-stream") && (strings.Contains(accept, "application/json") || strings.Contains(accept, "*/*")) {
		return true
	}
	jsonOK, streamOK := false, false
	for _, v := range h.Values("Accept") {
		for v != "" {
			var tok string
			tok, v, _ = strings.Cut(v, ",")
			base, _, _ := strings.Cut(tok, ";")
			switch base = strings.TrimSpace(base); {
			case lowerIs(base, "application/json"), lowerIs(base, "application/*"):
				jsonOK = true
			case lowerIs(base, "text/event-stream"), lowerIs(base, "text/*"):
				streamOK = true
			case base == "*/*":
				jsonOK, streamOK = true, true
			}
		}
	}
	return jsonOK && streamOK
}

// lowerIs reports whether s is want, a lower-case ASCII media type, but
// for the case of its ASCII letters, without making a lower-case copy. It
// is stricter than strings.ToLower, which also lowers İ to i: a header
// spelled so is not taken here and goes to the SDK, the reference.
func lowerIs(s, want string) bool {
	if len(s) != len(want) {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != want[i] {
			return false
		}
	}
	return true
}

// serveFast answers c on the fast path and reports true, or reports false
// having written nothing, for the SDK to answer.
func serveFast(ctx context.Context, a *agent.Agent, w http.ResponseWriter, r *http.Request, c rpcCall) bool {
	if !c.plain || !a.Has(c.tool) || !fastHeaders(r) {
		return false
	}
	// The payload is lent: it is copied into the answer below and handed
	// back before anything is written.
	call := agent.Call{Publisher: agent.PublisherOf(ctx), Args: c.args, Doc: c.doc, Transport: "mcp", Authorization: r.Header.Get("Authorization"), Lent: true}
	reply, err := a.Dispatch(ctx, c.tool, call)
	if err != nil {
		// Has said the tool is there; a tool that has gone is the SDK's
		// unknown tool, which nothing has been written for yet.
		return false
	}
	buf := answers.Get().(*[]byte)
	defer answers.Put(buf)
	out, err := appendAnswer((*buf)[:0], c.id, reply)
	if reply.Release != nil {
		reply.Release()
		reply = agent.Reply{}
	}
	if err != nil {
		a.Log.Error("encoding an MCP answer failed", "tool", c.tool, "err", err)
		out, _ = appendAnswer((*buf)[:0], c.id, a.InternalReply(c.args))
	}
	*buf = out
	hd := w.Header()
	// Set as Header.Set sets them, from values that are never changed.
	hd["Cache-Control"], hd["Content-Type"] = noCache, jsonType
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(out)
	return true
}

var answers = sync.Pool{New: func() any { return new([]byte) }}

// The fast path's answer headers, the SDK's, shared by every answer: no
// code changes a header's values in place, and net/http copies them
// when the header is written.
var noCache, jsonType = []string{"no-cache, no-transform"}, []string{"application/json"}

// appendAnswer appends to out the JSON-RPC response to id carrying reply
// as the tool result Result builds: _meta, the payload as text, the
// payload as structuredContent, and isError for the failed arm; in the
// order and spelling of the SDK's encoder, which compacts raw JSON and
// escapes <, > and & in strings as encoding/json does.
func appendAnswer(out []byte, id json.RawMessage, reply agent.Reply) ([]byte, error) {
	// The text mirror is the payload escaped, a little longer than it.
	if need := 2*len(reply.Payload) + len(reply.Payload)/8 + 256; cap(out)-len(out) < need {
		out = append(make([]byte, 0, len(out)+need), out...)
	}
	out = append(out, `{"jsonrpc":"2.0","id":`...)
	out = append(out, id...)
	out = append(out, `,"result":{`...)
	if m := agent.MetaOf(reply); !m.IsZero() {
		// Meta's members are declared in the order of their names, as
		// the SDK writes the map Result makes of them.
		meta, err := json.Marshal(m)
		if err != nil {
			return out, err
		}
		out = append(out, `"_meta":`...)
		out = append(out, meta...)
		out = append(out, ',')
	}
	out = append(out, `"content":[{"type":"text","text":`...)
	out = jsonesc.AppendQuotedSpans(out, reply.Payload, reply.Escaped)
	out = append(out, `}],"structuredContent":`...)
	if reply.Compact || jsonesc.Compact(reply.Payload) {
		out = append(out, reply.Payload...)
	} else {
		b := bytes.NewBuffer(out)
		if err := json.Compact(b, reply.Payload); err != nil {
			return b.Bytes(), err
		}
		out = b.Bytes()
	}
	if reply.Failed {
		out = append(out, `,"isError":true`...)
	}
	return append(out, "}}"...), nil
}
