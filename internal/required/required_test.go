package required

import (
	"strings"
	"testing"
)

// recorder stands in for a test, to see how Missing ends it.
type recorder struct {
	testing.TB
	failed, skipped string
}

func (r *recorder) Helper()                           {}
func (r *recorder) Fatalf(format string, args ...any) { r.failed = format }
func (r *recorder) Skipf(format string, args ...any)  { r.skipped = format }

func TestMissing(t *testing.T) {
	t.Setenv("CI", "true")
	r := &recorder{}
	Missing(r, "Chromium is not installed")
	if r.failed == "" || r.skipped != "" || !strings.Contains(r.failed, "CI=true") {
		t.Errorf("under CI=true: failed %q, skipped %q; want a failure", r.failed, r.skipped)
	}
	for _, v := range []string{"", "false", "0"} {
		t.Setenv("CI", v)
		r = &recorder{}
		Missing(r, "Chromium is not installed")
		if r.skipped == "" || r.failed != "" {
			t.Errorf("CI=%q: failed %q, skipped %q; want a skip", v, r.failed, r.skipped)
		}
	}
}
