package sanitize

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestASCIIFastPathAgrees checks the ASCII fast path builds exactly the
// view the general path (decomposition and table lookup per rune) does,
// on random printable ASCII, and that Clean's fast path agrees with its
// general one.
func TestASCIIFastPathAgrees(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	for i := 0; i < 20000; i++ {
		b := make([]byte, r.IntN(40))
		for j := range b {
			b[j] = byte(0x20 + r.IntN(0x5f))
		}
		s := string(b)
		got := makeView(s, nil)
		var w viewBuilder
		for _, c := range s {
			out, flags, identity := lookup(c)
			if identity {
				w.put("", flags, 0, c)
			} else {
				w.put(out, flags, 0, 0)
			}
		}
		w.v.at = append(w.v.at, atBoundary|atChar)
		if string(got.sk) != string(w.v.sk) || !slices.Equal(got.at, w.v.at) {
			t.Fatalf("view of %q = %q %v, want %q %v", s, got.sk, got.at, w.v.sk, w.v.at)
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
