package a2aserver

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"time"

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
//     replaced with the storefront's own sentence for the code.
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
func (a *sdkAnswer) answer(w http.ResponseWriter, reached bool, now time.Time) error {
	body := a.body.Bytes()
	if strings.HasPrefix(a.header.Get("Content-Type"), "text/event-stream") {
		body = eventStream(body, reached, now)
	} else {
		body = rewriteError(body, reached, now)
	}
	if a.status == 0 {
		a.status = http.StatusOK
	}
	w.WriteHeader(a.status)
	_, err := w.Write(body)
	return err
}

// eventStream reads over each event's data line of an event stream.
func eventStream(body []byte, reached bool, now time.Time) []byte {
	var out bytes.Buffer
	for line := range bytes.Lines(body) {
		data, ok := bytes.CutPrefix(line, []byte("data: "))
		if !ok {
			out.Write(line)
			continue
		}
		end := len(data) - len(bytes.TrimRight(data, "\r\n"))
		out.WriteString("data: ")
		out.Write(bytes.TrimRight(rewriteError(data[:len(data)-end], reached, now), "\n"))
		out.Write(data[len(data)-end:])
	}
	return out.Bytes()
}

// rewriteError returns body, one JSON-RPC answer and perhaps a newline,
// with its error read over: its own message kept when the handler was
// reached, the storefront's sentence for its code otherwise, and the
// timestamp of its ErrorInfo set to now. Any other body is returned as it
// is.
func rewriteError(body []byte, reached bool, now time.Time) []byte {
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
	message := e.Message
	if !reached {
		message = sdkErrorSentence(e.Code)
	}
	var data any
	if len(e.Data) > 0 && json.Unmarshal(e.Data, &data) == nil {
		restamp(data, now.UTC().Format(time.RFC3339))
	}
	out := jsonrpc.Error(answer.ID, e.Code, message, data)
	if bytes.HasSuffix(body, []byte("\n")) {
		out = append(out, '\n')
	}
	return out
}

// restamp sets the timestamp of every ErrorInfo's metadata in v, decoded
// JSON, to ts.
func restamp(v any, ts string) {
	switch v := v.(type) {
	case []any:
		for _, e := range v {
			restamp(e, ts)
		}
	case map[string]any:
		if meta, ok := v["metadata"].(map[string]any); ok {
			if _, ok := meta["timestamp"]; ok {
				meta["timestamp"] = ts
			}
		}
	}
}

// sdkErrorSentence is what the buyer reads for a JSON-RPC error a2a-go
// raised before the handler ran, by its code.
func sdkErrorSentence(code int) string {
	switch code {
	case jsonrpc.ParseError:
		return "Parse error: the body is not valid JSON"
	case jsonrpc.InvalidRequest:
		return "Invalid Request: the body is not a JSON-RPC 2.0 request (jsonrpc \"2.0\", a string or number id, a method)"
	case jsonrpc.MethodNotFound:
		return "Method not found"
	case invalidParams:
		return "Invalid params: params do not have the shape the method's A2A request takes (a member of the wrong JSON type, or a number out of range)"
	case jsonrpc.InternalError:
		return "internal error"
	}
	return "the request could not be read"
}
