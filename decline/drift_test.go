package decline_test

// The composer's drift test: every entry of the vocabulary has the
// composer's words. The vocabulary's own drift test (vocab/drift_test.go)
// keeps the slugs in code and fixtures, and every published copy of the
// vocabulary, true to the table.

import (
	"strings"
	"testing"

	"github.com/storefront/storefront/decline"
	"github.com/storefront/storefront/sanitize"
	"github.com/storefront/storefront/vocab"
)

// TestDriftComposerText: every vocabulary entry has the composer's words,
// a one-line reason the composer writes for it and a clause for every
// suggestion kind it may carry.
func TestDriftComposerText(t *testing.T) {
	screen := sanitize.New(nil)
	for _, e := range vocab.Vocabulary() {
		if e.Reason == "" || strings.ContainsAny(e.Reason, "\r\n") {
			t.Errorf("%s: reason %q, want one line", e.Slug, e.Reason)
			continue
		}
		if c, ok := screen.Line(e.Reason, sanitize.MaxReason); !ok || c.String() != e.Reason {
			t.Errorf("%s: the screen changes the reason %q to %q", e.Slug, e.Reason, c)
		}
		in := decline.Input{Grounds: []vocab.Grounds{{Slug: e.Slug, Level: vocab.Category, Allowed: e.Suggests}}, Cap: vocab.Exact}
		out := decline.Compose(in, screen)
		if out.Slug != e.Slug || !strings.Contains(out.Reason.String(), e.Reason) {
			t.Errorf("%s: Compose writes slug %s, reason %q; want the entry's reason", e.Slug, out.Slug, out.Reason)
		}
		if e.Fixable != (len(e.Suggests) > 0) {
			t.Errorf("%s: fixable = %v with suggestion kinds %v", e.Slug, e.Fixable, e.Suggests)
		}
		for _, k := range e.Suggests {
			change := decline.Change{Edits: []decline.Edit{{Kind: k, Budget: 1000, Currency: "USD", Channel: "olv", Country: "US", FormatKind: "image"}}}
			if text := change.Text(); strings.HasPrefix(text, " ") || strings.HasPrefix(strings.ToLower(text), "would fit") {
				t.Errorf("%s: suggestion kind %s has no composer text: %q", e.Slug, k, text)
			}
		}
	}
}
