// Package rpcauth writes the HTTP side of a call the agent refuses for its
// credentials (agent.Admit), the same for MCP and A2A: status 401, an RFC
// 6750 Bearer challenge whose realm is the URL called, and a JSON-RPC
// error (written by internal/jsonrpc, as every other JSON-RPC error the
// transports answer at the door). It decides nothing; the agent does.
package rpcauth

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/storefront/storefront/agent"
	"github.com/storefront/storefront/internal/jsonrpc"
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

// Refuse writes the 401 for err to the JSON-RPC request id (null when
// absent): a JSON-RPC error with code, message and data (omitted when
// nil).
func Refuse(w http.ResponseWriter, realm string, id json.RawMessage, code int, message string, data any, err error) {
	w.Header().Set("WWW-Authenticate", Challenge(realm, err))
	jsonrpc.WriteError(w, http.StatusUnauthorized, id, code, message, data)
}
