// Package mcpserver serves the agent over MCP streamable HTTP. Each AdCP
// answer goes flat in structuredContent, with the same JSON in
// content[0].text; isError is set for the failed arm and nothing else.
//
// Tools are registered with the SDK's low-level AddTool: the typed helper
// drops structuredContent when a handler fails and cannot take the AdCP
// schemas. Tools the agent does not have (the compliance controller outside
// sandbox mode) are never registered, so they are absent from tools/list
// and a call to one gets the SDK's unknown-tool error.
package mcpserver

import (
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/storefront/storefront/agent"
	"github.com/storefront/storefront/internal/recovery"
)

// New builds the MCP server for a.
func New(a *agent.Agent, version string) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "storefront", Title: "Storefront AdCP seller agent", Version: version}, nil)
	s.AddReceivingMiddleware(Recover(a))
	for _, t := range a.Tools() {
		tool := &mcp.Tool{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema}
		if len(t.Meta) > 0 {
			tool.Meta = mcp.Meta(maps.Clone(t.Meta))
		}
		name := t.Name
		s.AddTool(tool, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			c := agent.Call{Publisher: agent.PublisherOf(ctx), Args: req.Params.Arguments, Transport: "mcp"}
			if req.Extra != nil && req.Extra.Header != nil {
				c.Authorization = req.Extra.Header.Get("Authorization")
			}
			r, err := a.Dispatch(ctx, name, c)
			if err != nil {
				return nil, err
			}
			return Result(r), nil
		})
	}
	return s
}

// Recover is the MCP surface's recover boundary on the goroutines the SDK
// runs each method on, where no HTTP middleware reaches. A panic there is
// logged and counted (internal/recovery) and answered: for a call of one of
// the agent's tools, with the agent's InternalReply, as Dispatch answers
// one (the AdCP error arm, transient, the same as over A2A); for anything
// else, with a JSON-RPC internal error.
func Recover(a *agent.Agent) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (res mcp.Result, err error) {
			if !recovery.Run(ctx, a.Log, "mcp", "MCP "+method, func() { res, err = next(ctx, method, req) }) {
				return res, err
			}
			if call, ok := req.(*mcp.CallToolRequest); ok && call.Params != nil && a.Has(call.Params.Name) {
				return Result(a.InternalReply(call.Params.Arguments)), nil
			}
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "Internal error"}
		}
	}
}

// Result builds the MCP tool result for a reply.
func Result(r agent.Reply) *mcp.CallToolResult {
	return &mcp.CallToolResult{
		Meta:              meta(agent.MetaOf(r)),
		Content:           []mcp.Content{&mcp.TextContent{Text: string(r.Payload)}},
		StructuredContent: json.RawMessage(r.Payload),
		IsError:           r.Failed,
	}
}

// meta is a reply's metadata as the result's _meta, nil when it carries
// none. The map is fresh for every result: the SDK writes into it.
func meta(m agent.Meta) mcp.Meta {
	if m.IsZero() {
		return nil
	}
	out := mcp.Meta{}
	if m.Decline != nil {
		out[agent.DeclineKey] = *m.Decline
	}
	return out
}

// Handler returns the streamable HTTP handler, every refusal of which is a
// JSON-RPC error (jsonRefusals). It runs stateless with plain
// JSON responses: every request carries everything it needs, so replicas
// need no session affinity.
//
// The transport spec asks clients to accept both JSON and an event stream;
// since every answer here is plain JSON, a POST that accepts JSON alone is
// served rather than refused.
func Handler(s *mcp.Server) http.Handler {
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s },
		&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true, DisableLocalhostProtection: true})
	return jsonRefusals(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			accept := r.Header.Get("Accept")
			if !strings.Contains(accept, "text/event-stream") && (strings.Contains(accept, "application/json") || strings.Contains(accept, "*/*")) {
				r = r.Clone(r.Context())
				r.Header.Set("Accept", "application/json, text/event-stream")
			}
		}
		h.ServeHTTP(w, r)
	}))
}
