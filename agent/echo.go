package agent

import (
	"bytes"
	"encoding/json"
)

// withContext returns the answer payload with its top-level context set to
// ctx (removed when ctx is nil), every other member as it was, in order.
// A replayed answer is the first answer, but the buyer may send another
// context on a retry (the spec leaves it out of payload equivalence), and
// every answer echoes the context of the request it answers.
func withContext(payload []byte, ctx json.RawMessage) []byte {
	type member struct {
		key   string
		value json.RawMessage
	}
	dec := json.NewDecoder(bytes.NewReader(payload))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return payload
	}
	var members []member
	for dec.More() {
		t, err := dec.Token()
		key, ok := t.(string)
		if err != nil || !ok {
			return payload
		}
		var v json.RawMessage
		if dec.Decode(&v) != nil {
			return payload
		}
		members = append(members, member{key, v})
	}
	var out bytes.Buffer
	out.WriteByte('{')
	put := func(key string, v json.RawMessage) {
		if out.Len() > 1 {
			out.WriteByte(',')
		}
		k, _ := json.Marshal(key)
		out.Write(k)
		out.WriteByte(':')
		out.Write(v)
	}
	set := false
	for _, m := range members {
		if m.key != "context" {
			put(m.key, m.value)
		} else if ctx != nil {
			put("context", ctx)
			set = true
		}
	}
	if ctx != nil && !set {
		put("context", ctx)
	}
	out.WriteByte('}')
	return out.Bytes()
}
