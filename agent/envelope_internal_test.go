package agent

import (
	"bytes"
	"testing"

	"github.com/storefront/storefront/jsonfield"
)

// TestParsedEnvelopeIsEnvelope: the door reads the envelope of arguments
// it has parsed from the parse; it must read what envelopeOf reads from
// their bytes, for repeated, escaped and mistyped members alike.
func TestParsedEnvelopeIsEnvelope(t *testing.T) {
	for _, args := range []string{
		`{}`, `[]`, `"x"`, `null`, `{"adcp_version":"3.2-beta.5","adcp_major_version":3,"context":{"a":1}}`,
		`{"adcp_version":3,"adcp_major_version":"3","context":[1]}`, `{"adcp_major_version":3.5}`, `{"adcp_major_version":1e400}`,
		`{"adcp_version":"3.0","adcp_version":"3.1","context":{"a":1},"context":{"b":2}}`,
		`{"adcp\u005fversion":"3.\u0032","\u0063ontext":{ "k" : "v" }}`, `{"context":{"bad":"\ud800"}}`, `{"context":null}`,
	} {
		pin, major, ctx, ok := envelopeOf([]byte(args))
		doc, err := jsonfield.Parse([]byte(args))
		if err != nil {
			t.Fatalf("%s: %v", args, err)
		}
		pin2, major2, ctx2, ok2 := parsedEnvelopeOf(doc)
		if pin != pin2 || major != major2 || !bytes.Equal(ctx, ctx2) || ok != ok2 {
			t.Errorf("%s: from the parse %q %d %s %v, from the bytes %q %d %s %v", args, pin2, major2, ctx2, ok2, pin, major, ctx, ok)
		}
	}
}
