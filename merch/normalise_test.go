package merch

import (
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// normalised takes a shortcut for keywords that are already plain; the
// shortcut must agree with the general path for every string.
func TestNormalisedAgreesWithTokens(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		k := rapid.StringOf(rapid.SampledFrom([]rune("ab zé9-Z ."))).Draw(t, "keyword")
		if got, want := normalised(k), strings.Join(tokens(k), " "); got != want {
			t.Fatalf("normalised(%q) = %q, want %q", k, got, want)
		}
	})
}

// containsWord must agree with the plain definition: the needle, with a
// space on each side, is in the haystack.
func TestContainsWordAgrees(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		hay := haystack(rapid.StringOf(rapid.SampledFrom([]rune("ab ab"))).Draw(t, "text"))
		needle := normalised(rapid.StringOf(rapid.SampledFrom([]rune("ab "))).Draw(t, "needle"))
		if needle == "" {
			return
		}
		if got, want := containsWord(hay, needle), strings.Contains(hay, " "+needle+" "); got != want {
			t.Fatalf("containsWord(%q, %q) = %v, want %v", hay, needle, got, want)
		}
	})
}
