package field

import (
	"encoding/json"
	"reflect"
	"strings"
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
	w.walk(reflect.ValueOf(v), nil)
	return w.faults
}

type walker struct{ faults []Fault }

func (w *walker) add(p Path, err error) {
	if len(w.faults) < MaxFaults {
		w.faults = append(w.faults, Fault{Path: append(Path(nil), p...), Err: err})
	}
}

func (w *walker) walk(v reflect.Value, p Path) {
	if len(w.faults) >= MaxFaults || !v.IsValid() {
		return
	}
	switch v.Kind() {
	case reflect.String:
		if err := Text(v.String(), true); err != nil {
			w.add(p, err)
		}
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			w.walk(v.Elem(), p)
		}
	case reflect.Slice:
		if v.Type() == rawType {
			for _, f := range Scan(v.Bytes(), nil) {
				w.add(append(p, f.Path...), f.Err)
			}
			return
		}
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return
		}
		fallthrough
	case reflect.Array:
		for i := 0; i < v.Len(); i++ {
			w.walk(v.Index(i), append(p, i))
		}
	case reflect.Map:
		iter := v.MapRange()
		for iter.Next() {
			k := iter.Key()
			name := ""
			if k.Kind() == reflect.String {
				name = k.String()
				if err := Text(name, false); err != nil {
					w.add(append(p, name), err)
					continue
				}
			}
			w.walk(iter.Value(), append(p, name))
		}
	case reflect.Struct:
		t := v.Type()
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			switch {
			case name == "-":
				continue
			case f.Anonymous && name == "":
				// Promoted fields, as encoding/json promotes them, also
				// from an unexported embedded struct.
				w.walk(v.Field(i), p)
				continue
			case !f.IsExported():
				continue
			case name == "":
				name = f.Name
			}
			w.walk(v.Field(i), append(p, name))
		}
	}
}
