package mcpserver

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"math/bits"
	"mime"
	"net/http"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/storefront/storefront/agent"
	"github.com/storefront/storefront/internal/jsonrpc"
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
func plainCall(c rpcCall, p map[string]json.RawMessage) bool {
	if c.id == nil || !jsonrpc.PlainID(c.id) || c.tool == "tools/call" {
		return false
	}
	for k := range p {
		if k != "name" && k != "arguments" {
			return false
		}
	}
	if a, ok := p["arguments"]; ok {
		a = bytes.TrimSpace(a)
		return len(a) > 0 && a[0] == '{'
	}
	return true
}

// fastHeaders reports whether the SDK would take r's headers as they are
// and read nothing from them but the protocol version: a JSON body, an
// Accept it serves (after Handler's widening of a JSON-only Accept), an
// old protocol version or none, and no session, origin or fetch metadata.
func fastHeaders(r *http.Request) bool {
	h := r.Header
	if mt, _, err := mime.ParseMediaType(h.Get("Content-Type")); err != nil || mt != "application/json" {
		return false
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
		for _, tok := range strings.Split(v, ",") {
			base, _, _ := strings.Cut(tok, ";")
			switch strings.ToLower(strings.TrimSpace(base)) {
			case "application/json", "application/*":
				jsonOK = true
			case "text/event-stream", "text/*":
				streamOK = true
			case "*/*":
				jsonOK, streamOK = true, true
			}
		}
	}
	return jsonOK && streamOK
}

// serveFast answers c on the fast path and reports true, or reports false
// having written nothing, for the SDK to answer.
func serveFast(ctx context.Context, a *agent.Agent, w http.ResponseWriter, r *http.Request, c rpcCall) bool {
	if !c.plain || !a.Has(c.tool) || !fastHeaders(r) {
		return false
	}
	call := agent.Call{Publisher: agent.PublisherOf(ctx), Args: c.args, Transport: "mcp", Authorization: r.Header.Get("Authorization")}
	reply, err := a.Dispatch(ctx, c.tool, call)
	if err != nil {
		// Has said the tool is there; a tool that has gone is the SDK's
		// unknown tool, which nothing has been written for yet.
		return false
	}
	buf := answers.Get().(*bytes.Buffer)
	defer answers.Put(buf)
	buf.Reset()
	if err := writeAnswer(buf, c.id, reply); err != nil {
		a.Log.Error("encoding an MCP answer failed", "tool", c.tool, "err", err)
		buf.Reset()
		_ = writeAnswer(buf, c.id, a.InternalReply(c.args))
	}
	hd := w.Header()
	hd.Set("Cache-Control", "no-cache, no-transform")
	hd.Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(buf.Bytes())
	return true
}

var answers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// writeAnswer writes the JSON-RPC response to id carrying reply as the
// tool result Result builds: _meta, the payload as text, the payload as
// structuredContent, and isError for the failed arm; in the order and
// spelling of the SDK's encoder, which compacts raw JSON and escapes <, >
// and & in strings as encoding/json does.
func writeAnswer(buf *bytes.Buffer, id json.RawMessage, reply agent.Reply) error {
	buf.WriteString(`{"jsonrpc":"2.0","id":`)
	buf.Write(id)
	buf.WriteString(`,"result":{`)
	if m := agent.MetaOf(reply); !m.IsZero() {
		// Meta's members are declared in the order of their names, as
		// the SDK writes the map Result makes of them.
		meta, err := json.Marshal(m)
		if err != nil {
			return err
		}
		buf.WriteString(`"_meta":`)
		buf.Write(meta)
		buf.WriteByte(',')
	}
	buf.WriteString(`"content":[{"type":"text","text":`)
	writeString(buf, reply.Payload)
	buf.WriteString(`}],"structuredContent":`)
	if reply.Compact || compact(reply.Payload) {
		buf.Write(reply.Payload)
	} else if err := json.Compact(buf, reply.Payload); err != nil {
		return err
	}
	if reply.Failed {
		buf.WriteString(`,"isError":true`)
	}
	buf.WriteString("}}")
	return nil
}

// compact reports whether b, valid JSON, has no whitespace outside its
// strings, as the encoder's output never has: then it is its own
// compacted form and is written as it is.
func compact(b []byte) bool {
	in := false
	for i := 0; i < len(b); i++ {
		if in {
			// Inside a string only a quote or a backslash matters.
			if i = skipWords(b, i, quoteOrBackslash); i == len(b) {
				break
			}
		}
		c := b[i]
		if in {
			switch c {
			case '\\':
				i++
			case '"':
				in = false
			}
			continue
		}
		switch c {
		case '"':
			in = true
		case ' ', '\t', '\n', '\r':
			return false
		}
	}
	return true
}

const hexDigits = "0123456789abcdef"

// plain marks the ASCII bytes a JSON string holds as they are: not a
// control character, a quote, a backslash or one of <, > and &.
var plain = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = !strings.ContainsRune(`"\<>&`, rune(c))
	}
	return t
}()

const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// unplain flags, in the high bit of each byte of w, the bytes that are not
// plain: a control character, one of ", \\, <, > and &, or a byte of a
// multi-byte character. A flag can be false above a true one (a borrow),
// never below it: the lowest is always right, which is all writeString
// reads.
func unplain(w uint64) uint64 {
	q, bs, lt, gt, amp := w^('"'*ones), w^('\\'*ones), w^('<'*ones), w^('>'*ones), w^('&'*ones)
	return (w | (w-0x20*ones)&^w |
		(q-ones)&^q | (bs-ones)&^bs | (lt-ones)&^lt | (gt-ones)&^gt | (amp-ones)&^amp) & highs
}

// quoteOrBackslash flags, as unplain does, the quotes and backslashes of w.
func quoteOrBackslash(w uint64) uint64 {
	q, bs := w^('"'*ones), w^('\\'*ones)
	return ((q-ones)&^q | (bs-ones)&^bs) & highs
}

// skipWords returns where, from i, the first byte flags (unplain or
// quoteOrBackslash) flags is, reading b eight bytes at a time; when no
// whole word is left it returns where it got, len(b) when that is the end.
func skipWords(b []byte, i int, flags func(uint64) uint64) int {
	for ; i+8 <= len(b); i += 8 {
		if m := flags(binary.LittleEndian.Uint64(b[i:])); m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
	}
	return i
}

// writeString writes b as a JSON string exactly as encoding/json writes a
// Go string: ", \ and the control characters escaped, <, > and & as
// \u escapes, invalid UTF-8 as U+FFFD, and U+2028 and U+2029 escaped. It
// appends to the buffer's free space in one pass, runs of plain bytes
// copied at once.
func writeString(buf *bytes.Buffer, b []byte) {
	buf.Grow(len(b) + len(b)/8 + 2)
	out := append(buf.AvailableBuffer(), '"')
	start := 0
	for i := 0; i < len(b); {
		if i = skipWords(b, i, unplain); i == len(b) {
			break
		}
		c := b[i]
		if c < utf8.RuneSelf {
			if plain[c] {
				i++
				continue
			}
			out = append(out, b[start:i]...)
			switch c {
			case '"', '\\':
				out = append(out, '\\', c)
			case '\b':
				out = append(out, '\\', 'b')
			case '\f':
				out = append(out, '\\', 'f')
			case '\n':
				out = append(out, '\\', 'n')
			case '\r':
				out = append(out, '\\', 'r')
			case '\t':
				out = append(out, '\\', 't')
			default:
				out = append(out, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size == 1 {
			out = append(out, b[start:i]...)
			out = append(out, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			out = append(out, b[start:i]...)
			out = append(out, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	out = append(out, b[start:]...)
	buf.Write(append(out, '"'))
}
