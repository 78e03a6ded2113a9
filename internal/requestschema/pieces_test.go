package requestschema

import (
	"encoding/json"
	"io/fs"
	"regexp"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// schemaPatterns are the distinct "pattern" values of every embedded
// schema.
func schemaPatterns(t testing.TB) []string {
	seen := map[string]bool{}
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if s, ok := x.(string); ok && k == "pattern" {
					seen[s] = true
				}
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	err := fs.WalkDir(Files, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".json") {
			return err
		}
		b, err := Files.ReadFile(path)
		if err != nil {
			return err
		}
		var v any
		if json.Unmarshal(b, &v) == nil {
			walk(v)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, 0, len(seen))
	for s := range seen {
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}

// TestPiecesAreRegexp: for every pattern of the schemas that pieces take,
// and for patterns of their shape beside them, a match is what Go's
// regexp answers, on strings drawn from the pattern's own characters,
// others, non-ASCII and invalid UTF-8, at the lengths around its bounds.
// The common patterns are required to be taken, so that a change in how
// regexp/syntax parses them cannot quietly send them back to regexp.
func TestPiecesAreRegexp(t *testing.T) {
	patterns := append(schemaPatterns(t), `^a*$`, `^x?[0-9]$`, `^ab$`, `^[a-c]{2,}$`, `^[a-c]{0,2}$`, `^-[a-]+$`,
		`^[a-z]{2}[a-z]+$`, `^[a-z]+[0-9]$`, `[A-Z]{3}`, `^(?i)[a-z]$`, `^é+$`, `^[^a]$`, `^\S+$`, `^a+?$`)
	taken := 0
	for _, src := range patterns {
		ps, ok := piecesOf(src)
		if !ok {
			continue
		}
		taken++
		re := regexp.MustCompile(src)
		alphabet := []rune(".-_:/#+@ \t\n\x00\x7f\u00e9\ufffd\U0001F600")
		for b := byte(0); b < 128; b++ {
			if strings.ContainsRune(src, rune(b)) {
				alphabet = append(alphabet, rune(b))
			}
		}
		longest := 0
		for _, p := range ps.runs {
			longest += max(p.min, p.max)
		}
		rapid.Check(t, func(t *rapid.T) {
			var s string
			if rapid.Bool().Draw(t, "fromPattern") {
				// A string of the pattern's own sets, near its lengths.
				var b []byte
				for _, p := range ps.runs {
					n := rapid.IntRange(max(0, p.min-1), max(p.min, p.max)+1).Draw(t, "n")
					for range n {
						c := byte(rapid.IntRange(0, 127).Filter(func(c int) bool { return p.has(byte(c)) || c%17 == 0 }).Draw(t, "c"))
						b = append(b, c)
					}
				}
				if rapid.Bool().Draw(t, "break") && len(b) > 0 {
					i := rapid.IntRange(0, len(b)-1).Draw(t, "at")
					b[i] = rapid.SampledFrom([]byte{0xff, 0xc3, '\n', 'Z', 'z', '0', '-'}).Draw(t, "with")
				}
				s = string(b)
			} else {
				s = string(rapid.SliceOfN(rapid.SampledFrom(alphabet), 0, longest+3).Draw(t, "runes"))
			}
			if got, want := ps.MatchString(s), re.MatchString(s); got != want {
				t.Fatalf("%s on %q: pieces %v, regexp %v", src, s, got, want)
			}
		})
	}
	for _, common := range []string{`^[A-Z]{3}$`, `^[A-Z]{2}$`, `^[A-Za-z0-9_.:-]{16,255}$`, `^sha256:[a-f0-9]{64}$`, `^\d{4}-\d{2}-\d{2}$`} {
		if _, ok := piecesOf(common); !ok {
			t.Errorf("%s is not taken as pieces", common)
		}
	}
	for _, other := range []string{`[A-Z]{3}`, `^(?i)[a-z]$`, `^é+$`, `^[a-z]+[0-9]$`, `^https://`, `^a+?$`} {
		if _, ok := piecesOf(other); ok {
			t.Errorf("%s is taken as pieces, which it is not", other)
		}
	}
	t.Logf("%d of %d patterns taken as pieces", taken, len(patterns))
	if taken < 20 {
		t.Errorf("only %d patterns were taken as pieces", taken)
	}
}

// BenchmarkPattern matches an idempotency key as the schema door does.
func BenchmarkPattern(b *testing.B) {
	const src, key = `^[A-Za-z0-9_.:-]{16,255}$`, "bench-7f3c9a2e-41d8-4b7a-9c55-0d1e2f3a4b5c"
	ps, _ := piecesOf(src)
	re := regexp.MustCompile(src)
	b.Run("pieces", func(b *testing.B) {
		for b.Loop() {
			ps.MatchString(key)
		}
	})
	b.Run("regexp", func(b *testing.B) {
		for b.Loop() {
			re.MatchString(key)
		}
	})
}
