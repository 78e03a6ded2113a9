package field

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Path is where a value sits in a JSON document: member names (string)
// and array indexes (int), from the top.
type Path []any

// Pointer is p as an RFC 6901 JSON pointer: "/brand/industries/0".
func (p Path) Pointer() string {
	var b strings.Builder
	for _, t := range p {
		b.WriteByte('/')
		s := token(t)
		s = strings.ReplaceAll(s, "~", "~0")
		b.WriteString(strings.ReplaceAll(s, "/", "~1"))
	}
	return b.String()
}

// String is p as AdCP names fields in errors: "brand.industries[0]".
func (p Path) String() string {
	var b strings.Builder
	for _, t := range p {
		if i, ok := t.(int); ok {
			fmt.Fprintf(&b, "[%d]", i)
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(token(t))
	}
	return b.String()
}

func token(t any) string {
	switch x := t.(type) {
	case int:
		return strconv.Itoa(x)
	case string:
		return x
	}
	return fmt.Sprint(t)
}

// Fault is one string, member name or array element a JSON document may
// not hold.
type Fault struct {
	Path Path
	// Err is a predicate, as Rule.Check returns.
	Err error
}

// MaxFaults is the most faults Scan reports in one document.
const MaxFaults = 20

// ErrNull is the fault of a null array element: a wrong type rather than
// bad text, which a caller may report under another code.
var ErrNull = errors.New("must not be null: an array holds values, never null")

// Scan checks every string of a JSON document, member names included, as
// Text does with line breaks allowed, and refuses null array elements (no
// AdCP or admin array holds them; encoding/json would read one as a zero
// value). Inside the subtrees opaque marks, which hold the sender's own
// data kept and echoed unchanged (AdCP context and ext), only valid Unicode
// is required.
//
// It reads the raw bytes: encoding/json silently turns invalid UTF-8 and
// lone surrogate escapes into U+FFFD, so once decoded they can no longer be
// seen. Scanning stops at a syntax error, which is the decoder's to
// report.
func Scan(doc []byte, opaque func(Path) bool) []Fault {
	if plain(doc) {
		return nil
	}
	s := scanner{doc: doc, opaque: opaque}
	s.run()
	return s.faults
}

// plain reports documents that cannot hold a fault, the common case: valid
// UTF-8 with no escape, no DEL or C1 control character, and no null.
func plain(doc []byte) bool {
	for i := 0; i < len(doc); i++ {
		switch c := doc[i]; {
		case c == '\\', c == 0x7f:
			return false
		case c == 0xc2 && i+1 < len(doc) && doc[i+1] >= 0x80 && doc[i+1] <= 0x9f:
			return false
		}
	}
	return utf8.Valid(doc) && !bytes.Contains(doc, []byte("null"))
}

type frame struct {
	object  bool
	key     string
	index   int
	wantKey bool
}

type scanner struct {
	doc    []byte
	opaque func(Path) bool
	stack  []frame
	faults []Fault
}

func (s *scanner) path() Path {
	p := make(Path, len(s.stack))
	for i, f := range s.stack {
		if f.object {
			p[i] = f.key
		} else {
			p[i] = f.index
		}
	}
	return p
}

func (s *scanner) fault(p Path, err error) {
	if len(s.faults) < MaxFaults {
		s.faults = append(s.faults, Fault{Path: p, Err: err})
	}
}

// done moves the innermost container past the value just read.
func (s *scanner) done() {
	if n := len(s.stack); n > 0 {
		if s.stack[n-1].object {
			s.stack[n-1].wantKey = true
		} else {
			s.stack[n-1].index++
		}
	}
}

func (s *scanner) run() {
	dec := json.NewDecoder(bytes.NewReader(s.doc))
	dec.UseNumber()
	var prev int64
	for len(s.faults) < MaxFaults {
		tok, err := dec.Token()
		if err != nil {
			return
		}
		end := dec.InputOffset()
		raw := s.doc[prev:end]
		prev = end
		top := len(s.stack) - 1
		if top >= 0 && s.stack[top].object && s.stack[top].wantKey {
			if key, ok := tok.(string); ok {
				s.stack[top].key, s.stack[top].wantKey = key, false
				s.literal(raw)
				continue
			}
		}
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{':
				s.stack = append(s.stack, frame{object: true, wantKey: true})
			case '[':
				s.stack = append(s.stack, frame{})
			default:
				s.stack = s.stack[:top]
				s.done()
			}
			continue
		case string:
			s.literal(raw)
		case nil:
			if top >= 0 && !s.stack[top].object && !s.isOpaque(s.path()) {
				s.fault(s.path(), ErrNull)
			}
		}
		s.done()
	}
}

func (s *scanner) isOpaque(p Path) bool { return s.opaque != nil && s.opaque(p) }

// literal checks the string literal at the end of raw (raw may start with
// the separators before it).
func (s *scanner) literal(raw []byte) {
	q := bytes.IndexByte(raw, '"')
	if q < 0 || len(raw)-q < 2 {
		return
	}
	lit := raw[q+1 : len(raw)-1]
	if plain(lit) {
		return
	}
	p := s.path()
	if err := checkLiteral(lit, !s.isOpaque(p)); err != nil {
		s.fault(p, err)
	}
}

// checkLiteral decodes a JSON string literal's body, checking that it is
// valid Unicode and, when strict, that it holds no control character but
// line breaks and tabs.
func checkLiteral(lit []byte, strict bool) error {
	at := 0
	for i := 0; i < len(lit); {
		at++
		var r rune
		switch c := lit[i]; {
		case c == '\\' && i+1 < len(lit):
			r, i = escape(lit, i)
			if utf16.IsSurrogate(r) {
				return fmt.Errorf("must be valid Unicode (character %d is a lone UTF-16 surrogate escape)", at)
			}
		case c < utf8.RuneSelf:
			r = rune(c)
			i++
		default:
			var w int
			r, w = utf8.DecodeRune(lit[i:])
			if r == utf8.RuneError && w == 1 {
				return fmt.Errorf("must be valid UTF-8 (character %d is not)", at)
			}
			i += w
		}
		if strict {
			if err := control(r, true, at); err != nil {
				return err
			}
		}
	}
	return nil
}

// escape decodes the escape at lit[i], joining a surrogate pair, and
// returns the rune and the index after it. A lone surrogate comes back as
// itself, for the caller to refuse.
func escape(lit []byte, i int) (rune, int) {
	switch lit[i+1] {
	case 'b':
		return '\b', i + 2
	case 'f':
		return '\f', i + 2
	case 'n':
		return '\n', i + 2
	case 'r':
		return '\r', i + 2
	case 't':
		return '\t', i + 2
	case 'u':
		r := hex4(lit, i+2)
		if r < 0 {
			return utf8.RuneError, i + 2
		}
		if utf16.IsSurrogate(r) && r < 0xdc00 && i+12 <= len(lit) && lit[i+6] == '\\' && lit[i+7] == 'u' {
			if lo := hex4(lit, i+8); lo >= 0xdc00 && lo < 0xe000 {
				return utf16.DecodeRune(r, lo), i + 12
			}
		}
		return r, i + 6
	}
	return rune(lit[i+1]), i + 2
}

func hex4(b []byte, i int) rune {
	if i+4 > len(b) {
		return -1
	}
	n, err := strconv.ParseUint(string(b[i:i+4]), 16, 32)
	if err != nil {
		return -1
	}
	return rune(n)
}
