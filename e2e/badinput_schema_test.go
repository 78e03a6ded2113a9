package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// field is one member of a request schema: its path from the document's
// root ("[]" stands for an array's items) and what the schema allows there,
// merged over every variant (allOf, oneOf, anyOf) that reaches it.
type field struct {
	path []string
	// types are the JSON types allowed; empty when the schema names none.
	types            map[string]bool
	enum             bool
	format           string
	minimum, maximum *float64
	maxLength        int
}

func (f field) String() string { return strings.Join(f.path, ".") }

// schemaFields reads the JSON Schema at file and lists its fields down to
// maxDepth, following $ref into the official schemas (/schemas/… names a
// file under specDir/schemas) and within a file (#/…). Fields come sorted
// by path, so a run generates the same cases in the same order.
func schemaFields(t *testing.T, specDir, file string, maxDepth int) []field {
	t.Helper()
	w := &walker{t: t, specDir: specDir, maxDepth: maxDepth, docs: map[string]any{}, fields: map[string]*field{}}
	root := w.doc(file)
	w.walk(root, root, nil, 0, map[string]bool{})
	out := make([]field, 0, len(w.fields))
	for _, f := range w.fields {
		out = append(out, *f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

type walker struct {
	t        *testing.T
	specDir  string
	maxDepth int
	docs     map[string]any
	fields   map[string]*field
}

func (w *walker) doc(file string) any {
	if d, ok := w.docs[file]; ok {
		return d
	}
	b, err := os.ReadFile(file)
	if err != nil {
		w.t.Fatalf("reading the schema %s: %v", file, err)
	}
	var d any
	if err := json.Unmarshal(b, &d); err != nil {
		w.t.Fatalf("the schema %s is not JSON: %v", file, err)
	}
	w.docs[file] = d
	return d
}

// pointer resolves a JSON pointer fragment (#/$defs/Rule) within doc.
func (w *walker) pointer(doc any, frag string) any {
	node := doc
	for _, part := range strings.Split(strings.TrimPrefix(frag, "/"), "/") {
		if part == "" {
			continue
		}
		part = strings.ReplaceAll(strings.ReplaceAll(part, "~1", "/"), "~0", "~")
		switch n := node.(type) {
		case map[string]any:
			node = n[part]
		case []any:
			i, err := strconv.Atoi(part)
			if err != nil || i >= len(n) {
				return nil
			}
			node = n[i]
		default:
			return nil
		}
	}
	return node
}

func (w *walker) walk(node, doc any, path []string, depth int, seen map[string]bool) {
	s, ok := node.(map[string]any)
	if !ok || depth > w.maxDepth {
		return
	}
	if ref, ok := s["$ref"].(string); ok {
		file, frag, _ := strings.Cut(ref, "#")
		key := ref
		target := doc
		if file != "" {
			name := filepath.Join(w.specDir, "schemas", strings.TrimPrefix(file, "/schemas/"))
			key = name + "#" + frag
			target = w.doc(name)
		} else {
			key = strings.Join(path, ".") + "#" + frag
		}
		if seen[key] {
			return
		}
		next := map[string]bool{key: true}
		for k := range seen {
			next[k] = true
		}
		w.walk(w.pointer(target, frag), target, path, depth, next)
		return
	}
	if len(path) > 0 {
		w.note(path, s)
	}
	for _, k := range []string{"allOf", "oneOf", "anyOf"} {
		subs, _ := s[k].([]any)
		for _, sub := range subs {
			w.walk(sub, doc, path, depth, seen)
		}
	}
	props, _ := s["properties"].(map[string]any)
	for name, sub := range props {
		w.walk(sub, doc, append(append([]string{}, path...), name), depth+1, seen)
	}
	if items, ok := s["items"].(map[string]any); ok {
		w.walk(items, doc, append(append([]string{}, path...), "[]"), depth+1, seen)
	}
}

func (w *walker) note(path []string, s map[string]any) {
	key := strings.Join(path, ".")
	f := w.fields[key]
	if f == nil {
		f = &field{path: append([]string{}, path...), types: map[string]bool{}}
		w.fields[key] = f
	}
	switch t := s["type"].(type) {
	case string:
		f.types[t] = true
	case []any:
		for _, x := range t {
			if s, ok := x.(string); ok {
				f.types[s] = true
			}
		}
	}
	if _, ok := s["enum"]; ok {
		f.enum = true
	}
	if _, ok := s["const"]; ok {
		f.enum = true
	}
	if v, ok := s["format"].(string); ok && f.format == "" {
		f.format = v
	}
	for name, dst := range map[string]**float64{"minimum": &f.minimum, "exclusiveMinimum": &f.minimum, "maximum": &f.maximum, "exclusiveMaximum": &f.maximum} {
		if v, ok := s[name].(float64); ok && *dst == nil {
			*dst = &v
		}
	}
	if v, ok := s["maxLength"].(float64); ok && f.maxLength == 0 {
		f.maxLength = int(v)
	}
}
