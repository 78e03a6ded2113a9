package mcpserver

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"

	"github.com/storefront/storefront/internal/jsonrpc"
	"github.com/storefront/storefront/internal/limit"
)

// maxRefusal is how much of a refusal's plain text is kept to classify it.
const maxRefusal = 4096

// jsonRefusals makes every refusal the SDK's HTTP handler would write in
// plain text (a wrong Content-Type or Accept, an unsupported
// MCP-Protocol-Version, an unknown method, a call without an id, a payload
// it cannot decode, a method it does not serve) a JSON-RPC error with the
// same HTTP status, addressed to the request's id when it has one, with
// the storefront's own sentence for the cause (sdkRefusal): never the
// SDK's text, which can name its internals. Answers the SDK writes as
// JSON, and successes, pass untouched.
func jsonRefusals(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rw := &refusalWriter{ResponseWriter: w}
		if r.Method == http.MethodPost && r.Body != nil {
			body, err := limit.ReadAll(r.Body)
			if err == nil {
				rw.id = jsonrpc.Peek(body).ID
				r.Body = limit.NewBuffered(body)
			} else {
				r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), r.Body))
			}
		}
		next.ServeHTTP(rw, r)
		rw.finish()
	})
}

// refusalWriter holds back a plain-text refusal to write it as JSON-RPC.
type refusalWriter struct {
	http.ResponseWriter
	id      json.RawMessage
	started bool
	// refusal is set when the status was a refusal not written as JSON.
	refusal bool
	status  int
	text    bytes.Buffer
}

func (w *refusalWriter) WriteHeader(status int) {
	if w.started {
		return
	}
	w.started = true
	ct := w.Header().Get("Content-Type")
	if status >= 400 && !strings.HasPrefix(ct, "application/json") {
		w.refusal, w.status = true, status
		return
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *refusalWriter) Write(b []byte) (int, error) {
	if !w.started {
		w.WriteHeader(http.StatusOK)
	}
	if w.refusal {
		if room := maxRefusal - w.text.Len(); room > 0 {
			w.text.Write(b[:min(len(b), room)])
		}
		return len(b), nil
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap keeps http.ResponseController (the SDK's flushes) working.
func (w *refusalWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *refusalWriter) finish() {
	if !w.refusal {
		return
	}
	h := w.Header()
	h.Del("Content-Length")
	h.Del("X-Content-Type-Options")
	code, message := sdkRefusal(w.status, w.text.String())
	jsonrpc.WriteError(w.ResponseWriter, w.status, w.id, code, message, nil)
}

// sdkRefusal is the JSON-RPC code and message for a refusal the SDK wrote
// with status and text.
func sdkRefusal(status int, text string) (int, string) {
	switch {
	case status == http.StatusUnsupportedMediaType:
		return jsonrpc.InvalidRequest, "Invalid Request: Content-Type must be application/json"
	case strings.HasPrefix(text, "Accept must contain"):
		return jsonrpc.InvalidRequest, "Invalid Request: Accept must include application/json"
	case strings.Contains(text, "Unsupported protocol version"), strings.Contains(text, "protocol version"):
		return jsonrpc.InvalidRequest, "Invalid Request: the MCP-Protocol-Version header names no version this server supports"
	case strings.HasPrefix(text, "JSON RPC not handled"), strings.Contains(text, "unsupported") && strings.Contains(text, "not handled"):
		return jsonrpc.MethodNotFound, "Method not found"
	case strings.Contains(text, "missing id"):
		return jsonrpc.InvalidRequest, "Invalid Request: a call needs an id"
	case strings.HasPrefix(text, "malformed payload"):
		return jsonrpc.InvalidRequest, "Invalid Request: the message is not a JSON-RPC 2.0 message this server can read"
	case strings.Contains(text, "batching is not supported"):
		return jsonrpc.InvalidRequest, "Invalid Request: batches are not supported at this MCP-Protocol-Version"
	case status == http.StatusMethodNotAllowed:
		return jsonrpc.InvalidRequest, "Invalid Request: this endpoint takes POST"
	case status == http.StatusRequestEntityTooLarge:
		return jsonrpc.InvalidRequest, "Invalid Request: the body is too large"
	case status == http.StatusNotFound:
		return jsonrpc.InvalidRequest, "Invalid Request: no such session"
	case status >= 500:
		return jsonrpc.InternalError, "Internal error"
	}
	return jsonrpc.InvalidRequest, "Invalid Request"
}
