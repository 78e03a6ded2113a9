// Package verbatim writes the members of a JSON object that must go out
// byte for byte as they came: the buyer's context, a task's stored result.
// encoding/json cannot: it compacts a json.RawMessage and escapes its &, <
// and >. Everything else in an answer is a typed struct that json.Marshal
// writes; these members are appended after it. AppendString spells a
// string as json.Marshal does, for the encoders written by hand.
package verbatim

import (
	"bytes"
	"encoding/json"
)

// Member is one verbatim member. A nil Value is absent.
type Member struct {
	Key   string
	Value json.RawMessage
}

// Marshal is json.Marshal of v, which must encode as a JSON object, with
// the members appended at its end in order.
func Marshal(v any, members ...Member) ([]byte, error) {
	obj, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return Append(obj, members...), nil
}

// Append returns obj, a JSON object as json.Marshal writes it, with each
// member that has a value added before its closing brace, in order. A
// value that is not valid JSON is written as null, as json.Marshal would
// fail to write it.
func Append(obj []byte, members ...Member) []byte {
	n := len(obj)
	for _, m := range members {
		n += len(m.Key) + len(m.Value) + 4
	}
	var b bytes.Buffer
	b.Grow(n)
	body := bytes.TrimSuffix(obj, []byte("}"))
	b.Write(body)
	empty := len(bytes.TrimSpace(body)) == 1 // only the opening brace
	for _, m := range members {
		if m.Value == nil {
			continue
		}
		if !empty {
			b.WriteByte(',')
		}
		empty = false
		k, _ := json.Marshal(m.Key)
		b.Write(k)
		b.WriteByte(':')
		if json.Valid(m.Value) {
			b.Write(m.Value)
		} else {
			b.WriteString("null")
		}
	}
	b.WriteByte('}')
	return b.Bytes()
}

// AppendString appends s as json.Marshal writes a string: as it is when it
// is printable ASCII with nothing to escape, the common case, through
// json.Marshal otherwise.
func AppendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s)
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
