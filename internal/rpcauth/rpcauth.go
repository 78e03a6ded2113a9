// Package rpcauth writes the HTTP side of a call the agent refuses for its
// credentials (agent.Admit), the same for MCP and A2A: status 401, an RFC
// 6750 Bearer challenge whose realm is the URL called, and a JSON-RPC
// error. Both transports write their other JSON-RPC errors of their own
// (a body that is not JSON-RPC, a recovered panic) with it too. It decides
// nothing; the agent does.
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

// Error is the JSON-RPC error response to the request id (null when
// absent) with code, message and data (omitted when nil).
func Error(id json.RawMessage, code int, message string, data any) []byte {
	e := rpcError{JSONRPC: "2.0", ID: id}
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

// Refuse writes the 401 for err to the JSON-RPC request id: the Error
// with code, message and data.
func Refuse(w http.ResponseWriter, realm string, id json.RawMessage, code int, message string, data any, err error) {
	w.Header().Set("WWW-Authenticate", Challenge(realm, err))
	Write(w, http.StatusUnauthorized, Error(id, code, message, data))
}
