package store_test

import (
	"reflect"
	"testing"

	"pgregory.net/rapid"

	"github.com/storefront/storefront/ledger"
	"github.com/storefront/storefront/store"
	"github.com/storefront/storefront/vocab"
)

// TestCheckRecordIsCheckStored: CheckRecord refuses exactly the records
// CheckStored refuses, with the same faults, for text plain and not
// (controls, NUL, invalid UTF-8, non-ASCII letters) in every text field.
func TestCheckRecordIsCheckStored(t *testing.T) {
	// A field added to Record must be added to CheckRecord's list, or
	// shown to be no text.
	if n := reflect.TypeFor[ledger.Record]().NumField(); n != 13 {
		t.Fatalf("ledger.Record has %d fields; CheckRecord was written for 13", n)
	}
	plain := rapid.StringMatching(`[ -~]{0,12}`)
	odd := rapid.SampledFrom([]string{"a\x00b", "tab\there", "caf\u00e9", "\xff\xfe", "line\n", "\u2028", "\x7f"})
	refused := 0
	rapid.Check(t, func(t *rapid.T) {
		r := ledger.Record{Publisher: plain.Draw(t, "publisher"), Account: plain.Draw(t, "account"), Principal: plain.Draw(t, "principal"),
			RequestDigest: plain.Draw(t, "request"), RulebookVersion: rapid.Int64().Draw(t, "version"), Task: plain.Draw(t, "task"),
			Arm: plain.Draw(t, "arm"), Slug: vocab.Slug(plain.Draw(t, "slug")), RuleIDs: rapid.SliceOfN(plain, 1, 3).Draw(t, "rules"),
			ResponseDigest: plain.Draw(t, "response"), Sandbox: rapid.Bool().Draw(t, "sandbox"), Forced: rapid.Bool().Draw(t, "forced"),
			Request: []byte(odd.Draw(t, "bytes"))}
		// Text that is not plain, in one field or none.
		texts := []*string{&r.Publisher, &r.Account, &r.Principal, &r.RequestDigest, &r.Task, &r.Arm, (*string)(&r.Slug), &r.ResponseDigest, &r.RuleIDs[len(r.RuleIDs)-1]}
		if i := rapid.IntRange(-1, len(texts)-1).Draw(t, "odd field"); i >= 0 {
			*texts[i] = odd.Draw(t, "odd")
		}
		got, want := store.CheckRecord(&r), store.CheckStored(r)
		if (got == nil) != (want == nil) || (got != nil && got.Error() != want.Error()) {
			t.Fatalf("CheckRecord(%+v) = %v; CheckStored: %v", r, got, want)
		}
		if want != nil {
			refused++
		}
	})
	if refused == 0 {
		t.Error("no record drawn was refused: the generator draws only plain text")
	}
}
