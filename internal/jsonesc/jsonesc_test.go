package jsonesc

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"

	"pgregory.net/rapid"
)

// alphabet holds every kind of byte the escaper treats apart: plain
// ASCII, each escaped character, control characters, and the pieces of
// valid, invalid and separator UTF-8 sequences.
var alphabet = []byte("aaaaaaaaaaaa \"\\<>&$%'=?;.^\b\f\n\r\t\x00\x1f\x20\x7f\x80\xe2\x80\xa8\xa9\xc3\xa9\xff\xf0\x9f\x98\x80")

// TestQuotedIsEncodingJSON: AppendQuoted spells every byte string as
// encoding/json spells the same Go string, control characters, HTML
// characters, invalid UTF-8 and line separators included, at every
// position of the eight bytes it scans at a time.
func TestQuotedIsEncodingJSON(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		b := rapid.SliceOfN(rapid.SampledFrom(alphabet), 0, 200).Draw(t, "bytes")
		want, _ := json.Marshal(string(b))
		// Whatever room the buffer starts with, and whatever it holds.
		prefix := rapid.SliceOfN(rapid.Byte(), 0, 20).Draw(t, "prefix")
		out := append(make([]byte, 0, len(prefix)+rapid.IntRange(0, 40).Draw(t, "room")), prefix...)
		got := AppendQuoted(out, b)
		if !bytes.Equal(got, append(prefix, want...)) {
			t.Fatalf("%q: wrote %s, encoding/json writes %s", b, got, want)
		}
	})
}

// TestSpansAreCopied: with spans over stretches of a document that start
// and end at ASCII bytes (as JSON values do), AppendQuotedSpans writes what
// AppendQuoted writes, and it copies each span's Text rather than
// escaping the stretch: a span whose Text is marked shows the mark where
// the stretch was. Spans out of order, overlapping or past the end are
// ignored.
func TestSpansAreCopied(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		b := rapid.SliceOfN(rapid.SampledFrom(alphabet), 0, 300).Draw(t, "bytes")
		var cuts []int // where a span may start or end: before an ASCII byte, or at the end
		for i := 0; i <= len(b); i++ {
			if i == len(b) || b[i] < 0x80 {
				cuts = append(cuts, i)
			}
		}
		var spans []Span
		want := []byte{'"'}
		at := 0
		for range rapid.IntRange(0, 6).Draw(t, "spans") {
			from := rapid.SampledFrom(cuts).Draw(t, "from")
			to := rapid.SampledFrom(cuts).Draw(t, "to")
			if to < from {
				from, to = to, from
			}
			marked := rapid.Bool().Draw(t, "marked")
			text := Append(nil, b[from:to])
			if marked {
				text = []byte("<<copied>>")
			}
			spans = append(spans, Span{At: from, Len: to - from, Text: text})
			if from < at {
				continue // ignored: before the end of the one before
			}
			want = append(Append(want, b[at:from]), text...)
			at = to
		}
		if rapid.Bool().Draw(t, "past the end") {
			spans = append(spans, Span{At: at, Len: len(b) - at + 1, Text: []byte("never")})
		}
		want = append(Append(want, b[at:]), '"')
		if got := AppendQuotedSpans(nil, b, spans); !bytes.Equal(got, want) {
			t.Fatalf("%q with spans %v: wrote %s, want %s", b, spans, got, want)
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
		if !Compact(enc) {
			t.Fatalf("%s: encoded JSON not called compact", enc)
		}
		var ind bytes.Buffer
		_ = json.Indent(&ind, enc, "", " ")
		if Compact(ind.Bytes()) != bytes.Equal(ind.Bytes(), enc) {
			t.Fatalf("%s: indented JSON called compact", ind.Bytes())
		}
	})
}

// BenchmarkQuoted escapes a get_products answer for the text mirror, as
// the MCP fast path does on every answer it has no spans for.
func BenchmarkQuoted(b *testing.B) {
	payload := completedAnswer(b)
	var out []byte
	b.SetBytes(int64(len(payload)))
	b.ReportAllocs()
	for b.Loop() {
		out = AppendQuoted(out[:0], payload)
	}
}

// completedAnswer is the demo's completed get_products answer, compact,
// from the golden file the MCP tests keep.
func completedAnswer(b *testing.B) []byte {
	raw, err := os.ReadFile("../../transport/mcpserver/testdata/golden/get_products_completed.json")
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
		if !Compact(payload) {
			b.Fatal("a compacted answer is not compact")
		}
	}
}
