package mcpserver_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

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
