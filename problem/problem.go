// Package problem carries validation failures that point at the offending
// field of a document (RFC 6901 JSON pointers), so the admin API can render
// them as RFC 9457 problem details and the console can show each next to its
// field. It imports nothing from the storefront.
package problem

import (
	"fmt"
	"strconv"
	"strings"
)

// Field is one failure at one place in a document.
type Field struct {
	// Pointer is an RFC 6901 JSON pointer into the submitted document.
	Pointer string `json:"pointer"`
	// Detail says what is wrong, in words a publisher can act on.
	Detail string `json:"detail"`
}

// Invalid is a set of field failures. A document with any is refused whole.
type Invalid []Field

func (v Invalid) Error() string {
	if len(v) == 0 {
		return "invalid document"
	}
	parts := make([]string, len(v))
	for i, f := range v {
		parts[i] = fmt.Sprintf("%s: %s", displayPointer(f.Pointer), f.Detail)
	}
	return strings.Join(parts, "; ")
}

func displayPointer(p string) string {
	if p == "" {
		return "(document)"
	}
	return p
}

// Add records a failure at pointer.
func (v *Invalid) Add(pointer, format string, args ...any) {
	*v = append(*v, Field{Pointer: pointer, Detail: fmt.Sprintf(format, args...)})
}

// Err returns v as an error, or nil when it is empty.
func (v Invalid) Err() error {
	if len(v) == 0 {
		return nil
	}
	return v
}

// Pointer joins reference tokens into a JSON pointer, escaping "~" and "/".
func Pointer(tokens ...any) string {
	var b strings.Builder
	for _, t := range tokens {
		b.WriteByte('/')
		var s string
		switch x := t.(type) {
		case int:
			s = strconv.Itoa(x)
		case string:
			s = x
		default:
			s = fmt.Sprint(x)
		}
		s = strings.ReplaceAll(s, "~", "~0")
		s = strings.ReplaceAll(s, "/", "~1")
		b.WriteString(s)
	}
	return b.String()
}

// Join appends tokens to an existing pointer.
func Join(base string, tokens ...any) string { return base + Pointer(tokens...) }
