package mcpserver

import (
	"net/http"

	"github.com/storefront/storefront/agent"
	"github.com/storefront/storefront/internal/jsonrpc"
	"github.com/storefront/storefront/internal/limit"
)

// RefuseBody answers a request whose body could not be taken (f: too
// large, too slow or unreadable) before the SDK sees it: a JSON-RPC error
// with f's HTTP status, to the id the body's first bytes name, and for a
// tools/call the AdCP error in data, where AdCP's transport error mapping
// reads it.
func RefuseBody(w http.ResponseWriter, body []byte, f *limit.Failure) {
	call := jsonrpc.Peek(body)
	var data any
	if call.Method == "tools/call" {
		data = authData{AdcpError: agent.RequestRefused(f.Detail)}
	}
	jsonrpc.WriteError(w, f.Status, call.ID, jsonrpc.InvalidRequest, "Invalid request: "+f.Detail, data)
}
