package ledger

import (
	"errors"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

// chain builds n sealed entries.
func chain(n int) []Entry {
	var out []Entry
	var prev *Entry
	for i := 0; i < n; i++ {
		r := Record{
			Publisher: "northwind", Account: "acct_1", Principal: "buyer_1",
			RequestDigest: Digest([]byte{byte(i)}), RulebookVersion: 3,
			Arm: "rejected", Slug: "budget_below_minimum", RuleIDs: []string{"MR-2291"},
			ResponseDigest: Digest([]byte{byte(i), 1}),
		}
		e := Next(prev, r, t0.Add(time.Duration(i)*time.Second))
		out = append(out, e)
		prev = &out[len(out)-1]
	}
	return out
}

// verify runs a Verifier over entries and returns the first error.
func verify(entries []Entry) (int64, error) {
	var v Verifier
	for _, e := range entries {
		if err := v.Check(e); err != nil {
			return v.Checked(), err
		}
	}
	return v.Checked(), nil
}

func TestNext(t *testing.T) {
	es := chain(3)
	if es[0].Sequence != 1 || es[0].PrevHash != Genesis {
		t.Errorf("first entry: Sequence = %d, PrevHash = %s, want 1, Genesis", es[0].Sequence, es[0].PrevHash)
	}
	for i := 1; i < len(es); i++ {
		if es[i].Sequence != es[i-1].Sequence+1 || es[i].PrevHash != es[i-1].Hash {
			t.Errorf("entry %d does not link to entry %d", i, i-1)
		}
	}
	for _, e := range es {
		if e.Hash != e.ComputeHash() || len(e.Hash) != 64 {
			t.Errorf("entry %d: Hash = %q, want ComputeHash() = %q", e.Sequence, e.Hash, e.ComputeHash())
		}
	}
	at := time.Date(2026, 11, 29, 7, 0, 0, 123456789, time.FixedZone("EST", -5*3600))
	e := Next(nil, Record{Publisher: "p"}, at)
	if !e.Time.Equal(at.Truncate(time.Microsecond)) || e.Time.Location() != time.UTC {
		t.Errorf("Next time = %v, want %v in UTC, truncated to microseconds", e.Time, at)
	}
	if e.Sequence != 1 {
		t.Errorf("Next sequence = %d, want 1", e.Sequence)
	}
}

func TestVerifier(t *testing.T) {
	for _, test := range []struct {
		name    string
		edit    func([]Entry) []Entry
		wantSeq int64 // 0: the chain verifies
		want    string
	}{
		{"intact", func(es []Entry) []Entry { return es }, 0, ""},
		{"empty", func([]Entry) []Entry { return nil }, 0, ""},
		{"altered entry", func(es []Entry) []Entry {
			es[2].Slug = "commercially_declined"
			return es
		}, 3, "altered"},
		{"altered rule ids", func(es []Entry) []Entry {
			es[1].RuleIDs = []string{"MR-0000"}
			return es
		}, 2, "altered"},
		{"altered time", func(es []Entry) []Entry {
			es[3].Time = es[3].Time.Add(time.Microsecond)
			return es
		}, 4, "altered"},
		{"altered and rehashed", func(es []Entry) []Entry {
			es[1].Arm = "completed"
			es[1].Hash = es[1].ComputeHash()
			return es
		}, 3, "previous hash"},
		{"missing entry", func(es []Entry) []Entry { return append(es[:2:2], es[3:]...) }, 4, "missing or out of order"},
		{"missing first entry", func(es []Entry) []Entry { return es[1:] }, 2, "missing or out of order"},
		{"reordered entries", func(es []Entry) []Entry {
			es[1], es[2] = es[2], es[1]
			return es
		}, 3, "missing or out of order"},
		{"wrong prev hash", func(es []Entry) []Entry {
			es[2].PrevHash = Genesis
			return es
		}, 3, "previous hash"},
		{"renumbered after a removal", func(es []Entry) []Entry {
			rest := append(es[:1:1], es[2:]...)
			for i := range rest {
				rest[i].Sequence = int64(i + 1)
			}
			return rest
		}, 2, "previous hash"},
	} {
		t.Run(test.name, func(t *testing.T) {
			es := test.edit(chain(5))
			checked, err := verify(es)
			if test.wantSeq == 0 {
				if err != nil || checked != int64(len(es)) {
					t.Errorf("verify = %d, %v, want %d, nil", checked, err, len(es))
				}
				return
			}
			var b *Break
			if !errors.As(err, &b) {
				t.Fatalf("verify = %v, want a *Break", err)
			}
			if b.Sequence != test.wantSeq || !strings.Contains(b.Reason, test.want) {
				t.Errorf("verify = %v, want a break at sequence %d mentioning %q", err, test.wantSeq, test.want)
			}
			if !strings.Contains(err.Error(), "sequence") {
				t.Errorf("Break.Error() = %q, want the sequence named", err.Error())
			}
		})
	}
}

func TestCanonical(t *testing.T) {
	e := chain(1)[0]
	want := `{"v":1,"publisher":"northwind","sequence":1,"time":"2026-11-29T12:00:00Z","account":"acct_1","principal":"buyer_1",` +
		`"request_digest":"` + e.RequestDigest + `","rulebook_version":3,"arm":"rejected","slug":"budget_below_minimum",` +
		`"rule_ids":["MR-2291"],"response_digest":"` + e.ResponseDigest + `","sandbox":false,"forced":false,"prev_hash":"` + Genesis + `"}`
	if got := string(e.Canonical()); got != want {
		t.Errorf("Canonical() =\n%s\nwant\n%s", got, want)
	}
	// The same entry in another time zone has the same bytes.
	f := e
	f.Time = e.Time.In(time.FixedZone("X", 3600))
	if string(f.Canonical()) != string(e.Canonical()) {
		t.Error("Canonical() depends on the time zone")
	}
	// nil and empty rule ids encode alike.
	g, h := e, e
	g.RuleIDs, h.RuleIDs = nil, []string{}
	if string(g.Canonical()) != string(h.Canonical()) || !strings.Contains(string(g.Canonical()), `"rule_ids":[]`) {
		t.Errorf("Canonical() with nil rule ids = %s", g.Canonical())
	}
	// The hash covers every field.
	for name, edit := range map[string]func(*Entry){
		"publisher": func(e *Entry) { e.Publisher = "other" },
		"account":   func(e *Entry) { e.Account = "" },
		"principal": func(e *Entry) { e.Principal = "x" },
		"request":   func(e *Entry) { e.RequestDigest = Digest(nil) },
		"rulebook":  func(e *Entry) { e.RulebookVersion++ },
		"arm":       func(e *Entry) { e.Arm = "failed" },
		"slug":      func(e *Entry) { e.Slug = "" },
		"rules":     func(e *Entry) { e.RuleIDs = append(e.RuleIDs, "x") },
		"response":  func(e *Entry) { e.ResponseDigest = Digest(nil) },
		"sandbox":   func(e *Entry) { e.Sandbox = true },
		"forced":    func(e *Entry) { e.Forced = true },
		"sequence":  func(e *Entry) { e.Sequence = 9 },
		"prev":      func(e *Entry) { e.PrevHash = strings.Repeat("1", 64) },
	} {
		x := e
		x.RuleIDs = append([]string(nil), e.RuleIDs...)
		edit(&x)
		if x.ComputeHash() == e.ComputeHash() {
			t.Errorf("changing %s does not change the hash", name)
		}
	}
}

func TestDigest(t *testing.T) {
	// SHA-256 of the empty string.
	if got := Digest(nil); got != "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" {
		t.Errorf("Digest(nil) = %s", got)
	}
}

func TestParseArm(t *testing.T) {
	for _, test := range []struct {
		in     string
		want   string
		wantOK bool
	}{
		{"completed", "completed", true},
		{"Rejected", "rejected", true},
		{"FAILED", "failed", true},
		{"submitted", "submitted", true},
		{"ok", "", false},
		{"", "", false},
	} {
		got, ok := ParseArm(test.in)
		if got != test.want || ok != test.wantOK {
			t.Errorf("ParseArm(%q) = %q, %v, want %q, %v", test.in, got, ok, test.want, test.wantOK)
		}
	}
}

// TestTaskIsHashedOnlyWhenSet: get_products entries (no task) keep the
// canonical form and hash they always had; another task's entry covers its
// task, so it cannot be passed off as a get_products decision.
func TestTaskIsHashedOnlyWhenSet(t *testing.T) {
	at := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	plain := Next(nil, Record{Publisher: "p", Arm: "completed"}, at)
	if strings.Contains(string(plain.Canonical()), `"task"`) {
		t.Errorf("a get_products entry's canonical form names a task: %s", plain.Canonical())
	}
	buy := Next(nil, Record{Publisher: "p", Arm: "completed", Task: "create_media_buy"}, at)
	if buy.Hash == plain.Hash {
		t.Error("the task is not covered by the hash")
	}
	forged := buy
	forged.Task = ""
	var v Verifier
	if err := v.Check(forged); err == nil {
		t.Error("an entry whose task was removed still verifies")
	}
}
