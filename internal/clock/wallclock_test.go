package clock_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// allowed are the folders (from the module root) whose code may read the
// machine's clock:
//   - internal/clock is the one place that does, by its rule;
//   - bench/ measures the machine it runs on (load timings, a report's
//     start time), and none of its times reach a store or a buyer.
var allowed = []string{"internal/clock/", "bench/"}

// historicMigrations predate the rule and have run on deployed databases,
// so they are left as they were applied: their DEFAULT now() columns are
// dropped by 00065, their backfills ran once, and 00060's
// clock_timestamp() only salts random token ids.
var historicMigrations = map[string]bool{
	"00001_storefront.sql":               true,
	"00002_async.sql":                    true,
	"00050_history_replay_retention.sql": true,
	"00060_tokens_audit.sql":             true,
}

// sqlClock matches SQL that reads the database's clock.
var sqlClock = regexp.MustCompile(`(?i)\b(now|clock_timestamp|statement_timestamp|transaction_timestamp|timeofday)\s*\(\s*\)|\b(current_timestamp|current_date|current_time|localtimestamp|localtime)\b`)

// TestNoWallClock fails for each place in production code (the module's
// .go files other than tests, and its migrations) that reads the machine's
// or the database's clock instead of the injected one: time.Now,
// time.Since, time.Until, clock.Read(nil), or SQL such as now(). Each is
// reported as file:line.
func TestNoWallClock(t *testing.T) {
	root := moduleRoot(t)
	var found []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			switch d.Name() {
			case "node_modules", "testdata", ".cache", ".git":
				return filepath.SkipDir
			}
			return nil
		}
		for _, a := range allowed {
			if strings.HasPrefix(rel, a) {
				return nil
			}
		}
		switch {
		case strings.HasSuffix(rel, ".go") && !strings.HasSuffix(rel, "_test.go"):
			src, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			found = append(found, scanGo(t, rel, src)...)
		case strings.HasPrefix(rel, "store/pgstore/migrations/") && strings.HasSuffix(rel, ".sql") && !historicMigrations[d.Name()]:
			src, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			found = append(found, scanMigration(rel, string(src))...)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range found {
		t.Errorf("%s (see internal/clock: read the injected clock with clock.Read, time durations with clock.Start)", f)
	}
}

// TestNoWallClockFinds is the control: every kind of reading is found, at
// its line, and the allowed forms are not.
func TestNoWallClockFinds(t *testing.T) {
	src := `package p

import (
	"fmt"
	tm "time"

	"github.com/storefront/storefront/internal/clock"
)

var now = tm.Now

func f(start tm.Time, now func() tm.Time) {
	_ = tm.Since(start)
	_ = tm.Until(start)
	_ = clock.Read(nil)
	_ = "UPDATE t SET at = now() WHERE id = $1"
	_ = ` + "`SELECT CURRENT_TIMESTAMP`" + `
	_ = clock.Read(now)
	_ = clock.Start().Elapsed()
	_ = tm.Date(2030, 1, 1, 0, 0, 0, 0, tm.UTC)
	fmt.Println("a known gap, now or later")
}
`
	got := scanGo(t, "p/p.go", []byte(src))
	want := []string{
		"p/p.go:10: time.Now",
		"p/p.go:13: time.Since",
		"p/p.go:14: time.Until",
		"p/p.go:15: clock.Read(nil)",
		"p/p.go:16: SQL reads the database's clock (now())",
		"p/p.go:17: SQL reads the database's clock (CURRENT_TIMESTAMP)",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("scanGo found:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	dot := scanGo(t, "d/d.go", []byte("package d\n\nimport . \"time\"\n\nvar _ = Now\n"))
	if len(dot) != 1 || dot[0] != `d/d.go:3: a dot import of "time"` {
		t.Errorf("scanGo(dot import) = %q", dot)
	}
	mig := scanMigration("m.sql", "-- +goose Up\nALTER TABLE t ADD COLUMN at timestamptz NOT NULL DEFAULT now();\n-- +goose Down\nALTER TABLE t ALTER COLUMN at SET DEFAULT now();\n")
	if len(mig) != 1 || mig[0] != "m.sql:2: SQL reads the database's clock (now())" {
		t.Errorf("scanMigration = %q, want the Up section's now() only", mig)
	}
}

// moduleRoot is two folders up: go test runs in internal/clock.
func moduleRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("the module root: %v", err)
	}
	return root
}

// scanGo lists the clock readings in one Go file.
func scanGo(t *testing.T, name string, src []byte) []string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
	if err != nil {
		t.Fatalf("parsing %s: %v", name, err)
	}
	var timeName, clockName string
	var found []string
	at := func(n ast.Node, what string) {
		found = append(found, fmt.Sprintf("%s:%d: %s", name, fset.Position(n.Pos()).Line, what))
	}
	for _, imp := range f.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		local := filepath.Base(path)
		if imp.Name != nil {
			local = imp.Name.Name
		}
		switch path {
		case "time":
			if local == "." {
				at(imp, `a dot import of "time"`)
			}
			timeName = local
		case "github.com/storefront/storefront/internal/clock":
			clockName = local
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			if x, ok := n.X.(*ast.Ident); ok && x.Name == timeName && timeName != "" {
				switch n.Sel.Name {
				case "Now", "Since", "Until":
					at(n, "time."+n.Sel.Name)
				}
			}
		case *ast.CallExpr:
			if sel, ok := n.Fun.(*ast.SelectorExpr); ok && clockName != "" && sel.Sel.Name == "Read" && len(n.Args) == 1 {
				if x, ok := sel.X.(*ast.Ident); ok && x.Name == clockName {
					if arg, ok := n.Args[0].(*ast.Ident); ok && arg.Name == "nil" {
						at(n, "clock.Read(nil)")
					}
				}
			}
		case *ast.BasicLit:
			if n.Kind == token.STRING {
				if m := sqlClock.FindString(n.Value); m != "" {
					at(n, fmt.Sprintf("SQL reads the database's clock (%s)", m))
				}
			}
		}
		return true
	})
	return found
}

// scanMigration lists the clock readings in a migration's Up section (its
// Down section restores the schema before it, defaults and all).
func scanMigration(name, src string) []string {
	var found []string
	up := false
	for i, line := range strings.Split(src, "\n") {
		switch strings.TrimSpace(line) {
		case "-- +goose Up":
			up = true
			continue
		case "-- +goose Down":
			up = false
			continue
		}
		code, _, _ := strings.Cut(line, "--")
		if m := sqlClock.FindString(code); up && m != "" {
			found = append(found, fmt.Sprintf("%s:%d: SQL reads the database's clock (%s)", name, i+1, m))
		}
	}
	return found
}
