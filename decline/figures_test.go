package decline

import (
	"github.com/storefront/storefront/vocab"
	"strings"
	"testing"
)

// TestFiguresAreVerified: a figure in the reason stands for a change, and
// is written only when that change would be served, whether or not the
// rule offers it as a suggestion. An unverified figure leaves the category
// line, which names none.
func TestFiguresAreVerified(t *testing.T) {
	for _, test := range []struct {
		name   string
		g      vocab.Grounds
		figure string
	}{
		{"range budget", budgetGrounds(vocab.Range, 3200), "5,000 USD"},
		{"exact budget", budgetGrounds(vocab.Exact, 3200), "3,200"},
		{"exact budget offering no budget suggestion", func() vocab.Grounds { g := budgetGrounds(vocab.Exact, 3200); g.Allowed = nil; return g }(), "3,200"},
		{"exact lead time", leadGrounds(vocab.Exact), "on or after"},
	} {
		t.Run(test.name, func(t *testing.T) {
			var asked []string
			yes := Compose(Input{Grounds: []vocab.Grounds{test.g}, Cap: vocab.Exact, Verify: func(c Change) bool { asked = append(asked, c.Text()); return true }}, plain)
			if !strings.Contains(yes.Reason.String(), test.figure) {
				t.Fatalf("a verified figure is not stated: %q", yes.Reason)
			}
			no := Compose(Input{Grounds: []vocab.Grounds{test.g}, Cap: vocab.Exact, Verify: func(Change) bool { return false }}, plain)
			if strings.Contains(no.Reason.String(), test.figure) {
				t.Errorf("a figure that serves nothing is stated: %q", no.Reason)
			}
			if no.Level != vocab.Category {
				t.Errorf("Level = %s, want category for a reason whose figure was dropped", no.Level)
			}
			if yes.Checks != len(asked) || yes.Checks > MaxChecks {
				t.Errorf("Checks = %d for %d verifications (bound %d)", yes.Checks, len(asked), MaxChecks)
			}
			// The figure's change is the suggestion's: verified once.
			seen := map[string]bool{}
			for _, a := range asked {
				if seen[a] {
					t.Errorf("%q verified twice", a)
				}
				seen[a] = true
			}
		})
	}
}

// TestFigureVerifiedAgainstItsRule: with VerifyFigure, a figure is judged
// by its own rule and the catalogue: another rule that still declines the
// changed brief (and is stated in the same reason) does not hide it.
func TestFigureVerifiedAgainstItsRule(t *testing.T) {
	g := leadGrounds(vocab.Exact)
	var slugs []vocab.Slug
	c := Compose(Input{Grounds: []vocab.Grounds{g}, Cap: vocab.Exact, Verify: func(Change) bool { return false },
		VerifyFigure: func(_ Change, s vocab.Slug) bool { slugs = append(slugs, s); return true }}, plain)
	if !strings.Contains(c.Reason.String(), "on or after") {
		t.Errorf("a figure its rule clears is not stated: %q", c.Reason)
	}
	if len(slugs) != 1 || slugs[0] != vocab.LeadTimeTooShort {
		t.Errorf("VerifyFigure asked for %v, want [%s]", slugs, vocab.LeadTimeTooShort)
	}
	if len(c.Suggestions) != 0 {
		t.Errorf("a suggestion Verify refused was offered: %v", c.Suggestions)
	}
}
