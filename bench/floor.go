package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/storefront/storefront/agent"
	"github.com/storefront/storefront/transport/mcpserver"
)

// The MCP floor is the storefront's MCP transport with nothing behind it:
// the same SDK server and handler options, whose get_products tool answers
// each recorded request with the storefront's recorded payload. It shows
// how much of the gap between the ceiling and the storefront is the MCP
// layer's own cost (JSON-RPC decoding, the per-request stateless session,
// re-encoding the result) rather than the pipeline's.

// floorKey is the compacted arguments of a tools/call body.
func floorKey(body []byte) (string, json.RawMessage, error) {
	var msg struct {
		Params struct {
			Arguments json.RawMessage `json:"arguments"`
		} `json:"params"`
		Result struct {
			StructuredContent json.RawMessage `json:"structuredContent"`
		} `json:"result"`
	}
	if err := json.Unmarshal(body, &msg); err != nil {
		return "", nil, err
	}
	var b bytes.Buffer
	if len(msg.Params.Arguments) > 0 {
		if err := json.Compact(&b, msg.Params.Arguments); err != nil {
			return "", nil, err
		}
	}
	return b.String(), msg.Result.StructuredContent, nil
}

// NewMCPFloor builds the floor's MCP handler from recorded answers.
func NewMCPFloor(rs []Recorded) (http.Handler, error) {
	payloads := map[string][]byte{}
	for _, r := range rs {
		key, _, err := floorKey([]byte(r.Request))
		if err != nil {
			return nil, err
		}
		_, payload, err := floorKey([]byte(r.Body))
		if err != nil {
			return nil, err
		}
		if len(payload) == 0 {
			return nil, errors.New("a recorded answer has no structuredContent")
		}
		payloads[key] = payload
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "storefront-mcp-floor", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "get_products", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var b bytes.Buffer
			if err := json.Compact(&b, req.Params.Arguments); err != nil {
				return nil, err
			}
			p, ok := payloads[b.String()]
			if !ok {
				return nil, errors.New("no recorded answer for these arguments")
			}
			return mcpserver.Result(agent.Reply{Payload: p}), nil
		})
	return mcpserver.Handler(s), nil
}

// ServeMCPFloor serves the floor on addr until ctx ends, writing its URL to
// ready once it accepts connections.
func ServeMCPFloor(ctx context.Context, addr string, rs []Recorded, ready io.Writer) error {
	h, err := NewMCPFloor(rs)
	if err != nil {
		return err
	}
	return serveUntil(ctx, addr, h, "mcp floor", ready)
}
