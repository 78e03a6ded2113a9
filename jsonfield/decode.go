package jsonfield

import (
	"bytes"
	"encoding"
	"encoding/json"
	"reflect"
	"sort"
	"strings"

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

// check reads a parsed document alongside the Go type it will fill.
func check(r *Reader, v Value, t reflect.Type, ptr string) {
	if v.IsNull() {
		return // null leaves the zero value
	}
	if t == rawType {
		return
	}
	if reflect.PointerTo(t).Implements(unmarshalerType) {
		u := reflect.New(t).Interface().(json.Unmarshaler)
		if err := u.UnmarshalJSON(v.raw); err != nil {
			r.Add(Field{Pointer: ptr, Detail: err.Error()})
		}
		return
	}
	if reflect.PointerTo(t).Implements(textType) {
		r.String(v, ptr)
		return
	}
	switch t.Kind() {
	case reflect.Pointer:
		check(r, v, t.Elem(), ptr)
	case reflect.Interface:
	case reflect.String:
		r.String(v, ptr)
	case reflect.Bool:
		r.Bool(v, ptr)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		r.Int(v, ptr, 64)
	case reflect.Float32, reflect.Float64:
		r.Float(v, ptr)
	case reflect.Slice, reflect.Array:
		list, _ := r.Array(v, ptr)
		for i, x := range list {
			check(r, x, t.Elem(), Join(ptr, i))
		}
	case reflect.Map:
		if o, ok := r.Object(v, ptr); ok {
			for _, m := range o.v.members() {
				check(r, m, t.Elem(), o.At(string(m.name)))
			}
		}
	case reflect.Struct:
		o, ok := r.Object(v, ptr)
		if !ok {
			return
		}
		fields := structFields(t)
		for _, m := range o.v.members() {
			k := string(m.name)
			if f, ok := fields[k]; ok {
				check(r, m, f, o.At(k))
			} else {
				o.unknown(k, fieldNames(fields))
			}
		}
	}
}

// structFields maps JSON names to field types, following encoding/json's
// rules for tags and embedded structs.
func structFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
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
						out[k] = v
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
		out[name] = f.Type
	}
	return out
}

func fieldNames(m map[string]reflect.Type) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
