// Package jsonrpc holds what the storefront's two JSON-RPC surfaces (MCP
// and A2A) share before their SDKs see a request: naming the call a body
// starts with, even a body cut short, and writing a JSON-RPC error for a
// request refused at the door.
package jsonrpc

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"unicode/utf8"
)

// JSON-RPC's own error codes for a request refused at the door.
const (
	ParseError     = -32700
	InvalidRequest = -32600
	MethodNotFound = -32601
	InternalError  = -32603
)

// Call is what a refusal needs of the JSON-RPC request a body starts with.
type Call struct {
	// ID is the request id, when it is a string or a number.
	ID json.RawMessage
	// Method is the JSON-RPC method.
	Method string
	// Tool is the MCP tools/call name (params.name) or the A2A skill
	// (params.message.parts[].data.skill).
	Tool string
}

// Peek names the call body starts with, reading only as far as the body is
// well formed: it tolerates a body cut short, as an oversized one is. A
// batch names no call.
func Peek(body []byte) Call {
	var c Call
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	// path holds the object keys and array markers ("[]") down to the
	// current value; key is the pending key of the innermost object.
	var path []string
	key, inObject := "", []bool{}
	for {
		tok, err := dec.Token()
		if err != nil {
			return c
		}
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{', '[':
				if len(inObject) == 0 && t == '[' {
					return c // a batch
				}
				if len(inObject) > 0 {
					if inObject[len(inObject)-1] {
						path = append(path, key)
					} else {
						path = append(path, "[]")
					}
				}
				inObject = append(inObject, t == '{')
			case '}', ']':
				inObject = inObject[:len(inObject)-1]
				if len(path) > 0 {
					path = path[:len(path)-1]
				}
			}
			key = ""
			continue
		}
		if len(inObject) > 0 && inObject[len(inObject)-1] && key == "" {
			key, _ = tok.(string)
			continue
		}
		c.note(path, key, tok)
		key = ""
	}
}

// note records a scalar value at path.key when it is one Call names.
func (c *Call) note(path []string, key string, v json.Token) {
	s, isString := v.(string)
	switch {
	case len(path) == 0 && key == "id":
		switch id := v.(type) {
		case string:
			c.ID, _ = json.Marshal(id)
		case json.Number:
			c.ID = json.RawMessage(id.String())
		}
	case len(path) == 0 && key == "method" && isString:
		c.Method = s
	case key == "name" && isString && len(path) == 1 && path[0] == "params":
		c.Tool = s
	case key == "skill" && isString && len(path) == 5 && path[0] == "params" && path[1] == "message" &&
		path[2] == "parts" && path[3] == "[]" && path[4] == "data":
		c.Tool = s
	}
}

// plainID is an id every JSON-RPC decoder the storefront sits in front of
// writes back exactly as it was sent, whether it reads ids as float64 and
// strings (the MCP SDK, a2a-go) or as raw JSON: an integer a float64 holds
// exactly, or a string of characters JSON never escapes.
//
// As a pattern, ^(-?(0|[1-9][0-9]{0,14})|"[A-Za-z0-9._:~-]{1,128}")$;
// PlainID matches it by hand, on every request.

// PlainID reports whether id, raw JSON, is such an id: a fast path that
// echoes it as sent answers exactly as the SDK behind it would.
func PlainID(id json.RawMessage) bool {
	if len(id) == 0 {
		return false
	}
	if id[0] == '"' {
		body := id[1:]
		if len(body) < 2 || len(body) > 129 || body[len(body)-1] != '"' {
			return false
		}
		for _, c := range body[:len(body)-1] {
			if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == ':' || c == '~' || c == '-') {
				return false
			}
		}
		return true
	}
	digits := id
	if digits[0] == '-' {
		digits = digits[1:]
	}
	if len(digits) == 0 || len(digits) > 15 || (digits[0] == '0' && len(digits) > 1) {
		return false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// Error is the JSON-RPC error response to the request id (null when
// unknown) with code, message and data (left out when nil).
func Error(id json.RawMessage, code int, message string, data any) []byte {
	e := struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
			Data    any    `json:"data,omitempty"`
		} `json:"error"`
	}{JSONRPC: "2.0", ID: id}
	if len(e.ID) == 0 {
		e.ID = json.RawMessage("null")
	}
	e.Error.Code, e.Error.Message, e.Error.Data = code, message, data
	body, err := json.Marshal(e)
	if err != nil {
		e.Error.Data = nil
		body, _ = json.Marshal(e)
	}
	return body
}

// Write writes body, a JSON-RPC answer, with status.
func Write(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// WriteError writes the JSON-RPC error response Error makes, with status.
func WriteError(w http.ResponseWriter, status int, id json.RawMessage, code int, message string, data any) {
	Write(w, status, Error(id, code, message, data))
}

// Unreadable says why a JSON-RPC body holds text no request may carry, with
// the JSON-RPC code to refuse it with, or code 0 when it holds none: bytes
// that are not UTF-8 (a JSON text is UTF-8, RFC 8259 section 8.1: not
// JSON, so a parse error), and in a string an escaped lone surrogate
// (\ud800 names no character) or an escaped NUL (no AdCP field holds one,
// and PostgreSQL cannot store one), which are invalid requests. Whatever a
// decoder would make of them (U+FFFD, a NUL a store refuses later), the
// request is refused whole, before any method reads it.
func Unreadable(body []byte) (code int, message string) {
	if !utf8.Valid(body) {
		return ParseError, "Parse error: the body is not valid UTF-8"
	}
	inString := false
	for i := 0; i < len(body); i++ {
		c := body[i]
		if !inString {
			inString = c == '"'
			continue
		}
		switch c {
		case '"':
			inString = false
		case '\\':
			if i+1 >= len(body) {
				return 0, ""
			}
			if body[i+1] != 'u' {
				i++
				continue
			}
			r, ok := hex4(body, i+2)
			if !ok {
				return 0, "" // not JSON: the parser says so
			}
			i += 5
			switch {
			case r == 0:
				return InvalidRequest, "Invalid Request: a string holds an escaped NUL character"
			case r >= 0xDC00 && r <= 0xDFFF:
				return InvalidRequest, "Invalid Request: a string holds an escaped lone surrogate, which is no character"
			case r >= 0xD800 && r <= 0xDBFF:
				low, ok := -1, i+6 < len(body) && body[i+1] == '\\' && body[i+2] == 'u'
				if ok {
					var r2 rune
					r2, ok = hex4(body, i+3)
					low = int(r2)
				}
				if !ok || low < 0xDC00 || low > 0xDFFF {
					return InvalidRequest, "Invalid Request: a string holds an escaped lone surrogate, which is no character"
				}
				i += 6
			}
		}
	}
	return 0, ""
}

// hex4 reads the four hex digits at b[at:].
func hex4(b []byte, at int) (rune, bool) {
	if at+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[at : at+4] {
		var d byte
		switch {
		case c >= '0' && c <= '9':
			d = c - '0'
		case c >= 'a' && c <= 'f':
			d = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			d = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(d)
	}
	return r, true
}

// ValidID reports whether raw is a JSON-RPC id: a string, a number or
// null. A number must be one the SDKs read as a float64: one past its
// range (1e400) is no id they could answer to.
func ValidID(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return false
	}
	if PlainID(raw) {
		return true // a plain id is an id
	}
	switch raw[0] {
	case '"':
		var s string
		return json.Unmarshal(raw, &s) == nil
	case 'n':
		return string(raw) == "null"
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		var n json.Number
		if json.Unmarshal(raw, &n) != nil {
			return false
		}
		_, err := strconv.ParseFloat(string(n), 64)
		return err == nil
	}
	return false
}
