package jsonfield

import "encoding/json"

// What a reader outside the package needs to walk a parsed document
// itself (the request schemas' quick check), without decoding it into
// encoding/json's tree first.

// Kind is the JSON type of a value.
type Kind uint8

// The kinds, one per JSON type.
const (
	Null Kind = Kind(kindNull)
	Bool Kind = Kind(kindBool)
	Num  Kind = Kind(kindNumber)
	Str  Kind = Kind(kindString)
	Arr  Kind = Kind(kindArray)
	Obj  Kind = Kind(kindObject)
)

// Kind is v's JSON type.
func (v Value) Kind() Kind { return Kind(v.kind) }

// Kids are an array's elements or an object's members, in the order
// sent, a member given twice as often as it was given. They are the
// document's own: not to be written.
func (v Value) Kids() []Value { return v.kids }

// Lookup is an object's last member named k, as encoding/json reads a
// member given twice.
func (v Value) Lookup(k string) (Value, bool) { return v.member(k) }

// Name is a member's decoded name. It is the document's own: not to be
// written.
func (v Value) Name() []byte { return v.name }

// Text is a string value decoded as encoding/json decodes it.
func (v Value) Text() string { return v.text() }

// Truth is a boolean value.
func (v Value) Truth() bool { return v.kind == kindBool && v.raw[0] == 't' }

// Number is a number value's literal, as a decoder with UseNumber gives it.
func (v Value) Number() json.Number { return json.Number(v.raw) }

// Any is v as encoding/json decodes it into an interface with UseNumber:
// maps, slices, json.Number, strings, booleans and nil, a member given
// twice holding its last value.
func (v Value) Any() any {
	switch v.kind {
	case kindBool:
		return v.Truth()
	case kindNumber:
		return v.Number()
	case kindString:
		return v.text()
	case kindArray:
		out := make([]any, len(v.kids))
		for i, k := range v.kids {
			out[i] = k.Any()
		}
		return out
	case kindObject:
		out := make(map[string]any, len(v.kids))
		for _, k := range v.kids {
			out[string(k.name)] = k.Any()
		}
		return out
	}
	return nil
}
