package vocab_test

// The drift test keeps the published decline vocabulary true. It fails
// when
//
//   - code or a fixture uses a slug that is not in the vocabulary, or
//   - a published copy of the vocabulary (schemas/decline-vocabulary.json,
//     the A2A card's refusal extension, the capabilities ext, the
//     get_products tool description and _meta) differs from what the Go
//     source generates.
//
// The slug scan is syntactic, so it is fast and needs no build. A string
// literal counts as a slug when its position says so:
//
//  1. the argument of vocab.Slug(...), vocab.ParseSlug(...) or
//     vocab.Lookup(...), under whatever name the file imports vocab
//     (unqualified inside package vocab);
//  2. the value of a const or var declared with type vocab.Slug;
//  3. the value of a Slug: field or a "slug": key in a composite literal;
//  4. a key of a map[vocab.Slug]T literal (the voice's templates);
//  5. compared with (==, !=), assigned to or switched on against an
//     x.Slug field, an x.Slug() method or an x["slug"] element;
//  6. a "slug": "..." member of JSON written inside a Go string;
//
// and in every JSON file of the module (fixtures such as demo/rulebook.json,
// golden files under testdata, published schemas):
//
//  7. a "slug" member with a string value;
//  8. a key of a voice's "templates" object;
//  9. the "rule" of a refusal object ({"rule", "reason"}), in kebab case.
//
// Every such literal but "" (no slug) must be a published slug. Only
// non-test Go files are scanned: tests feed unknown slugs on purpose to
// prove they are refused (a rulebook with Slug: "not_a_slug"), and a test
// that expects a real slug already fails when that slug changes, because it
// compares with the storefront's actual output. Deliberately invalid
// fixtures therefore belong in Go test code, not in JSON files. Code that
// names a slug through the vocabulary's constants (vocab.BudgetBelowMinimum)
// needs no scan at all: the compiler checks it. A string literal needs the
// scan even where it lands in a vocab.Slug, because Go converts an untyped
// constant to the type without looking at its value.
//
// Whether every vocabulary entry has the composer's words is the
// composer's own drift test (decline/drift_test.go).

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/storefront/storefront/agent"
	"github.com/storefront/storefront/schemas"
	"github.com/storefront/storefront/transport/a2aserver"
	"github.com/storefront/storefront/vocab"
)

const vocabPath = "github.com/storefront/storefront/vocab"

// slugUse is one slug literal the scan found.
type slugUse struct {
	At   string // file:line or file#/json/pointer
	Slug string
	Rule string // which rule of the comment above found it
}

func (u slugUse) String() string { return fmt.Sprintf("%s: %q (%s)", u.At, u.Slug, u.Rule) }

// published is the set a slug literal must belong to; kebab is the same
// set in the refusal extension's kebab case.
func published() (snake, kebab map[string]bool) {
	snake, kebab = map[string]bool{}, map[string]bool{}
	for _, e := range vocab.Vocabulary() {
		snake[string(e.Slug)] = true
		kebab[e.Slug.Kebab()] = true
	}
	return snake, kebab
}

// unknown keeps the uses that are not published slugs.
func unknown(uses []slugUse) []slugUse {
	snake, kebab := published()
	var out []slugUse
	for _, u := range uses {
		set := snake
		if strings.HasPrefix(u.Rule, "9") {
			set = kebab
		}
		// The empty string is the absence of a slug (x.Slug == "",
		// vocab.Slug("") for its type), never a slug.
		if u.Slug != "" && !set[u.Slug] {
			out = append(out, u)
		}
	}
	return out
}

var jsonSlugMember = regexp.MustCompile(`"slug"\s*:\s*"((?:[^"\\]|\\.)*)"`)

// scanGo finds the slug literals of one Go file.
func scanGo(fset *token.FileSet, name string, src []byte) ([]slugUse, error) {
	f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	pkg := ""
	if f.Name.Name == "vocab" {
		pkg = "." // inside package vocab its names are unqualified
	}
	for _, imp := range f.Imports {
		if p, _ := strconv.Unquote(imp.Path.Value); p == vocabPath {
			pkg = "vocab"
			if imp.Name != nil {
				pkg = imp.Name.Name
			}
		}
	}
	// named reports whether e names vocab's identifier id.
	named := func(e ast.Expr, ids ...string) bool {
		switch e := ast.Unparen(e).(type) {
		case *ast.SelectorExpr:
			x, ok := e.X.(*ast.Ident)
			return ok && pkg != "" && x.Name == pkg && slices.Contains(ids, e.Sel.Name)
		case *ast.Ident:
			return pkg == "." && slices.Contains(ids, e.Name)
		}
		return false
	}
	// holder reports whether e holds a slug: x.Slug, x.Slug() or x["slug"].
	holder := func(e ast.Expr) bool {
		switch e := ast.Unparen(e).(type) {
		case *ast.SelectorExpr:
			return e.Sel.Name == "Slug" && !named(e, "Slug")
		case *ast.CallExpr:
			s, ok := e.Fun.(*ast.SelectorExpr)
			return ok && len(e.Args) == 0 && s.Sel.Name == "Slug" && !named(s, "Slug")
		case *ast.IndexExpr:
			k, ok := e.Index.(*ast.BasicLit)
			return ok && k.Kind == token.STRING && k.Value == `"slug"`
		}
		return false
	}
	var uses []slugUse
	lit := func(e ast.Expr, rule string) {
		b, ok := ast.Unparen(e).(*ast.BasicLit)
		if !ok || b.Kind != token.STRING {
			return
		}
		s, err := strconv.Unquote(b.Value)
		if err != nil {
			return
		}
		p := fset.Position(b.Pos())
		uses = append(uses, slugUse{At: fmt.Sprintf("%s:%d", p.Filename, p.Line), Slug: s, Rule: rule})
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CallExpr:
			if len(n.Args) == 1 && named(n.Fun, "Slug", "ParseSlug", "Lookup") {
				lit(n.Args[0], "1 vocab call")
			}
		case *ast.ValueSpec:
			if n.Type != nil && named(n.Type, "Slug") {
				for _, v := range n.Values {
					lit(v, "2 typed declaration")
				}
			}
		case *ast.CompositeLit:
			if m, ok := n.Type.(*ast.MapType); ok && named(m.Key, "Slug") {
				for _, el := range n.Elts {
					if kv, ok := el.(*ast.KeyValueExpr); ok {
						lit(kv.Key, "4 map key")
					}
				}
			}
			for _, el := range n.Elts {
				kv, ok := el.(*ast.KeyValueExpr)
				if !ok {
					continue
				}
				switch k := kv.Key.(type) {
				case *ast.Ident:
					if k.Name == "Slug" {
						lit(kv.Value, "3 Slug field")
					}
				case *ast.BasicLit:
					if k.Value == `"slug"` {
						lit(kv.Value, "3 slug key")
					}
				}
			}
		case *ast.BinaryExpr:
			if n.Op == token.EQL || n.Op == token.NEQ {
				if holder(n.X) {
					lit(n.Y, "5 comparison")
				}
				if holder(n.Y) {
					lit(n.X, "5 comparison")
				}
			}
		case *ast.AssignStmt:
			if len(n.Lhs) == len(n.Rhs) {
				for i, l := range n.Lhs {
					if holder(l) {
						lit(n.Rhs[i], "5 assignment")
					}
				}
			}
		case *ast.SwitchStmt:
			if n.Tag != nil && holder(n.Tag) {
				for _, s := range n.Body.List {
					if cc, ok := s.(*ast.CaseClause); ok {
						for _, e := range cc.List {
							lit(e, "5 switch case")
						}
					}
				}
			}
		case *ast.BasicLit:
			if n.Kind != token.STRING {
				break
			}
			s, err := strconv.Unquote(n.Value)
			if err != nil {
				break
			}
			p := fset.Position(n.Pos())
			for _, m := range jsonSlugMember.FindAllStringSubmatch(s, -1) {
				var v string
				if json.Unmarshal([]byte(`"`+m[1]+`"`), &v) == nil {
					uses = append(uses, slugUse{At: fmt.Sprintf("%s:%d", p.Filename, p.Line), Slug: v, Rule: "6 JSON in a Go string"})
				}
			}
		}
		return true
	})
	return uses, nil
}

// scanJSON finds the slug literals of one JSON document.
func scanJSON(name string, src []byte) ([]slugUse, error) {
	dec := json.NewDecoder(bytes.NewReader(src))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return nil, err
	}
	var uses []slugUse
	var walk func(v any, ptr string, parentKey string)
	walk = func(v any, ptr, parentKey string) {
		switch v := v.(type) {
		case map[string]any:
			if s, ok := v["slug"].(string); ok {
				uses = append(uses, slugUse{At: name + "#" + ptr + "/slug", Slug: s, Rule: "7 slug member"})
			}
			if rule, ok := v["rule"].(string); ok {
				if _, isRefusal := v["reason"]; isRefusal {
					uses = append(uses, slugUse{At: name + "#" + ptr + "/rule", Slug: rule, Rule: "9 refusal rule"})
				}
			}
			if parentKey == "voice" {
				if t, ok := v["templates"].(map[string]any); ok {
					for k := range t {
						uses = append(uses, slugUse{At: name + "#" + ptr + "/templates/" + k, Slug: k, Rule: "8 template key"})
					}
				}
			}
			keys := make([]string, 0, len(v))
			for k := range v {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				walk(v[k], ptr+"/"+strings.NewReplacer("~", "~0", "/", "~1").Replace(k), k)
			}
		case []any:
			for i, x := range v {
				walk(x, ptr+"/"+strconv.Itoa(i), "")
			}
		}
	}
	walk(doc, "", "")
	return uses, nil
}

// moduleRoot is the directory holding go.mod.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found above the test's directory")
		}
		dir = parent
	}
}

// scanModule scans every non-test Go file and every JSON file under root,
// skipping dependencies (node_modules, vendor) and hidden directories.
func scanModule(t *testing.T, root string) (uses []slugUse, goFiles, jsonFiles int) {
	t.Helper()
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "node_modules" || name == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		switch {
		case strings.HasSuffix(name, ".go") && !strings.HasSuffix(name, "_test.go"):
			src, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			found, err := scanGo(fset, rel, src)
			if err != nil {
				return fmt.Errorf("%s: %w", rel, err)
			}
			uses = append(uses, found...)
			goFiles++
		case strings.HasSuffix(name, ".json"):
			src, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			found, err := scanJSON(rel, src)
			if err != nil {
				t.Logf("%s is not JSON, not scanned: %v", rel, err)
				return nil
			}
			uses = append(uses, found...)
			jsonFiles++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return uses, goFiles, jsonFiles
}

// TestDriftSlugLiterals scans the module: every slug literal in code and
// fixtures is a published slug.
func TestDriftSlugLiterals(t *testing.T) {
	uses, goFiles, jsonFiles := scanModule(t, moduleRoot(t))
	if bad := unknown(uses); len(bad) > 0 {
		for _, u := range bad {
			t.Errorf("%s is not a published decline slug; add it to the vocabulary (vocab/vocabulary.go) or use one that is", u)
		}
	}
	// The scan must see what it is for, or it proves nothing: the
	// vocabulary's own constants, the demo rulebook's slugs and template
	// keys, and the golden wire files.
	seen := map[string]bool{}
	for _, u := range uses {
		seen[u.Rule] = true
		seen[filepath.ToSlash(strings.SplitN(u.At, "#", 2)[0])] = true
	}
	for _, want := range []string{"2 typed declaration", "7 slug member", "8 template key", "demo/rulebook.json"} {
		if !seen[want] {
			t.Errorf("the scan found no use by %q; it no longer sees the code it guards", want)
		}
	}
	t.Logf("scanned %d Go and %d JSON files: %d slug literals", goFiles, jsonFiles, len(uses))
}

// TestDriftScannerCatchesPlantedSlugs plants unknown slugs in synthetic
// sources: each must be reported, and the published ones beside them not.
func TestDriftScannerCatchesPlantedSlugs(t *testing.T) {
	const planted = "budget_too_small"
	goSrc := `package buyer

import (
	"encoding/json"

	voc "github.com/storefront/storefront/vocab"
	"github.com/storefront/storefront/merch"
)

const Tight voc.Slug = "budget_too_small"

var ok = voc.Slug("budget_below_minimum")

func f(o interface{ Slug() voc.Slug }, m map[string]any, g voc.Grounds) {
	_ = voc.Slug("budget_too_small")
	_, _ = voc.ParseSlug("budget_too_small")
	_, _ = voc.Lookup("budget_too_small")
	_ = merch.Action{Slug: "budget_too_small"}
	_ = map[string]any{"slug": "budget_too_small"}
	_ = map[voc.Slug]string{"budget_too_small": "x", "geo_not_served": "y"}
	if o.Slug() == "budget_too_small" || m["slug"] != "budget_too_small" {
	}
	g.Slug = "budget_too_small"
	switch g.Slug {
	case "budget_too_small", "channel_not_offered":
	}
	_ = json.RawMessage(` + "`" + `{"decline":{"slug":"budget_too_small"}}` + "`" + `)
}
`
	fset := token.NewFileSet()
	uses, err := scanGo(fset, "planted.go", []byte(goSrc))
	if err != nil {
		t.Fatal(err)
	}
	bad := unknown(uses)
	rules := map[string]int{}
	for _, u := range bad {
		if u.Slug != planted {
			t.Errorf("reported %s, which was not planted", u)
		}
		rules[u.Rule]++
	}
	want := map[string]int{
		"1 vocab call": 3, "2 typed declaration": 1, "3 Slug field": 1, "3 slug key": 1,
		"4 map key": 1, "5 comparison": 2, "5 assignment": 1, "5 switch case": 1, "6 JSON in a Go string": 1,
	}
	if diff := cmp.Diff(want, rules); diff != "" {
		t.Errorf("planted slugs reported per rule (-want +got):\n%s", diff)
	}
	if len(uses) != len(bad)+3 {
		t.Errorf("the scan found %d uses, want the %d planted plus 3 published ones", len(uses), len(bad))
	}

	// Inside package vocab the names are unqualified.
	uses, err = scanGo(fset, "vocabulary.go", []byte("package vocab\n\nconst Tight Slug = \"budget_too_small\"\n\nvar _, _ = ParseSlug(\"budget_too_small\")\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := len(unknown(uses)); got != 2 {
		t.Errorf("package vocab: %d planted slugs reported, want 2: %v", got, uses)
	}

	jsonSrc := `{"voice":{"templates":{"budget_too_small":"x","budget_below_minimum":"y"}},
	  "rules":[{"decline":{"slug":"budget_too_small"}},{"decline":{"slug":"geo_not_served"}}],
	  "refusal":{"rule":"budget-too-small","reason":"x"},"ok":{"rule":"geo-not-served","reason":"y"}}`
	uses, err = scanJSON("planted.json", []byte(jsonSrc))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, u := range unknown(uses) {
		got = append(got, u.At)
	}
	sort.Strings(got)
	wantAt := []string{"planted.json#/refusal/rule", "planted.json#/rules/0/decline/slug", "planted.json#/voice/templates/budget_too_small"}
	if diff := cmp.Diff(wantAt, got); diff != "" {
		t.Errorf("planted JSON slugs reported (-want +got):\n%s", diff)
	}
	if len(uses) != 6 {
		t.Errorf("the JSON scan found %d uses, want 6: %v", len(uses), uses)
	}
}

// TestDriftScanWalksTheModule plants unknown slugs in a throwaway module:
// the walk reports the ones in code and fixtures and skips tests and
// dependencies.
func TestDriftScanWalksTheModule(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{
		"go.mod":                      "module example.com/planted\n",
		"merch/rules.go":              "package merch\n\nimport \"github.com/storefront/storefront/vocab\"\n\nvar Tight = vocab.Slug(\"budget_too_small\")\n",
		"merch/rules_test.go":         "package merch\n\nimport \"github.com/storefront/storefront/vocab\"\n\nvar refused = vocab.Slug(\"not_a_slug\")\n",
		"demo/testdata/rulebook.json": `{"rules":[{"decline":{"slug":"budget_too_small"}}]}`,
		"e2e/node_modules/x/a.json":   `{"slug":"whatever"}`,
		"notes.json":                  `not JSON at all`,
	}
	for name, src := range files {
		path := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	uses, _, _ := scanModule(t, root)
	var got []string
	for _, u := range unknown(uses) {
		got = append(got, filepath.ToSlash(u.At))
	}
	sort.Strings(got)
	want := []string{"demo/testdata/rulebook.json#/rules/0/decline/slug", "merch/rules.go:5"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("planted slugs reported (-want +got):\n%s", diff)
	}
}

// TestDriftPublishedCopies: every published copy of the vocabulary is what
// the Go source generates.
func TestDriftPublishedCopies(t *testing.T) {
	type entry struct {
		Slug     string   `json:"slug"`
		Reason   string   `json:"reason"`
		Fixable  bool     `json:"fixable"`
		Suggests []string `json:"suggests"`
	}
	entries := vocab.Vocabulary()
	var want []entry
	for _, e := range entries {
		kinds := []string{}
		for _, k := range e.Suggests {
			kinds = append(kinds, string(k))
		}
		want = append(want, entry{string(e.Slug), e.Reason, e.Fixable, kinds})
	}
	normal := func(t *testing.T, v any) []entry {
		t.Helper()
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		var out []entry
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatal(err)
		}
		for i := range out {
			if out[i].Suggests == nil {
				out[i].Suggests = []string{}
			}
		}
		return out
	}

	t.Run("schemas/decline-vocabulary.json", func(t *testing.T) {
		committed, err := schemas.Published.ReadFile("decline-vocabulary.json")
		if err != nil {
			t.Fatal(err)
		}
		generated, err := schemas.Vocabulary("")
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(string(generated), string(committed)); diff != "" {
			t.Errorf("the published file differs from the generator (-generated +published); run go test ./schemas -update:\n%s", diff)
		}
		var doc struct {
			Entries []map[string]any `json:"entries"`
		}
		if err := json.Unmarshal(committed, &doc); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, normal(t, doc.Entries)); diff != "" {
			t.Errorf("published entries differ from the vocabulary (-source +published):\n%s", diff)
		}
	})

	t.Run("A2A card refusal extension", func(t *testing.T) {
		b, err := a2aserver.BuildCard(a2aserver.CardInfo{Endpoint: "http://storefront.example/a2a", Name: "n", Description: "d", Version: "v"})
		if err != nil {
			t.Fatal(err)
		}
		var card struct {
			Capabilities struct {
				Extensions []struct {
					URI      string            `json:"uri"`
					Required *bool             `json:"required"`
					Params   map[string]string `json:"params"`
				} `json:"extensions"`
			} `json:"capabilities"`
		}
		if err := json.Unmarshal(b, &card); err != nil {
			t.Fatal(err)
		}
		wantRules := map[string]string{}
		for _, e := range entries {
			wantRules[e.Slug.Kebab()] = e.Reason
		}
		if len(wantRules) != len(entries) {
			t.Errorf("two slugs share a kebab-case rule id")
		}
		found := false
		for _, x := range card.Capabilities.Extensions {
			if x.URI != a2aserver.RefusalURI {
				continue
			}
			found = true
			if x.Required == nil || *x.Required {
				t.Errorf("refusal extension required = %v, want a literal false", x.Required)
			}
			if diff := cmp.Diff(wantRules, x.Params); diff != "" {
				t.Errorf("card refusal params differ from the vocabulary (-source +card):\n%s", diff)
			}
		}
		if !found {
			t.Error("the card lacks the refusal extension")
		}
		if diff := cmp.Diff(wantRules, a2aserver.RefusalRules()); diff != "" {
			t.Errorf("RefusalRules differs from the vocabulary (-source +rules):\n%s", diff)
		}
	})

	t.Run("capabilities ext and MCP _meta", func(t *testing.T) {
		if diff := cmp.Diff(want, normal(t, agent.VocabularyMeta())); diff != "" {
			t.Errorf("VocabularyMeta differs from the vocabulary (-source +meta):\n%s", diff)
		}
	})

	t.Run("get_products description", func(t *testing.T) {
		desc := agent.GetProductsDescription()
		for _, e := range entries {
			if !strings.Contains(desc, string(e.Slug)) || !strings.Contains(desc, e.Reason) {
				t.Errorf("the get_products description does not publish %s with its reason", e.Slug)
			}
		}
	})
}
