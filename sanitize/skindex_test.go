package sanitize

import (
	"fmt"
	"testing"
)

// TestSkIndex checks the skeleton index against a map: every key put is
// found with its value, through growth past what was reserved, and keys
// never put are not, including ones whose hashes share a probe's start.
func TestSkIndex(t *testing.T) {
	for _, reserve := range []int{0, 10, 5_000} {
		var x skIndex
		x.reserve(reserve)
		want := map[string]int32{}
		for i := 0; i < 5_000; i++ {
			k := fmt.Sprintf("k%d", i*7919%100_003)
			if _, ok := want[k]; ok {
				continue
			}
			if _, ok := x.get(spanHash(k), []byte(k)); ok {
				t.Fatalf("reserve %d: %q found before it was put", reserve, k)
			}
			want[k] = int32(i)
			x.put(spanHash(k), k, int32(i))
		}
		if x.len() != len(want) {
			t.Fatalf("reserve %d: len = %d, want %d", reserve, x.len(), len(want))
		}
		for k, v := range want {
			if got, ok := x.get(spanHash(k), []byte(k)); !ok || got != v {
				t.Fatalf("reserve %d: get(%q) = %d, %v, want %d", reserve, k, got, ok, v)
			}
			// The same hash with other bytes is another key.
			if _, ok := x.get(spanHash(k), []byte(k+"!")); ok {
				t.Fatalf("reserve %d: get(%q) found under %q's hash", reserve, k+"!", k)
			}
		}
		for i := 0; i < 1_000; i++ {
			k := fmt.Sprintf("absent%d", i)
			if _, ok := x.get(spanHash(k), []byte(k)); ok {
				t.Fatalf("reserve %d: %q found, never put", reserve, k)
			}
		}
	}
}
