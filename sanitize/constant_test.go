package sanitize_test

import (
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"path/filepath"
	"strings"
	"testing"

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
