package agent

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode"

	"pgregory.net/rapid"
)

// decodedNamesAccount is what namesAccount must answer: encoding/json's
// decoding of every argument body.
func decodedNamesAccount(args []byte) bool {
	var req struct {
		Account json.RawMessage `json:"account"`
	}
	return json.Unmarshal(args, &req) == nil && len(req.Account) > 0 && string(req.Account) != "null"
}

// TestNamesAccountIsTheDecoders holds the byte pre-check to the decoding
// it skips, on bodies built to spell the member every way a decoder
// accepts and to come close without spelling it.
func TestNamesAccountIsTheDecoders(t *testing.T) {
	names := []string{"account", "ACCOUNT", "Account", "aCcOuNt", `\u0061ccount`, `acc\u006funt`, "accoun", "accounts", "acc ount", "brief", "accoumt", "ſccount"}
	values := []string{`{"account_id":"a1"}`, `null`, `"x"`, `1`, `[]`, `{}`, `"account"`}
	rapid.Check(t, func(t *rapid.T) {
		var b strings.Builder
		n := rapid.IntRange(0, 4).Draw(t, "members")
		b.WriteString("{")
		for i := range n {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString(`"` + rapid.SampledFrom(names).Draw(t, "name") + `":` + rapid.SampledFrom(values).Draw(t, "value"))
		}
		b.WriteString("}")
		body := b.String()
		if rapid.Bool().Draw(t, "cut") {
			body = body[:rapid.IntRange(0, len(body)).Draw(t, "at")]
		}
		if got, want := namesAccount([]byte(body)), decodedNamesAccount([]byte(body)); got != want {
			t.Fatalf("namesAccount(%s) = %v, encoding/json says %v", body, got, want)
		}
	})
}

// TestNoRuneOutsideASCIIFoldsToAccount holds the premise the pre-check
// rests on: encoding/json folds a member name rune by rune, and no rune
// outside ASCII folds to a letter of "account".
func TestNoRuneOutsideASCIIFoldsToAccount(t *testing.T) {
	for r := rune(0x80); r <= unicode.MaxRune; r++ {
		for _, f := range []rune{unicode.ToUpper(r), unicode.ToLower(r), unicode.SimpleFold(r)} {
			if f < 0x80 && strings.ContainsRune("acountACOUNT", f) {
				t.Fatalf("%U folds to %q", r, f)
			}
		}
	}
	for _, body := range []string{`{"ACCOUNT":{"account_id":"a"}}`, `{"\u0061ccount":{}}`, `{"account":{},"account":null}`} {
		if namesAccount([]byte(body)) != decodedNamesAccount([]byte(body)) {
			t.Fatalf("namesAccount(%s) disagrees with encoding/json", body)
		}
	}
	if !namesAccount([]byte(`{"Account":{"account_id":"a"}}`)) {
		t.Fatal("a folded account member was missed")
	}
}
