package schemas

import (
	"flag"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the published schema files")

// TestPublishedMatchesSource is the drift test: every published file must be
// exactly what the Go source generates.
func TestPublishedMatchesSource(t *testing.T) {
	for name, gen := range Files {
		got, err := gen("..")
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if *update {
			if err := os.WriteFile(name, got, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := Published.ReadFile(name)
		if err != nil {
			t.Fatalf("%s is not published (run go test ./schemas -update): %v", name, err)
		}
		if diff := cmp.Diff(string(want), string(got)); diff != "" {
			t.Errorf("%s drifted from the Go source (-published +generated); run go test ./schemas -update:\n%s", name, diff)
		}
	}
}
