package products_test

import (
	"bytes"
	"testing"

	"github.com/storefront/storefront/internal/jsonesc"
)

// TestEscapedSpansAreTheTextMirror: for answers written whole, narrowed to
// fields or currencies, with brief_relevance and without, on the first
// call and once the products' escaped encodings are kept, the spans the
// completed arm hands its transport escape to exactly what escaping the
// whole payload writes, and answers that carry every field are served
// from kept encodings at least once.
func TestEscapedSpansAreTheTextMirror(t *testing.T) {
	e := demoEnv(t)
	kept := 0
	for round := range 2 {
		for _, args := range []string{
			`{"adcp_version":"3.2-beta.5","buying_mode":"brief","brief":"premium video for coffee lovers"}`,
			`{"adcp_version":"3.2-beta.5","buying_mode":"brief","brief":"audio & <podcast> reach \u2028","fields":["product_id","name","brief_relevance"]}`,
			`{"adcp_version":"3.2-beta.5","buying_mode":"wholesale","filters":{"pricing_currencies":["USD"]}}`,
			`{"adcp_version":"3.2-beta.5","buying_mode":"wholesale","pagination":{"max_results":2}}`,
			`{"adcp_version":"3.2-beta.5","buying_mode":"brief","brief":"display","fields":["brief_relevance"]}`,
		} {
			r, m := e.get(t, nw, agency, args)
			if m["status"] != "completed" {
				t.Fatalf("%s: answered %v", args, m["status"])
			}
			spans := r.Outcome.Escaped()
			if round == 1 && len(spans) > 0 {
				kept++
			}
			got := jsonesc.AppendQuotedSpans(nil, r.Payload, spans)
			if want := jsonesc.AppendQuoted(nil, r.Payload); !bytes.Equal(got, want) {
				t.Fatalf("%s (round %d): the spans escape to\n%s\nthe payload escapes to\n%s", args, round, got, want)
			}
		}
	}
	if kept == 0 {
		t.Fatal("no answer was served from kept escaped encodings")
	}
}
