package mcpserver

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/storefront/storefront/internal/jsonobj"
	"github.com/storefront/storefront/internal/jsonrpc"
	"github.com/storefront/storefront/jsonfield"
)

// rpcCall is what admission needs of one JSON-RPC message.
type rpcCall struct {
	id   json.RawMessage
	tool string // "" for a method that calls no tool
	args []byte
	// plain marks a tools/call the fast path may answer (fast.go): an id
	// it echoes as the SDK would, params of a name and arguments alone.
	plain bool
	// doc is args parsed, when the body was read as one message.
	doc *jsonfield.Value
}

// rpcCalls reads the JSON-RPC message or batch in a POST body. A body that
// is not JSON-RPC 2.0 gets, instead of calls, the answer JSON-RPC gives it
// (the SDK would answer plain text): a parse error (-32700, id null) for a
// body that is not JSON, an invalid request (-32600) for JSON that is not
// a message, and either for text no request may carry (jsonrpc.Unreadable:
// bytes that are not UTF-8, an escaped NUL or lone surrogate) outside a
// tool call's arguments. Such text inside them is the tool's to refuse, as
// VALIDATION_ERROR naming the field (toolText). A batch with an invalid
// member is answered whole and nothing in it runs: an invalid request for
// each invalid member, and one for each call beside them that says why it
// did not run.
//
// The calls' parsed arguments (doc) are carved from loan, which the caller
// returns once it has answered them; loan is nil when nothing was lent.
func rpcCalls(body []byte) (calls []rpcCall, refusal []byte, loan *jsonfield.Loan) {
	calls, refusal, loan = readCalls(body)
	if refusal != nil {
		// Nothing of a refused body is read again.
		loan.Return()
		loan = nil
	}
	return calls, refusal, loan
}

func readCalls(body []byte) (calls []rpcCall, refusal []byte, loan *jsonfield.Loan) {
	body = bytes.TrimSpace(body)
	code, why := jsonrpc.Unreadable(body)
	if code != 0 {
		if c, ok := toolText(body); ok {
			return []rpcCall{c}, nil, nil
		}
	}
	if code == jsonrpc.ParseError {
		return nil, jsonrpc.Error(nil, code, why, nil), nil
	} else if code != 0 && json.Valid(body) {
		return nil, jsonrpc.Error(jsonrpc.Peek(body).ID, code, why, nil), nil
	}
	// jsonfield accepts exactly what json.Valid does, and its parse is
	// the arguments' for the tool's door.
	doc, loan, err := jsonfield.ParseLent(body)
	if err != nil {
		return nil, jsonrpc.Error(nil, jsonrpc.ParseError, "Parse error: the body is not valid JSON", nil), loan
	}
	if loan.Depth() > MaxDepth {
		return nil, jsonrpc.Error(nil, jsonrpc.InvalidRequest, fmt.Sprintf("Invalid Request: the body nests more than %d levels deep", MaxDepth), nil), loan
	}
	if body[0] != '[' {
		c, why := message(doc)
		if why != "" {
			return nil, jsonrpc.Error(c.id, jsonrpc.InvalidRequest, "Invalid Request: "+why, nil), loan
		}
		return []rpcCall{c}, nil, loan
	}
	members := doc.Kids() // valid JSON that opens an array is one
	if len(members) == 0 {
		return nil, jsonrpc.Error(nil, jsonrpc.InvalidRequest, "Invalid Request: the batch is empty", nil), loan
	}
	whys := make([]string, len(members))
	bad := false
	for i, m := range members {
		var c rpcCall
		c, whys[i] = message(m)
		c.plain = false // a batch is the SDK's to answer
		calls = append(calls, c)
		bad = bad || whys[i] != ""
	}
	if !bad {
		return calls, nil, loan
	}
	var answers []json.RawMessage
	for i, c := range calls {
		switch {
		case whys[i] != "":
			answers = append(answers, jsonrpc.Error(c.id, jsonrpc.InvalidRequest, "Invalid Request: "+whys[i], nil))
		case c.id != nil:
			answers = append(answers, jsonrpc.Error(c.id, jsonrpc.InvalidRequest, "Invalid Request: another member of this batch is invalid, so none of it ran", nil))
		}
	}
	b, _ := json.Marshal(answers)
	return nil, b, loan
}

// message reads one JSON-RPC 2.0 message, v, from its parse: a request or
// notification, or a response (a client answering the server). It reads
// each member as json.Unmarshal reads an object into a map of raw
// messages: a name given twice holds its last value. It returns why the
// message is invalid, or "". The call's id is set only when it is a valid
// id, so that an answer can name it.
func message(v jsonfield.Value) (c rpcCall, why string) {
	if !v.IsObject() {
		return c, "a message must be a JSON object"
	}
	if id, has := v.Lookup("id"); has {
		if !jsonrpc.ValidID(id.Raw()) {
			return c, "id must be a string, a number or null"
		}
		c.id = id.Raw()
	}
	if ok, is := jsonobj.Is(raw(v, "jsonrpc"), "2.0"); !ok || !is {
		return c, `jsonrpc must be "2.0"`
	}
	rawMethod, isRequest := v.Lookup("method")
	if !isRequest {
		_, result := v.Lookup("result")
		_, failure := v.Lookup("error")
		if c.id == nil || result == failure {
			return c, "a message needs a method, or an id and one of result or error"
		}
		return c, ""
	}
	ok, toolCall := jsonobj.Is(rawMethod.Raw(), "tools/call")
	if !ok {
		return c, "method must be a string"
	}
	params, _ := v.Lookup("params")
	if k := params.Kind(); len(params.Raw()) > 0 && k != jsonfield.Obj && k != jsonfield.Arr && k != jsonfield.Null {
		return c, "params must be an object or an array"
	}
	if toolCall {
		// A call that names no tool is still a tool call: it is not
		// public discovery.
		c.tool = "tools/call"
		// Member names are matched exactly, as the SDK matches them: a
		// struct would take "NAME" for "name" and admit a call by a name
		// the SDK never dispatches.
		if k := params.Kind(); len(params.Raw()) > 0 && (k == jsonfield.Obj || k == jsonfield.Null) {
			if name, ok := jsonobj.String(raw(params, "name")); ok && name != "" {
				c.tool = name
			}
			if a, ok := params.Lookup("arguments"); ok {
				c.args, c.doc = a.Raw(), &a
			}
			c.plain = plainCall(c, params)
		}
	}
	return c, ""
}

// raw is the bytes of o's member k, nil when o has none.
func raw(o jsonfield.Value, k string) []byte {
	v, _ := o.Lookup(k)
	return v.Raw()
}

// MaxDepth is how deeply a request's JSON may nest. No AdCP request comes
// near it; the SDK's own decoder refuses deeper bodies in plain text.
const MaxDepth = 512

// nestedDeeperThan reports whether valid JSON nests arrays and objects more
// than limit levels deep, without decoding it.
func nestedDeeperThan(body []byte, limit int) bool {
	depth, inString, escaped := 0, false, false
	for _, c := range body {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '[' || c == '{':
			if depth++; depth > limit {
				return true
			}
		case c == ']' || c == '}':
			depth--
		}
	}
	return false
}

// toolText reads a single tools/call of a named tool whose unreadable text
// lies only inside its arguments: everything else of the message (the
// envelope, the id, the method, the tool's name and any other params) is
// readable. The call then goes on to the tool, whose decoder refuses the
// text naming its field, as it does whoever dispatches it.
func toolText(body []byte) (rpcCall, bool) {
	if len(body) == 0 || body[0] != '{' || !json.Valid(body) || nestedDeeperThan(body, MaxDepth) {
		return rpcCall{}, false
	}
	var m, p map[string]json.RawMessage
	if json.Unmarshal(body, &m) != nil || json.Unmarshal(m["params"], &p) != nil {
		return rpcCall{}, false
	}
	readable := func(parts map[string]json.RawMessage, except string) bool {
		for k, raw := range parts {
			if code, _ := jsonrpc.Unreadable([]byte(k)); code != 0 && k != except {
				return false
			}
			if code, _ := jsonrpc.Unreadable(raw); code != 0 && k != except {
				return false
			}
		}
		return true
	}
	if !readable(m, "params") || !readable(p, "arguments") {
		return rpcCall{}, false
	}
	doc, err := jsonfield.Parse(body)
	if err != nil {
		return rpcCall{}, false
	}
	c, why := message(doc)
	if why != "" || c.tool == "" || c.tool == "tools/call" {
		return rpcCall{}, false
	}
	return c, true
}
