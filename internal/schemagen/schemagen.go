// Package schemagen makes JSON documents from the official AdCP request
// schemas for fuzzing: a fuzzer's bytes choose, at every step, which
// optional members appear, which branch of a oneOf is taken and which value
// an enum or range gives, so a short input becomes a plausible request
// that reaches deep into the pipeline. Mutate then breaks such a document
// in the ways hostile callers do (wrong types, nulls, huge numbers,
// invalid UTF-8, deep nesting), and Encode writes it.
//
// It is test support: it reads the spec folder and never runs in the
// storefront.
package schemagen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/dlclark/regexp2"
)

// Source is the fuzzer's entropy. Once its bytes run out every choice is
// the first, so a short input still makes a (minimal) document.
type Source struct {
	b []byte
	i int
}

// NewSource reads choices from b.
func NewSource(b []byte) *Source { return &Source{b: b} }

// Byte is the next choice byte, 0 once the input is spent.
func (s *Source) Byte() byte {
	if s.i >= len(s.b) {
		return 0
	}
	c := s.b[s.i]
	s.i++
	return c
}

// Intn is a choice in [0, n); 0 for n <= 1.
func (s *Source) Intn(n int) int {
	if n <= 1 {
		return 0
	}
	v := int(s.Byte())
	if n > 256 {
		v = v<<8 | int(s.Byte())
	}
	return v % n
}

// Chance is true with probability about k/8, and false once the input is
// spent.
func (s *Source) Chance(k int) bool { return int(s.Byte()&7) >= 8-k }

// Generator makes documents from the schemas of one spec folder.
type Generator struct {
	docs map[string]any // by $id, "/schemas/..."

	mu       sync.Mutex
	patterns map[string]*regexp2.Regexp
}

// Load reads every schema under dir (the spec's schemas/ folder).
func Load(dir string) (*Generator, error) {
	g := &Generator{docs: map[string]any{}, patterns: map[string]*regexp2.Regexp{}}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".json") {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		var doc any
		if json.Unmarshal(b, &doc) != nil {
			return nil // not every file is a schema
		}
		m, ok := doc.(map[string]any)
		if !ok {
			return nil
		}
		id, _ := m["$id"].(string)
		if id == "" {
			rel, _ := filepath.Rel(dir, path)
			id = "/schemas/" + filepath.ToSlash(rel)
		}
		g.docs[id] = m
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(g.docs) == 0 {
		return nil, fmt.Errorf("no schemas under %s", dir)
	}
	return g, nil
}

// Has reports whether the schema at rel (e.g.
// "media-buy/get-products-request.json") is loaded.
func (g *Generator) Has(rel string) bool { _, ok := g.docs["/schemas/"+rel]; return ok }

// Generate makes a document valid in shape (types, required members,
// enums, ranges) for the schema at rel, as src chooses. Patterns and
// cross-member conditions are not solved: the pipeline must refuse what
// they forbid, which is part of what fuzzing checks.
func (g *Generator) Generate(rel string, src *Source) any {
	root := g.docs["/schemas/"+rel]
	if root == nil {
		return map[string]any{}
	}
	return g.gen(root, root, src, 0)
}

const maxDepth = 9

// resolve follows a $ref from doc; it returns the target and its document.
func (g *Generator) resolve(ref string, doc any) (any, any) {
	path, frag, _ := strings.Cut(ref, "#")
	if path != "" {
		if !strings.HasPrefix(path, "/") {
			path = "/schemas/" + path
		}
		doc = g.docs[path]
		if doc == nil {
			return nil, nil
		}
	}
	node := doc
	for _, part := range strings.Split(strings.Trim(frag, "/"), "/") {
		if part == "" {
			continue
		}
		part = strings.ReplaceAll(strings.ReplaceAll(part, "~1", "/"), "~0", "~")
		m, ok := node.(map[string]any)
		if !ok {
			return nil, nil
		}
		node = m[part]
	}
	return node, doc
}

// flatten merges a schema with its $ref and allOf members, and with one
// branch of each oneOf and anyOf, into one object schema: the union of
// properties and of required names, and the first type and enum found.
func (g *Generator) flatten(node, doc any, src *Source, depth int) (map[string]any, any) {
	out := map[string]any{}
	props := map[string]any{}
	propDoc := map[string]any{}
	required := map[string]bool{}
	var walk func(n, d any, level int)
	walk = func(n, d any, level int) {
		m, ok := n.(map[string]any)
		if !ok || level > 12 {
			return
		}
		if ref, ok := m["$ref"].(string); ok {
			t, td := g.resolve(ref, d)
			walk(t, td, level+1)
		}
		for _, k := range []string{"type", "enum", "const", "format", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
			"minLength", "maxLength", "minItems", "maxItems", "items", "examples", "pattern", "additionalProperties"} {
			if v, has := m[k]; has {
				if _, set := out[k]; !set {
					out[k] = v
					if k == "items" || k == "additionalProperties" {
						out[k+"#doc"] = d
					}
				}
			}
		}
		if p, ok := m["properties"].(map[string]any); ok {
			for name, s := range p {
				if _, set := props[name]; !set {
					props[name], propDoc[name] = s, d
				}
			}
		}
		if r, ok := m["required"].([]any); ok {
			for _, name := range r {
				if s, ok := name.(string); ok {
					required[s] = true
				}
			}
		}
		if all, ok := m["allOf"].([]any); ok {
			for _, a := range all {
				walk(a, d, level+1)
			}
		}
		for _, k := range []string{"oneOf", "anyOf"} {
			if alts, ok := m[k].([]any); ok && len(alts) > 0 {
				walk(alts[src.Intn(len(alts))], d, level+1)
			}
		}
	}
	walk(node, doc, 0)
	if len(props) > 0 {
		out["properties"], out["properties#doc"] = props, propDoc
	}
	if len(required) > 0 {
		names := make([]any, 0, len(required))
		for name := range required {
			names = append(names, name)
		}
		out["required"] = names
	}
	return out, doc
}

func (g *Generator) gen(node, doc any, src *Source, depth int) any {
	if b, ok := node.(bool); ok {
		if !b {
			return nil
		}
		return g.anyValue(src)
	}
	s, doc := g.flatten(node, doc, src, depth)
	if c, ok := s["const"]; ok {
		return c
	}
	if e, ok := s["enum"].([]any); ok && len(e) > 0 {
		return e[src.Intn(len(e))]
	}
	typ := s["type"]
	if ts, ok := typ.([]any); ok && len(ts) > 0 {
		typ = ts[src.Intn(len(ts))]
	}
	t, _ := typ.(string)
	if t == "" {
		switch {
		case s["properties"] != nil:
			t = "object"
		case s["items"] != nil:
			t = "array"
		default:
			return g.anyValue(src)
		}
	}
	switch t {
	case "object":
		return g.object(s, src, depth)
	case "array":
		lo := intOf(s["minItems"], 0)
		hi := intOf(s["maxItems"], lo+3)
		n := lo + src.Intn(min(hi, lo+3)-lo+1)
		if depth >= maxDepth {
			n = lo
		}
		out := make([]any, 0, n)
		items, _ := s["items"].(map[string]any)
		itemDoc := s["items#doc"]
		for range n {
			if items == nil {
				out = append(out, g.anyValue(src))
				continue
			}
			out = append(out, g.gen(items, itemDoc, src, depth+1))
		}
		return out
	case "string":
		return g.str(s, src)
	case "integer":
		return int64(number(s, src))
	case "number":
		v := number(s, src)
		if src.Chance(2) {
			v += 0.5
		}
		return v
	case "boolean":
		return src.Chance(4)
	case "null":
		return nil
	}
	return g.anyValue(src)
}

func (g *Generator) object(s map[string]any, src *Source, depth int) any {
	out := map[string]any{}
	props, _ := s["properties"].(map[string]any)
	docs, _ := s["properties#doc"].(map[string]any)
	req := map[string]bool{}
	if r, ok := s["required"].([]any); ok {
		for _, name := range r {
			req[name.(string)] = true
		}
	}
	names := make([]string, 0, len(props))
	for name := range props {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		// Deep in the document only what is required, so documents stay
		// small enough to run many times a second.
		if !req[name] && (depth >= maxDepth-3 || !src.Chance(3)) {
			continue
		}
		out[name] = g.gen(props[name], docs[name], src, depth+1)
	}
	for name := range req {
		if _, ok := out[name]; !ok {
			out[name] = g.anyValue(src)
		}
	}
	return out
}

var words = []string{"coffee", "video", "launch", "sports", "travel", "news", "ctv", "olv", "display", "audio",
	"acct_1", "prod_1", "pkg_1", "buy_1", "task_1", "demo", "brand", "northwind", "US", "USD"}

func (g *Generator) str(s map[string]any, src *Source) string {
	if ex, ok := s["examples"].([]any); ok && len(ex) > 0 && src.Chance(5) {
		if v, ok := ex[src.Intn(len(ex))].(string); ok {
			return v
		}
	}
	var v string
	switch s["format"] {
	case "date-time":
		v = fmt.Sprintf("20%02d-%02d-%02dT%02d:00:00Z", 25+src.Intn(5), 1+src.Intn(12), 1+src.Intn(28), src.Intn(24))
	case "date":
		v = fmt.Sprintf("20%02d-%02d-%02d", 25+src.Intn(5), 1+src.Intn(12), 1+src.Intn(28))
	case "uri", "uri-reference", "url":
		v = []string{"https://buyer.example/hook", "http://127.0.0.1/x", "https://example.com/" + words[src.Intn(len(words))]}[src.Intn(3)]
	case "email":
		v = "buyer@agency.example"
	case "uuid":
		v = "3f1e2d4c-5b6a-4978-8a9b-0c1d2e3f4a5b"
	default:
		v = words[src.Intn(len(words))]
		if src.Chance(2) {
			v += "_" + words[src.Intn(len(words))]
		}
		if p, ok := s["pattern"].(string); ok {
			v = g.matching(p, v, src)
		}
	}
	for lo := intOf(s["minLength"], 0); len(v) < lo; {
		v += "x"
	}
	if hi := intOf(s["maxLength"], -1); hi >= 0 && len(v) > hi {
		v = v[:hi]
	}
	return v
}

// shapes are strings of the shapes AdCP's patterns describe: domains,
// currency and country codes, version labels, language tags, ids.
var shapes = []string{"brand.example", "USD", "US", "3.2-rc.7", "en-US", "2026-12-01", "acct_1", "abc123", "a1b2c3d4",
	"https://buyer.example/x", "buyer@agency.example", "+15555550100", "#ff8800", "P30D", "12:30", "US-NY", "x"}

// matching is a string that matches pattern: a shape that does, as src
// chooses among them, else v.
func (g *Generator) matching(pattern, v string, src *Source) string {
	g.mu.Lock()
	re, ok := g.patterns[pattern]
	if !ok {
		re, _ = regexp2.Compile(pattern, regexp2.ECMAScript)
		g.patterns[pattern] = re
	}
	g.mu.Unlock()
	if re == nil {
		return v
	}
	var fits []string
	for _, c := range append([]string{v}, shapes...) {
		if m, err := re.MatchString(c); err == nil && m {
			fits = append(fits, c)
		}
	}
	if len(fits) == 0 {
		return v
	}
	return fits[src.Intn(len(fits))]
}

func number(s map[string]any, src *Source) float64 {
	lo, hi := 0.0, 10000.0
	if v, ok := s["minimum"].(float64); ok {
		lo = v
	}
	if v, ok := s["exclusiveMinimum"].(float64); ok {
		lo = v + 1
	}
	if v, ok := s["maximum"].(float64); ok {
		hi = v
	}
	if v, ok := s["exclusiveMaximum"].(float64); ok {
		hi = v - 1
	}
	if hi < lo {
		hi = lo
	}
	span := hi - lo
	pick := []float64{0, 1, span / 100, span / 10, span / 2, span}[src.Intn(6)]
	return lo + float64(int64(pick))
}

func (g *Generator) anyValue(src *Source) any {
	switch src.Intn(5) {
	case 0:
		return words[src.Intn(len(words))]
	case 1:
		return float64(src.Intn(1000))
	case 2:
		return src.Chance(4)
	case 3:
		return map[string]any{}
	}
	return nil
}

func intOf(v any, def int) int {
	if f, ok := v.(float64); ok {
		return int(f)
	}
	return def
}

// badUTF8 stands in a document for a string holding invalid UTF-8, which
// encoding/json cannot write; Encode puts the raw bytes in its place.
const badUTF8 = "\x00schemagen-invalid-utf8\x00"

// Mutate breaks doc n times as src chooses: at a member or element it
// picks, it puts a value of the wrong type, a null, an out-of-range or
// unrepresentable number, an empty, huge, control-laden or invalid UTF-8
// string, markup, a deeply nested value, or an unknown member, or removes
// a member.
func Mutate(doc any, src *Source, n int) any {
	for range n {
		doc = mutateAt(doc, src, 0)
	}
	return doc
}

func mutateAt(v any, src *Source, depth int) any {
	// Descend into a child with probability 5/8, else replace here.
	switch x := v.(type) {
	case map[string]any:
		if len(x) > 0 && depth < 20 && src.Chance(5) {
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			k := keys[src.Intn(len(keys))]
			switch src.Intn(8) {
			case 0:
				delete(x, k)
			case 1:
				x["unknown_"+k] = hostile(src)
			default:
				x[k] = mutateAt(x[k], src, depth+1)
			}
			return x
		}
	case []any:
		if len(x) > 0 && depth < 20 && src.Chance(5) {
			i := src.Intn(len(x))
			x[i] = mutateAt(x[i], src, depth+1)
			return x
		}
	}
	return hostile(src)
}

// hostile is one value a hostile caller sends.
func hostile(src *Source) any {
	switch src.Intn(22) {
	case 0:
		return nil
	case 1:
		return ""
	case 2:
		return json.Number("-1")
	case 3:
		return json.Number("1e400") // valid JSON, out of float64's range
	case 4:
		return json.Number("123456789012345678901234567890")
	case 5:
		return json.Number("-0.0000001")
	case 6:
		return json.Number("9007199254740993")
	case 7:
		return true
	case 8:
		return []any{}
	case 9:
		return map[string]any{}
	case 10:
		return "a" + badUTF8 + "b"
	case 11:
		return "nul\x00and\x01control\x1b[2J"
	case 12:
		return strings.Repeat("long ", 20000)
	case 13:
		return "<script>alert(1)</script><img src=x onerror=alert(1)>"
	case 14:
		return "Ηеllо\u200b\u202eworld" // confusables, zero-width, bidi
	case 15:
		return nest(200 + src.Intn(3000))
	case 16:
		return []any{nil, "", json.Number("0")}
	case 17:
		return json.Number("0")
	case 18:
		return "2026-02-30T25:61:00Z"
	case 19:
		return map[string]any{"account_id": ""}
	case 20:
		return []any{map[string]any{}}
	}
	return "\uFFFD\uFFFF\U0010FFFF"
}

// nest is depth levels of nested arrays.
func nest(depth int) any {
	var v any = "bottom"
	for range depth {
		v = []any{v}
	}
	return v
}

// Encode writes doc as JSON, with the invalid UTF-8 Mutate planted.
func Encode(doc any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(doc); err != nil {
		return []byte("{}")
	}
	out := bytes.TrimRight(buf.Bytes(), "\n")
	marker, _ := json.Marshal(badUTF8)
	marker = marker[1 : len(marker)-1]
	return bytes.ReplaceAll(out, marker, []byte("\xc3\x28\xff"))
}
