package jsonrpc

import (
	"bytes"
	"regexp"
	"testing"

	"pgregory.net/rapid"
)

func TestPeek(t *testing.T) {
	call := `{"jsonrpc":"2.0","id":41,"method":"tools/call","params":{"name":"get_products","arguments":{"brief":"a long brief`
	send := `{"jsonrpc":"2.0","id":"m-7","method":"SendMessage","params":{"message":{"messageId":"m","parts":[{"text":"x"},{"data":{"skill":"create_media_buy","input":{"name":"not the skill"`
	for _, test := range []struct {
		body       string
		id, method string
		tool       string
	}{
		{call, "41", "tools/call", "get_products"},
		// A string cut short is no value.
		{call[:40], "41", "", ""},
		{send, `"m-7"`, "SendMessage", "create_media_buy"},
		// A name deeper than params.name is an argument, not the tool.
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{"name":"x"}`, "1", "tools/call", ""},
		// Ids that are neither strings nor numbers are not ids.
		{`{"id":{"a":1},"method":"tools/list"}`, "", "tools/list", ""},
		{`{"id":null,"method":"tools/list"}`, "", "tools/list", ""},
		{`[{"id":1,"method":"tools/call"}]`, "", "", ""},
		{`not json`, "", "", ""},
		{``, "", "", ""},
	} {
		c := Peek([]byte(test.body))
		if string(c.ID) != test.id || c.Method != test.method || c.Tool != test.tool {
			t.Errorf("Peek(%.50q) = %+v, want id %s, method %q, tool %q", test.body, c, test.id, test.method, test.tool)
		}
	}
}

// TestUnreadable: bytes that are not UTF-8 are a parse error, and an
// escaped NUL or lone surrogate an invalid request; everything else,
// escaped pairs and control characters included, is left to the parser
// and the methods.
func TestUnreadable(t *testing.T) {
	for _, test := range []struct {
		body string
		code int
	}{
		{`{"brief":"coffee"}`, 0},
		{"{\"brief\":\"caf\xe9\"}", ParseError},
		{"{\"br\xffief\":1}", ParseError},
		{"{\"a\":\"\xed\xa0\x80\"}", ParseError},
		{`{"brief":"nul \u0000 inside"}`, InvalidRequest},
		{`{"brief":"a \ud800 b"}`, InvalidRequest},
		{`{"brief":"a \udc00 b"}`, InvalidRequest},
		{`{"brief":"a \ud800"}`, InvalidRequest},
		{`{"brief":"a \ud800\u0041"}`, InvalidRequest},
		{`{"brief":"a pair \ud83d\ude00 ok"}`, 0},
		{`{"brief":"\\u0000 is text, not an escape"}`, 0},
		{`{"note":"tab\t \u0007 bell"}`, 0},
		{`{"brief":"\u12"}`, 0},
		{`\u0000 outside a string`, 0},
	} {
		if code, _ := Unreadable([]byte(test.body)); code != test.code {
			t.Errorf("Unreadable(%q) = %d, want %d", test.body, code, test.code)
		}
	}
}

// plainIDPattern is what PlainID matches by hand.
var plainIDPattern = regexp.MustCompile(`^(-?(0|[1-9][0-9]{0,14})|"[A-Za-z0-9._:~-]{1,128}")$`)

// TestPlainIDIsThePattern: PlainID accepts exactly what its pattern
// does, on ids near every edge of it: signs, zeros, lengths, characters.
func TestPlainIDIsThePattern(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		alphabet := rapid.SampledFrom([]rune(`0123456789-"aZ._:~\ é+e.`))
		id := []byte(rapid.StringOfN(alphabet, 0, 20, -1).Draw(t, "id"))
		if rapid.Bool().Draw(t, "long") {
			id = append(append([]byte(`"`), bytes.Repeat([]byte("a"), rapid.IntRange(120, 135).Draw(t, "n"))...), '"')
		}
		if got, want := PlainID(id), plainIDPattern.Match(id); got != want {
			t.Fatalf("PlainID(%q) = %v, the pattern says %v", id, got, want)
		}
		if PlainID(id) && !ValidID(id) {
			t.Fatalf("%q is plain but not an id", id)
		}
	})
	for _, id := range []string{`0`, `-0`, `123456789012345`, `-123456789012345`, `"a"`, `"a-b.c_d:e~f"`} {
		if !PlainID([]byte(id)) {
			t.Errorf("PlainID(%s) = false", id)
		}
	}
	for _, id := range []string{``, `-`, `00`, `01`, `1234567890123456`, `""`, `"`, `"a`, `"a b"`, `1.5`, `1e3`, `null`} {
		if PlainID([]byte(id)) {
			t.Errorf("PlainID(%s) = true", id)
		}
	}
}
