package jsonobj

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// FuzzMembers holds Members and String to encoding/json on every valid
// document, and requires only that they return on any other bytes.
func FuzzMembers(f *testing.F) {
	for _, s := range []string{`{}`, ` { "a" : 1 , "b":[1,{"c":"]"}], "a":"x\"y" } `, `null`, `[1]`, `"s"`, `1`, `{"\u0061":true}`,
		"{\"\xff\":1}", `{"a":{"b":{"c":[]}},"d":-1.5e3,"e":null,"f":false}`, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_products","arguments":{"brief":"a\\b"}}}`,
		`"2.0"`, ` "tools/call" `, `"2.\u0030"`, `"a"b"`, `{"a"`, `{"a":}`, `{"a":1`, `{"a":"\`, `{`, ``, `{"a":[1,2}`, `{,}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, ok := Members(data)
		s, sok := String(data)
		// Is agrees with String on every input, for the text it decodes
		// and for others.
		for _, want := range []string{s, s + "x", "", "2.0", "tools/call"} {
			if iok, is := Is(data, want); iok != sok || is != (sok && s == want) {
				t.Fatalf("Is(%q, %q) = %v, %v; String gives %q, %v", data, want, iok, is, s, sok)
			}
		}
		if !json.Valid(data) {
			return
		}
		var want map[string]json.RawMessage
		wantErr := json.Unmarshal(data, &want)
		if ok != (wantErr == nil) {
			t.Fatalf("Members(%s) ok = %v; json.Unmarshal: %v", data, ok, wantErr)
		}
		if ok && !cmp.Equal(want, got) {
			t.Fatalf("Members(%s) = %q; json.Unmarshal: %q", data, got, want)
		}
		var ws string
		werr := json.Unmarshal(data, &ws)
		if sok != (werr == nil) || s != ws {
			t.Fatalf("String(%s) = %q, %v; json.Unmarshal: %q, %v", data, s, sok, ws, werr)
		}
	})
}

func TestMembersShares(t *testing.T) {
	raw := []byte(`{"a":[1],"b":2}`)
	m, ok := Members(raw)
	if !ok || string(m["a"]) != "[1]" || string(m["b"]) != "2" {
		t.Fatalf("Members = %q, %v", m, ok)
	}
	// A value's capacity ends with it: appending to one cannot write over
	// the bytes after it.
	_ = append(m["a"], 'x')
	if !strings.HasPrefix(string(raw[len(`{"a":[1]`):]), `,"b"`) {
		t.Errorf("appending to a member overwrote the document: %s", raw)
	}
}
