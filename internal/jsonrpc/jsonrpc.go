// Package jsonrpc holds what the storefront's two JSON-RPC surfaces (MCP
// and A2A) share before their SDKs see a request: naming the call a body
// starts with, even a body cut short, and writing a JSON-RPC error for a
// request refused at the door.
package jsonrpc

import (
	"bytes"
	"encoding/json"
	"net/http"
)

// JSON-RPC's own error codes for a request refused at the door.
const (
	ParseError     = -32700
	InvalidRequest = -32600
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
