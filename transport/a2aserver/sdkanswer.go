package a2aserver

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/errordetails"

	"github.com/storefront/storefront/internal/jsonobj"
	"github.com/storefront/storefront/internal/jsonrpc"
)

// invalidParams is JSON-RPC's code for params a method cannot take.
const invalidParams = -32602

// sdkAnswer holds what a2a-go writes for one request until it has been
// read over (answer), so that nothing of a2a-go's own reaches the buyer:
//
//   - A JSON-RPC error a2a-go raises itself, before any method of the
//     handler runs (a body it cannot decode, params of the wrong shape, a
//     panic in its decoding), carries err.Error() of whatever failed, which
//     for a decoding failure is encoding/json's sentence naming Go types
//     and struct fields ("cannot unmarshal number 1e400 into Go struct
//     field Message.message.parts.data of type float64"). Its message is
//     replaced with the storefront's own sentence, and a decoding failure
//     gets the code the request itself earns (sdkRefusal): a2a-go calls every
//     failure that is not a type error a parse error, valid JSON included
//     (params missing, a part of no known kind), and a type error anywhere
//     invalid params, the envelope's own members included.
//   - Every JSON-RPC error a2a-go writes carries an ErrorInfo whose
//     timestamp a2a-go takes from the system clock; it is restamped with
//     the agent's, the one clock every time the storefront shows comes
//     from.
//
// Errors the handler returns keep their message: the handler wrote it.
// Answers that are not errors pass through byte for byte. Nothing
// streams (the handler answers every streaming method with one error
// event), so holding an event stream until it ends delays nothing.
type sdkAnswer struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (a *sdkAnswer) Header() http.Header { return a.header }

func (a *sdkAnswer) WriteHeader(code int) {
	if a.status == 0 {
		a.status = code
	}
}

func (a *sdkAnswer) Write(b []byte) (int, error) {
	if a.status == 0 {
		a.status = http.StatusOK
	}
	return a.body.Write(b)
}

// Flush is for a2a-go's event-stream writer, which needs a flusher; the
// events go out when answer does.
func (a *sdkAnswer) Flush() {}

// answer writes what a2a-go wrote to w, read over as sdkAnswer says:
// reached reports whether a method of the handler ran, now is the agent's
// clock.
func (a *sdkAnswer) answer(w http.ResponseWriter, req []byte, reached bool, now time.Time) error {
	body := a.body.Bytes()
	x := readOver{req: req, reached: reached, now: now}
	if strings.HasPrefix(a.header.Get("Content-Type"), "text/event-stream") {
		body = x.eventStream(body)
	} else {
		body = x.rewrite(body)
	}
	if a.status == 0 {
		a.status = http.StatusOK
	}
	w.WriteHeader(a.status)
	_, err := w.Write(body)
	return err
}

// readOver is what answer reads a2a-go's output over with: the request
// body, whether the handler was reached, and the agent's clock.
type readOver struct {
	req     []byte
	reached bool
	now     time.Time
}

// eventStream reads over each event's data line of an event stream.
func (x readOver) eventStream(body []byte) []byte {
	var out bytes.Buffer
	for line := range bytes.Lines(body) {
		data, ok := bytes.CutPrefix(line, []byte("data: "))
		if !ok {
			out.Write(line)
			continue
		}
		end := len(data) - len(bytes.TrimRight(data, "\r\n"))
		out.WriteString("data: ")
		out.Write(bytes.TrimRight(x.rewrite(data[:len(data)-end]), "\n"))
		out.Write(data[len(data)-end:])
	}
	return out.Bytes()
}

// rewrite returns body, one JSON-RPC answer and perhaps a newline, with
// its error read over: its own message kept when the handler was reached,
// the storefront's code and sentence otherwise, and the timestamp of its
// ErrorInfo set to now. Any other body is returned as it is.
func (x readOver) rewrite(body []byte) []byte {
	if !bytes.Contains(body, []byte(`"error":`)) {
		return body // no error: not decoded at all
	}
	var answer struct {
		ID    json.RawMessage `json:"id"`
		Error *struct {
			Code    int             `json:"code"`
			Message string          `json:"message"`
			Data    json.RawMessage `json:"data"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &answer) != nil || answer.Error == nil {
		return body
	}
	e := answer.Error
	code, message := e.Code, e.Message
	if !x.reached {
		code, message = sdkRefusal(x.req, e.Code)
	}
	var data any
	if len(e.Data) > 0 && json.Unmarshal(e.Data, &data) == nil {
		restamp(data, x.now.UTC().Format(time.RFC3339), reasonOf(code))
	}
	out := jsonrpc.Error(answer.ID, code, message, data)
	if bytes.HasSuffix(body, []byte("\n")) {
		out = append(out, '\n')
	}
	return out
}

// reasonOf is the ErrorInfo reason a2a-go gives the JSON-RPC code, or ""
// for one whose reason sdkRefusal never changes.
func reasonOf(code int) string {
	switch code {
	case jsonrpc.ParseError:
		return a2a.ErrorReason(a2a.ErrParseError)
	case jsonrpc.InvalidRequest:
		return a2a.ErrorReason(a2a.ErrInvalidRequest)
	case invalidParams:
		return a2a.ErrorReason(a2a.ErrInvalidParams)
	}
	return ""
}

// restamp sets the timestamp of every ErrorInfo's metadata in v, decoded
// JSON, to ts, and its reason to reason unless that is "".
func restamp(v any, ts, reason string) {
	switch v := v.(type) {
	case []any:
		for _, e := range v {
			restamp(e, ts, reason)
		}
	case map[string]any:
		if _, ok := v["reason"]; ok && reason != "" && v["@type"] == errordetails.ErrorInfoType {
			v["reason"] = reason
		}
		if meta, ok := v["metadata"].(map[string]any); ok {
			if _, ok := meta["timestamp"]; ok {
				meta["timestamp"] = ts
			}
		}
	}
}

// sdkRefusal is the code and sentence the buyer reads for a JSON-RPC error
// of code a2a-go raised before the handler ran, for the request req. A
// decoding failure (a2a-go's parse error, invalid params or invalid
// request) is named from the request itself: not JSON, not a JSON-RPC
// request, or params the method cannot take.
func sdkRefusal(req []byte, code int) (int, string) {
	switch code {
	case jsonrpc.MethodNotFound:
		return code, "Method not found"
	case jsonrpc.InternalError:
		return code, "internal error"
	case jsonrpc.ParseError, jsonrpc.InvalidRequest, invalidParams:
	default:
		return code, "the request could not be read"
	}
	if !json.Valid(req) {
		return jsonrpc.ParseError, "Parse error: the body is not valid JSON"
	}
	m, _ := jsonobj.Members(req)
	if m == nil {
		return jsonrpc.InvalidRequest, "Invalid Request: the body must be one JSON-RPC 2.0 request object (batches are not served)"
	}
	if v, ok := jsonobj.String(m["jsonrpc"]); !ok || v != "2.0" {
		return jsonrpc.InvalidRequest, `Invalid Request: jsonrpc must be "2.0"`
	}
	if method, ok := jsonobj.String(m["method"]); !ok || method == "" {
		return jsonrpc.InvalidRequest, "Invalid Request: method must be a non-empty string"
	}
	if id, has := m["id"]; has && !jsonrpc.ValidID(id) {
		return jsonrpc.InvalidRequest, "Invalid Request: id must be a string, a number or null"
	}
	if code == jsonrpc.InvalidRequest {
		return code, "Invalid Request: the body is not a JSON-RPC 2.0 request this endpoint serves"
	}
	return invalidParams, "Invalid params: params are missing or do not have the shape the method's A2A request takes (a member of the wrong JSON type, a part of no known kind, or a number out of range)"
}
