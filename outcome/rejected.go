package outcome

import (
	"strconv"

	"github.com/storefront/storefront/internal/verbatim"
)

// encodeRejected writes the rejected arm as json.Marshal writes
// RejectedWire, member for member. A decline is encoded twice on its way
// out (once for the ledger's digest, once more with its receipt), and
// reflection over the wire type cost more than the writing.
// TestRejectedEncodingIsRejectedWire holds the two to the same bytes.
func (o Outcome) encodeRejected(v string) ([]byte, error) {
	r := o.rejected
	ctx, err := o.marshalledContext()
	if err != nil {
		return nil, err
	}
	n := 200 + len(v) + len(r.Reason.String()) + len(r.Slug) + len(ctx)
	for _, s := range r.Suggestions {
		n += len(s.String()) + 8
	}
	if r.Receipt != nil {
		n += 64 + len(r.Receipt.EntryHash)
	}
	out := make([]byte, 0, n)
	out = append(out, `{"status":"rejected","adcp_version":`...)
	out = verbatim.AppendString(out, v)
	out = append(out, `,"reason":`...)
	out = verbatim.AppendString(out, r.Reason.String())
	if len(r.Suggestions) > 0 {
		out = append(out, `,"suggestions":[`...)
		for i, s := range r.Suggestions {
			if i > 0 {
				out = append(out, ',')
			}
			out = verbatim.AppendString(out, s.String())
		}
		out = append(out, ']')
	}
	out = append(out, `,"ext":{"`+Namespace+`":{"decline":{"fixable":`...)
	out = strconv.AppendBool(out, r.Fixable)
	out = append(out, `,"slug":`...)
	out = verbatim.AppendString(out, string(r.Slug))
	out = append(out, '}')
	if rc := r.Receipt; rc != nil {
		out = append(out, `,"receipt":{"sequence":`...)
		out = strconv.AppendInt(out, rc.Sequence, 10)
		out = append(out, `,"entry_hash":`...)
		out = verbatim.AppendString(out, rc.EntryHash)
		out = append(out, '}')
	}
	return o.appendClose(append(out, "}}"...), ctx), nil
}
