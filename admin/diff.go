package admin

import (
	"encoding/json"
	"reflect"
	"sort"

	"github.com/storefront/storefront/jsonfield"
	"github.com/storefront/storefront/merch"
)

// Change is one difference between two rulebook versions. Paths are JSON
// pointers into the document, except that rules are addressed by id
// (/rules/MR-1/when/...) so that reordering does not read as rewriting.
type Change struct {
	Op   string `json:"op"` // add, remove, replace, move
	Path string `json:"path"`
	From any    `json:"from,omitempty"`
	To   any    `json:"to,omitempty"`
}

// Diff compares two rulebooks.
func Diff(a, b merch.Rulebook) ([]Change, error) {
	ga, err := keyed(a)
	if err != nil {
		return nil, err
	}
	gb, err := keyed(b)
	if err != nil {
		return nil, err
	}
	var out []Change
	walk(&out, "", ga, gb)
	// Report order changes of rules that exist in both.
	pos := map[string]int{}
	for i, r := range a.Rules {
		pos[r.ID] = i
	}
	var common []string
	for _, r := range b.Rules {
		if _, ok := pos[r.ID]; ok {
			common = append(common, r.ID)
		}
	}
	sorted := append([]string(nil), common...)
	sort.SliceStable(sorted, func(i, j int) bool { return pos[sorted[i]] < pos[sorted[j]] })
	if !reflect.DeepEqual(sorted, common) {
		out = append(out, Change{Op: "move", Path: "/rules", From: sorted, To: common})
	}
	return out, nil
}

// keyed turns a rulebook into generic JSON with rules keyed by id.
func keyed(rb merch.Rulebook) (map[string]any, error) {
	b, err := json.Marshal(rb)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	rules := map[string]any{}
	for _, r := range m["rules"].([]any) {
		rm := r.(map[string]any)
		rules[rm["id"].(string)] = rm
	}
	m["rules"] = rules
	return m, nil
}

func walk(out *[]Change, ptr string, a, b any) {
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if aok && bok {
		keys := map[string]bool{}
		for k := range am {
			keys[k] = true
		}
		for k := range bm {
			keys[k] = true
		}
		names := make([]string, 0, len(keys))
		for k := range keys {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			p := jsonfield.Join(ptr, k)
			av, ina := am[k]
			bv, inb := bm[k]
			switch {
			case ina && !inb:
				*out = append(*out, Change{Op: "remove", Path: p, From: av})
			case !ina && inb:
				*out = append(*out, Change{Op: "add", Path: p, To: bv})
			default:
				walk(out, p, av, bv)
			}
		}
		return
	}
	if !reflect.DeepEqual(a, b) {
		*out = append(*out, Change{Op: "replace", Path: ptr, From: a, To: b})
	}
}
