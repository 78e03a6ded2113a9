package agent_test

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/storefront/storefront/adcp"
	"github.com/storefront/storefront/internal/kittest"
	"github.com/storefront/storefront/internal/schemagen"
	"github.com/storefront/storefront/internal/spectest"
	"github.com/storefront/storefront/internal/testenv"
)

// twins are two copies of the sandbox program, one answering tools/call on
// the MCP fast path and message-sends on the A2A one, and one through the
// SDKs alone (--mcp-sdk-only, --a2a-sdk-only). Every request goes to both,
// in the same order, so their states stay the same.
type twins struct {
	fast, sdk *testenv.Env
	gen       *schemagen.Generator
	tools     []string
	mu        sync.Mutex
}

var (
	twinsOnce sync.Once
	twinsEnv  *twins
)

func newTwins(t testing.TB) *twins {
	twinsOnce.Do(func() {
		gen, err := schemagen.Load(filepath.Join(spectest.Dir(t), "schemas"))
		if err != nil {
			t.Fatal(err)
		}
		tw := &twins{fast: testenv.Start(t, "--sandbox"), sdk: testenv.Start(t, "--sandbox", "--mcp-sdk-only", "--a2a-sdk-only"), gen: gen}
		tw.tools = listTools(t, tw.fast)
		twinsEnv = tw
	})
	if twinsEnv == nil {
		t.Fatal("the twin programs could not start")
	}
	return twinsEnv
}

// exchange is one MCP or A2A request as sent: its body and headers.
type exchange struct {
	// path is /mcp unless set.
	path    string
	body    string
	headers map[string]string
	// token picks the credentials: "buyer" (each program's own demo
	// buyer), a literal token, or "" for none.
	token string
}

// answer is what came back, with what differs by construction between two
// programs (generated ids, hashes, timestamps, request ids) normalised.
func (tw *twins) send(t testing.TB, env *testenv.Env, x exchange) string {
	rec := tw.post(env, x)
	h := rec.Header()
	return fmt.Sprintf("HTTP %d\nContent-Type: %s\nCache-Control: %s\nContent-Length: %s\nWWW-Authenticate: %s\n\n%s",
		rec.Code, h.Get("Content-Type"), h.Get("Cache-Control"), h.Get("Content-Length"), normalise(h.Get("WWW-Authenticate")), normalise(rec.Body.String()))
}

// post sends x to env's HTTP handler.
func (tw *twins) post(env *testenv.Env, x exchange) *httptest.ResponseRecorder {
	path := x.path
	if path == "" {
		path = "/mcp"
	}
	req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(x.body))
	for k, v := range x.headers {
		req.Header.Set(k, v)
	}
	switch x.token {
	case "":
	case "buyer":
		req.Header.Set("Authorization", "Bearer "+env.BuyerToken)
	default:
		req.Header.Set("Authorization", "Bearer "+x.token)
	}
	rec := httptest.NewRecorder()
	env.Main.Server.Echo.ServeHTTP(rec, req)
	return rec
}

var (
	hexRun    = regexp.MustCompile(`[0-9a-f]{12,}`)
	uuid      = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	timestamp = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)`)
	sequence  = regexp.MustCompile(`\\?"sequence\\?":\d+`)
	loopback  = regexp.MustCompile(`127\.0\.0\.1:\d+`)
)

// normalise blanks what two programs make differently by design; a
// Content-Length computed from such a body is compared as it was sent.
func normalise(s string) string {
	s = uuid.ReplaceAllString(s, "<uuid>")
	s = hexRun.ReplaceAllStringFunc(s, func(h string) string {
		if strings.Trim(h, "0123456789") == "" {
			return h // a number, such as an id, not a generated hex id
		}
		return "<hex>"
	})
	s = timestamp.ReplaceAllString(s, "<time>")
	s = loopback.ReplaceAllString(s, "<origin>")
	return sequence.ReplaceAllString(s, `"sequence":<n>`)
}

// same sends x to both programs and fails unless they answer alike.
func (tw *twins) same(t testing.TB, x exchange) {
	tw.mu.Lock()
	defer tw.mu.Unlock()
	fast, sdk := tw.send(t, tw.fast, x), tw.send(t, tw.sdk, x)
	if fast != sdk && canonical(fast) == canonical(sdk) {
		// Records named by generated ids differ between the programs;
		// the encoding was compared byte for byte on every other answer.
		return
	}
	if fast != sdk {
		x.differ(t, "the SDK", fast, sdk)
	}
}

// differ fails t for answers to x from the fast path and from sdk (the
// SDK it stands in front of) that differ, showing where.
func (x exchange) differ(t testing.TB, sdkName, fast, sdk string) {
	t.Helper()
	at := 0
	for at < min(len(fast), len(sdk)) && fast[at] == sdk[at] {
		at++
	}
	from := max(0, at-200)
	t.Fatalf("the fast path and %s answer %.600s (headers %v, token %q) differently from byte %d:\nfast path: …%.600s\n%s: …%.600s",
		sdkName, x.body, x.headers, x.token, at, fast[from:], sdkName, sdk[from:])
}

var (
	mcpHeaders = map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-06-18"}
	headerSets = []map[string]string{
		mcpHeaders,
		{"Content-Type": "application/json", "Accept": "application/json, text/event-stream"},
		{"Content-Type": "application/json; charset=utf-8", "Accept": "application/json", "MCP-Protocol-Version": "2025-11-25"},
		{"Content-Type": "application/json", "Accept": "*/*", "MCP-Protocol-Version": "2025-03-26"},
		{"Content-Type": "application/json", "Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2024-11-05"},
		{"Content-Type": "application/json", "Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2026-07-28"},
		{"Content-Type": "application/json", "Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "1999-01-01"},
		{"Content-Type": "text/plain", "Accept": "application/json, text/event-stream"},
		{"Content-Type": "application/json", "Accept": "text/html"},
		{"Content-Type": "application/json", "Accept": "text/event-stream"},
		{"Content-Type": "application/json", "Accept": "application/json, text/event-stream", "Origin": "https://buyer.example"},
		{"Content-Type": "application/json", "Accept": "application/json, text/event-stream", "Mcp-Session-Id": "abc"},
		{"Content-Type": "application/json", "Accept": "Application/JSON;q=0.9 , TEXT/Event-Stream", "MCP-Protocol-Version": "2025-06-18"},
		{"Content-Type": "application/json", "Accept": ",application/*,,text/*,", "MCP-Protocol-Version": "2025-06-18"},
		{"Content-Type": "application/json", "Accept": "application/jſon, text/event-ſtream", "MCP-Protocol-Version": "2025-06-18"},
		{"Content-Type": "application/json", "Accept": "applİcation/json, text/event-stream", "MCP-Protocol-Version": "2025-06-18"},
	}
	ids = []string{`1`, `0`, `-7`, `123456789012345`, `1.5`, `1e3`, `"call-1"`, `"a b"`, `"<&>"`, `null`, `{}`}
)

func toolCall(id, tool, args string) string {
	params := `{"name":` + kittest.JSONString(tool)
	if args != "" {
		params += `,"arguments":` + args
	}
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":` + params + `}}`
}

// TestFastPathMatchesTheSDK sends a corpus through the fast path and
// through the SDK and requires the same answer, status and headers:
// every tool with documents generated from its official request schema
// at every served version and unserved ones, arguments absent, empty and
// of the wrong type, ids of every JSON type, each protocol-version,
// Accept and Content-Type header, credentials good, bad and absent, and
// the requests the fast path must leave to the SDK (params beyond name
// and arguments, unknown tools, other methods, batches).
func TestFastPathMatchesTheSDK(t *testing.T) {
	tw := newTwins(t)
	versions := append(adcp.SupportedStrings(), "", "3.2-rc.8")
	n := 0
	for _, tool := range tw.tools {
		for i, v := range versions {
			args := tw.pinned(tool, fmt.Sprint(tool, i), v)
			tw.same(t, exchange{body: toolCall(ids[i%len(ids)], tool, args), headers: headerSets[i%len(headerSets)], token: []string{"buyer", kittest.Kit, ""}[i%3]})
			n++
		}
		for _, args := range brokenArgs {
			tw.same(t, exchange{body: toolCall(`2`, tool, args), headers: mcpHeaders, token: "buyer"})
			n++
		}
	}
	for i, id := range ids {
		for j, h := range headerSets {
			tok := []string{"buyer", "", "sf_buyer_not_a_real_token"}[(i+j)%3]
			tw.same(t, exchange{body: toolCall(id, "get_products", `{"adcp_version":"3.2-beta.5","buying_mode":"brief","brief":"coffee & <b>cream</b> for "+"`+"\u00e9t\u00e9"+`","filters":{"budget_range":{"max":100,"currency":"USD"}}}`), headers: h, token: tok})
			n++
		}
	}
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"get_products","arguments":{"buying_mode":"wholesale"},"_meta":{"progressToken":1}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"no_such_tool","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"arguments":{}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":3,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"tools/call","params":{"name":"get_products","arguments":{}}}`,
		`[{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"get_products","arguments":{"buying_mode":"wholesale"}}}]`,
		`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"get_products","arguments":{"buying_mode":"wholesale"},"name":"list_accounts"}}`,
	} {
		tw.same(t, exchange{body: body, headers: mcpHeaders, token: "buyer"})
		n++
	}
	if n < 300 {
		t.Fatalf("only %d exchanges compared", n)
	}
	t.Logf("%d exchanges answered alike by the fast path and the SDK", n)
}

// FuzzFastPath sends what FuzzDispatch generates to both programs and
// requires the same answer.
func FuzzFastPath(f *testing.F) {
	tw := newTwins(f)
	tw.seed(f)
	versions := adcp.SupportedStrings()
	f.Fuzz(func(t *testing.T, toolByte, pick, creds, mode uint8, data []byte) {
		tool := tw.tools[int(toolByte)%len(tw.tools)]
		args := tw.fuzzArgs(tool, data, versions[int(pick)%len(versions)], mode)
		tw.same(t, exchange{body: toolCall(ids[int(pick)%len(ids)], tool, args), headers: headerSets[int(pick>>4)%len(headerSets)],
			token: []string{"buyer", kittest.Kit, "", "sf_buyer_not_a_real_token"}[int(creds)%4]})
	})
}

// brokenArgs are arguments no tool reads as a request: absent, empty, of
// the wrong type, with a version of the wrong type, and at a version that
// cannot carry what they ask.
var brokenArgs = []string{"", `{}`, `[]`, `"x"`, `null`, `{"adcp_version":3}`, `{"context":{"trace":"t-1"},"adcp_version":"3.1"}`}

// pinned is a document generated from tool's official request schema with
// the entropy of seed, pinned to version ("" for no pin).
func (tw *twins) pinned(tool, seed, version string) string {
	entropy := sha256.Sum256([]byte(seed))
	doc := tw.gen.Generate(fuzzRequests[tool], schemagen.NewSource(entropy[:]))
	if m, ok := doc.(map[string]any); ok {
		delete(m, "adcp_major_version")
		delete(m, "adcp_version")
		if version != "" {
			m["adcp_version"] = version
		}
	}
	return string(schemagen.Encode(doc))
}

// fuzzArgs are the arguments a fuzz input picks: for an even mode a
// document generated from tool's request schema with data's entropy,
// pinned to version and mutated mode/2 % 6 times; for an odd one, data
// itself.
func (tw *twins) fuzzArgs(tool string, data []byte, version string, mode uint8) string {
	if mode&1 == 1 {
		return string(data)
	}
	src := schemagen.NewSource(data)
	doc := tw.gen.Generate(fuzzRequests[tool], src)
	if m, ok := doc.(map[string]any); ok {
		delete(m, "adcp_major_version")
		m["adcp_version"] = version
	}
	return string(schemagen.Encode(schemagen.Mutate(doc, src, int(mode>>1)%6)))
}

// seed adds the corpus both fast-path fuzz targets start from: each tool
// with no entropy and with some, and raw arguments that are not UTF-8.
func (tw *twins) seed(f *testing.F) {
	for i := range tw.tools {
		f.Add(uint8(i), uint8(0), uint8(0), uint8(0), []byte{})
		f.Add(uint8(i), uint8(3), uint8(1), uint8(2), []byte("\x01\x07\x03\x05\x02\x06\x04\x07"))
	}
	f.Add(uint8(0), uint8(1), uint8(2), uint8(1), []byte(`{"brief":"caf`+"\xff"+`"}`))
}

// canonical is an answer decoded and encoded again, the text mirror
// included, with each list of records named by a generated id
// (accounts, media buys, tasks) reduced to its length: each program
// orders such records by ids it drew at random, so a page of them holds
// different members on each.
func canonical(answer string) string {
	head, body, _ := strings.Cut(answer, "\n\n")
	var doc any
	if json.Unmarshal([]byte(body), &doc) != nil {
		return answer
	}
	out, _ := json.Marshal(generatedLists(doc))
	return head + "\n\n" + string(out)
}

func generatedLists(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if s, ok := e.(string); ok && k == "text" {
				var inner any
				if json.Unmarshal([]byte(s), &inner) == nil {
					b, _ := json.Marshal(generatedLists(inner))
					x[k] = string(b)
				}
				continue
			}
			x[k] = generatedLists(e)
		}
	case []any:
		named := len(x) > 0
		for i, e := range x {
			x[i] = generatedLists(e)
			m, ok := e.(map[string]any)
			named = named && ok && (m["account_id"] != nil || m["media_buy_id"] != nil || m["task_id"] != nil)
		}
		if named {
			return fmt.Sprintf("<%d records>", len(x))
		}
	}
	return v
}

// TestLentPayloadsStayTheirOwn sends distinct get_products calls on the
// fast path from many goroutines at once, where each answer's payload is
// encoded into a buffer the one before handed back and each request is
// parsed into a slab another request returned, and requires every answer
// to be the one its request gets alone: no buffer or slab is handed to a
// second request while the first is still using it.
func TestLentPayloadsStayTheirOwn(t *testing.T) {
	tw := newTwins(t)
	briefs := []string{
		`{"adcp_version":"3.2-beta.5","buying_mode":"brief","brief":"Coffee brand launch video"}`,
		`{"adcp_version":"3.2-beta.5","buying_mode":"wholesale"}`,
		`{"adcp_version":"3.2-beta.5","buying_mode":"wholesale","pagination":{"max_results":1}}`,
		`{"adcp_version":"3.2-beta.5","buying_mode":"brief","brief":"podcast audio for runners","fields":["product_id","name","brief_relevance"]}`,
		`{"adcp_version":"3.2-beta.5","buying_mode":"brief","brief":"display","context":{"who":"the fifth buyer"}}`,
	}
	want := make([]string, len(briefs))
	for i, args := range briefs {
		want[i] = tw.send(t, tw.fast, exchange{body: toolCall(fmt.Sprint(i), "get_products", args), headers: mcpHeaders, token: "buyer"})
		if !strings.Contains(want[i], `\"status\":\"completed\"`) {
			t.Fatalf("%s was not answered with products:\n%s", args, want[i])
		}
	}
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for g := range 8 {
		wg.Go(func() {
			for n := range 40 {
				i := (g + n*3) % len(briefs)
				if got := tw.send(t, tw.fast, exchange{body: toolCall(fmt.Sprint(i), "get_products", briefs[i]), headers: mcpHeaders, token: "buyer"}); got != want[i] {
					errs <- fmt.Sprintf("%s answered\n%s\nwhere alone it was answered\n%s", briefs[i], got, want[i])
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
}
