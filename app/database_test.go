package app_test

import (
	"strings"
	"testing"
)

// TestCommandsNeedTheDatabase: every command that works on the database
// refuses to run without one, naming DATABASE_URL and printing nothing
// else. ledger verify and audit verify once ran on a fresh in-memory
// store, checked no publisher, printed nothing and succeeded.
func TestCommandsNeedTheDatabase(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	for _, args := range [][]string{
		{"ledger", "verify"},
		{"ledger", "verify", "--publisher", "northwind"},
		{"audit", "verify"},
		{"audit", "list", "--publisher", "northwind"},
		{"retention", "run"},
		{"admin", "publisher", "create", "--publisher", "lakeside", "--name", "Lakeside", "--domain", "lakeside.example"},
		{"admin", "signing-key", "list", "--publisher", "northwind"},
		{"admin", "token", "create", "--publisher", "northwind"},
		{"buyer", "token", "list", "--publisher", "northwind"},
	} {
		out, errOut, err := runIn(t, "", args...)
		if err == nil || !strings.Contains(err.Error(), "DATABASE_URL") || !strings.Contains(err.Error(), strings.Join(args[:2], " ")) {
			t.Errorf("storefront %s without a database: %v, want an error naming the command and DATABASE_URL", strings.Join(args, " "), err)
		}
		if out != "" || errOut != "" {
			t.Errorf("storefront %s without a database printed %q and %q", strings.Join(args, " "), out, errOut)
		}
	}
}
