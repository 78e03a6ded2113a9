package a2aserver

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"github.com/google/go-cmp/cmp"
)

// TestReadFast: the fast path reads the message-sends it answers, in each
// binding's spelling, and nothing it has not been shown to read as a2a-go
// does. (TestA2AFastPathMatchesA2AGo, in agent, proves the answers equal.)
func TestReadFast(t *testing.T) {
	const (
		v1 = `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[%s]}}}`
		v0 = `{"jsonrpc":"2.0","id":"a-1","method":"message/send","params":{"message":{"kind":"message","messageId":"m","role":"user","contextId":"c","parts":[%s]}}}`
	)
	for _, test := range []struct {
		name, body string
		want       *fastCall
	}{
		{"1.0", strings.Replace(v1, "%s", `{"data":{"skill":"get_products","input":{"brief":"x"}}}`, 1),
			&fastCall{id: json.RawMessage(`1`), skill: "get_products", args: []byte(`{"brief":"x"}`)}},
		{"1.0 no input", strings.Replace(v1, "%s", `{"text":"hi"},{"data":{"skill":"get_products"}}`, 1),
			&fastCall{id: json.RawMessage(`1`), skill: "get_products", args: []byte(`{}`)}},
		{"0.3 parameters", strings.Replace(v0, "%s", `{"kind":"data","data":{"skill":"get_products","parameters":{ "brief" : "x" }}}`, 1),
			&fastCall{id: json.RawMessage(`"a-1"`), legacy: true, contextID: "c", skill: "get_products", args: []byte(`{ "brief" : "x" }`)}},
		{"0.3 input", strings.Replace(v0, "%s", `{"kind":"data","data":{"skill":"get_products","input":{}}}`, 1),
			&fastCall{id: json.RawMessage(`"a-1"`), legacy: true, contextID: "c", skill: "get_products", args: []byte(`{}`)}},
		{"1.0 parameters", strings.Replace(v1, "%s", `{"data":{"skill":"get_products","parameters":{}}}`, 1), nil},
		{"0.3 both", strings.Replace(v0, "%s", `{"kind":"data","data":{"skill":"get_products","parameters":{},"input":{}}}`, 1), nil},
		{"0.3 spelling on 1.0", strings.Replace(v1, "%s", `{"kind":"data","data":{"skill":"get_products","input":{}}}`, 1), nil},
		{"1.0 spelling on 0.3", strings.Replace(v0, "%s", `{"data":{"skill":"get_products","input":{}}}`, 1), nil},
		{"two data parts", strings.Replace(v1, "%s", `{"data":{"skill":"a"}},{"data":{"skill":"b"}}`, 1), nil},
		{"no data part", strings.Replace(v1, "%s", `{"text":"hi"}`, 1), nil},
		{"input not an object", strings.Replace(v1, "%s", `{"data":{"skill":"get_products","input":[]}}`, 1), nil},
		{"empty skill", strings.Replace(v1, "%s", `{"data":{"skill":"","input":{}}}`, 1), nil},
		{"null text", strings.Replace(v1, "%s", `{"text":null},{"data":{"skill":"a"}}`, 1), nil},
		{"case-folded member", strings.Replace(strings.Replace(v1, "%s", `{"data":{"skill":"a"}}`, 1), `"role"`, `"Role"`, 1), nil},
		{"a float id", strings.Replace(strings.Replace(v1, "%s", `{"data":{"skill":"a"}}`, 1), `"id":1`, `"id":1.0`, 1), nil},
		{"a null id", strings.Replace(strings.Replace(v1, "%s", `{"data":{"skill":"a"}}`, 1), `"id":1`, `"id":null`, 1), nil},
		{"trailing bytes", strings.Replace(v1, "%s", `{"data":{"skill":"a"}}`, 1) + "{}", nil},
		{"a batch", "[" + strings.Replace(v1, "%s", `{"data":{"skill":"a"}}`, 1) + "]", nil},
	} {
		t.Run(test.name, func(t *testing.T) {
			got, ok := readFast([]byte(test.body))
			if ok != (test.want != nil) {
				t.Fatalf("readFast(%s) = %v, want %v", test.body, ok, test.want != nil)
			}
			if ok && (string(got.id) != string(test.want.id) || got.legacy != test.want.legacy || got.contextID != test.want.contextID ||
				got.skill != test.want.skill || string(got.args) != string(test.want.args)) {
				t.Errorf("readFast(%s) = %+v, want %+v", test.body, got, *test.want)
			}
		})
	}
}

// internalAnswer is a handler whose SendMessage fails as handler.send does
// when it cannot encode a reply.
type internalAnswer struct{ *handler }

func (internalAnswer) SendMessage(context.Context, *a2a.SendMessageRequest) (a2a.SendMessageResult, error) {
	return nil, a2a.ErrInternalError
}

// TestWriteInternalErrorIsA2AGos: the fast path's answer to a payload it
// cannot carry is the JSON-RPC error a2a-go writes for handler.send's
// internal error, its timestamp from the agent's clock.
func TestWriteInternalErrorIsA2AGos(t *testing.T) {
	srv := a2asrv.NewJSONRPCHandler(internalAnswer{&handler{}})
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/a2a", strings.NewReader(`{"jsonrpc":"2.0","id":"r-1","method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"x"}]}}}`)))
	now := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	var buf bytes.Buffer
	writeInternalError(&buf, json.RawMessage(`"r-1"`), now)

	decode := func(b []byte) map[string]any {
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		return m
	}
	want, got := decode(rec.Body.Bytes()), decode(buf.Bytes())
	info := func(m map[string]any) map[string]any {
		return m["error"].(map[string]any)["data"].([]any)[0].(map[string]any)["metadata"].(map[string]any)
	}
	if ts := info(got)["timestamp"]; ts != now.Format(time.RFC3339) {
		t.Errorf("timestamp %v, want the agent clock's %s", ts, now.Format(time.RFC3339))
	}
	info(want)["timestamp"], info(got)["timestamp"] = "<time>", "<time>"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the fast path's internal error differs from a2a-go's (-a2a-go +fast):\n%s", diff)
	}
	if !bytes.HasSuffix(buf.Bytes(), []byte("}\n")) {
		t.Errorf("%q: want one JSON value and a newline, as a2a-go's encoder ends it", buf.Bytes())
	}
}

// TestWriteTaskRefusesWhatIsNotAnObject: a payload that is not a JSON
// object, which handler.task cannot carry over 0.3 and the AdCP profile
// never sends, is not written as a task.
func TestWriteTaskRefusesWhatIsNotAnObject(t *testing.T) {
	for _, payload := range []string{``, `[]`, `"x"`, `null`, `{`} {
		var buf bytes.Buffer
		if writeTask(&buf, fastCall{id: json.RawMessage(`1`)}, taskPlan{payload: []byte(payload)}, time.Now()) {
			t.Errorf("writeTask wrote a task around %q", payload)
		}
	}
	var buf bytes.Buffer
	if !writeTask(&buf, fastCall{id: json.RawMessage(`1`)}, taskPlan{payload: []byte(`{"status":"completed"}`)}, time.Now()) || !json.Valid(buf.Bytes()) {
		t.Errorf("writeTask around an object = %s, want a JSON-RPC response", buf.Bytes())
	}
}

// BenchmarkReadFast reads a message-send of the bench mix's shape.
func BenchmarkReadFast(b *testing.B) {
	body := []byte(`{"jsonrpc":"2.0","id":3,"method":"SendMessage","params":{"message":{"messageId":"bench-3","role":"ROLE_USER","parts":[{"data":{"skill":"get_products","input":{"adcp_version":"3.2-beta.5","buying_mode":"brief","brief":"Premium online video for a coffee brand launch in the US","filters":{"channels":["olv","ctv"],"budget_range":{"max":50000,"currency":"USD"},"countries":["US"]},"pagination":{"max_results":10}}}}]}}}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := readFast(body); !ok {
			b.Fatal("not read")
		}
	}
}
