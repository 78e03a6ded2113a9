package sanitize

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestASCIIFastPathAgrees checks the ASCII fast path computes exactly the
// views the general normalisation does, on random printable ASCII.
func TestASCIIFastPathAgrees(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	for i := 0; i < 20000; i++ {
		b := make([]byte, r.IntN(40))
		for j := range b {
			b[j] = byte(0x20 + r.IntN(0x5f))
		}
		s := string(b)
		if !asciiText(s) {
			t.Fatalf("asciiText(%q) = false", s)
		}
		gotSk, gotWords := asciiViews(strings.ToLower(s))
		folded := Fold(s)
		if wantSk := skeletonOfFolded(folded); gotSk != wantSk {
			t.Fatalf("skeleton of %q = %q, want %q", s, gotSk, wantSk)
		}
		if wantWords := words(folded); !slices.Equal(gotWords, wantWords) {
			t.Fatalf("words of %q = %q, want %q", s, gotWords, wantWords)
		}
		if plainASCII(s) {
			if got, want := New(nil).Clean(s), cleanSlow(s); got != want {
				t.Fatalf("Clean(%q) = %q, want %q", s, got, want)
			}
		}
	}
}

// cleanSlow is Clean without its fast path.
func cleanSlow(s string) string {
	sc := New(nil)
	return sc.Clean(s + "\u200b")
}
