package mcpserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"

	"github.com/storefront/storefront/agent"
	"github.com/storefront/storefront/internal/origin"
	"github.com/storefront/storefront/internal/rpcauth"
	"github.com/storefront/storefront/outcome"
)

// AuthErrorCode is the JSON-RPC code AdCP reserves for a call refused for
// its credentials before tool dispatch; the AdCP error in data says which
// (AUTH_MISSING or AUTH_INVALID).
const AuthErrorCode = -32028

// rpcCall is what admission needs of one JSON-RPC request.
type rpcCall struct {
	id   json.RawMessage
	tool string // "" for a method that calls no tool
	args []byte
}

// Guard refuses, before the MCP SDK sees it, a request whose credentials
// fail (agent.Admit): an Authorization header that names no principal, on
// any request, and a tools/call without credentials for anything but
// public discovery. The refusal is HTTP 401 with a Bearer challenge whose
// realm is the URL called (and error="invalid_token" for bad
// credentials), and a JSON-RPC error carrying the AdCP error. Admitted
// requests reach next with their principal resolved. pol decides the
// origin the realm names, as for agent cards.
func Guard(a *agent.Agent, pol origin.Policy, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls := []rpcCall{{}}
		if r.Method == http.MethodPost {
			body, err := io.ReadAll(r.Body)
			if err != nil {
				// The body limit's error; the SDK would fail the same way.
				http.Error(w, "request body too large", http.StatusRequestEntityTooLarge)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			calls = rpcCalls(body)
		}
		ctx := r.Context()
		auth := r.Header.Get("Authorization")
		for _, c := range calls {
			var err error
			if ctx, err = a.Admit(ctx, publisherFrom(ctx), auth, c.tool, c.args); err != nil {
				challenge(w, pol.Of(r)+r.URL.EscapedPath(), c.id, err)
				return
			}
		}
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// rpcCalls reads the JSON-RPC request or batch in body. A body that is not
// JSON-RPC yields one call of no tool, for the SDK to refuse.
func rpcCalls(body []byte) []rpcCall {
	type request struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Name      *string         `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		} `json:"params"`
	}
	var reqs []request
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) > 0 && trimmed[0] == '[' {
		if json.Unmarshal(trimmed, &reqs) != nil {
			return []rpcCall{{}}
		}
	} else {
		var one request
		if json.Unmarshal(trimmed, &one) != nil {
			return []rpcCall{{}}
		}
		reqs = []request{one}
	}
	out := make([]rpcCall, 0, len(reqs)+1)
	for _, q := range reqs {
		c := rpcCall{id: q.ID}
		if q.Method == "tools/call" {
			// A call that names no tool is still a tool call: it is not
			// public discovery.
			c.tool = "tools/call"
			if q.Params.Name != nil && *q.Params.Name != "" {
				c.tool = *q.Params.Name
			}
			c.args = q.Params.Arguments
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		out = append(out, rpcCall{})
	}
	return out
}

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
