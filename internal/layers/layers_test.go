// Package layers holds the test that keeps the code's layering: the
// request's path reads top-down through the folders, and no package reaches
// up or sideways into a layer above its own.
package layers

import (
	"go/build"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

const module = "github.com/storefront/storefront/"

// layers orders the production packages from the bottom up. A package may
// import packages of its own layer and of the layers below it, never of a
// layer above. Every production package must be listed, so a new one is
// placed on purpose.
var layers = [][]string{
	// Vocabulary and mechanisms with no business in them: protocol facts,
	// text rules, the screen, hash chains, the clock, limits, panics.
	{"adcp", "vocab", "field", "jsonfield", "sanitize", "ledger", "audit", "metrics", "console/chart",
		"internal/clock", "internal/cputime", "internal/jsonesc", "internal/jsonobj", "internal/jsonrpc", "internal/limit", "internal/origin",
		"internal/recovery", "internal/requestid", "internal/requestschema", "internal/verbatim", "store/keyring"},
	// The decisions: the rulebook and its evaluation, the decline composer,
	// the closed set of answers. None knows another: what they share is
	// the vocabulary below them.
	{"merch", "decline", "outcome"},
	// The domain built on them: the catalogue and the get_products
	// pipeline, media buys, catalogue files, the published schemas.
	{"products", "mediabuy", "bulk", "schemas"},
	// The ports the domain's services store through.
	{"store"},
	// Services built on the ports.
	{"access", "tokens", "buying", "compliance", "backtest", "webhook", "signing", "governance", "demo"},
	// The stores, and the buyer-facing tools every transport serves with
	// the transports' shared authentication.
	{"store/memstore", "store/pgstore", "agent", "internal/rpcauth"},
	// The transports, which know nothing of each other.
	{"transport/mcpserver", "transport/a2aserver"},
	// The publishers' surfaces, whose previews show what each transport
	// would send.
	{"admin", "console"},
	// The program.
	{"app", "bench", "cmd/storefront"},
}

// apart are the layers whose packages may not import each other.
var apart = map[int]bool{1: true, 6: true}

// tools are tests' helpers and generators: they may import anything, and
// no production package may import them.
var tools = []string{
	"e2e", "internal/adversary", "internal/fakedns", "internal/golden", "internal/govstub",
	"internal/kittest", "internal/layers", "internal/rawhttp", "internal/required", "internal/schemagen",
	"internal/spectest", "internal/testenv", "internal/traffic", "sanitize/internal/skelgen",
	"store/pgstore/pgtest", "store/storetest",
}

func TestLayering(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	layer := map[string]int{}
	for i, l := range layers {
		for _, p := range l {
			layer[p] = i
		}
	}
	found := packages(t, root)
	for _, p := range found {
		if _, ok := layer[p]; !ok && !slices.Contains(tools, p) {
			t.Errorf("package %s is in no layer: place it in layers or tools", p)
		}
	}
	for p := range layer {
		if !slices.Contains(found, p) {
			t.Errorf("layer lists %s, which is not a package any more", p)
		}
	}
	for _, p := range found {
		pkg, err := build.ImportDir(filepath.Join(root, p), 0)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		mine, placed := layer[p]
		for _, imp := range pkg.Imports {
			dep, ok := strings.CutPrefix(imp, module)
			if !ok {
				continue
			}
			if slices.Contains(tools, dep) {
				if placed {
					t.Errorf("%s imports the test helper %s", p, dep)
				}
				continue
			}
			if placed && layer[dep] > mine {
				t.Errorf("%s (layer %d) imports %s (layer %d): a package may not reach up", p, mine, dep, layer[dep])
			}
			if placed && layer[dep] == mine && apart[mine] {
				t.Errorf("%s imports %s: the packages of layer %d stand apart", p, dep, mine)
			}
		}
	}
}

// packages lists the module's Go packages that have production files,
// relative to root.
func packages(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		name := d.Name()
		if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules" || name == "docs") {
			return filepath.SkipDir
		}
		if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil && path != root {
			return filepath.SkipDir
		}
		pkg, err := build.ImportDir(path, 0)
		if err != nil || len(pkg.GoFiles) == 0 {
			return nil
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		out = append(out, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

// TestReadmeMapsEveryFolder: the README's table of packages names every
// top-level production folder, and every folder it names exists.
func TestReadmeMapsEveryFolder(t *testing.T) {
	root := filepath.Join("..", "..")
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	start := strings.Index(text, "\n## Architecture\n")
	end := strings.Index(text[start+1:], "\n## ")
	if start < 0 || end < 0 {
		t.Fatal("README.md has no Architecture section")
	}
	named := map[string]bool{}
	for _, line := range strings.Split(text[start:start+1+end], "\n") {
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		first := strings.SplitN(line, "|", 3)[1]
		for _, part := range strings.Split(first, ",") {
			name := strings.Trim(strings.TrimSpace(part), "`")
			if name == "" || !strings.HasSuffix(name, "/") {
				continue
			}
			named[strings.TrimSuffix(name, "/")] = true
			if st, err := os.Stat(filepath.Join(root, name)); err != nil || !st.IsDir() {
				t.Errorf("README.md maps %s, which is not a folder", name)
			}
		}
	}
	for _, p := range packages(t, mustAbs(t, root)) {
		top := strings.SplitN(p, "/", 2)[0]
		if top == "e2e" {
			continue
		}
		if !named[top] && !named[p] {
			t.Errorf("README.md's map of the code does not name %s/", top)
		}
	}
}

func mustAbs(t *testing.T, p string) string {
	t.Helper()
	a, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return a
}
