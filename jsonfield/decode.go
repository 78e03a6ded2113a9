package jsonfield

import (
	"bytes"
	"encoding"
	"encoding/json"
	"fmt"
	"math"
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
	var generic any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&generic); err != nil {
		return Invalid{{Pointer: "", Detail: "the body is not valid JSON: " + err.Error()}}
	}
	if dec.More() {
		return Invalid{{Pointer: "", Detail: "the body holds more than one JSON document"}}
	}
	if generic == nil {
		// json.Unmarshal would leave v as it is: a PUT of null would
		// save the empty document.
		return Invalid{{Pointer: "", Detail: "the body is null; send the whole document"}}
	}
	var bad Invalid
	if bad.Faults("", field.Scan(data, nil)); len(bad) > 0 {
		return bad
	}
	check(&bad, generic, reflect.TypeOf(v).Elem(), "")
	if len(bad) > 0 {
		return bad
	}
	if err := json.Unmarshal(data, v); err != nil {
		return Invalid{{Pointer: "", Detail: err.Error()}}
	}
	return nil
}

var (
	unmarshalerType = reflect.TypeOf((*json.Unmarshaler)(nil)).Elem()
	textType        = reflect.TypeOf((*encoding.TextUnmarshaler)(nil)).Elem()
	rawType         = reflect.TypeOf(json.RawMessage{})
)

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case json.Number:
		return "a number"
	case string:
		return "a string"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

// check walks a decoded document alongside the Go type it will fill.
func check(bad *Invalid, v any, t reflect.Type, ptr string) {
	if v == nil {
		return // null leaves the zero value
	}
	if t == rawType {
		return
	}
	if reflect.PointerTo(t).Implements(unmarshalerType) {
		raw, _ := json.Marshal(v)
		u := reflect.New(t).Interface().(json.Unmarshaler)
		if err := u.UnmarshalJSON(raw); err != nil {
			bad.Add(ptr, "%s", err.Error())
		}
		return
	}
	if reflect.PointerTo(t).Implements(textType) {
		if _, ok := v.(string); !ok {
			bad.Add(ptr, "must be a string, not %s", jsonKind(v))
		}
		return
	}
	switch t.Kind() {
	case reflect.Pointer:
		check(bad, v, t.Elem(), ptr)
	case reflect.Interface:
	case reflect.String:
		if _, ok := v.(string); !ok {
			bad.Add(ptr, "must be a string, not %s", jsonKind(v))
		}
	case reflect.Bool:
		if _, ok := v.(bool); !ok {
			bad.Add(ptr, "must be true or false, not %s", jsonKind(v))
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		n, ok := v.(json.Number)
		if !ok {
			bad.Add(ptr, "must be an integer, not %s", jsonKind(v))
			return
		}
		if _, err := n.Int64(); err != nil {
			bad.Add(ptr, "must be an integer, not %s", n)
		}
	case reflect.Float32, reflect.Float64:
		n, ok := v.(json.Number)
		if !ok {
			bad.Add(ptr, "must be a number, not %s", jsonKind(v))
			return
		}
		if f, err := n.Float64(); err != nil || math.IsInf(f, 0) {
			bad.Add(ptr, "must be a finite number")
		}
	case reflect.Slice, reflect.Array:
		list, ok := v.([]any)
		if !ok {
			bad.Add(ptr, "must be an array, not %s", jsonKind(v))
			return
		}
		for i, x := range list {
			check(bad, x, t.Elem(), Join(ptr, i))
		}
	case reflect.Map:
		m, ok := v.(map[string]any)
		if !ok {
			bad.Add(ptr, "must be an object, not %s", jsonKind(v))
			return
		}
		for _, k := range sortedKeys(m) {
			check(bad, m[k], t.Elem(), Join(ptr, k))
		}
	case reflect.Struct:
		m, ok := v.(map[string]any)
		if !ok {
			bad.Add(ptr, "must be an object, not %s", jsonKind(v))
			return
		}
		fields := structFields(t)
		for _, k := range sortedKeys(m) {
			f, ok := fields[k]
			if !ok {
				bad.Add(Join(ptr, k), "unknown field %q (known: %s)", k, strings.Join(fieldNames(fields), ", "))
				continue
			}
			check(bad, m[k], f, Join(ptr, k))
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

func sortedKeys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
