// Package jsonfield points at the fields of JSON documents (RFC 6901
// pointers), reads documents strictly, and carries the validation failures
// that point at an offending field, so the admin API can render them as
// RFC 9457 problem details and the console can show each next to its
// field. The buyer tasks report their requests' failures with the same
// type, adding the AdCP error code and the field as AdCP errors name it.
//
// There is one strict reader: Parse reads a document's bytes once, and a
// Reader reads its values, recording a fault at the place of each value of
// the wrong type and each member a closed object does not allow. Decode
// reads the admin API's documents with it into Go values, faults at JSON
// pointers; get_products reads its requests with it, faults at AdCP paths
// with codes, keeping the rules of its fields to itself. Of the storefront
// it imports only field, whose text rules Decode applies to every string
// of a document, and adcp, for the codes.
package jsonfield

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/storefront/storefront/adcp"
	"github.com/storefront/storefront/field"
)

// Field is one failure at one place in a document.
type Field struct {
	// Pointer is an RFC 6901 JSON pointer into the submitted document.
	Pointer string `json:"pointer"`
	// Detail says what is wrong, in words the sender can act on.
	Detail string `json:"detail"`
	// Code and Path are what an AdCP error carries besides the detail, for
	// a buyer's request (Fault): the error code, and the place as AdCP
	// names fields, "brand.industries[0]". The admin API sends neither.
	Code adcp.Code `json:"-"`
	Path string    `json:"-"`
}

// Fault is a failure of a buyer's request at path, named as AdCP names
// fields ("brand.industries[0]", "" for the request itself). Its pointer is
// read from the path, which is exact unless a member name on it holds "."
// or "[": FaultAt is exact for any path.
func Fault(code adcp.Code, path, detail string) Field {
	return Field{Pointer: parsePath(path).Pointer(), Detail: detail, Code: code, Path: path}
}

// FaultAt is a failure of a buyer's request at p.
func FaultAt(code adcp.Code, p field.Path, detail string) Field {
	return Field{Pointer: p.Pointer(), Detail: detail, Code: code, Path: p.String()}
}

// parsePath reads a path as AdCP names fields back into its member names
// and array indexes.
func parsePath(s string) field.Path {
	var p field.Path
	for s != "" {
		if s[0] == '[' {
			if end := strings.IndexByte(s, ']'); end > 0 {
				if i, err := strconv.Atoi(s[1:end]); err == nil {
					p = append(p, i)
					s = strings.TrimPrefix(s[end+1:], ".")
					continue
				}
			}
		}
		end := strings.IndexAny(s[1:], ".[") + 1
		if end == 0 {
			end = len(s)
		}
		p = append(p, s[:end])
		s = strings.TrimPrefix(s[end:], ".")
	}
	return p
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

// Check records err, a predicate from package field ("is required",
// "must not contain NUL ..."), as a failure at pointer, after the name of
// the field the pointer ends in. It reports whether err was nil.
func (v *Invalid) Check(pointer string, err error) bool {
	if err == nil {
		return true
	}
	v.Add(pointer, "%s %v", fieldName(pointer), err)
	return false
}

// fieldName is the last reference token of a pointer, or "the value".
func fieldName(pointer string) string {
	i := strings.LastIndexByte(pointer, '/')
	if i < 0 || i == len(pointer)-1 {
		return "the value"
	}
	name := strings.ReplaceAll(strings.ReplaceAll(pointer[i+1:], "~1", "/"), "~0", "~")
	if name[0] >= '0' && name[0] <= '9' && i > 0 {
		// An array element: name it after its array.
		return fieldName(pointer[:i]) + "[" + name + "]"
	}
	return name
}

// Faults records the faults field.Scan or field.Value found, each at its
// pointer below base.
func (v *Invalid) Faults(base string, faults []field.Fault) {
	for _, f := range faults {
		v.Check(base+f.Path.Pointer(), f.Err)
	}
}

// Pointer joins reference tokens into a JSON pointer, escaping "~" and "/".
func Pointer(tokens ...any) string { return field.Path(tokens).Pointer() }

// Join appends tokens to an existing pointer.
func Join(base string, tokens ...any) string { return base + Pointer(tokens...) }
