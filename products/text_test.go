package products

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestDecodeRequestText: every string of a get_products request is text,
// checked on the raw bytes (encoding/json would read invalid UTF-8 as
// U+FFFD), and no array holds null; the buyer's own context and ext keep
// what they hold, provided it is valid Unicode.
func TestDecodeRequestText(t *testing.T) {
	for _, test := range []struct {
		name, args string
		want       []fieldProblem
	}{
		{"invalid UTF-8 in the brief", "{\"brief\":\"caf\xe9\"}", []fieldProblem{val("brief")}},
		{"a truncated character in the brief", "{\"brief\":\"caf\xc3\"}", []fieldProblem{val("brief")}},
		{"a lone surrogate in the brief", `{"brief":"\udfff"}`, []fieldProblem{val("brief")}},
		{"a NUL in the brief", `{"brief":"a\u0000"}`, []fieldProblem{val("brief")}},
		{"DEL in the brief", "{\"brief\":\"a\x7f\"}", []fieldProblem{val("brief")}},
		{"invalid UTF-8 in an industry", "{\"brief\":\"x\",\"brand\":{\"domain\":\"b.example\",\"industries\":[\"ok\",\"\xff\"]}}", []fieldProblem{val("brand.industries[1]")}},
		{"a null industry", `{"brief":"x","brand":{"domain":"b.example","industries":[null]}}`, []fieldProblem{inv("brand.industries[0]")}},
		{"a null country", `{"brief":"x","filters":{"countries":["US",null]}}`, []fieldProblem{inv("filters.countries[1]")}},
		{"a null field name", `{"brief":"x","fields":[null]}`, []fieldProblem{inv("fields[0]"), inv("fields")}},
		{"invalid UTF-8 in a member name", "{\"brief\":\"x\",\"filters\":{\"\xff\":1}}", []fieldProblem{val("filters.\ufffd")}},
		{"invalid UTF-8 in the context", "{\"brief\":\"x\",\"context\":{\"a\":[\"\xff\"]}}", []fieldProblem{val("context.a[0]")}},
		{"invalid UTF-8 in a filter's ext", "{\"brief\":\"x\",\"filters\":{\"ext\":{\"k\":\"\xff\"}}}", []fieldProblem{val("filters.ext.k")}},
		{"invalid UTF-8 in a push token", "{\"brief\":\"x\",\"push_notification_config\":{\"url\":\"https://b.example/h\",\"token\":\"0123456789abcdef\xff\"}}", []fieldProblem{val("push_notification_config.token")}},
	} {
		t.Run(test.name, func(t *testing.T) {
			req, err := DecodeRequest([]byte(test.args))
			got, ok := problems(err)
			if !ok {
				t.Fatalf("DecodeRequest(%q) error = %v, want a *RequestError", test.args, err)
			}
			if diff := cmp.Diff(test.want, got, cmp.AllowUnexported(fieldProblem{})); diff != "" {
				t.Errorf("DecodeRequest(%q) problems (-want +got):\n%s", test.args, diff)
			}
			if req != nil && req.Context != nil && !Echoable(req.Context) {
				t.Errorf("DecodeRequest(%q) kept a context that is not valid Unicode for echoing", test.args)
			}
		})
	}
	for _, ok := range []string{
		`{"brief":"two\nlines\tand a tab, é, 北, 😀 \ud83d\ude00"}`,
		`{"brief":"x","context":{"note":"\u0001 kept as sent","l":[null]},"ext":{"x":["\u0007",null]}}`,
		`{"brief":"null is a word"}`,
	} {
		if _, err := DecodeRequest([]byte(ok)); err != nil {
			t.Errorf("DecodeRequest(%s) = %v, want no error", ok, err)
		}
	}
}

// TestEchoable: only a context that is a JSON object of valid Unicode is
// echoed. A string or number context used to be echoed by the media-buy
// tasks, whose answers then failed their own schema (core/context.json is
// an object).
func TestEchoable(t *testing.T) {
	for _, test := range []struct {
		ctx  string
		want bool
	}{
		{`{"correlation_id":"c-1"}`, true},
		{` {"nested":{"a":[1,2]}}`, true},
		{`{}`, true},
		{`"wrong"`, false},
		{`12345`, false},
		{`["a"]`, false},
		{`true`, false},
		{`null`, false},
		{``, false},
		{"{\"trace\":\"\xff\"}", false},
	} {
		if got := Echoable(json.RawMessage(test.ctx)); got != test.want {
			t.Errorf("Echoable(%q) = %v, want %v", test.ctx, got, test.want)
		}
	}
}
