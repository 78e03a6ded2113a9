package adversary

import (
	"bytes"
	"encoding/json"
	"strings"
)

// Leak is one mark found in a buyer-visible string.
type Leak struct {
	Kind Kind
	Mark string
	// Field is where the mark was planted, or "" when it reached the
	// buyer from a confidential field itself.
	Field    Field
	Disguise string
	Path     string
	Value    string
}

// opaque are members whose strings are random (ids the storefront mints,
// hashes, webhook notification ids made of task ids) or the buyer's own echo (context): a mark found in them by
// chance tells nothing. Twin comparison drops the random ones too.
var opaque = map[string]bool{
	"context": true, "entry_hash": true, "cursor": true, "task_id": true, "media_buy_id": true, "package_id": true,
	"idempotency_key": true, "id": true, "taskId": true, "contextId": true, "messageId": true, "artifactId": true,
	"timestamp": true, "notification_id": true,
}

// Leaks finds every mark of w in the buyer-visible strings of answer (a
// JSON document: an AdCP object, an MCP result, an A2A response, a webhook
// body). Marks the buyer's own request holds are left out: an echo of the
// buyer's words discloses nothing, and twin probes check those.
func (w *World) Leaks(answer []byte, request string) []Leak {
	var v any
	dec := json.NewDecoder(bytes.NewReader(answer))
	dec.UseNumber()
	if dec.Decode(&v) != nil {
		v = string(answer)
	}
	asked := canon(request)
	type mark struct {
		canon  string
		kind   Kind
		text   string
		secret int
	}
	var marks []mark
	for i, s := range w.Secrets {
		for _, m := range s.Marks {
			c := canon(m)
			if len(c) >= 4 && !strings.Contains(asked, c) {
				marks = append(marks, mark{c, s.Kind, m, i})
			}
		}
	}
	var out []Leak
	var walk func(v any, path string, free bool)
	check := func(s, path string) {
		cs := canon(s)
		found := map[int]bool{} // one leak per secret and string
		for _, m := range marks {
			if found[m.secret] || !strings.Contains(cs, m.canon) {
				continue
			}
			found[m.secret] = true
			l := Leak{Kind: m.kind, Mark: m.text, Path: path, Value: s}
			// The plant written here: its text as planted, else its mark
			// as the canon reads it.
			for _, p := range w.Plants {
				same := w.Secrets[p.Secret].Full == w.Secrets[m.secret].Full
				if same && strings.Contains(s, p.Text) {
					l.Field, l.Disguise = p.Field, p.Disguise
					break
				}
				if same && l.Field == "" && strings.Contains(cs, canon(p.Mark)) {
					l.Field, l.Disguise = p.Field, p.Disguise
				}
			}
			out = append(out, l)
		}
	}
	// Member names are the schema's own, except inside format params, a
	// free-form object the publisher writes (free).
	walk = func(v any, path string, free bool) {
		switch x := v.(type) {
		case string:
			if strings.HasPrefix(strings.TrimSpace(x), "{") {
				// JSON carried as text (MCP content, A2A text parts).
				var inner any
				if json.Unmarshal([]byte(x), &inner) == nil {
					walk(inner, path+"(json)", free)
					return
				}
			}
			check(x, path)
		case []any:
			for i, e := range x {
				walk(e, path+"/"+itoa(i), free)
			}
		case map[string]any:
			for k, e := range x {
				if opaque[k] {
					continue
				}
				if free {
					check(k, path+"/"+k+"(name)")
				}
				walk(e, path+"/"+k, free || k == "params")
			}
		}
	}
	walk(v, "", false)
	return out
}

// volatile are the members two answers differ in whatever was asked: the
// ledger receipt (sequence and entry hash), ids minted per call (tasks,
// A2A messages, contexts and artifacts, media buys and packages) and the
// times stamped on them.
var volatile = map[string]bool{
	"receipt": true, "id": true, "taskId": true, "contextId": true, "messageId": true, "artifactId": true, "task_id": true,
	"media_buy_id": true, "package_id": true, "timestamp": true, "created_at": true, "updated_at": true, "confirmed_at": true,
	"notification_id": true,
}

// Normal is answer with token written as mark and the volatile members
// removed, in a canonical encoding: twin answers must be equal in it.
func Normal(answer []byte, token, mark string) string {
	b := bytes.ReplaceAll(answer, []byte(token), []byte(mark))
	var v any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if dec.Decode(&v) != nil {
		return string(b)
	}
	v = dropVolatile(v)
	out, _ := json.Marshal(v)
	return string(out)
}

func dropVolatile(v any) any {
	switch x := v.(type) {
	case string:
		if strings.HasPrefix(strings.TrimSpace(x), "{") {
			var inner any
			if json.Unmarshal([]byte(x), &inner) == nil {
				b, _ := json.Marshal(dropVolatile(inner))
				return string(b)
			}
		}
		return x
	case []any:
		for i := range x {
			x[i] = dropVolatile(x[i])
		}
	case map[string]any:
		for k, e := range x {
			if volatile[k] {
				delete(x, k)
				continue
			}
			x[k] = dropVolatile(e)
		}
	}
	return v
}

func itoa(i int) string {
	b, _ := json.Marshal(i)
	return string(b)
}
