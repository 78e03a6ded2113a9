package clock_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/storefront/storefront/internal/clock"
)

// TestMachineClockShift shows whether time.Now is moved as
// STOREFRONT_CLOCK_SHIFT says: it compares time.Now with the kernel's
// clock, read as a fresh file's modification time, which no overlay of
// the time package moves. Without the variable the two agree; with it
// (scripts/test-clock-shift.sh) they differ by the shift, and a run that
// sets the variable without the overlay fails here rather than pass for a
// shifted run.
func TestMachineClockShift(t *testing.T) {
	f := filepath.Join(t.TempDir(), "now")
	if err := os.WriteFile(f, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(f)
	if err != nil {
		t.Fatal(err)
	}
	kernel, now := fi.ModTime(), time.Now()
	want := kernel
	if v := os.Getenv("STOREFRONT_CLOCK_SHIFT"); v != "" {
		if want, err = clock.Shift(kernel, v); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("time.Now() = %v (year %d); the kernel's clock = %v", now.UTC(), now.Year(), kernel.UTC())
	if d := now.Sub(want); d < -time.Hour || d > time.Hour {
		t.Errorf("time.Now() = %v, want about %v (STOREFRONT_CLOCK_SHIFT=%q): without scripts/test-clock-shift.sh's overlay the variable moves nothing", now.UTC(), want.UTC(), os.Getenv("STOREFRONT_CLOCK_SHIFT"))
	}
}

func TestShift(t *testing.T) {
	at := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	for _, test := range []struct {
		shift string
		want  time.Time
	}{
		{"+7y", time.Date(2033, 11, 29, 12, 0, 0, 0, time.UTC)},
		{"-2y", time.Date(2024, 11, 29, 12, 0, 0, 0, time.UTC)},
		{"+90d", time.Date(2027, 2, 27, 12, 0, 0, 0, time.UTC)},
		{"-36h", time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC)},
		{"+0y", at},
	} {
		if got, err := clock.Shift(at, test.shift); err != nil || !got.Equal(test.want) {
			t.Errorf("Shift(%v, %q) = %v, %v, want %v", at, test.shift, got, err, test.want)
		}
	}
	for _, bad := range []string{"", "7y", "+y", "+7", "+7w", "+7.5y", "+-7y", "+ 7y", "+999999999y"} {
		if _, err := clock.Shift(at, bad); err == nil {
			t.Errorf("Shift(%q) = nil error, want one", bad)
		}
	}
}
