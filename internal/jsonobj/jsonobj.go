// Package jsonobj reads the members of a JSON object the request path has
// already validated, without decoding their values: what encoding/json does
// when it unmarshals into a map of json.RawMessage, in one pass over the
// bytes instead of two passes of its state machine and a copy of every
// value. The door reads the JSON-RPC envelope and the AdCP envelope so on
// every call.
package jsonobj

import (
	"encoding/json"
)

// Members reads raw, one valid JSON value (json.Valid holds for it), as
// json.Unmarshal reads it into a map[string]json.RawMessage: each member
// under its decoded name, a name given twice holding its last value, each
// value its bytes as sent; null is a nil map. ok is false for any other
// value. The values are slices of raw, not copies.
//
// On bytes that are not valid JSON the result means nothing, but Members
// returns: callers validate first.
func Members(raw []byte) (m map[string]json.RawMessage, ok bool) {
	i := space(raw, 0)
	if i >= len(raw) {
		return nil, false
	}
	switch raw[i] {
	case 'n':
		return nil, true
	case '{':
	default:
		return nil, false
	}
	m = make(map[string]json.RawMessage, 4)
	i = space(raw, i+1)
	if i < len(raw) && raw[i] == '}' {
		return m, true
	}
	for i < len(raw) && raw[i] == '"' {
		end := stringEnd(raw, i)
		if end < 0 {
			return nil, false
		}
		name, ok := String(raw[i:end])
		if !ok {
			return nil, false
		}
		i = space(raw, end)
		if i >= len(raw) || raw[i] != ':' {
			return nil, false
		}
		i = space(raw, i+1)
		vend := valueEnd(raw, i)
		if vend < 0 {
			return nil, false
		}
		m[name] = raw[i:vend:vend]
		i = space(raw, vend)
		if i < len(raw) && raw[i] == ',' {
			i = space(raw, i+1)
			continue
		}
		return m, i < len(raw) && raw[i] == '}'
	}
	return nil, false
}

// Is reports whether lit, a JSON value, is one String decodes (ok) and
// whether it decodes to want, without allocating for a plain literal.
func Is(lit []byte, want string) (ok, is bool) {
	lit, null, plain, ok := stringLit(lit)
	switch {
	case !ok:
		return false, false
	case null:
		return true, want == ""
	case plain:
		return true, string(lit[1:len(lit)-1]) == want
	}
	s, ok := String(lit)
	return ok, ok && s == want
}

// stringLit is lit without the white space around it, whether it is null
// or a string (ok), and whether the string is plain printable ASCII,
// whose bytes are its text.
func stringLit(lit []byte) (trimmed []byte, null, plain, ok bool) {
	lit = lit[space(lit, 0):]
	for n := len(lit); n > 0 && space(lit, n-1) == n; n = len(lit) {
		lit = lit[:n-1]
	}
	if string(lit) == "null" {
		return lit, true, false, true
	}
	if len(lit) < 2 || lit[0] != '"' || lit[len(lit)-1] != '"' {
		return lit, false, false, false
	}
	for _, c := range lit[1 : len(lit)-1] {
		if c == '\\' || c == '"' || c < 0x20 || c >= 0x80 {
			return lit, false, false, true
		}
	}
	return lit, false, true, true
}

// String decodes lit, a JSON value, as json.Unmarshal decodes it into a
// string: ok is false when lit is not a string or null (which leaves "").
// A literal of plain printable ASCII is read without encoding/json.
func String(lit []byte) (string, bool) {
	lit, null, plain, ok := stringLit(lit)
	if !ok || null {
		return "", ok
	}
	if plain {
		return string(lit[1 : len(lit)-1]), true
	}
	var s string
	if json.Unmarshal(lit, &s) != nil {
		return "", false
	}
	return s, true
}

// space is the index of the first byte at or after i that is not JSON
// white space.
func space(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// stringEnd is the index after the string that opens at b[i], or -1.
func stringEnd(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return -1
}

// valueEnd is the index after the value that starts at b[i], or -1.
func valueEnd(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return stringEnd(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				end := stringEnd(b, j)
				if end < 0 {
					return -1
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	}
	j := i
	for j < len(b) {
		switch b[j] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return j
		}
		j++
	}
	return j
}
