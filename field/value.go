package field

import (
	"encoding/json"
	"reflect"
	"strings"
	"sync"
)

var rawType = reflect.TypeFor[json.RawMessage]()

// Value checks every string a Go value holds, as Scan checks a document's:
// struct fields (named by their JSON names), map keys and values, slice
// elements, and the JSON documents json.RawMessage fields hold. Other byte
// slices are binary, not text, and are not checked. It is how a store makes
// sure that whatever it is handed, however it was built, holds only text it
// can keep.
func Value(v any) []Fault {
	w := walker{}
	w.walk(reflect.ValueOf(v))
	return w.faults
}

// step is one element of the walker's path: a name, or an index.
type step struct {
	name  string
	index int
	isIdx bool
}

type walker struct {
	path   []step
	faults []Fault
}

func (w *walker) add(err error, tail ...Fault) {
	p := make(Path, len(w.path))
	for i, s := range w.path {
		if s.isIdx {
			p[i] = s.index
		} else {
			p[i] = s.name
		}
	}
	if len(tail) == 0 {
		tail = []Fault{{Err: err}}
	}
	for _, f := range tail {
		if len(w.faults) < MaxFaults {
			w.faults = append(w.faults, Fault{Path: append(p[:len(p):len(p)], f.Path...), Err: f.Err})
		}
	}
}

func (w *walker) push(s step) { w.path = append(w.path, s) }
func (w *walker) pop()        { w.path = w.path[:len(w.path)-1] }

func (w *walker) walk(v reflect.Value) {
	if len(w.faults) >= MaxFaults || !v.IsValid() {
		return
	}
	switch v.Kind() {
	case reflect.String:
		if s := v.String(); !Plain(s) {
			if err := Text(s, true); err != nil {
				w.add(err)
			}
		}
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			w.walk(v.Elem())
		}
	case reflect.Slice:
		if v.Type() == rawType {
			if faults := Scan(v.Bytes(), nil); len(faults) > 0 {
				w.add(nil, faults...)
			}
			return
		}
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return
		}
		fallthrough
	case reflect.Array:
		for i := 0; i < v.Len(); i++ {
			w.push(step{index: i, isIdx: true})
			w.walk(v.Index(i))
			w.pop()
		}
	case reflect.Map:
		iter := v.MapRange()
		for iter.Next() {
			k := iter.Key()
			name := ""
			if k.Kind() == reflect.String {
				name = k.String()
			}
			w.push(step{name: name})
			if err := Text(name, false); err != nil {
				w.add(err)
			} else {
				w.walk(iter.Value())
			}
			w.pop()
		}
	case reflect.Struct:
		for _, f := range fieldsOf(v.Type()) {
			if f.promoted {
				w.walk(v.Field(f.index))
				continue
			}
			w.push(step{name: f.name})
			w.walk(v.Field(f.index))
			w.pop()
		}
	}
}

// Plain reports whether s is plainly text, only printable ASCII: the
// common case, which Value passes without a closer look.
func Plain(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e {
			return false
		}
	}
	return true
}

// structField is a field Value walks: its index, its JSON name, and
// whether its fields are promoted (an embedded struct without a name).
type structField struct {
	index    int
	name     string
	promoted bool
}

var fieldCache sync.Map // reflect.Type -> []structField

func fieldsOf(t reflect.Type) []structField {
	if fs, ok := fieldCache.Load(t); ok {
		return fs.([]structField)
	}
	var fs []structField
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case name == "-":
		case f.Anonymous && name == "":
			// Promoted fields, as encoding/json promotes them, also from
			// an unexported embedded struct.
			fs = append(fs, structField{index: i, promoted: true})
		case !f.IsExported():
		case name == "":
			fs = append(fs, structField{index: i, name: f.Name})
		default:
			fs = append(fs, structField{index: i, name: name})
		}
	}
	fieldCache.Store(t, fs)
	return fs
}
