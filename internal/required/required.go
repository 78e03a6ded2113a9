// Package required is the one place tests decide what to do when
// something they need from outside the repository is missing: the AdCP
// spec folder, PostgreSQL, the npm packages, Chromium.
//
// Under CI=true everything the test command installs must be there, so a
// missing prerequisite fails the test; on a developer's machine it skips,
// saying what is missing and how to get it. A test never skips its
// behaviour quietly: the skip message names the prerequisite.
package required

import (
	"fmt"
	"os"
	"strconv"
	"testing"
)

// CI reports whether this is a CI run (CI=true), where every prerequisite
// must be present.
func CI() bool {
	ok, _ := strconv.ParseBool(os.Getenv("CI"))
	return ok
}

// Missing reports a missing prerequisite: it fails the test under CI and
// skips it otherwise. The message says what is missing and how to get it.
func Missing(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if CI() {
		t.Fatalf("required under CI=true: %s", msg)
		return
	}
	t.Skipf("skipped, a prerequisite is missing: %s", msg)
}
