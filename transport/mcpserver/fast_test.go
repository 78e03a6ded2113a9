package mcpserver

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"

	"pgregory.net/rapid"
)

// TestWriteStringIsEncodingJSON: the fast path's string writer (appendString) spells
// every byte string as encoding/json spells the same Go string, control
// characters, HTML characters, invalid UTF-8 and line separators included,
// at every position of the eight bytes it scans at a time.
func TestWriteStringIsEncodingJSON(t *testing.T) {
	alphabet := []byte("aaaaaaaaaaaa \"\\<>&$%'=?;.^\b\f\n\r\t\x00\x1f\x20\x7f\x80\xe2\x80\xa8\xa9\xc3\xa9\xff\xf0\x9f\x98\x80")
	rapid.Check(t, func(t *rapid.T) {
		b := rapid.SliceOfN(rapid.SampledFrom(alphabet), 0, 200).Draw(t, "bytes")
		want, _ := json.Marshal(string(b))
		// Whatever room the buffer starts with, and whatever it holds.
		prefix := rapid.SliceOfN(rapid.Byte(), 0, 20).Draw(t, "prefix")
		out := append(make([]byte, 0, len(prefix)+rapid.IntRange(0, 40).Draw(t, "room")), prefix...)
		got := appendString(out, b)
		if !bytes.Equal(got, append(prefix, want...)) {
			t.Fatalf("%q: wrote %s, encoding/json writes %s", b, got, want)
		}
	})
}

// TestCompactMeansCompacted: encoded JSON, whose strings hold spaces,
// quotes and backslashes, is compact; the same indented is not, unless
// indenting changed nothing.
func TestCompactMeansCompacted(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		str := rapid.StringOfN(rapid.SampledFrom([]rune(" aaaaaa\"\\\n\t{}[]:,")), 0, 40, -1)
		doc := map[string]any{}
		for i, v := range rapid.SliceOfN(str, 0, 6).Draw(t, "strings") {
			doc[v] = []any{v, i, map[string]any{"k": v}}
		}
		enc, _ := json.Marshal(doc)
		if !compact(enc) {
			t.Fatalf("%s: encoded JSON not called compact", enc)
		}
		var ind bytes.Buffer
		_ = json.Indent(&ind, enc, "", " ")
		if compact(ind.Bytes()) != bytes.Equal(ind.Bytes(), enc) {
			t.Fatalf("%s: indented JSON called compact", ind.Bytes())
		}
	})
}

// BenchmarkWriteString escapes a get_products answer for the text mirror,
// as the fast path does on every answer.
func BenchmarkWriteString(b *testing.B) {
	payload := completedAnswer(b)
	var out []byte
	b.SetBytes(int64(len(payload)))
	b.ReportAllocs()
	for b.Loop() {
		out = appendString(out[:0], payload)
	}
}

// completedAnswer is the demo's completed get_products answer, compact,
// from the golden file the MCP tests keep.
func completedAnswer(b *testing.B) []byte {
	raw, err := os.ReadFile("testdata/golden/get_products_completed.json")
	if err != nil {
		b.Fatalf("the completed answer's golden file: %v", err)
	}
	var payload bytes.Buffer
	if err := json.Compact(&payload, raw); err != nil {
		b.Fatal(err)
	}
	return payload.Bytes()
}

// BenchmarkCompact checks a get_products answer is compact, as the fast
// path does before copying it into structuredContent.
func BenchmarkCompact(b *testing.B) {
	payload := completedAnswer(b)
	b.SetBytes(int64(len(payload)))
	for b.Loop() {
		if !compact(payload) {
			b.Fatal("a compacted answer is not compact")
		}
	}
}
