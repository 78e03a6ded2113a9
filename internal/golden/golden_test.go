package golden

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// recorder stands in for a test so the helper's verdicts can be read.
type recorder struct {
	testing.TB
	failed []string
}

type stop struct{}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(f string, a ...any) {
	r.failed = append(r.failed, fmt.Sprintf(f, a...))
}
func (r *recorder) Fatalf(f string, a ...any) {
	r.failed = append(r.failed, fmt.Sprintf(f, a...))
	panic(stop{})
}
func (r *recorder) Fatal(a ...any) { r.Fatalf("%s", fmt.Sprint(a...)) }

func run(t *testing.T, f func(tb testing.TB)) []string {
	t.Helper()
	r := &recorder{TB: t}
	func() {
		defer func() {
			if p := recover(); p != nil {
				if _, ok := p.(stop); !ok {
					panic(p)
				}
			}
		}()
		f(r)
	}()
	return r.failed
}

func withUpdate(t *testing.T, on bool) {
	old := *update
	*update = on
	t.Cleanup(func() { *update = old })
}

func TestHolds(t *testing.T) {
	for _, test := range []struct {
		text  string
		terms []string
		want  string
	}{
		{"the brief was declined", []string{"Q4-Autos-Floor"}, ""},
		{"Because of q4-autos-floor", []string{"Q4-Autos-Floor"}, "Q4-Autos-Floor"},
		{"a - b", []string{"-"}, ""},
		{"Jürgen approved", []string{"jürgen"}, "jürgen"},
		{"anything", nil, ""},
	} {
		got, ok := Holds(test.text, test.terms)
		if got != test.want || ok != (test.want != "") {
			t.Errorf("Holds(%q, %q) = %q, %v, want %q", test.text, test.terms, got, ok, test.want)
		}
	}
}

// A term JSON escapes is still found: the search reads the decoded text.
func TestJSONTextDecodesEscapes(t *testing.T) {
	payload := []byte(`{"reason":"held for \u003cvip\u003e Jos\u00e9"}`)
	if term, ok := Holds(jsonText(payload), []string{"<vip>", "josé"}); !ok || term != "<vip>" {
		t.Errorf("Holds(jsonText(%s)) = %q, %v, want <vip>", payload, term, ok)
	}
}

func TestUpdateRefusesAConfidentialPayload(t *testing.T) {
	withUpdate(t, true)
	path := filepath.Join(t.TempDir(), "sub", "decline.json")
	failed := run(t, func(tb testing.TB) {
		JSON(tb, path, []byte(`{"reason":"rule vip-floor-7 fired"}`), Options{Confidential: []string{"VIP-Floor-7"}})
	})
	if len(failed) != 1 || !strings.Contains(failed[0], `"VIP-Floor-7"`) {
		t.Fatalf("failures = %q, want one naming the term", failed)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("the golden file was written (stat: %v)", err)
	}
}

func TestUpdateWritesAndThenMatches(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "ok.json")
	payload := []byte(`{"status":"rejected","reason":"not offered"}`)
	withUpdate(t, true)
	if failed := run(t, func(tb testing.TB) { JSON(tb, path, payload, Options{}) }); len(failed) != 0 {
		t.Fatalf("updating failed: %q", failed)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := "{\n  \"status\": \"rejected\",\n  \"reason\": \"not offered\"\n}\n"; string(b) != want {
		t.Errorf("written file = %q, want %q", b, want)
	}
	*update = false
	if failed := run(t, func(tb testing.TB) { JSON(tb, path, payload, Options{}) }); len(failed) != 0 {
		t.Errorf("comparing with the file just written failed: %q", failed)
	}
	changed := []byte(`{"status":"rejected","reason":"not sold"}`)
	failed := run(t, func(tb testing.TB) { JSON(tb, path, changed, Options{Hint: "go test ./x -update"}) })
	if len(failed) != 1 || !strings.Contains(failed[0], "not sold") || !strings.Contains(failed[0], "go test ./x -update") {
		t.Errorf("failures = %q, want one diff naming the new text and the hint", failed)
	}
}

// A golden file that was blessed before the term became confidential
// fails even when the code's payload no longer holds it.
func TestGoldenFileHoldingATermFails(t *testing.T) {
	withUpdate(t, false)
	path := filepath.Join(t.TempDir(), "old.json")
	if err := os.WriteFile(path, []byte("{\n  \"reason\": \"vip floor\"\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	failed := run(t, func(tb testing.TB) {
		JSON(tb, path, []byte(`{"reason":"vip floor"}`), Options{Confidential: []string{"VIP floor"}})
	})
	if len(failed) != 1 {
		t.Fatalf("failures = %q, want the payload refused", failed)
	}
	failed = run(t, func(tb testing.TB) {
		JSON(tb, path, []byte(`{"reason":"not offered"}`), Options{Confidential: []string{"VIP floor"}})
	})
	if len(failed) != 2 || !strings.Contains(failed[0], "golden file itself") {
		t.Errorf("failures = %q, want the file's term and the diff", failed)
	}
}

func TestNormaliseRunsFirst(t *testing.T) {
	withUpdate(t, false)
	path := filepath.Join(t.TempDir(), "n.txt")
	if err := os.WriteFile(path, []byte("seq=0"), 0o644); err != nil {
		t.Fatal(err)
	}
	norm := func(b []byte) []byte { return []byte(strings.Replace(string(b), "seq=41", "seq=0", 1)) }
	if failed := run(t, func(tb testing.TB) { Bytes(tb, path, []byte("seq=41"), Options{Normalise: norm}) }); len(failed) != 0 {
		t.Errorf("failures = %q, want none after normalising", failed)
	}
}
