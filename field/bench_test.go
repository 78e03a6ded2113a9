package field_test

import (
	"testing"

	"github.com/storefront/storefront/field"
)

// A get_products request of the usual kind: no escape, no null, ASCII.
var request = []byte(`{"adcp_version":"3.2-rc.7","buying_mode":"brief","brief":"Display and video for a coffee brand's autumn campaign in the US and Canada, families with kids, premium placements only","brand":{"domain":"acme.example","industries":["food_beverage"]},"filters":{"channels":["display","olv"],"budget_range":{"max":50000,"currency":"USD"},"countries":["US","CA"]},"context":{"correlation_id":"abc-123"}}`)

// BenchmarkScanPlain is the cost Scan adds to every buyer request and
// admin body: the fast path.
func BenchmarkScanPlain(b *testing.B) {
	b.SetBytes(int64(len(request)))
	for b.Loop() {
		if len(field.Scan(request, nil)) != 0 {
			b.Fatal("a fault in a clean request")
		}
	}
}

// BenchmarkScanEscaped is a request that takes the slow path: an escape
// and a null make Scan walk the document.
func BenchmarkScanEscaped(b *testing.B) {
	doc := []byte(`{"brief":"caf\u00e9 \"quoted\" line\nline","brand":{"domain":"acme.example","industries":["food_beverage"]},"account":null}`)
	b.SetBytes(int64(len(doc)))
	for b.Loop() {
		if len(field.Scan(doc, nil)) != 0 {
			b.Fatal("a fault in a clean request")
		}
	}
}
