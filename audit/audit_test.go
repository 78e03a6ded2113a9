package audit

import (
	"strings"
	"testing"
	"time"

	"github.com/storefront/storefront/ledger"
)

var t0 = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

func trail(n int) []Entry {
	var out []Entry
	var head Head
	for i := range n {
		e := Next(head, Record{Publisher: "p", Actor: "ops", TokenID: "tok_1", Action: RulebookSave, Target: "rulebook",
			Detail: map[string]string{"version": string(rune('1' + i))}, Address: "192.0.2.1"}, t0.Add(time.Duration(i)*time.Second))
		out = append(out, e)
		head = e.Head()
	}
	return out
}

func verify(head Head, es []Entry) Result {
	res, err := Verify(head, func(fn func(Entry) error) error {
		for _, e := range es {
			if err := fn(e); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		panic(err)
	}
	return res
}

func TestVerifyNamesTheFirstBreak(t *testing.T) {
	es := trail(5)
	head := es[4].Head()
	if res := verify(head, es); !res.OK || res.Checked != 5 || es[0].PrevHash != ledger.Genesis {
		t.Fatalf("Verify(intact) = %+v", res)
	}
	altered := append([]Entry(nil), es...)
	altered[2].Detail = map[string]string{"version": "9"}
	removed := append(append([]Entry(nil), es[:2]...), es[3:]...)
	for _, test := range []struct {
		name    string
		head    Head
		entries []Entry
		seq     int64
		reason  string
	}{
		{"an altered entry", head, altered, 3, "altered"},
		{"a removed entry", head, removed, 4, "missing"},
		{"the newest entry removed", head, es[:4], 5, "ends before its head"},
		{"a head that names another entry", Head{Sequence: 5, Hash: es[3].Hash}, es, 5, "not the one"},
	} {
		res := verify(test.head, test.entries)
		if res.OK || res.Break == nil || res.Break.Sequence != test.seq || !strings.Contains(res.Break.Reason, test.reason) {
			t.Errorf("Verify(%s) = %+v, want a break at %d saying %q", test.name, res, test.seq, test.reason)
		}
	}
}

func TestNextNeverGoesBackAndCleans(t *testing.T) {
	first := Next(Head{}, Record{Publisher: "p", Action: TokenRevoke}, t0)
	second := Next(first.Head(), Record{Publisher: "p", Action: TokenRevoke, Target: "a\x00b\u202e" + strings.Repeat("x", 300)}, t0.Add(-time.Hour))
	if !second.Time.Equal(first.Time) {
		t.Errorf("an entry timed before the newest got %v, want %v", second.Time, first.Time)
	}
	if strings.ContainsAny(second.Target, "\x00\u202e") || len(second.Target) > maxField {
		t.Errorf("Next kept target %q (%d bytes)", second.Target, len(second.Target))
	}
	if second.Hash != second.ComputeHash() || second.PrevHash != first.Hash || second.Sequence != 2 {
		t.Errorf("second entry = %+v", second)
	}
	if a, ok := ParseAction("token.revoke"); !ok || a != TokenRevoke {
		t.Error("ParseAction(token.revoke) failed")
	}
	if _, ok := ParseAction("token.steal"); ok {
		t.Error("ParseAction accepted an unknown action")
	}
}
