package jsonfield

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"unicode/utf8"
)

// kind is the type of a JSON value.
type kind uint8

const (
	kindNull kind = iota
	kindBool
	kindNumber
	kindString
	kindArray
	kindObject
)

// what names a kind in a fault: "must be a string, not a number".
func (k kind) what() string {
	return [...]string{"null", "a boolean", "a number", "a string", "an array", "an object"}[k]
}

// Value is one value of a document Parse read: its kind, its bytes as
// sent, and an array's elements or an object's members in the order sent.
// Strings and member names are decoded only when asked for.
type Value struct {
	kind kind
	raw  []byte
	// name is a member's decoded name, for a value inside an object.
	name []byte
	kids []Value
}

// Raw is the value's bytes as sent, a slice of the parsed document.
func (v Value) Raw() []byte { return v.raw }

// IsNull reports whether the value is null.
func (v Value) IsNull() bool { return v.kind == kindNull }

// IsObject reports whether the value is an object.
func (v Value) IsObject() bool { return v.kind == kindObject }

// text is a string value decoded as encoding/json decodes it.
func (v Value) text() string { return string(unquote(v.raw)) }

// member is the last member of an object named k: a member given twice is
// read as encoding/json reads it, the second time.
func (v Value) member(k string) (Value, bool) {
	for i := len(v.kids) - 1; i >= 0; i-- {
		if string(v.kids[i].name) == k {
			return v.kids[i], true
		}
	}
	return Value{}, false
}

// members are an object's members sorted by name, each name once with
// its last value, so that faults come in the same order for the same
// document.
func (v Value) members() []Value {
	out := slices.Clone(v.kids)
	slices.SortStableFunc(out, func(a, b Value) int { return bytes.Compare(a.name, b.name) })
	keep := out[:0]
	for i, m := range out {
		if i+1 < len(out) && bytes.Equal(m.name, out[i+1].name) {
			continue
		}
		keep = append(keep, m)
	}
	return keep
}

// ErrSyntax is a document that is not one JSON value.
var ErrSyntax = errors.New("not valid JSON")

// Parse reads data, one JSON value with white space around it, in one
// pass. It accepts exactly what encoding/json accepts, nesting limit
// included, and like it leaves text rules to others (field.Scan): a string
// may hold invalid UTF-8, which decodes as U+FFFD.
func Parse(data []byte) (Value, error) {
	v, n, ok := parse(data)
	if !ok || n < len(data) {
		return Value{}, ErrSyntax
	}
	return v, nil
}

// A Loan is the slab a lent parse (ParseLent) carved its values from,
// until Return hands it back for another parse.
type Loan struct {
	slab []Value
	// used is how much of slab the parse filled: what Return clears.
	used int
	// depth is how deeply the document nests its arrays and objects.
	depth int
}

// Depth is how deeply the lent parse's document nests arrays and objects:
// 0 for a scalar, 1 for a flat array or object.
func (l *Loan) Depth() int { return l.depth }

// ParseLent is Parse whose values are carved from a slab lent from a
// pool rather than allocated: the values a request's parse makes were a
// sixth of the bytes the server allocated. After loan.Return no value of
// the parse, nor anything read from one but copies (Raw and the strings
// and numbers decoded from it are the document's or copies; Kids and
// members are the slab's), may be read again. It is for a caller that
// reads the document within one call and keeps only copies.
func ParseLent(data []byte) (v Value, loan *Loan, err error) {
	loan = loans.Get().(*Loan)
	v, n, ok := parseInto(data, loan)
	if !ok || n < len(data) {
		return Value{}, loan, ErrSyntax
	}
	return v, loan, nil
}

// Return hands the slab back, cleared so that it keeps no document alive
// while pooled. It may be called once; a nil Loan returns nothing.
func (l *Loan) Return() {
	if l == nil {
		return
	}
	clear(l.slab[:l.used])
	l.used, l.depth = 0, 0
	loans.Put(l)
}

// loans are lent slabs, each as large as a parse's first slab may be.
var loans = sync.Pool{New: func() any { return &Loan{slab: make([]Value, 0, slabSize)} }}

// parse reads the first JSON value of data and returns it with the offset
// after it and any white space that follows.
func parse(data []byte) (Value, int, bool) { return parseInto(data, nil) }

// parseInto is parse carving first from loan's slab, when loan is not nil.
func parseInto(data []byte, loan *Loan) (Value, int, bool) {
	open := openStacks.Get().(*[]Value)
	p := parser{doc: data, open: (*open)[:0], loan: loan}
	if loan != nil {
		p.slab = loan.slab[:0]
	}
	p.space()
	v, ok := p.value()
	p.space()
	if p.loan != nil {
		// The lent slab is still the one carved from.
		p.loan.used = len(p.slab)
	}
	if loan != nil {
		loan.depth = p.deepest
	}
	if cap(p.open) <= maxPooledStack {
		// Nothing the stack held is read again; cleared, it keeps no
		// document alive while pooled. A parse that failed inside a
		// container left members past the most a closed one held.
		clear(p.open[:max(p.high, len(p.open))])
		*open = p.open[:0]
		openStacks.Put(open)
	}
	return v, p.i, ok
}

// openStacks are parsers' open stacks, kept between parses: a request's
// parse would otherwise grow one from nothing each time.
var openStacks = sync.Pool{New: func() any { s := make([]Value, 0, 64); return &s }}

// maxPooledStack is the largest open stack kept: one grown by a document
// far larger than a request is left to the collector.
const maxPooledStack = 4096

// slabSize is how many values a parser's slab of kids holds at most: a
// request's whole tree, usually, in one allocation.
const slabSize = 256

// bytesPerValue is what the first slab allows each value of the document:
// a request's members run to about 17 bytes each, and a slab sized for
// twice the values it holds is garbage the collector pays for. A document
// of smaller values takes more slabs, each twice the one before.
const bytesPerValue = 12

// maxDepth is how deeply encoding/json lets arrays and objects nest.
const maxDepth = 10000

type parser struct {
	doc   []byte
	i     int
	depth int
	// open holds the elements or members read so far of each container
	// still open, so that each gets one slice of the right size; high is
	// the most it has held.
	open []Value
	high int
	// slab is where the containers' kids are carved from (carve).
	slab []Value
	// loan, while not nil, lent slab: carve notes how much of it was
	// used when it moves on to a slab of its own.
	loan *Loan
	// deepest is the most depth has been.
	deepest int
}

// carve is a copy of kids, a closed container's members or elements,
// carved from the parser's slab: a tree's containers share a few
// allocations rather than taking one each.
func (p *parser) carve(kids []Value) []Value {
	n := len(kids)
	if n == 0 {
		return []Value{}
	}
	if cap(p.slab)-len(p.slab) < n {
		size := len(p.doc) / bytesPerValue
		if p.slab != nil {
			size = 2 * cap(p.slab)
		}
		if p.loan != nil {
			p.loan.used, p.loan = len(p.slab), nil
		}
		p.slab = make([]Value, 0, max(n, min(slabSize, size)))
	}
	at := len(p.slab)
	p.slab = append(p.slab, kids...)
	return p.slab[at : at+n : at+n]
}

func (p *parser) space() {
	for p.i < len(p.doc) {
		switch p.doc[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// next is the byte at the offset, or 0 at the end.
func (p *parser) next() byte {
	if p.i < len(p.doc) {
		return p.doc[p.i]
	}
	return 0
}

func (p *parser) value() (Value, bool) {
	start := p.i
	var k kind
	ok := false
	switch c := p.next(); {
	case c == '{':
		return p.container(kindObject, '}')
	case c == '[':
		return p.container(kindArray, ']')
	case c == '"':
		k, ok = kindString, p.str()
	case c == 't':
		k, ok = kindBool, p.word("true")
	case c == 'f':
		k, ok = kindBool, p.word("false")
	case c == 'n':
		k, ok = kindNull, p.word("null")
	case c == '-' || c >= '0' && c <= '9':
		k, ok = kindNumber, p.number()
	}
	return Value{kind: k, raw: p.doc[start:p.i]}, ok
}

func (p *parser) word(w string) bool {
	if !bytes.HasPrefix(p.doc[p.i:], []byte(w)) {
		return false
	}
	p.i += len(w)
	return true
}

func (p *parser) digits() bool {
	start := p.i
	for p.i < len(p.doc) && p.doc[p.i] >= '0' && p.doc[p.i] <= '9' {
		p.i++
	}
	return p.i > start
}

// number reads -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?.
func (p *parser) number() bool {
	if p.next() == '-' {
		p.i++
	}
	if p.next() == '0' {
		p.i++
	} else if !p.digits() {
		return false
	}
	if p.next() == '.' {
		p.i++
		if !p.digits() {
			return false
		}
	}
	if c := p.next(); c == 'e' || c == 'E' {
		p.i++
		if c := p.next(); c == '+' || c == '-' {
			p.i++
		}
		return p.digits()
	}
	return true
}

// str reads a string literal: no control character, only JSON's escapes.
func (p *parser) str() bool {
	for j := p.i + 1; j < len(p.doc); j++ {
		switch c := p.doc[j]; {
		case c == '"':
			p.i = j + 1
			return true
		case c < 0x20:
			return false
		case c == '\\':
			j++
			if j >= len(p.doc) {
				return false
			}
			switch p.doc[j] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if j+4 >= len(p.doc) {
					return false
				}
				for _, h := range p.doc[j+1 : j+5] {
					if !('0' <= h && h <= '9' || 'a' <= h && h <= 'f' || 'A' <= h && h <= 'F') {
						return false
					}
				}
				j += 4
			default:
				return false
			}
		}
	}
	return false
}

// container reads an array or an object, from its opening bracket.
func (p *parser) container(k kind, end byte) (Value, bool) {
	if p.depth++; p.depth > maxDepth {
		return Value{}, false
	}
	p.deepest = max(p.deepest, p.depth)
	start, base := p.i, len(p.open)
	p.i++
	p.space()
	if p.next() == end {
		p.i++
	} else {
		for {
			var name []byte
			if k == kindObject {
				at := p.i
				if p.next() != '"' || !p.str() {
					return Value{}, false
				}
				name = unquote(p.doc[at:p.i])
				p.space()
				if p.next() != ':' {
					return Value{}, false
				}
				p.i++
				p.space()
			}
			v, ok := p.value()
			if !ok {
				return Value{}, false
			}
			v.name = name
			p.open = append(p.open, v)
			p.space()
			if c := p.next(); c == ',' {
				p.i++
				p.space()
				continue
			} else if c == end {
				p.i++
				break
			}
			return Value{}, false
		}
	}
	p.high = max(p.high, len(p.open))
	kids := p.carve(p.open[base:])
	p.open = p.open[:base]
	p.depth--
	return Value{kind: k, raw: p.doc[start:p.i], kids: kids}, true
}

// unquote decodes a string literal as encoding/json does. A literal with
// no escape and valid UTF-8, the common case, is its own body.
func unquote(lit []byte) []byte {
	body := lit[1 : len(lit)-1]
	if bytes.IndexByte(body, '\\') < 0 && utf8.Valid(body) {
		return body
	}
	var s string
	if json.Unmarshal(lit, &s) != nil {
		return body // unreachable: Parse read lit as a string literal
	}
	return []byte(s)
}
