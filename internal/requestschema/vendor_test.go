package requestschema

import (
	"bytes"
	"encoding/json"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/storefront/storefront/internal/spectest"
)

var update = flag.Bool("update", false, "copy the request schemas' closure from the AdCP spec folder into official/")

// closure lists the spec files the request schemas of Tasks reach through
// $ref, with the release manifest, relative to the spec's schemas folder.
func closure(t *testing.T, schemas string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(schemas, "manifest.json"))
	if err != nil {
		t.Fatalf("reading the AdCP release manifest: %v", err)
	}
	var man manifest
	if err := json.Unmarshal(b, &man); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{"manifest.json": true}
	var stack []string
	for _, task := range tasks {
		if man.Tools[task].Request == "" {
			t.Fatalf("the manifest names no request schema for %s", task)
		}
		stack = append(stack, man.Tools[task].Request)
	}
	for len(stack) > 0 {
		rel := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[rel] {
			continue
		}
		seen[rel] = true
		b, err := os.ReadFile(filepath.Join(schemas, rel))
		if err != nil {
			t.Fatalf("%s: %v", rel, err)
		}
		var doc any
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatalf("%s: %v", rel, err)
		}
		for _, ref := range refs(doc) {
			file, _, _ := strings.Cut(ref, "#")
			if file == "" {
				continue
			}
			if !strings.HasPrefix(file, "/schemas/") {
				t.Fatalf("%s: $ref %q is not under /schemas/", rel, ref)
			}
			stack = append(stack, strings.TrimPrefix(file, "/schemas/"))
		}
	}
	out := make([]string, 0, len(seen))
	for rel := range seen {
		out = append(out, rel)
	}
	sort.Strings(out)
	return out
}

func refs(v any) []string {
	var out []string
	switch n := v.(type) {
	case map[string]any:
		for k, x := range n {
			if s, ok := x.(string); ok && k == "$ref" {
				out = append(out, s)
				continue
			}
			out = append(out, refs(x)...)
		}
	case []any:
		for _, x := range n {
			out = append(out, refs(x)...)
		}
	}
	return out
}

// TestVendored checks that official/ holds, byte for byte, the spec
// folder's copy of every schema the served tasks' request schemas reach,
// and nothing else (go test ./internal/requestschema -run TestVendored
// -update copies them again).
func TestVendored(t *testing.T) {
	spec := filepath.Join(spectest.Dir(t), "schemas")
	want := closure(t, spec)
	if *update {
		if err := os.RemoveAll(Root); err != nil {
			t.Fatal(err)
		}
		for _, rel := range want {
			b, err := os.ReadFile(filepath.Join(spec, rel))
			if err != nil {
				t.Fatal(err)
			}
			dst := filepath.Join(Root, rel)
			if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(dst, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	var have []string
	err := fs.WalkDir(Files, Root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			have = append(have, strings.TrimPrefix(p, Root+"/"))
		}
		return err
	})
	if err != nil {
		t.Fatalf("reading the embedded schemas: %v (run go test ./internal/requestschema -run TestVendored -update)", err)
	}
	sort.Strings(have)
	if strings.Join(have, "\n") != strings.Join(want, "\n") {
		t.Fatalf("the embedded schemas are not the closure of the served tasks' request schemas: have %d files, want %d; run go test ./internal/requestschema -run TestVendored -update", len(have), len(want))
	}
	for _, rel := range want {
		a, _ := fs.ReadFile(Files, Root+"/"+rel)
		b, _ := os.ReadFile(filepath.Join(spec, rel))
		if !bytes.Equal(a, b) {
			t.Errorf("%s differs from the spec folder's copy; run go test ./internal/requestschema -run TestVendored -update", rel)
		}
	}
}
