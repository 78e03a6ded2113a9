package outcome

import (
	"encoding/json"
	"strconv"

	"github.com/storefront/storefront/internal/verbatim"
)

// appendCompleted writes the completed arm as json.Marshal writes
// CompletedWire, member for member, with the products written in place
// rather than marshalled: the answer's head is a handful of short members
// that reflection would spend more on than the writing, and the products
// are most of the bytes. The members whose values are lists or maps are
// still marshalled. It appends to dst, grown once to the answer's size
// when it has not the room. TestCompletedEncodingIsCompletedWire holds
// the two to the same bytes.
func (o Outcome) appendCompleted(dst []byte, v string) ([]byte, error) {
	c := o.completed
	var tail [][]byte // the marshalled members, in order
	for _, m := range []struct {
		key   string
		value any
		set   bool
	}{
		{"refinement_applied", c.Refinement, len(c.Refinement) > 0},
		{"filter_diagnostics", c.Diagnostics, len(c.Diagnostics) > 0},
		{"errors", c.Warnings, len(c.Warnings) > 0},
	} {
		if !m.set {
			continue
		}
		b, err := json.Marshal(m.value)
		if err != nil {
			return nil, err
		}
		tail = append(tail, append([]byte(`,"`+m.key+`":`), b...))
	}
	ctx, err := o.marshalledContext()
	if err != nil {
		return nil, err
	}
	n := 160 + len(v) + len(c.CacheScope) + len(ctx)
	if c.Page != nil {
		n += len(c.Page.Cursor)
	}
	for _, t := range tail {
		n += len(t)
	}
	if c.Writer != nil {
		n += c.Writer.Size()
	}
	for _, p := range c.Products {
		n += len(p) + 1
	}
	out := dst
	if cap(out)-len(out) < n {
		out = append(make([]byte, 0, len(out)+n), out...)
	}
	out = append(out, `{"status":"completed","adcp_version":`...)
	out = verbatim.AppendString(out, v)
	out = append(out, `,"products":[`...)
	if c.Writer != nil {
		out = c.Writer.Append(out)
	} else {
		for i, p := range c.Products {
			if i > 0 {
				out = append(out, ',')
			}
			out = append(out, p...)
		}
	}
	out = append(out, `],"cache_scope":`...)
	out = verbatim.AppendString(out, c.CacheScope)
	if p := c.Page; p != nil {
		out = append(out, `,"pagination":{"has_more":`...)
		out = strconv.AppendBool(out, p.HasMore)
		if p.Cursor != "" {
			out = append(out, `,"cursor":`...)
			out = verbatim.AppendString(out, p.Cursor)
		}
		if p.Total != nil {
			out = append(out, `,"total_count":`...)
			out = strconv.AppendInt(out, int64(*p.Total), 10)
		}
		out = append(out, '}')
	}
	for _, t := range tail {
		out = append(out, t...)
	}
	if c.Sandbox {
		out = append(out, `,"sandbox":true`...)
	}
	return o.appendClose(out, ctx), nil
}

// marshalledContext is the envelope's context as json.Marshal writes a
// RawMessage: compacted, HTML escaped, and refused when it is not JSON;
// nil when there is none.
func (o Outcome) marshalledContext() ([]byte, error) {
	if len(o.env.Context) == 0 {
		return nil, nil
	}
	return json.Marshal(o.env.Context)
}

// appendClose ends a hand-written arm as json.Marshal ends its wire type:
// the replay marker, the context (marshalledContext) and the brace.
func (o Outcome) appendClose(out, ctx []byte) []byte {
	if o.replayed {
		out = append(out, `,"replayed":true`...)
	}
	if ctx != nil {
		out = append(out, `,"context":`...)
		out = append(out, ctx...)
	}
	return append(out, '}')
}
