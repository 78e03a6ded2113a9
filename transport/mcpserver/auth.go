package mcpserver

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/storefront/storefront/agent"
	"github.com/storefront/storefront/internal/jsonrpc"
	"github.com/storefront/storefront/internal/limit"
	"github.com/storefront/storefront/internal/origin"
	"github.com/storefront/storefront/internal/recovery"
	"github.com/storefront/storefront/internal/rpcauth"
	"github.com/storefront/storefront/jsonfield"
	"github.com/storefront/storefront/outcome"
)

// AuthErrorCode is the JSON-RPC code AdCP reserves for a call refused for
// its credentials before tool dispatch; the AdCP error in data says which
// (AUTH_MISSING or AUTH_INVALID).
const AuthErrorCode = -32028

// Guard refuses, before the MCP SDK sees it, a request whose credentials
// fail (agent.Admit): an Authorization header that names no principal, on
// any request, and a tools/call without credentials for anything but
// public discovery. The refusal is HTTP 401 with a Bearer challenge whose
// realm is the URL called (and error="invalid_token" for bad
// credentials), and a JSON-RPC error carrying the AdCP error. Admitted
// requests reach next with their principal resolved. pol decides the
// origin the realm names, as for agent cards.
//
// Before admission, a POST body that is not JSON-RPC 2.0 is answered in
// JSON-RPC's own terms (see rpcCalls), where the SDK would answer plain
// text. And Guard is the MCP surface's recover boundary on the HTTP
// request's goroutine: a panic there, in admission or in the SDK, is
// answered as a JSON-RPC internal error (tool handlers run on the SDK's own
// goroutines, under Recover).
//
// A single tools/call of one of the agent's tools is answered on the fast
// path (fast.go) unless fast is false, when the SDK answers everything.
func Guard(a *agent.Agent, pol origin.Policy, fast bool, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tw := &trackedWriter{ResponseWriter: w}
		var id json.RawMessage
		if recovery.Run(r.Context(), a.Log, "mcp", "MCP "+r.Method, func() { guard(a, pol, fast, next, tw, r, &id) }) && !tw.wrote {
			jsonrpc.Write(w, http.StatusInternalServerError, jsonrpc.Error(id, jsonrpc.InternalError, "Internal error", nil))
		}
	})
}

// guard is Guard's work. It sets id to the id of the request it read, for
// an answer to a panic.
func guard(a *agent.Agent, pol origin.Policy, fast bool, next http.Handler, w http.ResponseWriter, r *http.Request, id *json.RawMessage) {
	calls := []rpcCall{{}}
	if r.Method == http.MethodPost {
		body, err := limit.ReadAll(r.Body)
		if err != nil {
			// The body limit's error; the SDK would fail the same way.
			http.Error(w, "request body too large", http.StatusRequestEntityTooLarge)
			return
		}
		r.Body = limit.Reread(r.Body, body)
		var refusal []byte
		var loan *jsonfield.Loan
		if calls, refusal, loan = rpcCalls(body); refusal != nil {
			jsonrpc.Write(w, http.StatusBadRequest, refusal)
			return
		}
		// The calls' parsed arguments are read only while this request
		// is answered: the fast path's tools copy what they keep.
		defer loan.Return()
		*id = calls[0].id
	}
	ctx := r.Context()
	auth := r.Header.Get("Authorization")
	for _, c := range calls {
		var err error
		if ctx, err = a.Admit(ctx, agent.PublisherOf(ctx), auth, c.tool, c.args); err != nil {
			challenge(w, pol.Of(r)+r.URL.EscapedPath(), c.id, err)
			return
		}
	}
	if fast && r.Method == http.MethodPost && len(calls) == 1 && serveFast(ctx, a, w, r, calls[0]) {
		return
	}
	next.ServeHTTP(w, r.WithContext(ctx))
}

// trackedWriter notes whether anything was written, so that a recovered
// panic is answered only if nothing was. Unwrap keeps
// http.ResponseController (and so the SDK's flushes) working through it.
type trackedWriter struct {
	http.ResponseWriter
	wrote bool
}

func (w *trackedWriter) WriteHeader(status int) { w.wrote = true; w.ResponseWriter.WriteHeader(status) }

func (w *trackedWriter) Write(b []byte) (int, error) {
	w.wrote = true
	return w.ResponseWriter.Write(b)
}

func (w *trackedWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// challenge writes the 401 for a refused request.
func challenge(w http.ResponseWriter, realm string, id json.RawMessage, err error) {
	message := "Authentication required"
	if errors.Is(err, agent.ErrCredentialsInvalid) {
		message = "Authentication failed"
	}
	rpcauth.Refuse(w, realm, id, AuthErrorCode, message, authData{AdcpError: agent.AuthError(err)}, err)
}

// authData is the refusal's error data: the AdCP error, where AdCP's
// transport error mapping reads it.
type authData struct {
	AdcpError outcome.Error `json:"adcp_error"`
}
