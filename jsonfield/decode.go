package jsonfield

import (
	"bytes"
	"encoding"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/storefront/storefront/adcp"
	"github.com/storefront/storefront/field"
)

// Decode reads a JSON document into v strictly: unknown fields, wrong types
// and malformed values are all reported, each with the JSON pointer of the
// offending value, before anything is written to v. Every string must be
// text the storefront can keep (field.Scan: valid UTF-8, no control
// character but line breaks and tabs), no array may hold null, and the
// document itself may not be null. A document with any failure is refused
// whole.
func Decode(data []byte, v any) error {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return Invalid{{Pointer: "", Detail: "the body is empty; a JSON document is required"}}
	}
	doc, n, ok := parse(data)
	if !ok {
		return Invalid{{Pointer: "", Detail: "the body is not valid JSON: " + syntaxError(data)}}
	}
	if n < len(data) && data[n] != ']' && data[n] != '}' {
		// A closing bracket after the document is left to json.Unmarshal
		// below, as json.Decoder.More leaves it.
		return Invalid{{Pointer: "", Detail: "the body holds more than one JSON document"}}
	}
	if doc.IsNull() {
		// json.Unmarshal would leave v as it is: a PUT of null would
		// save the empty document.
		return Invalid{{Pointer: "", Detail: "the body is null; send the whole document"}}
	}
	var bad Invalid
	if bad.Faults("", field.Scan(data, nil)); len(bad) > 0 {
		return bad
	}
	r := NewReader(Pointers, 0)
	check(r, doc, reflect.TypeOf(v).Elem(), "")
	if bad := r.Faults(); len(bad) > 0 {
		return bad
	}
	if err := json.Unmarshal(data, v); err != nil {
		return Invalid{{Pointer: "", Detail: err.Error()}}
	}
	return nil
}

// syntaxError is encoding/json's word for what is wrong with a document
// Parse refused, which says where the document went wrong.
func syntaxError(data []byte) string {
	var v any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return err.Error()
	}
	return ErrSyntax.Error()
}

var (
	unmarshalerType = reflect.TypeOf((*json.Unmarshaler)(nil)).Elem()
	textType        = reflect.TypeOf((*encoding.TextUnmarshaler)(nil)).Elem()
	rawType         = reflect.TypeOf(json.RawMessage{})
)

// Members says what an object may hold besides the members its Go type
// names.
type Members uint8

const (
	// Closed refuses every other member, each a fault naming the ones
	// allowed: the admin API's documents.
	Closed Members = iota
	// Open ignores them, as AdCP's request schemas allow.
	Open
)

// Unmarshal reads v into dst, a non-nil pointer, strictly where
// encoding/json is lenient: a member fills a field only under its exact
// JSON name (encoding/json also takes "BUDGET" for budget), every value of
// another type is a fault at its place (all of them, up to the reader's
// most, where encoding/json stops at the first and names its place without
// array indexes), and an object holds other members as members says. dst
// is written only when v is read without a fault, which Unmarshal reports.
// A null leaves a field's zero value, as encoding/json leaves it, but for
// a json.RawMessage, which holds it as sent, and a json.Unmarshaler, which
// is given it. Unlike encoding/json, dst is replaced whole, never merged
// into, a member given twice is read once (the last), and tag options
// (",string") are not read: the types it fills use none.
func (r *Reader) Unmarshal(v Value, dst any, members Members) bool {
	out := reflect.ValueOf(dst)
	if out.Kind() != reflect.Pointer || out.IsNil() {
		panic("jsonfield: Unmarshal needs a non-nil pointer")
	}
	found := r.found
	tmp := reflect.New(out.Type().Elem()).Elem()
	fill(r, v, tmp.Type(), tmp, "", members)
	if r.found > found {
		return false
	}
	out.Elem().Set(tmp)
	return true
}

// check reads a parsed document alongside the Go type it will fill.
func check(r *Reader, v Value, t reflect.Type, ptr string) {
	fill(r, v, t, reflect.Value{}, ptr, Closed)
}

// fill reads v, at path, as a value of type t, recording each fault, and
// sets it into dst unless dst is the zero Value (a check only).
func fill(r *Reader, v Value, t reflect.Type, dst reflect.Value, path string, members Members) {
	set := dst.IsValid()
	// A raw message and an unmarshaler are given null too, as
	// encoding/json gives it them; anything else keeps its zero value.
	if t == rawType {
		if set {
			dst.SetBytes(bytes.Clone(v.raw))
		}
		return
	}
	if t.Kind() != reflect.Pointer && reflect.PointerTo(t).Implements(unmarshalerType) {
		u := reflect.New(t)
		if err := u.Interface().(json.Unmarshaler).UnmarshalJSON(v.raw); err != nil {
			r.invalid(path, err)
		} else if set {
			dst.Set(u.Elem())
		}
		return
	}
	if v.IsNull() {
		return
	}
	if reflect.PointerTo(t).Implements(textType) {
		s, ok := r.String(v, path)
		u := reflect.New(t)
		if ok && set {
			if err := u.Interface().(encoding.TextUnmarshaler).UnmarshalText([]byte(s)); err != nil {
				r.invalid(path, err)
			} else {
				dst.Set(u.Elem())
			}
		}
		return
	}
	switch t.Kind() {
	case reflect.Pointer:
		var elem reflect.Value
		if set {
			elem = reflect.New(t.Elem())
		}
		found := r.found
		fill(r, v, t.Elem(), elemOf(elem), path, members)
		if set && r.found == found {
			dst.Set(elem)
		}
	case reflect.Interface:
		if t.NumMethod() != 0 {
			r.invalid(path, errors.New("no value of this field's type can be read from JSON"))
			return
		}
		// Parse read it as JSON, so the one failure left is a number
		// past float64's range, which encoding/json refuses too.
		var x any
		if json.Unmarshal(v.raw, &x) != nil {
			r.wrong(path, "a value whose numbers are finite", v)
		} else if set {
			dst.Set(reflect.ValueOf(&x).Elem())
		}
	case reflect.String:
		if s, ok := r.String(v, path); ok && set {
			dst.SetString(s)
		}
	case reflect.Bool:
		if b, ok := r.Bool(v, path); ok && set {
			dst.SetBool(b)
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if n, ok := r.Int(v, path, t.Bits()); ok && set {
			dst.SetInt(n)
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		n, err := strconv.ParseUint(string(v.raw), 10, t.Bits())
		if v.kind != kindNumber || err != nil {
			r.wrong(path, fmt.Sprintf("%s, at most %d", aCount, uint64(1)<<t.Bits()-1), v)
		} else if set {
			dst.SetUint(n)
		}
	case reflect.Float32, reflect.Float64:
		// Parsed at the field's own size, as encoding/json parses it: a
		// float32 rounded once, and refused past its range.
		f, err := strconv.ParseFloat(string(v.raw), t.Bits())
		if v.kind != kindNumber || err != nil {
			r.wrong(path, aNumber, v)
		} else if set {
			dst.SetFloat(f)
		}
	case reflect.Slice, reflect.Array:
		if t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8 {
			// Bytes travel as base64, as encoding/json reads them.
			s, ok := r.String(v, path)
			b, err := base64.StdEncoding.DecodeString(s)
			if ok && err != nil {
				r.invalid(path, err)
			} else if ok && set {
				dst.SetBytes(b)
			}
			return
		}
		list, ok := r.Array(v, path)
		if !ok {
			return
		}
		if set && t.Kind() == reflect.Slice {
			dst.Set(reflect.MakeSlice(t, len(list), len(list)))
		}
		for i, x := range list {
			if t.Kind() == reflect.Array && i >= t.Len() {
				break // discarded, as encoding/json discards them
			}
			var elem reflect.Value
			if set && i < dst.Len() {
				elem = dst.Index(i)
			}
			fill(r, x, t.Elem(), elem, r.style.index(path, i), members)
		}
	case reflect.Map:
		o, ok := r.Object(v, path)
		if !ok {
			return
		}
		if set {
			dst.Set(reflect.MakeMapWithSize(t, len(v.kids)))
		}
		for _, m := range o.v.members() {
			at := o.At(string(m.name))
			key, ok := mapKey(t.Key(), string(m.name))
			if !ok {
				r.invalid(at, errors.New("the member's name is not a key this map takes"))
				continue
			}
			var elem reflect.Value
			if set {
				elem = reflect.New(t.Elem()).Elem()
			}
			found := r.found
			fill(r, m, t.Elem(), elem, at, members)
			if set && r.found == found {
				dst.SetMapIndex(key, elem)
			}
		}
	case reflect.Struct:
		o, ok := r.Object(v, path)
		if !ok {
			return
		}
		fields := structFields(t)
		for _, m := range o.v.members() {
			k := string(m.name)
			f, ok := fields[k]
			switch {
			case ok:
				var elem reflect.Value
				if set {
					if elem, ok = fieldOf(dst, f.index); !ok {
						r.invalid(o.At(k), errors.New("the field sits in an embedded struct that cannot be allocated"))
						continue
					}
				}
				fill(r, m, f.typ, elem, o.At(k), members)
			case members == Closed:
				o.unknown(k, fieldNames(fields))
			}
		}
	}
}

// elemOf is what pointer p points to, or the zero Value for the zero Value.
func elemOf(p reflect.Value) reflect.Value {
	if !p.IsValid() {
		return p
	}
	return p.Elem()
}

// fieldOf is the field of struct v at index, through embedded structs,
// allocating an embedded pointer on the way; false when that pointer is
// unexported and nil, which encoding/json refuses too.
func fieldOf(v reflect.Value, index []int) (reflect.Value, bool) {
	for n, i := range index {
		if n > 0 && v.Kind() == reflect.Pointer {
			if v.IsNil() {
				if !v.CanSet() {
					return reflect.Value{}, false
				}
				v.Set(reflect.New(v.Type().Elem()))
			}
			v = v.Elem()
		}
		v = v.Field(i)
	}
	return v, true
}

// mapKey is name as a key of type t, as encoding/json reads map keys: a
// string kind, a text unmarshaler, or an integer.
func mapKey(t reflect.Type, name string) (reflect.Value, bool) {
	switch {
	case t.Kind() == reflect.String:
		return reflect.ValueOf(name).Convert(t), true
	case reflect.PointerTo(t).Implements(textType):
		k := reflect.New(t)
		if k.Interface().(encoding.TextUnmarshaler).UnmarshalText([]byte(name)) != nil {
			return reflect.Value{}, false
		}
		return k.Elem(), true
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, err := strconv.ParseInt(name, 10, t.Bits())
		return reflect.ValueOf(n).Convert(t), err == nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		n, err := strconv.ParseUint(name, 10, t.Bits())
		return reflect.ValueOf(n).Convert(t), err == nil
	}
	return reflect.Value{}, false
}

// invalid records that the value at path is not one its type reads,
// for the reason err gives.
func (r *Reader) invalid(path string, err error) {
	if r.style == Requests {
		r.Add(Fault(adcp.InvalidRequest, path, path+" is not a valid value"))
		return
	}
	r.Add(Field{Pointer: path, Detail: err.Error()})
}

// structField is one JSON member of a struct: its field's index, through
// embedded structs, and type.
type structField struct {
	index []int
	typ   reflect.Type
}

// structFields maps JSON names to fields, following encoding/json's rules
// for tags and embedded structs.
func structFields(t reflect.Type) map[string]structField {
	out := map[string]structField{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			et := f.Type
			if et.Kind() == reflect.Pointer {
				et = et.Elem()
			}
			if et.Kind() == reflect.Struct {
				for k, v := range structFields(et) {
					if _, taken := out[k]; !taken {
						out[k] = structField{index: append([]int{i}, v.index...), typ: v.typ}
					}
				}
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = structField{index: []int{i}, typ: f.Type}
	}
	return out
}

func fieldNames(m map[string]structField) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
