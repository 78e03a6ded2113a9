// Package golden is the one way tests compare output with a file kept in
// testdata and rewrite that file.
//
// A golden file is a promise about what leaves the storefront, so the
// helper will not bless a payload that holds a confidential term of the
// fixture it came from: with -update it refuses to write such a payload,
// and without it the comparison fails on the term before it diffs. The
// terms are searched for case-insensitively as plain text, independently
// of the screen the payload went through, so a screen that lets a term by
// cannot also bless the file that shows it.
//
// Rewrite every golden file of a package with `go test ./pkg -update`.
package golden

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/storefront/storefront/merch"
	"github.com/storefront/storefront/products"
)

var update = flag.Bool("update", false, "rewrite the golden files (a payload holding a confidential term of its fixture is refused)")

// Updating reports whether this run rewrites golden files.
func Updating() bool { return *update }

// Options say how a payload is compared.
type Options struct {
	// Confidential lists the fixture's confidential terms (rule ids and
	// names, note words, internal references): a payload holding any of
	// them is never written and never matches. Empty terms are ignored.
	Confidential []string
	// Normalise rewrites parts of the payload that change from run to run
	// (hashes, sequence numbers) before anything else looks at it.
	Normalise func([]byte) []byte
	// Hint is what the failure message tells the reader to run to rewrite
	// the file; by default `go test -update` in the package.
	Hint string
}

// JSON compares payload, indented with two spaces and ending in a newline,
// with the file at path; with -update it writes the file first, creating
// its folder.
func JSON(t testing.TB, path string, payload []byte, o Options) {
	t.Helper()
	if o.Normalise != nil {
		payload = o.Normalise(payload)
	}
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, payload, "", "  "); err != nil {
		t.Fatalf("%s: the payload is not JSON: %v\n%s", path, err, payload)
	}
	pretty.WriteByte('\n')
	compare(t, path, pretty.Bytes(), jsonText, o)
}

// Bytes compares got with the file at path byte for byte; with -update it
// writes the file first.
func Bytes(t testing.TB, path string, got []byte, o Options) {
	t.Helper()
	if o.Normalise != nil {
		got = o.Normalise(got)
	}
	compare(t, path, got, func(b []byte) string { return string(b) }, o)
}

// compare checks got and the file at path, reading each as text to search
// for confidential terms.
func compare(t testing.TB, path string, got []byte, text func([]byte) string, o Options) {
	t.Helper()
	if term, ok := Holds(text(got), o.Confidential); ok {
		t.Fatalf("%s: the payload holds the fixture's confidential term %q; it is not written or compared", path, term)
	}
	hint := o.Hint
	if hint == "" {
		hint = "go test -update in this package"
	}
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading the golden file (%s creates it): %v", hint, err)
	}
	if term, ok := Holds(text(want), o.Confidential); ok {
		t.Errorf("%s: the golden file itself holds the fixture's confidential term %q", path, term)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s differs from what the code produces (-golden +got); if the change is meant, %s rewrites it:\n%s", path, hint, diff)
	}
}

// Holds reports the first of terms that occurs in text, compared without
// regard to case. Terms with no letter or digit are ignored: punctuation
// alone identifies nothing.
func Holds(text string, terms []string) (string, bool) {
	if len(terms) == 0 {
		return "", false
	}
	text = strings.ToLower(text)
	for _, term := range terms {
		if !strings.ContainsFunc(term, isAlnum) {
			continue
		}
		if strings.Contains(text, strings.ToLower(term)) {
			return term, true
		}
	}
	return "", false
}

// jsonText is every key and string of a JSON document, decoded, one a
// line, so a term is found as the buyer's client would read it and not as
// JSON escapes it (\u003c, \u00e9). A document that does not parse is
// searched as it is.
func jsonText(b []byte) string {
	var v any
	if json.Unmarshal(b, &v) != nil {
		return string(b)
	}
	var sb strings.Builder
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			sb.WriteString(v)
			sb.WriteByte('\n')
		case []any:
			for _, e := range v {
				walk(e)
			}
		case map[string]any:
			for k, e := range v {
				sb.WriteString(k)
				sb.WriteByte('\n')
				walk(e)
			}
		}
	}
	walk(v)
	return sb.String()
}

func isAlnum(r rune) bool {
	return r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r > 0x7f
}

// Confidential lists the values of every term a publisher's deny-list
// holds for rb and catalogue: what a golden payload of that fixture must
// never show.
func Confidential(rb *merch.Rulebook, catalogue []products.Product) []string {
	terms := products.DenyTerms(rb, catalogue)
	out := make([]string, 0, len(terms))
	for _, term := range terms {
		out = append(out, term.Value)
	}
	return out
}
