package mcpserver_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/storefront/storefront/internal/testenv"
)

// rpcAnswer is a JSON-RPC error response.
type rpcAnswer struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Error   *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// TestJSONRPCFraming: a body that is not JSON-RPC 2.0 is answered in
// JSON-RPC's own terms, HTTP 400 and application/json, where the SDK
// answered plain text: a parse error (-32700, id null) for a body that is
// not JSON, an invalid request (-32600) for JSON that is not a message,
// naming the request's id when it has a valid one.
func TestJSONRPCFraming(t *testing.T) {
	env := testenv.Start(t)
	for _, test := range []struct {
		name, body string
		code       int
		id         string
	}{
		{"truncated", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_products","arguments":`, -32700, "null"},
		{"not JSON", `hello`, -32700, "null"},
		{"empty", ``, -32700, "null"},
		{"blank", "  \n", -32700, "null"},
		{"trailing garbage", `{"jsonrpc":"2.0","id":1,"method":"ping"} x`, -32700, "null"},
		{"a number", `42`, -32600, "null"},
		{"a string", `"tools/list"`, -32600, "null"},
		{"null", `null`, -32600, "null"},
		{"an empty object", `{}`, -32600, "null"},
		{"an empty batch", `[]`, -32600, "null"},
		{"no jsonrpc member", `{"id":3,"method":"ping"}`, -32600, "3"},
		{"jsonrpc 1.0", `{"jsonrpc":"1.0","id":"a","method":"ping"}`, -32600, `"a"`},
		{"jsonrpc a number", `{"jsonrpc":2.0,"id":4,"method":"ping"}`, -32600, "4"},
		{"method not a string", `{"jsonrpc":"2.0","id":5,"method":5}`, -32600, "5"},
		{"params a string", `{"jsonrpc":"2.0","id":6,"method":"tools/list","params":"all"}`, -32600, "6"},
		{"id an object", `{"jsonrpc":"2.0","id":{"n":1},"method":"ping"}`, -32600, "null"},
		{"id a boolean", `{"jsonrpc":"2.0","id":true,"method":"ping"}`, -32600, "null"},
		{"a response without result or error", `{"jsonrpc":"2.0","id":7}`, -32600, "7"},
		{"method in capitals", `{"jsonrpc":"2.0","id":8,"METHOD":"ping"}`, -32600, "8"},
		{"nested too deep", `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"get_products","arguments":{"a":` +
			strings.Repeat("[", 5000) + strings.Repeat("]", 5000) + `}}}`, -32600, "null"},
	} {
		t.Run(test.name, func(t *testing.T) {
			status, b := rawPost(t, env.BaseURL+"/mcp", test.body)
			var a rpcAnswer
			if err := json.Unmarshal(b, &a); err != nil || a.Error == nil {
				t.Fatalf("status %d, body %q: not a JSON-RPC error", status, b)
			}
			if status != http.StatusBadRequest || a.JSONRPC != "2.0" || a.Error.Code != test.code || string(a.ID) != test.id {
				t.Errorf("status %d, body %s; want 400 with code %d and id %s", status, b, test.code, test.id)
			}
		})
	}
}

// TestJSONRPCBatchFraming: a batch with an invalid member is answered
// whole, one error for each invalid member and for each call beside them,
// and none of it runs; a valid batch goes to the SDK as before.
func TestJSONRPCBatchFraming(t *testing.T) {
	env := testenv.Start(t)
	status, b := rawPost(t, env.BaseURL+"/mcp", `[1, {"jsonrpc":"2.0","id":9,"method":"tools/list"}, {"jsonrpc":"2.0","method":"notifications/initialized"}]`)
	var answers []rpcAnswer
	if err := json.Unmarshal(b, &answers); err != nil {
		t.Fatalf("status %d, body %s: not a JSON-RPC batch answer", status, b)
	}
	if status != http.StatusBadRequest || len(answers) != 2 {
		t.Fatalf("status %d, body %s; want 400 and two errors (the invalid member, the call beside it)", status, b)
	}
	if a := answers[0]; a.Error == nil || a.Error.Code != -32600 || string(a.ID) != "null" {
		t.Errorf("the invalid member's answer = %s", b)
	}
	if a := answers[1]; a.Error == nil || a.Error.Code != -32600 || string(a.ID) != "9" || !strings.Contains(a.Error.Message, "none of it ran") {
		t.Errorf("the call's answer = %s", b)
	}
	if strings.Contains(string(b), `"tools"`) {
		t.Errorf("the valid call ran: %s", b)
	}
}

// TestJSONRPCValidStillServed: what JSON-RPC allows and the SDK serves is
// let through: params null, string ids, a notification.
func TestJSONRPCValidStillServed(t *testing.T) {
	env := testenv.Start(t)
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":"list-1","method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":10,"method":"tools/list","params":null}`,
		`{"jsonrpc":"2.0","id":-1.5e0,"method":"tools/list","params":{}}`,
	} {
		status, b := rawPost(t, env.BaseURL+"/mcp", body)
		if status != http.StatusOK || !strings.Contains(string(b), `"get_products"`) {
			t.Errorf("%s: status %d, body %.200s; want the tool list", body, status, b)
		}
	}
	if status, b := rawPost(t, env.BaseURL+"/mcp", `{"jsonrpc":"2.0","method":"notifications/initialized"}`); status != http.StatusAccepted {
		t.Errorf("a notification: status %d, body %s; want 202", status, b)
	}
}

// TestUnreadableText: text no request may carry (bytes that are not
// UTF-8, an escaped NUL or lone surrogate) inside a tool call's arguments
// is refused by the tool, VALIDATION_ERROR naming the field, as the tool
// refuses it whoever dispatches it; the same text anywhere else in the
// message is a parse error or an invalid request before any tool runs.
// Both used to reach the tool unchecked and be answered completed. An id
// past float64's range is no id the SDK can answer to: an invalid request
// with id null, where the SDK answered plain text.
func TestUnreadableText(t *testing.T) {
	env := testenv.Start(t)
	call := func(args string) string {
		return `{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"get_products","arguments":` + args + `}}`
	}
	for _, test := range []struct {
		name, body string
		code       int    // the JSON-RPC error's, or 0 for the tool's refusal
		id, field  string // the answer's id; the field the tool names
	}{
		{"invalid UTF-8 in a brief", call("{\"buying_mode\":\"brief\",\"brief\":\"caf\xe9\"}"), 0, "12", "brief"},
		{"an encoded surrogate", call("{\"buying_mode\":\"brief\",\"brief\":\"\xed\xa0\x80\"}"), 0, "12", "brief"},
		{"an escaped NUL", call(`{"buying_mode":"brief","brief":"a\u0000b"}`), 0, "12", "brief"},
		{"an escaped lone surrogate", call(`{"buying_mode":"brief","brief":"a \ud800 b"}`), 0, "12", "brief"},
		{"invalid UTF-8 in the tool's name", "{\"jsonrpc\":\"2.0\",\"id\":12,\"method\":\"tools/call\",\"params\":{\"name\":\"get_pr\xffoducts\",\"arguments\":{}}}", -32700, "null", ""},
		{"an escaped NUL in the method", `{"jsonrpc":"2.0","id":12,"method":"tools/call\u0000","params":{"name":"get_products","arguments":{}}}`, -32600, "12", ""},
		{"invalid UTF-8 beside the arguments", "{\"jsonrpc\":\"2.0\",\"id\":12,\"method\":\"tools/call\",\"params\":{\"name\":\"get_products\",\"arguments\":{},\"x\":\"\xff\"}}", -32700, "null", ""},
		{"an id past float64", `{"jsonrpc":"2.0","id":1e400,"method":"tools/list"}`, -32600, "null", ""},
	} {
		t.Run(test.name, func(t *testing.T) {
			status, b := rawPost(t, env.BaseURL+"/mcp", test.body)
			var a struct {
				rpcAnswer
				Result *struct {
					Structured struct {
						Status string `json:"status"`
						Errors []struct {
							Code  string `json:"code"`
							Field string `json:"field"`
						} `json:"errors"`
					} `json:"structuredContent"`
					IsError bool `json:"isError"`
				} `json:"result"`
			}
			if err := json.Unmarshal(b, &a); err != nil || string(a.ID) != test.id {
				t.Fatalf("status %d, body %q: want an answer to id %s", status, b, test.id)
			}
			if test.code != 0 {
				if a.Error == nil || a.Result != nil || a.Error.Code != test.code {
					t.Errorf("status %d, body %s; want the JSON-RPC error %d", status, b, test.code)
				}
				return
			}
			if a.Result == nil || !a.Result.IsError || a.Result.Structured.Status != "failed" || len(a.Result.Structured.Errors) == 0 ||
				a.Result.Structured.Errors[0].Code != "VALIDATION_ERROR" || a.Result.Structured.Errors[0].Field != test.field {
				t.Errorf("status %d, body %s; want the failed arm, VALIDATION_ERROR naming %s", status, b, test.field)
			}
			if !utf8.Valid(b) {
				t.Errorf("the answer is not valid UTF-8: %q", b)
			}
		})
	}
}

// TestSDKRefusalsAreJSONRPC: every refusal the SDK's handler writes in
// plain text is a JSON-RPC error instead, with the SDK's HTTP status and a
// sentence of the storefront's own (never the SDK's, which can name its
// Go types): a wrong Content-Type, an Accept without JSON, an MCP protocol
// version it does not speak, an unknown method, a call without an id.
func TestSDKRefusalsAreJSONRPC(t *testing.T) {
	env := testenv.Start(t)
	list := `{"jsonrpc":"2.0","id":21,"method":"tools/list"}`
	for _, test := range []struct {
		name, body   string
		header       map[string]string
		status, code int
		id           string
	}{
		{"Content-Type text/plain", list, map[string]string{"Content-Type": "text/plain"}, 415, -32600, "21"},
		{"Content-Type multipart", list, map[string]string{"Content-Type": "multipart/form-data; boundary=x"}, 415, -32600, "21"},
		{"Accept text/html", list, map[string]string{"Accept": "text/html"}, 400, -32600, "21"},
		{"an unknown protocol version", list, map[string]string{"Mcp-Protocol-Version": "1999-01-01"}, 400, -32600, "21"},
		{"an unknown method", `{"jsonrpc":"2.0","id":22,"method":"tools/destroy"}`, nil, 400, -32601, "22"},
		{"a tools/call without an id", `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"get_products","arguments":{}}}`, nil, 400, -32600, "null"},
	} {
		t.Run(test.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodPost, env.BaseURL+"/mcp", strings.NewReader(test.body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
			for k, v := range test.header {
				req.Header.Set(k, v)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			var a rpcAnswer
			if ct := resp.Header.Get("Content-Type"); ct != "application/json" || json.Unmarshal(b, &a) != nil || a.Error == nil || a.JSONRPC != "2.0" {
				t.Fatalf("HTTP %d %s %q: not a JSON-RPC error", resp.StatusCode, ct, b)
			}
			if resp.StatusCode != test.status || a.Error.Code != test.code || string(a.ID) != test.id {
				t.Errorf("HTTP %d %s; want %d with code %d and id %s", resp.StatusCode, b, test.status, test.code, test.id)
			}
			for _, internal := range []string{"jsonrpc2", "Go struct", "unmarshal", "supported versions"} {
				if strings.Contains(string(b), internal) {
					t.Errorf("the refusal names the SDK's internals (%q): %s", internal, b)
				}
			}
		})
	}
}
