package mcpserver

import (
	"bytes"
	"strings"
	"testing"

	"github.com/storefront/storefront/jsonfield"
)

// TestCallCarriesTheArgumentsParse: a single tools/call hands its
// arguments on parsed, the parse being of exactly the bytes the call
// carries as its arguments (the last of a name given twice, spaced or
// not), so the door can skip parsing them, a batch's member as well; a
// call without arguments carries none.
func TestCallCarriesTheArgumentsParse(t *testing.T) {
	for _, tc := range []struct {
		body   string
		parsed bool
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_products","arguments":{"brief":"x"}}}`, true},
		{` { "jsonrpc" : "2.0" , "id" : 1 , "method" : "tools/call" , "params" : { "name" : "get_products" , "arguments" : { "brief" : [ 1 , 2 ] } } } `, true},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_products","arguments":{"a":1},"arguments":{"b":2}}}`, true},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_products","arguments":{"a":1}},"params":{"name":"get_products","arguments":{"c":3}}}`, true},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_products"}}`, false},
		{`[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_products","arguments":{"a":1}}}]`, true},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":null}`, false},
	} {
		calls, refusal, loan := rpcCalls([]byte(tc.body))
		defer loan.Return()
		if refusal != nil || len(calls) != 1 {
			t.Fatalf("%s: refused %s, %d calls", tc.body, refusal, len(calls))
		}
		c := calls[0]
		if (c.doc != nil) != tc.parsed {
			t.Fatalf("%s: parsed arguments %v, want %v", tc.body, c.doc != nil, tc.parsed)
		}
		if c.doc == nil {
			continue
		}
		want, err := jsonfield.Parse(c.args)
		if err != nil || !bytes.Equal(c.doc.Raw(), c.args) || !bytes.Equal(want.Raw(), c.doc.Raw()) || len(want.Kids()) != len(c.doc.Kids()) {
			t.Fatalf("%s: the parse handed on is of %s, the arguments are %s", tc.body, c.doc.Raw(), c.args)
		}
	}
}

// TestRPCCallsDepth: a body nesting MaxDepth levels is read, one nesting
// more is refused as an invalid request saying so, and one past what
// encoding/json reads is a parse error.
func TestRPCCallsDepth(t *testing.T) {
	body := func(levels int) []byte {
		// The envelope, params and arguments are three levels.
		inner := strings.Repeat("[", levels-3) + strings.Repeat("]", levels-3)
		return []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_products","arguments":{"a":` + inner + `}}}`)
	}
	calls, refusal, loan := rpcCalls(body(MaxDepth))
	loan.Return()
	if refusal != nil || len(calls) != 1 {
		t.Fatalf("a body %d levels deep was refused: %s", MaxDepth, refusal)
	}
	for levels, want := range map[int]string{MaxDepth + 1: `"code":-32600`, 10001: `"code":-32700`} {
		_, refusal, loan := rpcCalls(body(levels))
		if loan != nil {
			t.Errorf("a refused body kept its loan")
		}
		if !strings.Contains(string(refusal), want) {
			t.Errorf("a body %d levels deep: %s, want %s", levels, refusal, want)
		}
	}
}
