package agent_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/storefront/storefront/adcp"
	"github.com/storefront/storefront/internal/kittest"
	"github.com/storefront/storefront/transport/a2aserver"
)

// binding is an A2A protocol binding: 1.0 (SendMessage) or 0.3
// (message/send), as an A2A client spells a message-send in it.
type binding struct {
	name, method, role string
	// dataPart and textPart spell a part; args is the invocation's
	// member for the arguments.
	dataPart, textPart func(string) string
	args               string
}

var bindings = []binding{
	{name: "1.0", method: "SendMessage", role: `"ROLE_USER"`, args: "input",
		dataPart: func(d string) string { return `{"data":` + d + `}` },
		textPart: func(t string) string { return `{"text":` + t + `}` }},
	{name: "0.3", method: "message/send", role: `"user"`, args: "parameters",
		dataPart: func(d string) string { return `{"kind":"data","data":` + d + `}` },
		textPart: func(t string) string { return `{"kind":"text","text":` + t + `}` }},
}

// invocation is the AdCP profile's {skill, input} data, args left out
// when "".
func (b binding) invocation(key, skill, args string) string {
	d := `{"skill":` + kittest.JSONString(skill)
	if args != "" {
		d += `,"` + key + `":` + args
	}
	return d + `}`
}

// envelope is one way of wrapping an invocation in a message-send: the
// plain one the fast path answers, and shapes around it, some it answers
// and some it leaves to a2a-go.
type envelope struct {
	name string
	body func(b binding, id, skill, args string) string
}

// message builds a message-send of the binding with the message's members
// after messageId (members, each with its leading comma).
func (b binding) message(id, members string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"` + b.method + `","params":{"message":{"messageId":"m-1","role":` + b.role + members + `}}}`
}

var envelopes = []envelope{
	{"plain", func(b binding, id, skill, args string) string {
		return b.message(id, `,"parts":[`+b.dataPart(b.invocation(b.args, skill, args))+`]`)
	}},
	{"contextId", func(b binding, id, skill, args string) string {
		return b.message(id, `,"contextId":"ctx-1","parts":[`+b.dataPart(b.invocation(b.args, skill, args))+`]`)
	}},
	{"contextId to escape", func(b binding, id, skill, args string) string {
		return b.message(id, `,"contextId":"c <&> \u00e9\"\\","parts":[`+b.dataPart(b.invocation(b.args, skill, args))+`]`)
	}},
	{"empty contextId", func(b binding, id, skill, args string) string {
		return b.message(id, `,"contextId":"","parts":[`+b.dataPart(b.invocation(b.args, skill, args))+`]`)
	}},
	{"advisory text first", func(b binding, id, skill, args string) string {
		return b.message(id, `,"parts":[`+b.textPart(`"AdCP task"`)+`,`+b.dataPart(b.invocation(b.args, skill, args))+`]`)
	}},
	{"input, not parameters", func(b binding, id, skill, args string) string {
		return b.message(id, `,"parts":[`+b.dataPart(b.invocation("input", skill, args))+`]`)
	}},
	{"parameters, not input", func(b binding, id, skill, args string) string {
		return b.message(id, `,"parts":[`+b.dataPart(b.invocation("parameters", skill, args))+`]`)
	}},
	{"spaced", func(b binding, id, skill, args string) string {
		return " \n" + strings.ReplaceAll(b.message(id, `, "parts" : [ `+b.dataPart(b.invocation(b.args, skill, args))+` ]`), `":`, `" : `) + "\n "
	}},
	{"kind message", func(b binding, id, skill, args string) string {
		return b.message(id, `,"kind":"message","parts":[`+b.dataPart(b.invocation(b.args, skill, args))+`]`)
	}},
	{"metadata", func(b binding, id, skill, args string) string {
		return b.message(id, `,"metadata":{"k":"v"},"parts":[`+b.dataPart(b.invocation(b.args, skill, args))+`]`)
	}},
	{"configuration", func(b binding, id, skill, args string) string {
		m := b.message(id, `,"parts":[`+b.dataPart(b.invocation(b.args, skill, args))+`]`)
		return strings.Replace(m, `"params":{`, `"params":{"configuration":{"acceptedOutputModes":["application/json"]},`, 1)
	}},
	{"a member a2a-go case-folds", func(b binding, id, skill, args string) string {
		return b.message(id, `,"Parts":[`+b.dataPart(b.invocation(b.args, skill, `{"brief":"x"}`))+`],"parts":[`+b.dataPart(b.invocation(b.args, skill, args))+`]`)
	}},
	{"extra invocation member", func(b binding, id, skill, args string) string {
		return b.message(id, `,"parts":[`+b.dataPart(`{"note":1,`+b.invocation(b.args, skill, args)[1:])+`]`)
	}},
	{"agent role", func(b binding, id, skill, args string) string {
		return strings.Replace(b.message(id, `,"parts":[`+b.dataPart(b.invocation(b.args, skill, args))+`]`), b.role, map[string]string{"1.0": `"ROLE_AGENT"`, "0.3": `"agent"`}[b.name], 1)
	}},
	{"two data parts", func(b binding, id, skill, args string) string {
		inv := b.dataPart(b.invocation(b.args, skill, args))
		return b.message(id, `,"parts":[`+inv+`,`+inv+`]`)
	}},
	{"a task to continue", func(b binding, id, skill, args string) string {
		return b.message(id, `,"taskId":"t-1","parts":[`+b.dataPart(b.invocation(b.args, skill, args))+`]`)
	}},
	{"a file part", func(b binding, id, skill, args string) string {
		return b.message(id, `,"parts":[`+b.dataPart(b.invocation(b.args, skill, args))+`,{"url":"https://cdn.example/x.mp4","mediaType":"video/mp4"}]`)
	}},
	{"no messageId", func(b binding, id, skill, args string) string {
		return strings.Replace(b.message(id, `,"parts":[`+b.dataPart(b.invocation(b.args, skill, args))+`]`), `"messageId":"m-1",`, ``, 1)
	}},
	{"streaming", func(b binding, id, skill, args string) string {
		m := b.message(id, `,"parts":[`+b.dataPart(b.invocation(b.args, skill, args))+`]`)
		return strings.Replace(strings.Replace(m, `"SendMessage"`, `"SendStreamingMessage"`, 1), `"message/send"`, `"message/stream"`, 1)
	}},
	{"trailing bytes", func(b binding, id, skill, args string) string {
		return b.message(id, `,"parts":[`+b.dataPart(b.invocation(b.args, skill, args))+`]`) + ` {}`
	}},
}

var (
	profileURI = a2aserver.ProfileURI
	refusalURI = a2aserver.RefusalURI
	// a2aHeaders are the header sets of each binding: the profile and the
	// refusal extension activated in each spelling, alone, together and
	// not at all, beside extensions the storefront does not serve.
	a2aHeaders = map[string][]map[string]string{
		"1.0": {
			{"Content-Type": "application/json", "A2A-Extensions": profileURI},
			{"Content-Type": "application/json", "A2A-Extensions": profileURI + ", " + refusalURI},
			{"A2A-Extensions": refusalURI + "," + profileURI},
			{"Content-Type": "application/json", "X-A2A-Extensions": profileURI},
			{"Content-Type": "application/json", "A2A-Extensions": profileURI, "X-A2A-Extensions": refusalURI},
			{"Content-Type": "text/plain", "A2A-Extensions": "https://example.com/other/v1, " + profileURI},
			{"Content-Type": "application/json"},
			{"Content-Type": "application/json", "A2A-Extensions": refusalURI},
		},
		"0.3": {
			{"Content-Type": "application/json"},
			{"Content-Type": "application/json", "X-A2A-Extensions": refusalURI},
			{"Content-Type": "application/json", "X-A2A-Extensions": "https://example.com/other/v1, " + refusalURI},
			{"A2A-Extensions": refusalURI},
			{"Content-Type": "application/json", "X-A2A-Extensions": profileURI + ", " + refusalURI},
			// Both spellings: a2a-go's 0.3 binding keeps one of them at
			// random, so only equal values answer the same every time.
			{"Content-Type": "application/json", "A2A-Extensions": refusalURI, "X-A2A-Extensions": refusalURI},
		},
	}
	tokens = []string{"buyer", kittest.Kit, "", "sf_buyer_not_a_real_token"}
)

// a2aCounter counts the exchanges a corpus sends and those of them the
// fast path reads as its own, by binding and skill, so that a corpus the
// fast path does not answer cannot pass for a proof.
type a2aCounter struct {
	sent, fast int
	read       map[string]int
}

func (n *a2aCounter) note(body string, h http.Header) {
	n.sent++
	if !a2aserver.Fast([]byte(body), h) {
		return
	}
	n.fast++
	if n.read == nil {
		n.read = map[string]int{}
	}
	b := "1.0"
	if strings.Contains(body, `"message/send"`) {
		b = "0.3"
	}
	m := skillName.FindStringSubmatch(body)
	if m != nil {
		n.read[b+" "+m[1]]++
	}
}

var skillName = regexp.MustCompile(`"skill":"([^"]*)"`)

// sameA2A sends a message-send to both programs and fails unless they
// answer alike, as a client reads the answer (a2aAnswer).
func (tw *twins) sameA2A(t testing.TB, n *a2aCounter, body string, headers map[string]string, token string) {
	h := http.Header{}
	for k, v := range headers {
		h.Set(k, v)
	}
	n.note(body, h)
	x := exchange{path: "/a2a", body: body, headers: headers, token: token}
	tw.mu.Lock()
	defer tw.mu.Unlock()
	fast, sdk := a2aAnswer(tw.post(tw.fast, x)), a2aAnswer(tw.post(tw.sdk, x))
	if fast != sdk {
		x.differ(t, "a2a-go", fast, sdk)
	}
}

// a2aAnswer is an A2A answer as a client reads it: the HTTP status, the
// headers a client reads, and the body as a JSON value, its numbers as
// written and its members sorted, with what two programs make differently
// by design normalised (ids, hashes, timestamps, ledger sequence numbers,
// lists of records named by generated ids). A body that is not one JSON
// value is compared as text.
func a2aAnswer(rec *httptest.ResponseRecorder) string {
	h := rec.Header()
	head := fmt.Sprintf("HTTP %d\nContent-Type: %q\nA2A-Extensions: %q\nX-A2A-Extensions: %q\nWWW-Authenticate: %s\n\n",
		rec.Code, h.Values("Content-Type"), h.Values("A2A-Extensions"), h.Values("X-A2A-Extensions"), normalise(h.Get("WWW-Authenticate")))
	raw := rec.Body.String()
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return head + normalise(raw)
	}
	if _, err := dec.Token(); err != io.EOF {
		return head + normalise(raw)
	}
	out, err := json.Marshal(generatedLists(normalisedValue(doc)))
	if err != nil {
		return head + normalise(raw)
	}
	return head + string(out)
}

// normalisedValue is normalise applied to each string of a JSON value, and
// each ledger sequence number blanked.
func normalisedValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if _, ok := e.(json.Number); ok && k == "sequence" {
				x[k] = "<n>"
				continue
			}
			x[k] = normalisedValue(e)
		}
	case []any:
		for i, e := range x {
			x[i] = normalisedValue(e)
		}
	case string:
		return normalise(x)
	}
	return v
}

// a2aArms are get_products requests for every arm, each at a version that
// has it: completed (products, and a genuine no-match), rejected (fixable
// and final), failed (a malformed request, a decline to a 3.1 buyer), and
// an unsupported version.
var a2aArms = []string{
	`{"adcp_version":"3.2-beta.5","buying_mode":"brief","brief":"Coffee brand launch video","filters":{"channels":["olv"]},"pagination":{"max_results":2},"context":{"correlation_id":"a2a-completed"}}`,
	`{"adcp_version":"3.2-beta.5","buying_mode":"wholesale","filters":{"channels":["olv"],"delivery_type":"guaranteed","format_kinds":["audio_hosted"]}}`,
	`{"adcp_version":"3.2-beta.5","buying_mode":"brief","brief":"Billboards for a coffee launch","filters":{"channels":["dooh"]}}`,
	`{"adcp_version":"3.2-beta.5","buying_mode":"brief","brief":"Coffee brand launch video","filters":{"budget_range":{"max":100,"currency":"USD"}},"context":{"correlation_id":"a2a-rejected"}}`,
	`{"adcp_version":"3.2-beta.4","buying_mode":"brief","brief":"Online casino welcome bonus"}`,
	`{"adcp_version":"3.2-beta.5","buying_mode":"brief","brief":42}`,
	`{"adcp_version":"3.1","buying_mode":"brief","brief":"Coffee brand launch video","filters":{"budget_range":{"max":100,"currency":"USD"}}}`,
	`{"adcp_version":"3.2-rc.8","buying_mode":"brief","brief":"coffee"}`,
	`{"adcp_version":"3.2-beta.5","idempotency_key":"a2a-fast-replay-0001","buying_mode":"brief","brief":"Billboards for a coffee launch","filters":{"channels":["dooh"]}}`,
	`{"adcp_version":"3.2-beta.5","buying_mode":"brief","brief":"coffee & <b>cream</b> for ` + "\u00e9t\u00e9 \u2028" + `","filters":{"budget_range":{"max":100,"currency":"USD"}}}`,
}

// TestA2AFastPathMatchesA2AGo sends a corpus through the A2A fast path and
// through a2a-go and requires the same answer: the same HTTP status and
// Content-Type, A2A-Extensions, X-A2A-Extensions and WWW-Authenticate
// headers, and the same JSON-RPC response as JSON values (fast.go says
// what differs byte for byte, and why a client cannot tell). The corpus:
// every arm over both bindings with the refusal extension on and off;
// every tool, with documents generated from its official request schema
// at every served version and unserved ones, arguments absent, empty and
// of the wrong type; ids of every JSON type; credentials good, bad and
// absent; the profile missing on 1.0; and the message shapes the fast
// path must leave to a2a-go.
func TestA2AFastPathMatchesA2AGo(t *testing.T) {
	tw := newTwins(t)
	var n a2aCounter
	for _, b := range bindings {
		hs := a2aHeaders[b.name]
		// Every arm, with the refusal extension on and off, under each
		// set of credentials.
		for i, args := range a2aArms {
			for j, h := range hs {
				tw.sameA2A(t, &n, envelopes[(i+j)%6].body(b, ids[(i+j)%len(ids)], "get_products", args), h, tokens[(i+j)%len(tokens)])
			}
		}
		// Every tool at every version, and with broken arguments.
		versions := append(adcp.SupportedStrings(), "", "3.2-rc.8")
		for _, tool := range tw.tools {
			for i, v := range versions {
				args := tw.pinned(tool, fmt.Sprint("a2a", b.name, tool, i), v)
				tw.sameA2A(t, &n, envelopes[i%5].body(b, ids[i%len(ids)], tool, args), hs[i%len(hs)], tokens[i%3])
			}
			for _, args := range brokenArgs {
				tw.sameA2A(t, &n, envelopes[0].body(b, `2`, tool, args), hs[0], "buyer")
			}
		}
		// Ids of every JSON type, under every header set.
		for i, id := range ids {
			for j, h := range hs {
				tw.sameA2A(t, &n, envelopes[0].body(b, id, "get_products", a2aArms[2]), h, tokens[(i+j)%3])
			}
		}
		// Every message shape, and what a2a-go refuses around it.
		for _, e := range envelopes {
			for _, tok := range tokens {
				tw.sameA2A(t, &n, e.body(b, `7`, "get_products", a2aArms[3]), hs[1], tok)
			}
		}
		for _, skill := range []string{"no_such_skill", "", "acquire_rights"} {
			tw.sameA2A(t, &n, envelopes[0].body(b, `8`, skill, `{}`), hs[0], "buyer")
		}
	}
	// The other binding's method on each; methods that are not sends.
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":9,"method":"GetTask","params":{"id":"t-1"}}`,
		`{"jsonrpc":"2.0","id":9,"method":"tasks/get","params":{"id":"t-1"}}`,
		`{"jsonrpc":"2.0","id":9,"method":"SendMessage"}`,
		`{"jsonrpc":"2.0","id":9,"method":"SendMessage","params":null}`,
		`{"jsonrpc":"1.0","id":9,"method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"data":{"skill":"get_products","input":{}}}]}}}`,
		`{"jsonrpc":"2.0","id":9,"method":"SendMessage","params":{"message":{"messageId":"m","role":"user","parts":[{"data":{"skill":"get_products","input":{}}}]}}}`,
		`{"jsonrpc":"2.0","id":9,"method":"message/send","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"kind":"data","data":{"skill":"get_products","input":{}}}]}}}`,
		`{"jsonrpc":"2.0","id":9,"method":"message/send","params":{"message":{"messageId":"m","role":"user","parts":[{"data":{"skill":"get_products","input":{}}}]}}}`,
		`[{"jsonrpc":"2.0","id":9,"method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"data":{"skill":"get_products","input":{}}}]}}}]`,
	} {
		tw.sameA2A(t, &n, body, a2aHeaders["1.0"][1], "buyer")
	}
	if n.sent < 1000 || n.fast < 400 {
		t.Fatalf("%d exchanges compared, %d of them read by the fast path; want at least 1000 and 400", n.sent, n.fast)
	}
	for _, b := range bindings {
		for _, tool := range tw.tools {
			if n.read[b.name+" "+tool] == 0 {
				t.Errorf("no exchange of %s over A2A %s was the fast path's", tool, b.name)
			}
		}
	}
	t.Logf("%d A2A exchanges answered alike by the fast path and a2a-go, %d of them read by the fast path", n.sent, n.fast)
}

// FuzzA2AFastPath sends generated message-sends to both programs and
// requires the same answer: arguments FuzzDispatch generates (or the
// fuzzer's raw bytes), in every envelope shape, over both bindings, under
// every header set, id and set of credentials.
func FuzzA2AFastPath(f *testing.F) {
	tw := newTwins(f)
	tw.seed(f)
	f.Add(uint8(0), uint8(2), uint8(0), uint8(3), []byte(`{"buying_mode":"brief","brief":"Billboards","filters":{"channels":["dooh"]}}`))
	versions := adcp.SupportedStrings()
	var n a2aCounter
	f.Fuzz(func(t *testing.T, toolByte, pick, creds, mode uint8, data []byte) {
		tool := tw.tools[int(toolByte)%len(tw.tools)]
		b := bindings[int(pick)%len(bindings)]
		hs := a2aHeaders[b.name]
		args := tw.fuzzArgs(tool, data, versions[int(pick>>1)%len(versions)], mode)
		e := envelopes[int(mode>>4)%len(envelopes)]
		tw.sameA2A(t, &n, e.body(b, ids[int(pick>>2)%len(ids)], tool, args), hs[int(pick>>4)%len(hs)], tokens[int(creds)%len(tokens)])
	})
}
