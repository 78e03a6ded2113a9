package sanitize

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// fuzzTerms are matched anywhere (long, not whole-word), so the property
// "the output's skeleton does not contain the term's skeleton" is exactly
// what the screen promises for them.
var fuzzTerms = []string{"MR-2291-CTV-FLOOR", "Acme Retail Group", "FW-DEAL-CTV-1182", "Whitfield", "Project Lighthouse"}

// fuzzWords are matched only as whole words.
var fuzzWords = []string{"GAM", "North", "SP-12"}

func fuzzScreen() *Screen {
	var terms []Term
	for _, v := range fuzzTerms {
		terms = append(terms, Term{Value: v, Kind: KindRuleID})
	}
	for _, v := range fuzzWords {
		terms = append(terms, Term{Value: v, Kind: KindNoteTerm, Whole: true})
	}
	return New(NewDenyList(append(terms, VendorTerms()...), nil))
}

// wordSeq is the text's words (letter, digit and mark runs), each reduced
// to its skeleton, joined by single spaces and padded: a whole-word term
// is in the text when its own wordSeq is a substring.
func wordSeq(s string) string {
	f := strings.FieldsFunc(Fold(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && !unicode.Is(unicode.Mn, r)
	})
	for i, w := range f {
		f[i] = Skeleton(w)
	}
	return " " + strings.Join(f, " ") + " "
}

func checkScreened(t *testing.T, what, out string, max int) {
	t.Helper()
	if !utf8.ValidString(out) {
		t.Errorf("%s = %q is not valid UTF-8", what, out)
	}
	if n := utf8.RuneCountInString(out); n > max {
		t.Errorf("%s is %d characters, want at most %d", what, n, max)
	}
	sk := Skeleton(out)
	for _, term := range append(fuzzTerms, vendors...) {
		if ts := Skeleton(term); ts != "" && len([]rune(ts)) >= minSubstring && strings.Contains(sk, ts) {
			t.Errorf("%s = %q contains the skeleton of %q", what, out, term)
		}
	}
	ws := wordSeq(out)
	for _, term := range fuzzWords {
		if strings.Contains(ws, wordSeq(term)) {
			t.Errorf("%s = %q contains the word %q", what, out, term)
		}
	}
	if i := markupAt(out); i >= 0 {
		t.Errorf("%s = %q has markup at byte %d", what, out, i)
	}
	for _, r := range out {
		if unicode.IsControl(r) || invisible(r) {
			t.Errorf("%s = %q contains %U", what, out, r)
			break
		}
	}
}

// FuzzScreen checks that whatever the input, what leaves the screen names
// no deny-listed term in any disguise, holds no markup or hidden
// characters, respects the limits, and that the screen never panics.
func FuzzScreen(f *testing.F) {
	f.Add("The requested budget is below the minimum for this inventory.", 2000)
	f.Add("Rule MR-2291-CTV-FLOOR fired. Budgets from $25,000 fit.", 2000)
	f.Add("Sold to Acme Retail. Group deals are closed.", 100)
	f.Add("<b>x</b> &lt;script&gt;alert(1)&lt;/script&gt; a < b & c", 50)
	f.Add("<\u200bscript>alert(1)</script>", 1000)
	f.Add("ｍｒ\u200d２２９１－ｃｔｖ－ｆｌｏｏｒ", 1000)
	s := fuzzScreen()
	canned := "This seller has declined the request."
	f.Fuzz(func(t *testing.T, raw string, max int) {
		if max < 0 {
			max = -max
		}
		max = 40 + max%3000
		clean := s.Clean(raw)
		if strings.ContainsAny(clean, "\n\t\r") || strings.Contains(clean, "  ") || clean != strings.TrimSpace(clean) {
			t.Errorf("Clean(%q) = %q: whitespace not collapsed", raw, clean)
		}

		prose := s.Prose(raw, max, Declined, raw, canned)
		if prose.IsZero() {
			t.Errorf("Prose(%q) is empty", raw)
		}
		checkScreened(t, "Prose", prose.String(), max)

		if line, ok := s.Line(raw, max); ok {
			checkScreened(t, "Line", line.String(), max)
			if line.IsZero() {
				t.Errorf("Line(%q) = \"\", true", raw)
			}
		}

		parts := strings.Split(raw, "|")
		lines := s.Lines(append(parts, parts...), MaxSuggestion, MaxSuggestions)
		if len(lines) > MaxSuggestions {
			t.Errorf("Lines kept %d, want at most %d", len(lines), MaxSuggestions)
		}
		seen := map[Text]bool{}
		for _, l := range lines {
			checkScreened(t, "Lines item", l.String(), MaxSuggestion)
			if seen[l] {
				t.Errorf("Lines kept %q twice", l)
			}
			seen[l] = true
		}
	})
}
