package a2aserver

import (
	"encoding/json"
	"net/http"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/errordetails"
	"github.com/labstack/echo/v4"

	"github.com/storefront/storefront/agent"
	"github.com/storefront/storefront/internal/rpcauth"
	"github.com/storefront/storefront/outcome"
)

// unauthenticatedCode is A2A's JSON-RPC code for a call without valid
// credentials. A2A 0.3 has none of its own; the HTTP status is the signal
// there, and the same body is sent.
const unauthenticatedCode = -31401

// authMeta is the ErrorInfo metadata of an admission refusal: the AdCP
// error code, so a client tells AUTH_INVALID from AUTH_MISSING.
func authMeta(e outcome.Error) map[string]string {
	return map[string]string{"adcp_error_code": string(e.Code)}
}

// authError is the A2A error for an admission refusal, naming the AdCP
// error code in its ErrorInfo metadata.
func authError(err error) error {
	e := agent.AuthError(err)
	return a2a.NewError(a2a.ErrUnauthenticated, e.Message.String()).WithErrorInfoMeta(authMeta(e))
}

// unauthenticated writes the 401 for credentials that name no principal,
// before a2a-go reads the call, with the ErrorInfo a2a-go would attach to
// authError (reason UNAUTHENTICATED, the A2A domain, the AdCP code).
func unauthenticated(w http.ResponseWriter, realm string, id json.RawMessage, err error) error {
	e := agent.AuthError(err)
	info := errordetails.NewErrorInfo(a2a.ErrorReason(a2a.ErrUnauthenticated), a2a.ProtocolDomain, authMeta(e))
	rpcauth.Refuse(w, realm, id, unauthenticatedCode, e.Message.String(), []*errordetails.Typed{info}, err)
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
