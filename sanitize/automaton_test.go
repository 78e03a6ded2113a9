package sanitize

import (
	"bytes"
	"cmp"
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// occurrences is the automaton's contract written the slow way: every
// start position of every pattern.
func occurrences(pats []string, text []byte) []match {
	var ms []match
	for id, p := range pats {
		if p == "" {
			continue
		}
		for i := 0; i+len(p) <= len(text); i++ {
			if bytes.HasPrefix(text[i:], []byte(p)) {
				ms = append(ms, match{PatternID: id, Start: i, End: i + len(p)})
			}
		}
	}
	return ms
}

func sortMatches(ms []match) {
	slices.SortFunc(ms, func(a, b match) int {
		return cmp.Or(cmp.Compare(a.End, b.End), cmp.Compare(a.Start, b.Start), cmp.Compare(a.PatternID, b.PatternID))
	})
}

// TestAutomatonFindsEveryOccurrence: on patterns and texts over a small
// alphabet, so that prefixes, suffixes, duplicates and overlaps abound,
// the automaton finds exactly the occurrences a scan of every position
// finds, and IsMatch agrees.
func TestAutomatonFindsEveryOccurrence(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		word := rapid.StringOfN(rapid.SampledFrom([]rune("abc\xe9")), 0, 6, -1)
		pats := rapid.SliceOfN(word, 1, 30).Draw(t, "patterns")
		text := []byte(rapid.StringOfN(rapid.SampledFrom([]rune("abcd\xe9")), 0, 40, -1).Draw(t, "text"))
		a := newAutomaton(pats)
		got, want := a.FindAllOverlapping(text), occurrences(pats, text)
		sortMatches(got)
		sortMatches(want)
		if !slices.Equal(got, want) {
			t.Fatalf("patterns %q in %q: found %v, want %v", pats, text, got, want)
		}
		if a.IsMatch(text) != (len(want) > 0) {
			t.Fatalf("patterns %q in %q: IsMatch = %v, occurrences %v", pats, text, a.IsMatch(text), want)
		}
	})
}

func TestAutomatonEdges(t *testing.T) {
	if newAutomaton(nil) != nil {
		t.Error("no patterns should give no automaton")
	}
	a := newAutomaton([]string{"", "he", "she", "hers", "his", "he"})
	got := a.FindAllOverlapping([]byte("ushers"))
	want := []match{{2, 1, 4}, {1, 2, 4}, {5, 2, 4}, {3, 2, 6}}
	sortMatches(got)
	sortMatches(want)
	if !slices.Equal(got, want) {
		t.Errorf("ushers: %v, want %v", got, want)
	}
	if a.IsMatch([]byte("hxs")) || !a.IsMatch([]byte("xhis")) {
		t.Error("IsMatch wrong on hxs or xhis")
	}
	if got := newAutomaton([]string{""}).FindAllOverlapping([]byte("abc")); len(got) != 0 {
		t.Errorf("the empty pattern matched: %v", got)
	}
}
