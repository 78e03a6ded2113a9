package products

import (
	"bytes"
	"encoding/json"
	"sort"
	"strconv"
	"strings"

	"github.com/storefront/storefront/jsonfield"
	"github.com/storefront/storefront/sanitize"
)

// Every string of a product's wire form reaches the buyer, not only its
// name and description: format params, pricing option ids, property tags,
// signal ids. Free text has a neutral fallback (wire); an identifier or a
// params value has none, since a buyer books by it, so a product carrying
// one the screen would change is withheld instead: it passes no filter and
// cannot be bought. The admin API refuses such a product at save time
// (lint.go), so only data saved before a deny-list grew can be withheld.

// screenChanges reports whether serving s would change it: the screen's
// cleaning alters more than its spacing, or it names a deny-listed term.
func screenChanges(screen *sanitize.Screen, s string) bool {
	if s == "" {
		return false
	}
	return spaced(screen.Clean(s)) != spaced(s) || screen.Names(s)
}

// spaced collapses runs of whitespace: the screen's spacing is not a change
// a publisher has to make.
func spaced(s string) string { return strings.Join(strings.Fields(s), " ") }

// exposes reports whether any string of the wire fields is one the screen
// would change.
func exposes(fields []wireField, screen *sanitize.Screen) bool {
	for _, f := range fields {
		if walkField(f, func(_, s string) bool { return screenChanges(screen, s) }) {
			return true
		}
	}
	return false
}

// walkField calls fn with the JSON pointer and value of every string of a
// wire field until fn returns true, and reports whether one did. Member
// names are publisher text only inside format params, a free-form object;
// elsewhere they are the schema's own. A field that is not JSON reports
// true: what cannot be read cannot be shown safely.
func walkField(f wireField, fn func(ptr, s string) bool) bool {
	if bytes.IndexByte(f.raw, '"') < 0 {
		return false
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(f.raw))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return true
	}
	return walkStrings(v, "/"+f.name, false, fn)
}

func walkStrings(v any, ptr string, freeKeys bool, fn func(ptr, s string) bool) bool {
	switch x := v.(type) {
	case string:
		return fn(ptr, x)
	case []any:
		for i, e := range x {
			if walkStrings(e, ptr+"/"+strconv.Itoa(i), freeKeys, fn) {
				return true
			}
		}
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			p := jsonfield.Join(ptr, k)
			if freeKeys && fn(p, k) {
				return true
			}
			if walkStrings(x[k], p, freeKeys || k == "params", fn) {
				return true
			}
		}
	}
	return false
}
