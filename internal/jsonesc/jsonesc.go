// Package jsonesc writes bytes as the contents of a JSON string exactly as
// encoding/json writes the same Go string, eight bytes at a time, and
// reports whether encoded JSON is compact. The MCP transport carries each
// answer twice, as structuredContent and escaped as the text mirror, so
// the escaping is on every answer's path; Spans let a writer that knows
// part of a document's escaped form already (a catalogue's products, the
// same on every answer) hand it over instead of having it escaped again.
package jsonesc

import (
	"encoding/binary"
	"math/bits"
	"slices"
	"strings"
	"unicode/utf8"
)

// Span is a stretch of a document whose escaped form is known: the Len
// bytes from At escape to Text.
type Span struct {
	At, Len int
	Text    []byte
}

// AppendQuoted appends b as a JSON string exactly as encoding/json writes
// a Go string: ", \ and the control characters escaped, <, > and & as \u
// escapes, invalid UTF-8 as U+FFFD, and U+2028 and U+2029 escaped.
func AppendQuoted(out, b []byte) []byte {
	out = append(out, '"')
	return append(Append(out, b), '"')
}

// AppendQuotedSpans is AppendQuoted of b, copying each span's Text for
// the stretch of b it covers rather than escaping it. Spans are read in
// order; one that starts before the end of the one before it or runs past
// b is ignored, and that stretch escaped as the rest is. A span must
// start and end between characters, as a JSON value inside a document
// does: its Text is then what escaping that stretch writes.
func AppendQuotedSpans(out, b []byte, spans []Span) []byte {
	out = append(out, '"')
	at := 0
	for _, s := range spans {
		if s.At < at || s.Len < 0 || s.At+s.Len > len(b) {
			continue
		}
		out = Append(out, b[at:s.At])
		out = append(out, s.Text...)
		at = s.At + s.Len
	}
	return append(Append(out, b[at:]), '"')
}

const hexDigits = "0123456789abcdef"

// plain marks the ASCII bytes a JSON string holds as they are: not a
// control character, a quote, a backslash or one of <, > and &.
var plain = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = !strings.ContainsRune(`"\<>&`, rune(c))
	}
	return t
}()

const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// unplain flags, in the high bit of each byte of w, the bytes that are not
// plain: a control character, one of ", \, <, > and &, or a byte of a
// multi-byte character. A flag can be false above a true one (a borrow),
// never below it: the lowest is always right, which is all Append reads.
//
// " (0x22) and & (0x26) differ only in bit 0x04, < (0x3c) and > (0x3e)
// only in bit 0x02, so each pair is one zero-byte test with that bit
// masked off.
func unplain(w uint64) uint64 {
	qa, bs, ltgt := (w^('"'*ones))&^(0x04*ones), w^('\\'*ones), (w^('<'*ones))&^(0x02*ones)
	return (w | (w-0x20*ones)&^w | (qa-ones)&^qa | (bs-ones)&^bs | (ltgt-ones)&^ltgt) & highs
}

// quoteOrBackslash flags, as unplain does, the quotes and backslashes of w.
func quoteOrBackslash(w uint64) uint64 {
	q, bs := w^('"'*ones), w^('\\'*ones)
	return ((q-ones)&^q | (bs-ones)&^bs) & highs
}

// skipWords returns where, from i, the first byte flags (unplain or
// quoteOrBackslash) flags is, reading b eight bytes at a time; when no
// whole word is left it returns where it got, len(b) when that is the end.
func skipWords(b []byte, i int, flags func(uint64) uint64) int {
	for ; i+8 <= len(b); i += 8 {
		if m := flags(binary.LittleEndian.Uint64(b[i:])); m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
	}
	return i
}

// Append appends b escaped as the inside of a JSON string, as
// AppendQuoted writes it without the quotes. It reads b eight bytes at a
// time and copies each word to out before looking at it: a word of plain
// bytes is then done, and one with a byte to escape is kept up to that
// byte. out is kept at least 16 bytes longer than what is written, room
// for a word or the longest escape.
func Append(out, b []byte) []byte {
	n := len(out)
	out = out[:cap(out)]
	for i := 0; i < len(b); {
		if len(out)-n < 16 {
			out = slices.Grow(out[:n], 2*(len(b)-i)+16)
			out = out[:cap(out)]
		}
		if i+8 <= len(b) {
			w := binary.LittleEndian.Uint64(b[i:])
			binary.LittleEndian.PutUint64(out[n:], w)
			m := unplain(w)
			if m == 0 {
				i += 8
				n += 8
				continue
			}
			k := bits.TrailingZeros64(m) / 8
			i += k
			n += k
		}
		c := b[i]
		if c < utf8.RuneSelf {
			i++
			if plain[c] {
				out[n] = c
				n++
				continue
			}
			out[n] = '\\'
			switch c {
			case '"', '\\':
				out[n+1] = c
			case '\b':
				out[n+1] = 'b'
			case '\f':
				out[n+1] = 'f'
			case '\n':
				out[n+1] = 'n'
			case '\r':
				out[n+1] = 'r'
			case '\t':
				out[n+1] = 't'
			default:
				out[n+1], out[n+2], out[n+3], out[n+4], out[n+5] = 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf]
				n += 4
			}
			n += 2
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			n += copy(out[n:], `\ufffd`)
		case r == '\u2028' || r == '\u2029':
			n += copy(out[n:], `\u202`)
			out[n] = hexDigits[r&0xf]
			n++
		default:
			n += copy(out[n:], b[i:i+size])
		}
		i += size
	}
	return out[:n]
}

// Compact reports whether b, valid JSON, has no whitespace outside its
// strings, as the encoder's output never has: then it is its own
// compacted form and may be written as it is.
func Compact(b []byte) bool {
	in := false
	for i := 0; i < len(b); i++ {
		if in {
			// Inside a string only a quote or a backslash matters.
			if i = skipWords(b, i, quoteOrBackslash); i == len(b) {
				break
			}
		}
		c := b[i]
		if in {
			switch c {
			case '\\':
				i++
			case '"':
				in = false
			}
			continue
		}
		switch c {
		case '"':
			in = true
		case ' ', '\t', '\n', '\r':
			return false
		}
	}
	return true
}
