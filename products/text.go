package products

import (
	"bytes"
	"encoding/json"
	"errors"

	"github.com/storefront/storefront/adcp"
	"github.com/storefront/storefront/field"
	"github.com/storefront/storefront/jsonfield"
)

// opaque marks the buyer's own objects in a request, kept and echoed as
// sent: context, and ext wherever it appears. Their strings need only be
// valid Unicode.
func opaque(p field.Path) bool {
	if len(p) > 0 && p[0] == "context" {
		return true
	}
	for _, t := range p {
		if t == "ext" {
			return true
		}
	}
	return false
}

// TextProblems checks every string of a request's raw arguments, as
// field.Scan does: text that is not valid UTF-8 (which encoding/json would
// silently have turned into U+FFFD), a lone surrogate escape, or a control
// character other than line breaks and tabs, outside context and ext, is a
// VALIDATION_ERROR naming its field. With nulls, a null array element is an
// INVALID_REQUEST too (a caller whose decoder reports nulls itself leaves
// it out).
func TextProblems(args []byte, nulls bool) jsonfield.Invalid {
	var out jsonfield.Invalid
	for _, f := range field.Scan(args, opaque) {
		if errors.Is(f.Err, field.ErrNull) {
			if nulls {
				out = append(out, jsonfield.FaultAt(adcp.InvalidRequest, f.Path, describe(f)))
			}
			continue
		}
		out = append(out, jsonfield.FaultAt(adcp.ValidationError, f.Path, describe(f)))
	}
	return out
}

func describe(f field.Fault) string {
	name := f.Path.String()
	if name == "" {
		name = "the request"
	}
	return name + " " + f.Err.Error()
}

// Echoable reports whether a buyer's context may be echoed: it is a JSON
// object (core/context.json; any other value would make the answer fail
// its own schema) of valid Unicode. A context that is not is refused with
// the request, and the refusal does not send it back.
func Echoable(ctx json.RawMessage) bool {
	return isObject(ctx) && len(field.Scan(ctx, func(field.Path) bool { return true })) == 0
}

func isObject(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) > 0 && t[0] == '{'
}
