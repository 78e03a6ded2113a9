package a2aserver

import (
	"net/http"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/errordetails"

	"github.com/storefront/storefront/agent"
	"github.com/storefront/storefront/internal/jsonrpc"
	"github.com/storefront/storefront/internal/limit"
)

// RefuseBody answers a request whose body could not be taken (f: too
// large, too slow or unreadable) before a2a-go sees it: a JSON-RPC Invalid
// Request error with f's HTTP status, to the id the body's first bytes
// name, its data the typed details both A2A bindings read (an ErrorInfo,
// as a2a-go writes them). For a message naming a skill the details also
// carry the AdCP error, {"adcp_error": ...}, and the ErrorInfo its code,
// as the other refusals of this surface do.
func RefuseBody(w http.ResponseWriter, body []byte, f *limit.Failure) {
	call := jsonrpc.Peek(body)
	var details []*errordetails.Typed
	var meta map[string]string
	if (call.Method == "SendMessage" || call.Method == "message/send") && call.Tool != "" {
		e := agent.RequestRefused(f.Detail)
		details = append(details, errordetails.NewFromStruct(map[string]any{"adcp_error": e}))
		meta = map[string]string{"adcp_error_code": string(e.Code)}
	}
	details = append(details, errordetails.NewErrorInfo(a2a.ErrorReason(a2a.ErrInvalidRequest), a2a.ProtocolDomain, meta))
	jsonrpc.WriteError(w, f.Status, call.ID, jsonrpc.InvalidRequest, "Invalid request: "+f.Detail, details)
}
