package e2e

import (
	"encoding/json"
	"fmt"
	"maps"
	"math/rand"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/storefront/storefront/internal/rawhttp"
	"github.com/storefront/storefront/internal/spectest"
)

// badCase is one malformed request of the bad-input suite.
type badCase struct {
	surface string // mcp, a2a or admin
	group   string // what is wrong with it: wrong-type, invalid-json, …
	name    string
	// tool is the tool or skill the request calls, when it calls one.
	tool           string
	method, target string
	headers        []string
	body           []byte
	// raw, when set, builds the whole request (for heads rawhttp.Request
	// would mend, such as one without Host).
	raw func(addr string) []byte
	// refuse says the request is invalid: an answer that takes it (an
	// AdCP completed, rejected or submitted; a 2xx on admin) is a finding.
	refuse bool
	// http allows net/http's own refusal of a malformed head (a bare 400
	// or 431 before any surface sees the request).
	http bool
	// notification allows a 202 with no body: a JSON-RPC notification
	// gets no answer.
	notification bool
	// preview marks the admin preview, whose answer to a malformed
	// get_products request is the buyer's failed arm in a 200.
	preview bool
}

// request is the case's bytes for a storefront at addr.
func (c badCase) request(addr string) []byte {
	if c.raw != nil {
		return c.raw(addr)
	}
	return rawhttp.Request(addr, c.method, c.target, c.headers, c.body)
}

const (
	mcpProfile = "https://adcontextprotocol.org/extensions/adcp/v3"
	// pin is the release the suite's calls ask for, so that every arm
	// (the rejected one too) may be served.
	pin = "3.2-beta.5"
	// tenMiB is the size of the suite's huge bodies.
	tenMiB = 10 << 20
	// deep is how deeply the suite nests, past encoding/json's own limit
	// of 10,000.
	deep = 10_001
)

// generator builds the suite's cases from the official request schemas,
// the tools the storefront lists and the tokens it was started with.
type generator struct {
	t            *testing.T
	spec         string
	buyer, admin string
	tools        []string
	// rounds is how many times the schema-derived cases are drawn, each
	// round with the next wrong value of every field and random
	// combinations (STOREFRONT_BADINPUT_ROUNDS).
	rounds int
	rnd    *rand.Rand
	n      int
	check  func(rel string, body []byte) error
	tool   func(name string) spectest.Tool
}

func (g *generator) next() int { g.n++; return g.n }

// mcpCall is a tools/call of tool with args, bytes as they are.
func (g *generator) mcpCall(tool string, args []byte) []byte {
	return []byte(`{"jsonrpc":"2.0","id":` + strconv.Itoa(g.next()) + `,"method":"tools/call","params":{"name":` + quote(tool) + `,"arguments":` + string(args) + `}}`)
}

// a2aCall is an A2A 1.0 SendMessage of the AdCP profile: one data part
// {skill, input}, bytes as they are.
func (g *generator) a2aCall(skill string, input []byte) []byte {
	n := strconv.Itoa(g.next())
	return []byte(`{"jsonrpc":"2.0","id":` + n + `,"method":"SendMessage","params":{"message":{"messageId":"bad-` + n +
		`","role":"ROLE_USER","parts":[{"data":{"skill":` + quote(skill) + `,"input":` + string(input) + `}}]}}}`)
}

func (g *generator) mcpHeaders(extra ...string) []string {
	return append([]string{"Content-Type: application/json", "Accept: application/json, text/event-stream", "Authorization: Bearer " + g.buyer}, extra...)
}

func (g *generator) a2aHeaders(extra ...string) []string {
	return append([]string{"Content-Type: application/json", "A2A-Extensions: " + mcpProfile, "Authorization: Bearer " + g.buyer}, extra...)
}

func quote(s string) string { b, _ := json.Marshal(s); return string(b) }

// baseArgs is a valid-looking request of tool, for a case to spoil one
// field of: the fields a buyer would send, with a fresh idempotency key
// where the task requires one.
func (g *generator) baseArgs(tool string) map[string]any {
	a := map[string]any{"adcp_version": pin}
	account := map[string]any{"brand": map[string]any{"domain": "acme.example"}, "operator": "pinnacle-agency.example"}
	start := time.Now().UTC().AddDate(0, 0, 2).Format("2006-01-02")
	end := time.Now().UTC().AddDate(0, 0, 40).Format("2006-01-02")
	switch tool {
	case "get_products":
		a["buying_mode"], a["brief"] = "brief", "Display for a coffee brand launch"
		a["filters"] = map[string]any{"channels": []any{"display"}, "budget_range": map[string]any{"max": 5000, "currency": "USD"}}
	case "create_media_buy":
		a["account"], a["brand"] = account, map[string]any{"domain": "acme.example"}
		a["start_time"], a["end_time"] = start+"T00:00:00Z", end+"T00:00:00Z"
		a["packages"] = []any{map[string]any{"product_id": "nw_display_ros_mrec", "pricing_option_id": "cpm_usd_floor_ros", "budget": 5000}}
	case "update_media_buy":
		a["account"], a["media_buy_id"], a["paused"] = account, "mb_does_not_exist", true
	case "get_media_buys", "get_media_buy_delivery", "list_accounts":
		a["account"] = account
	case "sync_accounts":
		a["accounts"] = []any{map[string]any{"brand": map[string]any{"domain": "acme.example"}, "operator": "pinnacle-agency.example", "billing": "operator"}}
	case "sync_governance":
		a["accounts"] = []any{map[string]any{"account": account, "governance_agents": []any{map[string]any{"url": "https://gov.example/mcp"}}}}
	case "get_task_status", "tasks/get":
		a["task_id"], a["account"] = "task_does_not_exist", account
	case "list_tasks", "tasks/list":
		a["account"] = account
	}
	if g.tool(tool).Idempotency == "required" {
		a["idempotency_key"] = fmt.Sprintf("badinput-%d-%d", time.Now().UnixNano(), g.next())
	}
	return a
}

// setPath returns a copy of doc with v at path ("[]" enters an array's
// first item, making one when there is none).
func setPath(doc any, path []string, v json.RawMessage) any {
	if len(path) == 0 {
		return v
	}
	if path[0] == "[]" {
		arr, _ := doc.([]any)
		var first any
		if len(arr) > 0 {
			first = arr[0]
		}
		out := append([]any{setPath(first, path[1:], v)}, arr[min(1, len(arr)):]...)
		return out
	}
	m, _ := doc.(map[string]any)
	out := make(map[string]any, len(m)+1)
	for k, x := range m {
		out[k] = x
	}
	out[path[0]] = setPath(m[path[0]], path[1:], v)
	return out
}

// wrongTypes are a value of each JSON type, as JSON.
var wrongTypes = []struct{ typ, raw string }{
	{"string", `"wrong"`}, {"integer", `12345`}, {"number", `1.5`}, {"boolean", `true`},
	{"object", `{"unexpected":1}`}, {"array", `["unexpected"]`}, {"null", `null`},
}

// wrongValues are values of the types f does not allow.
func wrongValues(f field) []string {
	if len(f.types) == 0 {
		return nil
	}
	var out []string
	for _, w := range wrongTypes {
		if f.types[w.typ] || w.typ == "integer" && f.types["number"] {
			continue
		}
		out = append(out, w.raw)
	}
	return out
}

// rangeValues are values of f's own type that break its other rules:
// below its minimum or above its maximum, numbers no float64 holds,
// negative budgets, members of no enum, impossible dates, empty strings,
// strings past their length.
func rangeValues(f field) []string {
	var out []string
	name := f.path[len(f.path)-1]
	if f.types["number"] || f.types["integer"] {
		if f.minimum != nil {
			out = append(out, strconv.FormatFloat(*f.minimum-1, 'f', -1, 64))
		}
		if f.maximum != nil {
			out = append(out, strconv.FormatFloat(*f.maximum+1, 'f', -1, 64))
		}
		if strings.Contains(strings.Join(f.path, "."), "budget") || name == "min" || name == "max" {
			out = append(out, `-1`)
		}
		out = append(out, `1e400`, `-1e400`)
		if f.types["integer"] {
			out = append(out, `123456789012345678901234567890`)
		}
	}
	if f.types["string"] {
		if f.enum {
			out = append(out, `"not_a_member_of_the_enum"`)
		}
		switch f.format {
		case "date":
			out = append(out, `"2026-02-30"`)
		case "date-time":
			out = append(out, `"2026-02-30T25:61:00Z"`)
		case "uri", "uri-reference":
			out = append(out, `"not a uri at all"`)
		case "email":
			out = append(out, `"not-an-email"`)
		}
		// The empty string, which many schemas allow and code may not.
		out = append(out, `""`)
		if f.maxLength > 0 && f.maxLength <= 100_000 {
			out = append(out, quote(strings.Repeat("a", f.maxLength+1)))
		}
	}
	return out
}

// toolCases spoils every field of tool's official request schema (to
// depth), one at a time: a value of a wrong type, and values of the right
// type out of range. wrap builds the request from the arguments.
func (g *generator) toolCases(surface, tool string, depth, every int, wrap func(tool string, args []byte) badCase) []badCase {
	e := g.tool(tool)
	fields := schemaFields(g.t, g.spec, filepath.Join(g.spec, "schemas", e.Request), depth)
	var out []badCase
	add := func(group string, f field, v string) {
		args, _ := json.Marshal(setPath(g.baseArgs(tool), f.path, json.RawMessage(v)))
		c := wrap(tool, args)
		c.surface, c.group, c.tool = surface, group, tool
		c.name = fmt.Sprintf("%s %s = %.60s", tool, f, v)
		c.refuse = g.check(e.Request, args) != nil
		out = append(out, c)
		if tool == "get_products" && len(out)%5 == 0 {
			out = append(out, anonymous(c))
		}
	}
	for i, f := range fields {
		if i%every != 0 {
			continue
		}
		for r := range g.rounds {
			if w := wrongValues(f); len(w) > 0 {
				add("wrong-type", f, w[(i+r)%len(w)])
			}
			rv := rangeValues(f)
			if len(rv) == 0 {
				continue
			}
			if tool == "get_products" && r == 0 && (f.types["number"] || f.types["integer"]) && len(f.path) <= 3 {
				// Every bad number of get_products' own fields: budgets,
				// ranges, pages (deeper ones take turns, as strings do).
				for _, v := range rv {
					add("out-of-range", f, v)
				}
			} else {
				add("out-of-range", f, rv[(i+r)%len(rv)])
			}
		}
	}
	// Later rounds also spoil several fields at once.
	for range (g.rounds - 1) * len(fields) / max(every, 1) / 4 {
		doc := any(g.baseArgs(tool))
		var names []string
		for range 2 + g.rnd.Intn(3) {
			f := fields[g.rnd.Intn(len(fields))]
			vals := append(wrongValues(f), rangeValues(f)...)
			if len(vals) == 0 {
				continue
			}
			v := vals[g.rnd.Intn(len(vals))]
			doc = setPath(doc, f.path, json.RawMessage(v))
			names = append(names, f.String())
		}
		args, _ := json.Marshal(doc)
		c := wrap(tool, args)
		c.surface, c.group, c.tool = surface, "combined", tool
		c.name = tool + " " + strings.Join(names, ", ")
		c.refuse = g.check(e.Request, args) != nil
		out = append(out, c)
	}
	return out
}

// mcpTool and a2aTool wrap a tool call, made with the demo buyer's token.
func (g *generator) mcpTool(tool string, args []byte) badCase {
	return badCase{method: "POST", target: "/mcp", headers: g.mcpHeaders(), body: g.mcpCall(tool, args)}
}

func (g *generator) a2aTool(tool string, args []byte) badCase {
	return badCase{method: "POST", target: "/a2a", headers: g.a2aHeaders(), body: g.a2aCall(tool, args)}
}

// anonymous is c made without credentials, the way public discovery
// comes.
func anonymous(c badCase) badCase {
	c.headers = withHeader(c.headers, "Authorization", "")
	c.name += " (anonymous)"
	return c
}

// nested is v inside depth arrays.
func nested(depth int, v string) string {
	return strings.Repeat("[", depth) + v + strings.Repeat("]", depth)
}

// nestedObjects is v inside depth objects {"a": …}.
func nestedObjects(depth int, v string) string {
	return strings.Repeat(`{"a":`, depth) + v + strings.Repeat("}", depth)
}

// invalidJSON are bodies that are not JSON, or not one JSON value.
var invalidJSON = []string{
	``, ` `, `{`, `}`, `[`, `{"jsonrpc":"2.0"`, `{"jsonrpc":"2.0",}`, `{'jsonrpc':'2.0'}`, `{"a":NaN}`, `{"a":Infinity}`,
	`{/* comment */}`, `nul`, `{"a":01}`, `{"a":"\q"}`, `{"a":"\u12"}`, "{\"a\":\"line\nbreak\"}", `{"a":1,,"b":2}`,
	`{} {}`, `{"jsonrpc":"2.0"} trailing`, `{"a" 1}`, "\x00", `{"a":-}`, `{"a":.5}`, `{"a":tru}`,
}

// invalidUTF8 builds calls whose text is not UTF-8 (or names code points
// that are not characters).
func invalidUTF8(call func(args string) []byte) [][]byte {
	return [][]byte{
		call(`{"brief":"coffee ` + "\xff\xfe" + ` launch","buying_mode":"brief"}`),
		call(`{"brief":"overlong ` + "\xc0\xaf" + `","buying_mode":"brief"}`),
		call(`{"brief":"cut ` + "\xe2\x82" + `","buying_mode":"brief"}`),
		call(`{"brief":"surrogate \ud800 alone","buying_mode":"brief"}`),
		call(`{"br` + "\xff" + `ief":"key","buying_mode":"brief"}`),
		call(`{"brief":"nul \u0000 inside","buying_mode":"brief"}`),
		call(`{"brief":"` + "\xed\xa0\x80" + ` encoded surrogate","buying_mode":"brief"}`),
		append([]byte("\xef\xbb\xbf"), call(`{"brief":"after a BOM","buying_mode":"brief"}`)...),
		append([]byte("\xfe\xff"), call(`{"brief":"UTF-16 BOM","buying_mode":"brief"}`)...),
	}
}

// rpcSurface builds the cases every JSON-RPC surface shares: bodies that
// are not JSON or not UTF-8, duplicate keys, deep nesting, huge bodies,
// abused headers and wrong HTTP methods. call wraps get_products
// arguments; headers are the surface's own.
func (g *generator) rpcSurface(surface, target string, headers func(...string) []string, call func(tool string, args []byte) []byte) []badCase {
	var out []badCase
	add := func(group, name string, refuse bool, method string, hs []string, body []byte) {
		out = append(out, badCase{surface: surface, group: group, name: name, refuse: refuse, method: method, target: target, headers: hs, body: body})
	}
	post := func(group, name string, refuse bool, body []byte) { add(group, name, refuse, "POST", headers(), body) }
	gp := func(args string) []byte { return call("get_products", []byte(args)) }
	for i, b := range invalidJSON {
		post("invalid-json", fmt.Sprintf("body %d %.30q", i, b), true, []byte(b))
	}
	for i, b := range invalidUTF8(gp) {
		post("invalid-utf8", fmt.Sprintf("get_products text %d", i), true, b)
		if surface == "mcp" {
			// Over MCP, text inside the arguments is the tool's to refuse
			// (VALIDATION_ERROR naming the field): a failed answer is
			// defined, a taking one a finding, as for any tool call.
			out[len(out)-1].tool = "get_products"
		}
	}
	// A call cut short inside its arguments.
	whole := gp(`{"buying_mode":"brief","brief":"coffee"}`)
	post("invalid-json", "a call cut short", true, whole[:len(whole)-3])

	post("duplicate-keys", "brief twice, of two types", false, gp(`{"buying_mode":"brief","brief":"coffee","brief":5}`))
	post("duplicate-keys", "buying_mode twice", false, gp(`{"buying_mode":"brief","buying_mode":"wholesale","brief":"coffee"}`))
	post("duplicate-keys", "filters twice", false, gp(`{"buying_mode":"brief","brief":"coffee","filters":{"channels":["display"]},"filters":"x"}`))
	dup := string(whole)
	post("duplicate-keys", "id twice", false, []byte(strings.Replace(dup, `"jsonrpc":"2.0"`, `"jsonrpc":"2.0","id":"first"`, 1)))
	post("duplicate-keys", "method twice", false, []byte(strings.Replace(dup, `"jsonrpc":"2.0"`, `"jsonrpc":"2.0","method":"nope"`, 1)))
	post("duplicate-keys", "params twice", false, []byte(strings.Replace(dup, `"jsonrpc":"2.0"`, `"jsonrpc":"2.0","params":[1,2]`, 1)))

	post("nesting", "a body nested 10,001 arrays deep", true, []byte(nested(deep, "1")))
	post("nesting", "a body nested 100,000 objects deep", true, []byte(nestedObjects(100_000, "1")))
	for _, name := range []string{"context", "ext", "brand", "filters"} {
		post("nesting", "get_products "+name+" nested 10,001 deep", true,
			gp(`{"buying_mode":"brief","brief":"coffee","`+name+`":`+nestedObjects(deep, "1")+`}`))
	}
	post("nesting", "get_products brief as 10,001 nested arrays", true, gp(`{"buying_mode":"brief","brief":`+nested(deep, `"x"`)+`}`))

	huge := strings.Repeat("a", tenMiB)
	post("size", "a 10 MiB brief", true, gp(`{"buying_mode":"brief","brief":"`+huge+`"}`))
	post("size", "10 MiB of white space", true, []byte(strings.Repeat(" ", tenMiB)+`{}`))
	post("size", "a 10 MiB array of calls", true, []byte("["+strings.Repeat(string(whole)+",", tenMiB/len(whole))+string(whole)+"]"))
	add("size", "a 10 MiB brief, chunked", true, "POST", headers("Transfer-Encoding: chunked"),
		rawhttp.Chunked(gp(`{"buying_mode":"brief","brief":"`+huge+`"}`), 64<<10))
	add("size", "a 10 MiB brief, waiting for 100-continue", true, "POST", headers("Expect: 100-continue"),
		gp(`{"buying_mode":"brief","brief":"`+huge+`"}`))
	add("size", "a body shorter than its declared length", true, "POST", headers("Content-Length: 100000"), whole)

	// Header abuse.
	header := func(name string, refuse, http bool, hs []string, body []byte) {
		out = append(out, badCase{surface: surface, group: "headers", name: name, refuse: refuse, http: http, method: "POST", target: target, headers: hs, body: body})
	}
	header("a 100 KiB header", true, true, headers("X-Big: "+strings.Repeat("b", 100<<10)), whole)
	many := headers()
	for i := range 2000 {
		many = append(many, fmt.Sprintf("X-Many-%d: %s", i, strings.Repeat("m", 20)))
	}
	header("2,000 headers", true, true, many, whole)
	for _, ct := range []string{"text/plain", "application/xml", "application/json; charset=latin1", "multipart/form-data; boundary=x", "", "application/x-www-form-urlencoded"} {
		hs := withHeader(headers(), "Content-Type", ct)
		header("Content-Type "+quote(ct), false, false, hs, whole)
	}
	header("two Content-Types", false, false, append(headers(), "Content-Type: text/plain"), whole)
	for _, auth := range []string{"Basic dXNlcjpwYXNz", "Bearer", "Bearer ", "Bearer a b c", "Token " + g.buyer, "Bearer " + strings.Repeat("t", 8<<10),
		"Bearer é-not-ascii", "Bearer \x01\x02", "Digest username=x", "bearer" + g.buyer, "Bearer sf_buyer_" + strings.Repeat("0", 48)} {
		header("Authorization "+fmt.Sprintf("%.30q", auth), true, auth == "Bearer \x01\x02", withHeader(headers(), "Authorization", auth), whole)
	}
	header("two Authorization headers", false, false, append(headers(), "Authorization: Basic eA=="), whole)
	header("two Content-Lengths that disagree", true, true, append(headers(), "Content-Length: "+strconv.Itoa(len(whole)), "Content-Length: 5"), whole)
	header("Content-Length beside Transfer-Encoding", true, true, append(headers(), "Transfer-Encoding: chunked"), whole)
	header("a negative Content-Length", true, true, append(headers(), "Content-Length: -5"), whole)
	header("an unknown Transfer-Encoding", true, true, append(headers(), "Transfer-Encoding: gzip, identity"), whole)
	header("a header name with a space", true, true, append(headers(), "Bad Name: x"), whole)
	header("a header with no colon", true, true, append(headers(), "NoColonHere"), whole)
	for _, v := range []string{"1999-01-01", "garbage", "", strings.Repeat("9", 4096), "2025-06-18, 2025-03-26"} {
		// An empty value is no version, which MCP reads as the default.
		header("MCP-Protocol-Version "+fmt.Sprintf("%.20q", v), surface == "mcp" && v != "", false, append(headers(), "MCP-Protocol-Version: "+v), whole)
	}
	header("two MCP-Protocol-Versions", false, false, append(headers(), "MCP-Protocol-Version: 2025-06-18", "MCP-Protocol-Version: 1999-01-01"), whole)
	header("Mcp-Session-Id with a control character", false, true, append(headers(), "Mcp-Session-Id: \x7f"+strings.Repeat("s", 300)), whole)
	header("Mcp-Session-Id unknown", false, false, append(headers(), "Mcp-Session-Id: "+strings.Repeat("s", 300)), whole)
	for _, accept := range []string{"text/html", "", "application/xml"} {
		header("Accept "+quote(accept), false, false, withHeader(headers(), "Accept", accept), whole)
	}
	out = append(out, badCase{surface: surface, group: "headers", name: "no Host header", refuse: true, http: true, raw: func(string) []byte {
		return []byte("POST " + target + " HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: " + strconv.Itoa(len(whole)) + "\r\nConnection: close\r\n\r\n" + string(whole))
	}})
	out = append(out, badCase{surface: surface, group: "headers", name: "HTTP/1.0 with an absolute target", refuse: false, http: true, raw: func(addr string) []byte {
		return []byte("POST http://" + addr + target + " HTTP/1.0\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: " + strconv.Itoa(len(whole)) + "\r\n\r\n" + string(whole))
	}})

	// Wrong HTTP methods.
	for _, m := range []string{"GET", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE", "FOO"} {
		add("method", m+" "+target, true, m, headers(), whole)
	}
	add("method", "HEAD "+target, true, "HEAD", headers(), nil)
	add("method", "POST to an unknown publisher", true, "POST", headers(), whole)
	out[len(out)-1].target = "/p/nobody" + target
	return out
}

// withHeader replaces (or, for an empty value, drops) header name in hs.
func withHeader(hs []string, name, value string) []string {
	var out []string
	for _, h := range hs {
		if k, _, _ := strings.Cut(h, ":"); !strings.EqualFold(k, name) {
			out = append(out, h)
		}
	}
	if value != "" {
		out = append(out, name+": "+value)
	}
	return out
}

// mcpCases are the MCP surface's cases: every field of every tool the
// storefront lists, and the JSON-RPC envelope spoiled.
func (g *generator) mcpCases() []badCase {
	var out []badCase
	for _, tool := range g.tools {
		depth := 3
		if tool == "get_products" {
			depth = 5
		}
		out = append(out, g.toolCases("mcp", tool, depth, 1, g.mcpTool)...)
		for _, args := range []string{`"x"`, `[]`, `1`, `null`, `true`} {
			c := g.mcpTool(tool, []byte(args))
			c.surface, c.group, c.tool, c.name, c.refuse = "mcp", "wrong-type", tool, tool+" arguments = "+args, true
			out = append(out, c)
		}
	}
	out = append(out, g.rpcSurface("mcp", "/mcp", g.mcpHeaders, g.mcpCall)...)
	envelope := map[string]string{
		"no jsonrpc":                `{"id":1,"method":"tools/list"}`,
		"jsonrpc 1.0":               `{"jsonrpc":"1.0","id":1,"method":"tools/list"}`,
		"id an object":              `{"jsonrpc":"2.0","id":{"a":1},"method":"tools/list"}`,
		"id an array":               `{"jsonrpc":"2.0","id":[1],"method":"tools/list"}`,
		"id true":                   `{"jsonrpc":"2.0","id":true,"method":"tools/list"}`,
		"id a huge number":          `{"jsonrpc":"2.0","id":1e400,"method":"tools/list"}`,
		"method a number":           `{"jsonrpc":"2.0","id":1,"method":5}`,
		"no method":                 `{"jsonrpc":"2.0","id":1}`,
		"an unknown method":         `{"jsonrpc":"2.0","id":1,"method":"tools/destroy"}`,
		"params an array":           `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":["get_products",{}]}`,
		"params a string":           `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":"get_products"}`,
		"tools/call with no name":   `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{}}}`,
		"tools/call name a number":  `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":5,"arguments":{}}}`,
		"an unknown tool":           `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"drop_tables","arguments":{}}}`,
		"an empty tool name":        `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"","arguments":{}}}`,
		"a tool name of 100 KiB":    `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + strings.Repeat("n", 100<<10) + `","arguments":{}}}`,
		"an empty batch":            `[]`,
		"a batch of numbers":        `[1,2,3]`,
		"a batch of tool calls":     `[` + string(g.mcpCall("get_products", []byte(`{"brief":5}`))) + `,` + string(g.mcpCall("create_media_buy", []byte(`{"packages":"x"}`))) + `]`,
		"initialize, params a list": `{"jsonrpc":"2.0","id":1,"method":"initialize","params":[1]}`,
		"initialize, bad version":   `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":5,"capabilities":"x","clientInfo":[]}}`,
	}
	for _, name := range slices.Sorted(maps.Keys(envelope)) {
		// A batch of calls may be answered call by call (a batch holds
		// no one tool to check them against) or refused.
		out = append(out, badCase{surface: "mcp", group: "rpc", name: name, refuse: name != "a batch of tool calls", method: "POST", target: "/mcp",
			headers: g.mcpHeaders(), body: []byte(envelope[name])})
	}
	out = append(out, badCase{surface: "mcp", group: "rpc", name: "a tools/call notification", tool: "get_products", notification: true, method: "POST", target: "/mcp",
		headers: g.mcpHeaders(), body: []byte(`{"jsonrpc":"2.0","method":"tools/call","params":{"name":"get_products","arguments":{"brief":5}}}`)})
	return out
}

// a2aCases are the A2A surface's cases: every third field of every tool
// (the same code decodes them as on MCP), and the A2A envelope spoiled.
func (g *generator) a2aCases() []badCase {
	var out []badCase
	for _, tool := range g.tools {
		if strings.Contains(tool, "/") {
			continue // MCP's tasks methods are not skills
		}
		out = append(out, g.toolCases("a2a", tool, 3, 3, g.a2aTool)...)
	}
	out = append(out, g.rpcSurface("a2a", "/a2a", g.a2aHeaders, g.a2aCall)...)
	msg := func(message string) string {
		return `{"jsonrpc":"2.0","id":9,"method":"SendMessage","params":{"message":` + message + `}}`
	}
	envelope := map[string]string{
		"no params":                        `{"jsonrpc":"2.0","id":9,"method":"SendMessage"}`,
		"params an array":                  `{"jsonrpc":"2.0","id":9,"method":"SendMessage","params":[]}`,
		"message a string":                 msg(`"hello"`),
		"message null":                     msg(`null`),
		"no messageId":                     msg(`{"role":"ROLE_USER","parts":[{"data":{"skill":"get_products","input":{}}}]}`),
		"no role":                          msg(`{"messageId":"m","parts":[{"data":{"skill":"get_products","input":{}}}]}`),
		"an unknown role":                  msg(`{"messageId":"m","role":"ROLE_KING","parts":[{"data":{"skill":"get_products","input":{}}}]}`),
		"parts an object":                  msg(`{"messageId":"m","role":"ROLE_USER","parts":{"data":{}}}`),
		"no parts":                         msg(`{"messageId":"m","role":"ROLE_USER","parts":[]}`),
		"a null part":                      msg(`{"messageId":"m","role":"ROLE_USER","parts":[null]}`),
		"a part of no kind":                msg(`{"messageId":"m","role":"ROLE_USER","parts":[{}]}`),
		"a file part":                      msg(`{"messageId":"m","role":"ROLE_USER","parts":[{"url":"https://x.example/f","mediaType":"text/plain"}]}`),
		"data a string":                    msg(`{"messageId":"m","role":"ROLE_USER","parts":[{"data":"get_products"}]}`),
		"skill a number":                   msg(`{"messageId":"m","role":"ROLE_USER","parts":[{"data":{"skill":5,"input":{}}}]}`),
		"an unknown skill":                 msg(`{"messageId":"m","role":"ROLE_USER","parts":[{"data":{"skill":"drop_tables","input":{}}}]}`),
		"input a list":                     msg(`{"messageId":"m","role":"ROLE_USER","parts":[{"data":{"skill":"get_products","input":[1]}}]}`),
		"input a string":                   msg(`{"messageId":"m","role":"ROLE_USER","parts":[{"data":{"skill":"get_products","input":"brief"}}]}`),
		"two data parts":                   msg(`{"messageId":"m","role":"ROLE_USER","parts":[{"data":{"skill":"get_products","input":{}}},{"data":{"skill":"create_media_buy","input":{}}}]}`),
		"a task id to continue":            msg(`{"messageId":"m","role":"ROLE_USER","taskId":"t-1","parts":[{"data":{"skill":"get_products","input":{}}}]}`),
		"parameters beside input":          msg(`{"messageId":"m","role":"ROLE_USER","parts":[{"data":{"skill":"get_products","input":{},"parameters":{}}}]}`),
		"an unknown method":                `{"jsonrpc":"2.0","id":9,"method":"DropTables","params":{}}`,
		"GetTask of no task":               `{"jsonrpc":"2.0","id":9,"method":"GetTask","params":{"id":5}}`,
		"CancelTask, params null":          `{"jsonrpc":"2.0","id":9,"method":"CancelTask","params":null}`,
		"0.3 message/send, no kind":        `{"jsonrpc":"2.0","id":9,"method":"message/send","params":{"message":{"messageId":"m","role":"user","parts":[{"data":{"skill":"get_products","input":{"brief":5}}}]}}}`,
		"0.3 message/send, input a number": `{"jsonrpc":"2.0","id":9,"method":"message/send","params":{"message":{"kind":"message","messageId":"m","role":"user","parts":[{"kind":"data","data":{"skill":"get_products","input":7}}]}}}`,
		"0.3 tasks/get, id an object":      `{"jsonrpc":"2.0","id":9,"method":"tasks/get","params":{"id":{}}}`,
		"no jsonrpc":                       `{"id":9,"method":"SendMessage","params":{}}`,
		"id an object":                     `{"jsonrpc":"2.0","id":{},"method":"SendMessage","params":{}}`,
	}
	for _, name := range slices.Sorted(maps.Keys(envelope)) {
		out = append(out, badCase{surface: "a2a", group: "rpc", name: name, refuse: true, method: "POST", target: "/a2a", headers: g.a2aHeaders(), body: []byte(envelope[name])})
	}
	for _, h := range []string{"A2A-Extensions: ", "A2A-Extensions: https://evil.example/ext", "A2A-Version: 0.0", "A2A-Version: " + strings.Repeat("9", 2000)} {
		k, v, _ := strings.Cut(h, ": ")
		out = append(out, badCase{surface: "a2a", group: "headers", name: fmt.Sprintf("%.40s", h), refuse: k == "A2A-Extensions", method: "POST", target: "/a2a",
			headers: withHeader(g.a2aHeaders(), k, v), body: g.a2aCall("get_products", []byte(`{"buying_mode":"brief","brief":"coffee"}`))})
	}
	return out
}

// adminVersions are the ETags the admin API's versioned writes need in
// If-Match, so that a malformed write reaches its body, and the product
// the product cases spoil, as the admin API reads it.
type adminVersions struct {
	catalogue, rulebook, voice string
	product                    []byte
}

// adminCases are the admin API's cases: every write with malformed
// bodies, the product document with every field of the official product
// schema spoiled, malformed query parameters, header abuse and wrong
// methods.
func (g *generator) adminCases(v adminVersions) []badCase {
	const p = "/admin/v1/publishers/northwind"
	auth := "Authorization: Bearer " + g.admin
	var out []badCase
	add := func(group, name string, refuse bool, method, target string, hs []string, body []byte) {
		out = append(out, badCase{surface: "admin", group: group, name: name, refuse: refuse, method: method, target: target,
			headers: append([]string{auth, "Content-Type: application/json"}, hs...), body: body})
	}
	writes := []struct {
		method, path string
		ifMatch      string
	}{
		{"PUT", "", ""}, {"PUT", "/products/nw_display_ros_mrec", v.catalogue}, {"POST", "/catalogue/rollback", v.catalogue},
		{"PUT", "/rulebook", v.rulebook}, {"POST", "/rulebook/validate", ""}, {"POST", "/rulebook/preview", ""},
		{"POST", "/rulebook/rollback", v.rulebook}, {"PUT", "/voice", v.voice}, {"POST", "/preview", ""}, {"POST", "/backtest", ""},
		{"PUT", "/accounts/acct_badinput", ""}, {"POST", "/buyer-tokens", ""}, {"POST", "/tokens", ""},
		{"POST", "/orders/ord_does_not_exist/approve", ""}, {"POST", "/orders/ord_does_not_exist/decline", ""}, {"POST", "/delivery", ""},
		{"POST", "/catalogue/import", v.catalogue},
	}
	bodies := append(append([]string{}, invalidJSON...), `[]`, `"text"`, `1`, `null`, `true`,
		`{"name":"`+"\xff\xfe"+`"}`, `{"name":"`+"\xc0\xaf"+`"}`, nestedObjects(deep, `1`), `{"a":`+nested(deep, "1")+`}`,
		`{"version":1e400}`, `{"version":-1}`)
	huge := []byte(`{"note":"` + strings.Repeat("a", tenMiB) + `"}`)
	for _, w := range writes {
		var hs []string
		if w.ifMatch != "" {
			hs = append(hs, "If-Match: "+w.ifMatch)
		}
		for i, b := range bodies {
			// An empty import is an empty JSON Lines file, and an empty
			// preview the empty request: both are bodies those routes
			// take.
			refuse := !(strings.TrimSpace(b) == "" && (strings.HasSuffix(w.path, "/import") || strings.HasSuffix(w.path, "preview")))
			if w.path == "/preview" && json.Valid([]byte(b)) && utf8.ValidString(b) {
				// The preview's body is a get_products request: the official
				// schema says whether it is a valid one.
				refuse = g.check(g.tool("get_products").Request, []byte(b)) != nil
			}
			add("malformed-body", fmt.Sprintf("%s %s body %d %.30q", w.method, w.path, i, b), refuse, w.method, p+w.path, hs, []byte(b))
		}
		add("size", w.method+" "+w.path+" a 10 MiB body", true, w.method, p+w.path, hs, huge)
		add("duplicate-keys", w.method+" "+w.path+" a key twice", false, w.method, p+w.path, hs, []byte(`{"name":"a","name":5}`))
	}
	for i := range out {
		// Both previews answer a request they can run with the buyer's
		// view of it.
		out[i].preview = strings.HasSuffix(out[i].target, "/preview")
	}

	// The product document, field by field from the official schema.
	product := map[string]any{}
	if err := json.Unmarshal(v.product, &product); err != nil {
		g.t.Fatalf("the demo product is not JSON: %v\n%s", err, v.product)
	}
	for i, f := range schemaFields(g.t, g.spec, filepath.Join(g.spec, "schemas", "core", "product.json"), 2) {
		vals := append(wrongValues(f), rangeValues(f)...)
		if len(vals) == 0 {
			continue
		}
		for r := range g.rounds {
			val := vals[(i+r)%len(vals)]
			b, _ := json.Marshal(setPath(product, f.path, json.RawMessage(val)))
			add("wrong-type", fmt.Sprintf("PUT product %s = %.40s", f, val), g.check("core/product.json", b) != nil,
				"PUT", p+"/products/nw_display_ros_mrec", []string{"If-Match: " + v.catalogue}, b)
		}
	}

	// Malformed query parameters of every route that reads one.
	for _, q := range []string{
		"/products?limit=-1", "/products?limit=abc", "/products?limit=501", "/products?offset=-1", "/products?offset=1e9", "/products?limit=99999999999999999999",
		"/decisions?limit=-1", "/decisions?limit=abc", "/decisions?limit=1e3", "/decisions?before=yesterday", "/decisions?arm=sideways",
		"/decisions?slug=not_a_slug", "/decisions?since=notatime", "/decisions?until=2026-13-45T00:00:00Z", "/decisions?account=%ff%fe",
		"/decisions?account=%00", "/decisions?slug=%ff", "/decisions/stats?days=0", "/decisions/stats?days=abc", "/decisions/stats?days=367",
		"/decisions/export?format=xml", "/decisions/export?arm=x", "/decisions/export?since=x", "/catalogue/export?format=xml",
		"/catalogue/diff?from=x&to=1", "/catalogue/diff?from=1&to=-1", "/rulebook/diff?from=x&to=y", "/rulebook/diff?from=0&to=99999999999999999999",
		"/rulebook/versions/abc", "/rulebook/versions/0", "/rulebook/versions/-1", "/rulebook/versions/99999999999999999999",
		"/charts/declines.svg?days=x", "/charts/arms.svg?days=-1", "/charts/returns.svg?days=1000", "/orders?status=bogus",
		"/media-buys?status=bogus", "/tokens?kind=bogus", "/products/%ff%fe", "/tokens/%00", "/audit?token=%ff",
	} {
		add("query", "GET "+q, true, "GET", p+q, nil, nil)
	}
	add("query", "POST /preview?version=x", true, "POST", p+"/preview?version=x", nil, []byte(`{"buying_mode":"brief","brief":"coffee"}`))
	add("query", "POST /catalogue/import?mode=sideways", true, "POST", p+"/catalogue/import?mode=sideways", []string{"If-Match: " + v.catalogue}, []byte(""))
	add("query", "POST /catalogue/import?format=xml", true, "POST", p+"/catalogue/import?format=xml", []string{"If-Match: " + v.catalogue}, []byte(""))

	// Header abuse.
	for _, a := range []string{"Basic dXNlcjpwYXNz", "Bearer", "Bearer ", "Bearer a b", "Token " + g.admin, "Bearer " + strings.Repeat("t", 8<<10),
		"Bearer é", "Bearer " + g.buyer, "Bearer sf_admin_" + strings.Repeat("0", 48)} {
		out = append(out, badCase{surface: "admin", group: "headers", name: fmt.Sprintf("Authorization %.30q", a), refuse: true, method: "GET",
			target: p + "/rulebook", headers: []string{"Authorization: " + a}})
	}
	voice := []byte(`{"tone":"warm"}`)
	for _, m := range []string{`"abc"`, "-1", `W/"x"`, strings.Repeat("9", 100), `"1", "2"`} {
		add("headers", "If-Match "+fmt.Sprintf("%.20s", m), true, "PUT", p+"/voice", []string{"If-Match: " + m}, voice)
	}
	add("headers", "an X-Change-Note of 600 characters", true, "POST", p+"/catalogue/import", []string{"If-Match: " + v.catalogue, "X-Change-Note: " + strings.Repeat("n", 600)}, []byte(""))
	add("headers", "a cross-site Origin on a write", true, "PUT", p+"/voice", []string{"If-Match: " + v.voice, "Origin: https://evil.example"}, voice)
	add("headers", "a 100 KiB header", true, "GET", p+"/rulebook", []string{"X-Big: " + strings.Repeat("b", 100<<10)}, nil)
	out[len(out)-1].http = true

	// Wrong methods and unknown paths.
	for _, m := range []struct{ method, path string }{
		{"DELETE", "/rulebook"}, {"PATCH", "/voice"}, {"POST", "/decisions"}, {"PUT", "/whoami"}, {"DELETE", ""}, {"GET", "/catalogue/import"},
		{"GET", "/tokens/tok_x/revoke"}, {"TRACE", "/rulebook"}, {"FOO", "/rulebook"}, {"GET", "/nope"}, {"GET", "/../../etc/passwd"},
	} {
		target := p + m.path
		if m.path == "/whoami" {
			target = "/admin/v1/whoami"
		}
		add("method", m.method+" "+m.path, true, m.method, target, nil, nil)
	}
	add("method", "GET another publisher's rulebook", true, "GET", "/admin/v1/publishers/somebody-else/rulebook", nil, nil)
	add("method", "GET an unknown admin path", true, "GET", "/admin/v1/nope", nil, nil)
	return out
}
