package a2aserver

import (
	"encoding/json"
	"net/http"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/labstack/echo/v4"

	"github.com/storefront/storefront/agent"
	"github.com/storefront/storefront/internal/rpcauth"
)

// unauthenticatedCode is A2A's JSON-RPC code for a call without valid
// credentials. A2A 0.3 has none of its own; the HTTP status is the signal
// there, and the same body is sent.
const unauthenticatedCode = -31401

// authError is the A2A error for an admission refusal, naming the AdCP
// error code in its ErrorInfo metadata.
func authError(err error) error {
	e := agent.AuthError(err)
	return a2a.NewError(a2a.ErrUnauthenticated, e.Message.String()).
		WithErrorInfoMeta(map[string]string{"adcp_error_code": string(e.Code)})
}

// unauthenticated writes the 401 for credentials that name no principal,
// before a2a-go reads the call.
func unauthenticated(w http.ResponseWriter, realm string, id json.RawMessage, err error) error {
	rpcauth.Refuse(w, realm, id, unauthenticatedCode, agent.AuthError(err).Message.String(), nil, err)
	return nil
}

// challengeWriter lets the handler turn the JSON-RPC answer a2a-go writes
// into a 401 with a challenge: a call refused for missing credentials is
// known only once its invocation is parsed, after the status would
// otherwise be 200.
type challengeWriter struct {
	*echo.Response
	challenge string
}

// refuse marks the response as an authentication refusal.
func (w *challengeWriter) refuse(realm string, err error) {
	w.challenge = rpcauth.Challenge(realm, err)
}

func (w *challengeWriter) WriteHeader(code int) {
	if w.challenge != "" && code == http.StatusOK {
		w.Header().Set("WWW-Authenticate", w.challenge)
		code = http.StatusUnauthorized
	}
	w.Response.WriteHeader(code)
}

func (w *challengeWriter) Write(b []byte) (int, error) {
	if !w.Response.Committed {
		w.WriteHeader(http.StatusOK)
	}
	return w.Response.Write(b)
}
