package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/storefront/storefront/transport/a2aserver"
)

// protocolVersion is the MCP version the client asks for.
const protocolVersion = "2025-06-18"

// Client is a minimal MCP streamable HTTP client for load: it posts
// prebuilt JSON-RPC bodies and reads the answer, plain JSON or an event
// stream. It keeps the work on the load generator's side small, since the
// generator shares the machine with what it measures.
type Client struct {
	URL  string
	HTTP *http.Client
	// A2A activates the AdCP profile on each request, as an A2A buyer does.
	A2A bool
	// session is the Mcp-Session-Id the server gave at initialize, if any.
	session string
	proto   string
	buf     bytes.Buffer
}

// NewTransport is an HTTP transport sized for conc concurrent callers to
// one host.
func NewTransport(conc int) *http.Transport {
	return &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        conc * 2,
		MaxIdleConnsPerHost: conc * 2,
		MaxConnsPerHost:     0,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
	}
}

// Initialize runs the MCP handshake: initialize, then the initialized
// notification. A stateless server answers without a session id; a
// stateful one gives one, which every later call carries.
func (c *Client) Initialize(ctx context.Context) error {
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":%q,"capabilities":{},"clientInfo":{"name":"storefront-bench","version":"1"}}}`, protocolVersion)
	resp, raw, err := c.post(ctx, []byte(body))
	if err != nil {
		return fmt.Errorf("initialize: %w", err)
	}
	var init struct {
		Result struct {
			ProtocolVersion string `json:"protocolVersion"`
		} `json:"result"`
		Error *rpcError `json:"error"`
	}
	if err := json.Unmarshal(raw, &init); err != nil {
		return fmt.Errorf("initialize: the answer is not JSON-RPC: %w", err)
	}
	if init.Error != nil {
		return fmt.Errorf("initialize: %s", init.Error)
	}
	c.session = resp.Header.Get("Mcp-Session-Id")
	c.proto = init.Result.ProtocolVersion
	if _, _, err := c.post(ctx, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)); err != nil && !errors.Is(err, errNoBody) {
		return fmt.Errorf("notifications/initialized: %w", err)
	}
	return nil
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func (e *rpcError) String() string { return fmt.Sprintf("JSON-RPC error %d: %s", e.Code, e.Message) }

var errNoBody = errors.New("no body")

// Call posts one body and returns the JSON-RPC answer. The returned bytes
// are valid until the next call on c.
func (c *Client) Call(ctx context.Context, body []byte) ([]byte, error) {
	_, raw, err := c.post(ctx, body)
	return raw, err
}

func (c *Client) post(ctx context.Context, body []byte) (*http.Response, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.URL, bytes.NewReader(body))
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if c.session != "" {
		req.Header.Set("Mcp-Session-Id", c.session)
	}
	if c.proto != "" {
		req.Header.Set("Mcp-Protocol-Version", c.proto)
	}
	if c.A2A {
		req.Header.Set("A2A-Extensions", a2aserver.ProfileURI)
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	c.buf.Reset()
	if _, err := c.buf.ReadFrom(resp.Body); err != nil {
		return resp, nil, err
	}
	if resp.StatusCode == http.StatusAccepted || resp.StatusCode == http.StatusNoContent {
		return resp, nil, errNoBody
	}
	if resp.StatusCode != http.StatusOK {
		return resp, nil, fmt.Errorf("HTTP %d: %s", resp.StatusCode, truncate(c.buf.Bytes(), 200))
	}
	raw := c.buf.Bytes()
	if ct := resp.Header.Get("Content-Type"); len(ct) >= 17 && ct[:17] == "text/event-stream" {
		raw = lastEvent(raw)
		if raw == nil {
			return resp, nil, errors.New("the event stream carried no JSON-RPC message")
		}
	}
	return resp, raw, nil
}

// lastEvent returns the data of the last message event in an event stream.
func lastEvent(stream []byte) []byte {
	var data []byte
	for len(stream) > 0 {
		line := stream
		if i := bytes.IndexByte(stream, '\n'); i >= 0 {
			line, stream = stream[:i], stream[i+1:]
		} else {
			stream = nil
		}
		line = bytes.TrimSuffix(line, []byte("\r"))
		if d, ok := bytes.CutPrefix(line, []byte("data:")); ok {
			data = bytes.TrimPrefix(d, []byte(" "))
		}
	}
	return data
}

func truncate(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}

// Arm reads the AdCP arm from a tools/call answer cheaply: the status
// member of structuredContent, or "error" for a JSON-RPC or tool error.
// It is a byte scan, not a parse; Check parses fully.
func Arm(raw []byte) string {
	for _, arm := range [...]string{"completed", "rejected", "submitted", "failed"} {
		if bytes.Contains(raw, []byte(`"status":"`+arm+`"`)) {
			return arm
		}
	}
	// Sellers on AdCP 3.0 answer without a status: products, or an
	// adcp_error flagged isError.
	isError := bytes.Contains(raw, []byte(`"isError":true`))
	switch {
	case isError && bytes.Contains(raw, []byte(`"adcp_error":`)):
		return "failed"
	case !isError && bytes.Contains(raw, []byte(`"products":[`)):
		return "completed"
	}
	return "error"
}

// Check parses a tools/call answer fully and returns its arm. It fails on
// anything that is not a well-formed get_products answer.
func Check(raw []byte) (string, error) {
	var msg struct {
		Result *struct {
			StructuredContent json.RawMessage `json:"structuredContent"`
			Content           []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
			IsError bool `json:"isError"`
		} `json:"result"`
		Error *rpcError `json:"error"`
	}
	if err := json.Unmarshal(raw, &msg); err != nil {
		return "", fmt.Errorf("not JSON-RPC: %w", err)
	}
	if msg.Error != nil {
		return "", errors.New(msg.Error.String())
	}
	if msg.Result == nil {
		return "", errors.New("no result")
	}
	payload := []byte(msg.Result.StructuredContent)
	if len(payload) == 0 && len(msg.Result.Content) > 0 {
		payload = []byte(msg.Result.Content[0].Text)
	}
	var body struct {
		Status    string            `json:"status"`
		Products  []json.RawMessage `json:"products"`
		AdcpError json.RawMessage   `json:"adcp_error"`
	}
	if err := json.Unmarshal(payload, &body); err != nil {
		return "", fmt.Errorf("the tool result is not an AdCP answer: %w", err)
	}
	arm := body.Status
	if arm == "" {
		// Sellers on AdCP 3.0 answer without a status.
		switch {
		case msg.Result.IsError && body.AdcpError != nil:
			arm = "failed"
		case body.Products != nil:
			arm = "completed"
		}
	}
	if arm == "" {
		return "", fmt.Errorf("the answer has no status: %s", truncate(payload, 200))
	}
	if msg.Result.IsError && arm != "failed" {
		return "", fmt.Errorf("isError is set on a %s answer", arm)
	}
	return arm, nil
}
