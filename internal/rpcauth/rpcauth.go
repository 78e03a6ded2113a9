// Package rpcauth writes the HTTP side of a call the agent refuses for its
// credentials (agent.Admit), the same for MCP and A2A: status 401, an RFC
// 6750 Bearer challenge whose realm is the URL called, and a JSON-RPC
// error. It decides nothing; the agent does.
package rpcauth

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/storefront/storefront/agent"
)

// Challenge is the WWW-Authenticate value for a refusal:
// error="invalid_token" for credentials that name no principal (RFC 6750
// section 3.1), a bare challenge for missing ones.
func Challenge(realm string, err error) string {
	v := `Bearer realm="` + realm + `"`
	if errors.Is(err, agent.ErrCredentialsInvalid) {
		v += `, error="invalid_token"`
	}
	return v
}

// rpcError is a JSON-RPC error response.
type rpcError struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Error   struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
		Data    any    `json:"data,omitempty"`
	} `json:"error"`
}

// Refuse writes the 401 for err to the JSON-RPC request id (null when
// absent): a JSON-RPC error with code, message and data (omitted when
// nil).
func Refuse(w http.ResponseWriter, realm string, id json.RawMessage, code int, message string, data any, err error) {
	e := rpcError{JSONRPC: "2.0", ID: id}
	if len(e.ID) == 0 {
		e.ID = json.RawMessage("null")
	}
	e.Error.Code, e.Error.Message, e.Error.Data = code, message, data
	body, merr := json.Marshal(e)
	if merr != nil {
		e.Error.Data = nil
		body, _ = json.Marshal(e)
	}
	h := w.Header()
	h.Set("WWW-Authenticate", Challenge(realm, err))
	h.Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusUnauthorized)
	_, _ = w.Write(body)
}
