package sanitize_test

import (
	"errors"
	"go/ast"
	"go/constant"
	"go/parser"
	"go/token"
	"go/types"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/storefront/storefront/sanitize"
)

// sanitizePath is this package's import path.
const sanitizePath = "github.com/storefront/storefront/sanitize"

// TestConst: a constant passes the vendor screen as it is, and one that
// names a vendor does not: Const screens, it does not trust.
func TestConst(t *testing.T) {
	if got := sanitize.Const("the request must be a JSON object"); got.String() != "the request must be a JSON object" {
		t.Errorf(`sanitize.Const("the request must be a JSON object") = %q, want it unchanged`, got)
	}
	if got := sanitize.Const("task_id"); got.String() != "task_id" {
		t.Errorf(`sanitize.Const("task_id") = %q, want it unchanged`, got)
	}
	// Asked twice, the same text (from the cache the second time).
	if a, b := sanitize.Const("task_id"), sanitize.Const("task_id"); a != b {
		t.Errorf("Const twice = %q, %q", a, b)
	}
	if got := sanitize.Const("This inventory is sold through DoubleClick."); !got.IsZero() {
		t.Errorf("Const of a line naming a vendor = %q, want the zero Text, as Line drops it", got)
	}
	if got := sanitize.Const("  two   spaces "); got.String() != "two spaces" {
		t.Errorf("Const of a line with loose spacing = %q, want it cleaned as Line cleans it", got)
	}
}

// TestConstRefusesAVariable type-checks, as the compiler does, a package
// that calls Const with literals, constants, a variable and a typed
// constant, against Const's real declaration (constant.go, text.go): the
// untyped constants are accepted, and the other two are refused. A test
// cannot compile a call that does not compile, so it runs the type checker.
func TestConstRefusesAVariable(t *testing.T) {
	fset := token.NewFileSet()
	var files []*ast.File
	for _, name := range []string{"constant.go", "text.go"} {
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatalf("reading Const's declaration: %v", err)
		}
		files = append(files, f)
	}
	// Only the declarations matter: what the bodies use from elsewhere
	// in the package, or from the standard library, is left undefined and
	// its errors ignored.
	empty := importerFunc(func(path string) (*types.Package, error) {
		p := types.NewPackage(path, filepath.Base(path))
		p.MarkComplete()
		return p, nil
	})
	decl, _ := (&types.Config{Importer: empty, Error: func(error) {}}).Check(sanitizePath, fset, files, nil)
	fn, ok := decl.Scope().Lookup("Const").(*types.Func)
	if !ok {
		t.Fatal("constant.go declares no func Const")
	}
	param := fn.Type().(*types.Signature).Params().At(0).Type()
	if named, ok := param.(*types.Named); !ok || named.Obj().Exported() || named.Underlying() != types.Typ[types.String] {
		t.Fatalf("Const takes %v, want an unexported string type", param)
	}

	const src = `package buyer

import "github.com/storefront/storefront/sanitize"

const fixed = "a fixed line"

var variable = "a line from a request"

var (
	_ = sanitize.Const("a literal")
	_ = sanitize.Const(fixed)
	_ = sanitize.Const("a " + fixed)
	_ = sanitize.Const(variable)     // refused
	_ = sanitize.Const(string(fixed)) // refused
)
`
	f, err := parser.ParseFile(fset, "buyer.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	var refused []int
	conf := types.Config{
		Importer: importerFunc(func(path string) (*types.Package, error) {
			if path == sanitizePath {
				return decl, nil
			}
			return nil, errors.New("no such package")
		}),
		Error: func(err error) {
			var te types.Error
			if errors.As(err, &te) {
				refused = append(refused, fset.Position(te.Pos).Line)
			}
		},
	}
	_, _ = conf.Check("buyer", fset, []*ast.File{f}, nil)
	var want []int
	for i, line := range strings.Split(src, "\n") {
		if strings.HasSuffix(line, "// refused") {
			want = append(want, i+1)
		}
	}
	if !equalInts(refused, want) {
		t.Errorf("the type checker refused the calls on lines %v, want exactly those on lines %v (a variable and a typed constant)", refused, want)
	}
}

type importerFunc func(path string) (*types.Package, error)

func (f importerFunc) Import(path string) (*types.Package, error) { return f(path) }

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestConstantsPassTheVendorScreen reads every call of Const in the
// module's production source, evaluates its argument (a string literal, a
// constant made of literals, or a concatenation of those) and checks that
// the vendor screen passes it unchanged and that it fits a message. Const
// would otherwise screen the line away or change it at run time, on a path
// no other test may reach. An argument this test cannot evaluate fails it:
// write the line as a literal.
func TestConstantsPassTheVendorScreen(t *testing.T) {
	root := moduleRoot(t)
	found := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != root && (n == "node_modules" || n == "testdata" || strings.HasPrefix(n, ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if !strings.Contains(string(src), "Const(") {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		for _, c := range constCalls(t, path, src) {
			found++
			where := rel + ":" + strconv.Itoa(c.line)
			if !c.ok {
				t.Errorf("%s: sanitize.Const(%s): not a string literal or a constant made of them, which this test can read", where, c.expr)
				continue
			}
			got, ok := sanitize.Vendor().Line(c.text, 0)
			switch {
			case !ok:
				t.Errorf("%s: sanitize.Const(%q): the vendor screen drops this line", where, c.text)
			case got.String() != c.text:
				t.Errorf("%s: sanitize.Const(%q): the vendor screen makes it %q", where, c.text, got)
			case utf8.RuneCountInString(c.text) > sanitize.MaxMessage:
				t.Errorf("%s: sanitize.Const(%q): longer than a message may be (%d characters)", where, c.text, sanitize.MaxMessage)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("reading the module's source under %s: %v", root, err)
	}
	if found == 0 {
		t.Fatalf("no call of Const found under %s: the walk is reading the wrong tree", root)
	}
	t.Logf("%d calls of Const checked", found)
}

// moduleRoot is the directory of the go.mod above this package.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			t.Fatalf("no go.mod above %s: this test reads the module's source", dir)
		}
	}
}

type constCall struct {
	line int
	expr string
	text string
	ok   bool
}

// constCalls finds the calls of Const in one file: sanitize.Const (under
// whatever name the file imports this package) or, in this package, Const.
func constCalls(t *testing.T, path string, src []byte) []constCall {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, 0)
	if err != nil {
		t.Fatalf("parsing %s: %v", path, err)
	}
	inPackage := f.Name.Name == "sanitize" && filepath.Base(filepath.Dir(path)) == "sanitize"
	name := ""
	for _, imp := range f.Imports {
		if p, _ := strconv.Unquote(imp.Path.Value); p == sanitizePath {
			name = "sanitize"
			if imp.Name != nil {
				name = imp.Name.Name
			}
		}
	}
	if name == "" && !inPackage {
		return nil
	}
	known := packageConsts(t, filepath.Dir(path))
	var out []constCall
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok || len(call.Args) != 1 {
			return true
		}
		switch fun := call.Fun.(type) {
		case *ast.SelectorExpr:
			if x, ok := fun.X.(*ast.Ident); !ok || x.Name != name || fun.Sel.Name != "Const" {
				return true
			}
		case *ast.Ident:
			if !inPackage || fun.Name != "Const" {
				return true
			}
		default:
			return true
		}
		c := constCall{line: fset.Position(call.Pos()).Line, expr: string(src[fset.Position(call.Args[0].Pos()).Offset:fset.Position(call.Args[0].End()).Offset])}
		if v := evalString(call.Args[0], known); v != nil {
			c.text, c.ok = constant.StringVal(v), true
		}
		out = append(out, c)
		return true
	})
	return out
}

// packageConsts are the string constants declared at the top level of the
// package in dir whose values evalString can read.
func packageConsts(t *testing.T, dir string) map[string]constant.Value {
	t.Helper()
	fset := token.NewFileSet()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	specs := map[string]ast.Expr{}
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, e.Name()), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, s := range g.Specs {
				vs := s.(*ast.ValueSpec)
				for i, n := range vs.Names {
					if i < len(vs.Values) {
						specs[n.Name] = vs.Values[i]
					}
				}
			}
		}
	}
	out := map[string]constant.Value{}
	// Constants may refer to each other; a few rounds settle them.
	for range 4 {
		for name, x := range specs {
			if v := evalString(x, out); v != nil {
				out[name] = v
			}
		}
	}
	return out
}

// evalString evaluates a string constant expression: literals, known
// constants, parentheses and +. It returns nil for anything else.
func evalString(x ast.Expr, consts map[string]constant.Value) constant.Value {
	switch x := x.(type) {
	case *ast.BasicLit:
		if x.Kind == token.STRING {
			return constant.MakeFromLiteral(x.Value, token.STRING, 0)
		}
	case *ast.Ident:
		return consts[x.Name]
	case *ast.ParenExpr:
		return evalString(x.X, consts)
	case *ast.BinaryExpr:
		if x.Op != token.ADD {
			return nil
		}
		a, b := evalString(x.X, consts), evalString(x.Y, consts)
		if a == nil || b == nil {
			return nil
		}
		return constant.BinaryOp(a, token.ADD, b)
	}
	return nil
}
