package console_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// maxScriptLines is how long one console script may grow before it is
// split: past it a file holds more than one part of a page.
const maxScriptLines = 350

// TestScriptsStayReadable: no console script is longer than
// maxScriptLines, and every page's scripts are modules of the console.
func TestScriptsStayReadable(t *testing.T) {
	files, err := filepath.Glob("static/*.js")
	if err != nil || len(files) < 5 {
		t.Fatalf("console scripts: %v %v", files, err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(string(b), "\n"); n > maxScriptLines {
			t.Errorf("%s has %d lines; split it below %d", f, n, maxScriptLines)
		}
	}
}

// TestEveryPageHasTheNavigation: each signed-in page links to every
// other, Products, Orders, Tokens and Audit included, and marks itself
// current.
func TestEveryPageHasTheNavigation(t *testing.T) {
	pages := []string{"rulebook.html", "products.html", "history.html", "decisions.html", "orders.html", "tokens.html", "audit.html"}
	current := regexp.MustCompile(`<a href="([a-z]+\.html)" aria-current="page">`)
	for _, p := range pages {
		b, err := os.ReadFile(filepath.Join("static", p))
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range pages {
			if !strings.Contains(string(b), `<a href="`+q+`"`) {
				t.Errorf("%s does not link to %s", p, q)
			}
		}
		if m := current.FindStringSubmatch(string(b)); m == nil || m[1] != p {
			t.Errorf("%s does not mark itself as the current page: %v", p, m)
		}
	}
}
