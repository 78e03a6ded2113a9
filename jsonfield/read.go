package jsonfield

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/storefront/storefront/adcp"
)

// Style is how a Reader names the place of a fault and words it.
type Style uint8

const (
	// Pointers names a place by its JSON pointer and words a fault by
	// what the value should be and what it is ("must be a number, not a
	// string" at /max). Decode reads the admin API's documents so.
	Pointers Style = iota
	// Requests names a place as AdCP errors name fields and starts the
	// detail with it, each fault an INVALID_REQUEST:
	// "filters.budget_range.max must be a number". The buyer tasks read
	// their requests so.
	Requests
)

// member is the place of member k of the value at path.
func (s Style) member(path, k string) string {
	if s == Pointers {
		return Join(path, k)
	}
	if path == "" {
		return k
	}
	return path + "." + k
}

// index is the place of element i of the array at path.
func (s Style) index(path string, i int) string {
	if s == Pointers {
		return Join(path, i)
	}
	return path + "[" + strconv.Itoa(i) + "]"
}

// Reader reads the values of one parsed document strictly: each read
// that finds a value of another type, or an object member its schema does
// not allow, records a fault at the value's place. It keeps the first max
// faults, its own and those its caller adds (every one when max is 0).
type Reader struct {
	style  Style
	max    int
	faults Invalid
	// found counts every fault recorded, kept or not.
	found int
}

// NewReader is a Reader that names and words faults in style.
func NewReader(style Style, max int) *Reader { return &Reader{style: style, max: max} }

// Add records f, unless r holds its most faults already.
func (r *Reader) Add(f Field) {
	r.found++
	if r.max == 0 || len(r.faults) < r.max {
		r.faults = append(r.faults, f)
	}
}

// Faults are the faults recorded so far, in the order found.
func (r *Reader) Faults() Invalid { return r.faults }

// wrong records that the value at path is not want ("a string").
func (r *Reader) wrong(path, want string, v Value) {
	if r.style == Requests {
		subject := path
		if subject == "" {
			subject = "the request"
		}
		r.Add(Fault(adcp.InvalidRequest, path, subject+" must be "+want))
		return
	}
	detail := "must be " + want + ", not " + v.kind.what()
	switch {
	case v.kind == kindNumber && want == anInt:
		detail = "must be an integer, not " + string(v.raw)
	case v.kind == kindNumber && strings.HasPrefix(want, aCount):
		detail = "must be " + want + ", not " + string(v.raw)
	case v.kind == kindNumber && want == aNumber:
		detail = "must be a finite number"
	}
	r.Add(Field{Pointer: path, Detail: detail})
}

// The types a read wants, as a fault names them.
const (
	aString = "a string"
	anInt   = "an integer"
	aCount  = "a whole number not below zero"
	aNumber = "a number"
	aBool   = "true or false"
	anArray = "an array"
	anObj   = "an object"
)

func (v Value) asString() (string, bool) {
	if v.kind != kindString {
		return "", false
	}
	return v.text(), true
}

func (v Value) asInt(bits int) (int64, bool) {
	if v.kind != kindNumber {
		return 0, false
	}
	n, err := strconv.ParseInt(string(v.raw), 10, bits)
	if err != nil {
		return 0, false // not the bound ParseInt gives with ErrRange
	}
	return n, true
}

func (v Value) asFloat() (float64, bool) {
	if v.kind != kindNumber {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(v.raw), 64)
	if err != nil {
		return 0, false // not the infinity ParseFloat gives with ErrRange
	}
	return f, true
}

func (v Value) asBool() (bool, bool) {
	return v.kind == kindBool && v.raw[0] == 't', v.kind == kindBool
}

// String reads v, which must be a string.
func (r *Reader) String(v Value, path string) (string, bool) {
	s, ok := v.asString()
	if !ok {
		r.wrong(path, aString, v)
	}
	return s, ok
}

// StringAt reads v, element i of the array at path, which must be a
// string. The element's place is spelled only for a fault.
func (r *Reader) StringAt(v Value, path string, i int) (string, bool) {
	s, ok := v.asString()
	if !ok {
		r.wrong(r.style.index(path, i), aString, v)
	}
	return s, ok
}

// Int reads v, which must be an integer that fits in bits.
func (r *Reader) Int(v Value, path string, bits int) (int64, bool) {
	n, ok := v.asInt(bits)
	if !ok {
		r.wrong(path, anInt, v)
	}
	return n, ok
}

// Float reads v, which must be a number a float64 holds.
func (r *Reader) Float(v Value, path string) (float64, bool) {
	f, ok := v.asFloat()
	if !ok {
		r.wrong(path, aNumber, v)
	}
	return f, ok
}

// Bool reads v, which must be true or false.
func (r *Reader) Bool(v Value, path string) (bool, bool) {
	b, ok := v.asBool()
	if !ok {
		r.wrong(path, aBool, v)
	}
	return b, ok
}

// Array reads v, which must be an array, into its elements.
func (r *Reader) Array(v Value, path string) ([]Value, bool) {
	if v.kind != kindArray {
		r.wrong(path, anArray, v)
		return nil, false
	}
	return v.kids, true
}

// Object reads v, which must be an object, at path.
func (r *Reader) Object(v Value, path string) (Object, bool) {
	if v.kind != kindObject {
		r.wrong(path, anObj, v)
		return Object{}, false
	}
	return Object{Reader: r, Path: path, v: v}, true
}

// Object is an object being read, at Path. Its getters read a member that
// is absent or null as the zero value, without a fault.
type Object struct {
	Reader *Reader
	Path   string
	v      Value
}

// At is the place of member k.
func (o Object) At(k string) string { return o.Reader.style.member(o.Path, k) }

// Member is member k as sent, null included.
func (o Object) Member(k string) (Value, bool) { return o.v.member(k) }

// get is member k, unless it is absent or null.
func (o Object) get(k string) (Value, bool) {
	v, ok := o.v.member(k)
	return v, ok && v.kind != kindNull
}

// Has reports whether member k is present and not null.
func (o Object) Has(k string) bool {
	_, ok := o.get(k)
	return ok
}

// Keys are the names of the object's members, sorted, each once.
func (o Object) Keys() []string {
	ms := o.v.members()
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = string(m.name)
	}
	return out
}

// wrong records that member k is not want. Its place is spelled only
// here, so a read that finds what it wants builds no path.
func (o Object) wrong(k, want string, v Value) { o.Reader.wrong(o.At(k), want, v) }

// OptStr is the string at k, and whether there is one.
func (o Object) OptStr(k string) (string, bool) {
	v, ok := o.get(k)
	if !ok {
		return "", false
	}
	s, ok := v.asString()
	if !ok {
		o.wrong(k, aString, v)
	}
	return s, ok
}

// Str is the string at k.
func (o Object) Str(k string) string {
	s, _ := o.OptStr(k)
	return s
}

// Int is the integer at k, which must fit in 32 bits, as every integer of
// an AdCP request does.
func (o Object) Int(k string) int {
	v, ok := o.get(k)
	if !ok {
		return 0
	}
	n, ok := v.asInt(32)
	if !ok {
		o.wrong(k, anInt, v)
	}
	return int(n)
}

// Number is the number at k.
func (o Object) Number(k string) float64 {
	v, ok := o.get(k)
	if !ok {
		return 0
	}
	f, ok := v.asFloat()
	if !ok {
		o.wrong(k, aNumber, v)
	}
	return f
}

// Bool is the boolean at k.
func (o Object) Bool(k string) bool {
	v, ok := o.get(k)
	if !ok {
		return false
	}
	b, ok := v.asBool()
	if !ok {
		o.wrong(k, aBool, v)
	}
	return b
}

// Obj is the object at k, and whether there is one.
func (o Object) Obj(k string) (Object, bool) {
	if v, ok := o.get(k); ok {
		return o.Reader.Object(v, o.At(k))
	}
	return Object{}, false
}

// List is the array at k, and whether there is one.
func (o Object) List(k string) ([]Value, bool) {
	v, ok := o.get(k)
	if !ok {
		return nil, false
	}
	if v.kind != kindArray {
		o.wrong(k, anArray, v)
		return nil, false
	}
	return v.kids, true
}

// Others are the names of the object's members that known does not hold
// and whose value is not null, sorted, each once; nil when there are none,
// which is found without sorting or copying the members.
func (o Object) Others(known map[string]bool) []string {
	var out []string
	for _, m := range o.v.kids {
		if !known[string(m.name)] && !slices.Contains(out, string(m.name)) {
			if o.Has(string(m.name)) {
				out = append(out, string(m.name))
			}
		}
	}
	slices.Sort(out)
	return out
}

// Only refuses every member but allowed, for an object its schema closes.
func (o Object) Only(allowed ...string) {
	all := true
	for _, m := range o.v.kids {
		if !slices.Contains(allowed, string(m.name)) {
			all = false
			break
		}
	}
	if all {
		return // nothing to refuse: the members need no sorting
	}
	for _, m := range o.v.members() {
		if !slices.ContainsFunc(allowed, func(a string) bool { return a == string(m.name) }) {
			o.unknown(string(m.name), allowed)
		}
	}
}

// unknown records that the object may not hold member k: only known.
func (o Object) unknown(k string, known []string) {
	at, list := o.At(k), strings.Join(known, ", ")
	if o.Reader.style == Requests {
		o.Reader.Add(Fault(adcp.InvalidRequest, at, k+" is not allowed here (allowed: "+list+")"))
		return
	}
	o.Reader.Add(Field{Pointer: at, Detail: fmt.Sprintf("unknown field %q (known: %s)", k, list)})
}
