package console_test

import (
	"encoding/json"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/storefront/storefront/audit"
	"github.com/storefront/storefront/console"
	"github.com/storefront/storefront/internal/testenv"
	"github.com/storefront/storefront/vocab"
)

func get(t *testing.T, method, url string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

func TestServesEmbeddedPagesWithPolicy(t *testing.T) {
	env := testenv.Start(t)
	for _, test := range []struct {
		path, method string
		status       int
		contentType  string
	}{
		{"/console/", "GET", 200, "text/html"},
		{"/console/", "HEAD", 200, "text/html"},
		{"/console/rulebook.html", "GET", 200, "text/html"},
		{"/console/history.html", "GET", 200, "text/html"},
		{"/console/products.html", "GET", 200, "text/html"},
		{"/console/decisions.html", "GET", 200, "text/html"},
		{"/console/tokens.html", "GET", 200, "text/html"},
		{"/console/audit.html", "GET", 200, "text/html"},
		{"/console/orders.html", "GET", 200, "text/html"},
		{"/console/orders.js", "GET", 200, "text/javascript"},
		{"/console/console.js", "GET", 200, "text/javascript"},
		{"/console/console.css", "GET", 200, "text/css"},
		{"/console/favicon.svg", "GET", 200, "image/svg+xml"},
		{"/console/vocabulary.json", "GET", 200, "application/json"},
		{"/console/no-such-page.html", "GET", 404, ""},
		{"/console", "GET", 301, ""},
		// Nothing under /console/ accepts a write.
		{"/console/", "POST", 0, ""},
	} {
		t.Run(test.method+" "+test.path, func(t *testing.T) {
			resp, _ := get(t, test.method, env.BaseURL+test.path)
			if test.status == 0 {
				if resp.StatusCode != 404 && resp.StatusCode != 405 {
					t.Errorf("%s %s = %d, want 404 or 405", test.method, test.path, resp.StatusCode)
				}
				return
			}
			if resp.StatusCode != test.status {
				t.Fatalf("%s %s = %d, want %d", test.method, test.path, resp.StatusCode, test.status)
			}
			if test.contentType != "" && !strings.HasPrefix(resp.Header.Get("Content-Type"), test.contentType) {
				t.Errorf("Content-Type = %q, want %s", resp.Header.Get("Content-Type"), test.contentType)
			}
			if test.status == 301 && resp.Header.Get("Location") != "/console/" {
				t.Errorf("Location = %q", resp.Header.Get("Location"))
			}
			for k, want := range map[string]string{
				"Content-Security-Policy": console.Policy,
				"X-Content-Type-Options":  "nosniff",
				"X-Frame-Options":         "DENY",
				"Referrer-Policy":         "no-referrer",
			} {
				if got := resp.Header.Get(k); got != want {
					t.Errorf("%s = %q, want %q", k, got, want)
				}
			}
		})
	}
}

func TestPolicyIsStrict(t *testing.T) {
	for _, want := range []string{
		"default-src 'none'", "script-src 'self'", "style-src 'self'", "connect-src 'self'",
		"frame-ancestors 'none'", "form-action 'none'", "base-uri 'none'", "require-trusted-types-for 'script'",
	} {
		if !strings.Contains(console.Policy, want) {
			t.Errorf("the policy lacks %q: %s", want, console.Policy)
		}
	}
	for _, bad := range []string{"unsafe-inline", "unsafe-eval", "http:", "https:", "*"} {
		if strings.Contains(console.Policy, bad) {
			t.Errorf("the policy allows %q: %s", bad, console.Policy)
		}
	}
}

// TestVocabularyMatchesTheValidator: the forms offer what the rulebook
// validator accepts, from the same Go values.
func TestVocabularyMatchesTheValidator(t *testing.T) {
	b, err := console.Vocabulary()
	if err != nil {
		t.Fatal(err)
	}
	var v console.Vocab
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	var slugs []string
	for _, s := range v.Slugs {
		slugs = append(slugs, string(s.Slug))
		e, ok := vocab.Lookup(s.Slug)
		if !ok || e.Fixable != s.Fixable || e.Reason != s.Reason {
			t.Errorf("slug %s in vocabulary.json = %+v, vocabulary has %+v", s.Slug, s, e)
		}
	}
	if !slices.Equal(slugs, vocab.Slugs()) {
		t.Errorf("slugs = %v, want %v", slugs, vocab.Slugs())
	}
	var actions []string
	for _, a := range audit.Actions() {
		actions = append(actions, string(a))
	}
	if !slices.Equal(v.AuditActions, actions) {
		t.Errorf("audit actions = %v, want %v", v.AuditActions, actions)
	}
	if !slices.Equal(v.Disclosure, vocab.Levels()) {
		t.Errorf("disclosure levels = %v, want %v", v.Disclosure, vocab.Levels())
	}
}

// The pages' own code must never turn a string into markup or code. The
// policy enforces it in the browser; this keeps the source honest too.
var (
	jsSinks    = regexp.MustCompile(`\.innerHTML|\.outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function|setTimeout\(['"]|\.srcdoc|javascript:`)
	htmlInline = regexp.MustCompile(`(?i)<script(?:\s[^>]*)?>[^<\s]|\son[a-z]+\s*=|\sstyle\s*=|<style|javascript:`)
	scriptTag  = regexp.MustCompile(`(?i)<script[^>]*>`)
)

func TestStaticFilesHaveNoMarkupSinksOrInlineCode(t *testing.T) {
	dir := "static"
	err := fs.WalkDir(os.DirFS(dir), ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(filepath.Join(dir, path))
		if err != nil {
			return err
		}
		s := string(b)
		switch filepath.Ext(path) {
		case ".js":
			for i, line := range strings.Split(s, "\n") {
				if strings.HasPrefix(strings.TrimSpace(line), "//") {
					continue
				}
				for _, m := range jsSinks.FindAllString(line, -1) {
					t.Errorf("%s:%d uses %q", path, i+1, m)
				}
			}
		case ".html":
			for _, m := range htmlInline.FindAllString(s, -1) {
				t.Errorf("%s has inline code or style: %q", path, m)
			}
			for _, tag := range scriptTag.FindAllString(s, -1) {
				if !strings.Contains(tag, `type="module"`) || !strings.Contains(tag, `src="`) {
					t.Errorf("%s has a script that is not an external module: %s", path, tag)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
