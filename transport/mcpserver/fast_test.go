package mcpserver

import (
	"bytes"
	"encoding/json"
	"testing"

	"pgregory.net/rapid"
)

// TestWriteStringIsEncodingJSON: the fast path's string writer spells
// every byte string as encoding/json spells the same Go string, control
// characters, HTML characters, invalid UTF-8 and line separators included.
func TestWriteStringIsEncodingJSON(t *testing.T) {
	alphabet := []byte("a \"\\<>&\b\f\n\r\t\x00\x1f\x7f\xe2\x80\xa8\xa9\xc3\xa9\xff\xf0\x9f\x98\x80")
	rapid.Check(t, func(t *rapid.T) {
		b := rapid.SliceOfN(rapid.SampledFrom(alphabet), 0, 40).Draw(t, "bytes")
		want, _ := json.Marshal(string(b))
		var got bytes.Buffer
		writeString(&got, b)
		if !bytes.Equal(got.Bytes(), want) {
			t.Fatalf("%q: wrote %s, encoding/json writes %s", b, got.Bytes(), want)
		}
	})
}

// TestCompactMeansCompacted: encoded JSON, whose strings hold spaces,
// quotes and backslashes, is compact; the same indented is not, unless
// indenting changed nothing.
func TestCompactMeansCompacted(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		str := rapid.StringOfN(rapid.SampledFrom([]rune(" a\"\\\n\t{}[]:,")), 0, 12, -1)
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
