package e2e

import (
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/storefront/storefront/internal/required"
	"github.com/storefront/storefront/internal/spectest"
)

// TestStoryboardTable: the README's storyboard table says, for every
// storyboard storyboards.json lists, where the test command runs it and
// why anything is excused, not graded or not run, as that file does
// (scripts/storyboards.sh checks the result cells against each run).
func TestStoryboardTable(t *testing.T) {
	if _, err := exec.LookPath("node"); err != nil {
		required.Missing(t, "node is not on PATH (Node 20 runs the storyboard tools)")
	}
	compliance := filepath.Join(spectest.Dir(t), "compliance")
	out, err := exec.Command("node", "storyboard-table.mjs", "--check", filepath.Join("..", "README.md"), "--spec", compliance).CombinedOutput()
	if err != nil {
		t.Fatalf("node storyboard-table.mjs --check: %v\n%s", err, out)
	}
}
