package requestid_test

import (
	"strings"
	"testing"

	"github.com/storefront/storefront/internal/requestid"
)

func TestOf(t *testing.T) {
	for _, test := range []struct {
		name, header string
		kept         bool
	}{
		{"a proxy's id", "3f2a-9c.01_b", true},
		{"absent", "", false},
		{"too long", strings.Repeat("a", 65), false},
		{"a space", "a b", false},
		{"a newline", "a\nlevel=ERROR msg=forged", false},
		{"a quote", `a"b`, false},
		{"not ASCII", "é", false},
	} {
		t.Run(test.name, func(t *testing.T) {
			got := requestid.Of(test.header)
			if test.kept != (got == test.header) {
				t.Errorf("Of(%q) = %q, kept %v", test.header, got, !test.kept)
			}
			if got == "" || requestid.Of(got) != got {
				t.Errorf("Of(%q) = %q, which is not an id Of keeps", test.header, got)
			}
		})
	}
	if requestid.New() == requestid.New() {
		t.Error("New returned the same id twice")
	}
}
