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
// UTF-8 with no escape, no DEL or C1 control character, and no null. It
// leans on the vectorised byte searches, so a clean request costs little.
func plain(doc []byte) bool {
	if bytes.IndexByte(doc, '\\') >= 0 || bytes.IndexByte(doc, 0x7f) >= 0 || bytes.Contains(doc, []byte("null")) {
		return false
	}
	// C1 controls, U+0080 to U+009F, are 0xC2 0x80-0x9F in UTF-8.
	for rest := doc; ; {
		i := bytes.IndexByte(rest, 0xc2)
		if i < 0 {
			break
		}
		if i+1 < len(rest) && rest[i+1] >= 0x80 && rest[i+1] <= 0x9f {
			return false
		}
		rest = rest[i+1:]
	}
	return utf8.Valid(doc)
}

// maxDepth is how deep Scan follows nesting; encoding/json refuses
// documents nested deeper than 10000 anyway.
const maxDepth = 10000

// frame is one open container: an object with the raw literal of its
// current member name, or an array with its current index.
type frame struct {
	object bool
	key    []byte
	index  int
}

// scanner walks a JSON document's bytes once. It decodes nothing but the
// strings it has to look at, and makes a Path only for a fault or to ask
// opaque, so a clean document costs no allocation.
type scanner struct {
	doc    []byte
	i      int
	opaque func(Path) bool
	stack  []frame
	faults []Fault
	// bad stops the walk: a syntax error, the decoder's to report.
	bad bool
}

func (s *scanner) path() Path {
	p := make(Path, len(s.stack))
	for i, f := range s.stack {
		if f.object {
			var name string
			if json.Unmarshal(append(append([]byte{'"'}, f.key...), '"'), &name) != nil {
				name = string(f.key)
			}
			p[i] = name
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

func (s *scanner) isOpaque(p Path) bool { return s.opaque != nil && s.opaque(p) }

func (s *scanner) run() {
	s.value()
}

func (s *scanner) ws() {
	for s.i < len(s.doc) {
		switch s.doc[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// peek is the next byte after white space, or 0 at the end.
func (s *scanner) peek() byte {
	s.ws()
	if s.i >= len(s.doc) {
		return 0
	}
	return s.doc[s.i]
}

func (s *scanner) value() {
	if s.bad || len(s.faults) >= MaxFaults {
		s.bad = true
		return
	}
	switch c := s.peek(); {
	case c == '{':
		s.container(true)
	case c == '[':
		s.container(false)
	case c == '"':
		if lit, ok := s.str(); ok {
			s.literal(lit)
		}
	case c == 'n':
		if !s.word("null") {
			return
		}
		if n := len(s.stack); n > 0 && !s.stack[n-1].object {
			if p := s.path(); !s.isOpaque(p) {
				s.fault(p, ErrNull)
			}
		}
	case c == 't':
		s.word("true")
	case c == 'f':
		s.word("false")
	case c == '-' || c >= '0' && c <= '9':
		for s.i < len(s.doc) && strings.IndexByte("+-.0123456789eE", s.doc[s.i]) >= 0 {
			s.i++
		}
	default:
		s.bad = true
	}
}

func (s *scanner) word(w string) bool {
	if !bytes.HasPrefix(s.doc[s.i:], []byte(w)) {
		s.bad = true
		return false
	}
	s.i += len(w)
	return true
}

// container walks an object's members or an array's elements.
func (s *scanner) container(object bool) {
	if len(s.stack) >= maxDepth {
		s.bad = true
		return
	}
	close := byte(']')
	if object {
		close = '}'
	}
	s.i++
	s.stack = append(s.stack, frame{object: object})
	defer func() { s.stack = s.stack[:len(s.stack)-1] }()
	if s.peek() == close {
		s.i++
		return
	}
	for !s.bad {
		top := &s.stack[len(s.stack)-1]
		if object {
			if s.peek() != '"' {
				s.bad = true
				return
			}
			key, ok := s.str()
			if !ok {
				return
			}
			top.key = key
			s.literal(key)
			if s.peek() != ':' {
				s.bad = true
				return
			}
			s.i++
		}
		s.value()
		if s.bad {
			return
		}
		switch s.peek() {
		case ',':
			s.i++
			s.stack[len(s.stack)-1].index++
		case close:
			s.i++
			return
		default:
			s.bad = true
		}
	}
}

// str reads a string literal and returns its body (between the quotes).
func (s *scanner) str() ([]byte, bool) {
	start := s.i + 1
	for j := start; j < len(s.doc); j++ {
		switch s.doc[j] {
		case '\\':
			j++
		case '"':
			s.i = j + 1
			return s.doc[start:j], true
		}
	}
	s.bad = true
	return nil, false
}

// literal checks a string literal's body. Only a literal that fails the
// strict check needs its path, to ask whether it is opaque.
func (s *scanner) literal(lit []byte) {
	if plain(lit) || checkLiteral(lit, true) == nil {
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
