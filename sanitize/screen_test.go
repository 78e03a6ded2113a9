package sanitize

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// testScreen is a screen over a small deny-list that has one term of each
// shape: a long id (matched anywhere), a multi-word name, a short id (word
// only) and a whole-word note term.
func testScreen() *Screen {
	return New(NewDenyList([]Term{
		{Value: "MR-2291", Kind: KindRuleID},
		{Value: "Acme Retail Group", Kind: KindNoteTerm},
		{Value: "GAM", Kind: KindNoteTerm},
		{Value: "North", Kind: KindNoteTerm, Whole: true},
	}, nil))
}

func TestClean(t *testing.T) {
	s := New(nil)
	for _, test := range []struct {
		name string
		in   string
		want string
	}{
		{"plain text is unchanged", "Budgets from the low thousands fit.", "Budgets from the low thousands fit."},
		{"comparison and ampersand stay as they are", "a < b & c", "a < b & c"},
		{"quotes are not escaped", `say "hi" it's`, `say "hi" it's`},
		{"markup is stripped", "<b>x</b>", "x"},
		{"attributes go with their tag", `<a href="https://example.com" onclick="x()">link</a> text`, "link text"},
		{"script content is dropped", "<script>alert(1)</script>ok", "ok"},
		{"escaped markup cannot become a tag", "&lt;script&gt;alert(1)&lt;/script&gt;", ""},
		{"double-escaped markup cannot become a tag", "&amp;lt;b&amp;gt;hi", "hi"},
		{"numeric entities are decoded and stripped", "&#60;b&#62;x", "x"},
		{"entities in text are decoded", "Tom &amp; Jerry", "Tom & Jerry"},
		{"zero-width space inside a tag name", "<\u200bscript>alert(1)</script>", ""},
		{"soft hyphen inside a tag name", "<\u00adimg src=x onerror=alert(1)>", ""},
		{"control character inside a tag name", "<\x07b>x", "x"},
		{"escaped zero-width tag", "&lt;&#8203;script&gt;x", ""},
		{"control characters removed", "a\x00b\x07c\x1bd", "abcd"},
		{"zero-width characters removed", "x\u200by\u200cz\u200dw\ufeffv\u2060u", "xyzwvu"},
		{"bidi controls removed", "abc\u202edcba\u202c \u2066x\u2069", "abcdcba x"},
		{"variation selectors removed", "ok\ufe0f", "ok"},
		{"whitespace collapsed", "  a \n\t b\r\n\u00a0c\u2028d  ", "a b c d"},
		{"invalid UTF-8 removed", "a\xffb", "ab"},
		{"NFC", "e\u0301", "\u00e9"},
		{"empty", "", ""},
		{"markup only", "<br/><hr>", ""},
	} {
		t.Run(test.name, func(t *testing.T) {
			if got := s.Clean(test.in); got != test.want {
				t.Errorf("Clean(%q) = %q, want %q", test.in, got, test.want)
			}
		})
	}
}

// TestCleanNeverLeavesATag feeds nested and disguised markup and checks
// that nothing a browser would parse as a tag survives.
func TestCleanNeverLeavesATag(t *testing.T) {
	s := New(nil)
	nested := "<script>x</script>"
	for i := 0; i < 8; i++ {
		nested = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(nested)
	}
	for _, in := range []string{
		nested,
		"&amp;amp;amp;amp;amp;lt;script&amp;amp;amp;amp;amp;gt;",
		"<<b>b>",
		"<scr<script>ipt>alert(1)</script>",
		"<\u2060svg onload=alert(1)>",
		"<\ufe0fb>bold",
		"&lt;\u200bimg src=x&gt;",
		"<!-- c -->d<?xml ?>e",
	} {
		got := s.Clean(in)
		if markupAt(got) >= 0 {
			t.Errorf("Clean(%q) = %q, which still holds a tag", in, got)
		}
	}
}

func TestCleanIgnoresDenyList(t *testing.T) {
	s := testScreen()
	in := "Talk to MR-2291."
	if got := s.Clean(in); got != in {
		t.Errorf("Clean(%q) = %q, want it unchanged: Clean does not consult the deny-list", in, got)
	}
}

func TestLine(t *testing.T) {
	s := testScreen()
	for _, test := range []struct {
		name   string
		in     string
		max    int
		want   string
		wantOK bool
	}{
		{"plain", "Connected TV inventory would fit this brief.", 1000, "Connected TV inventory would fit this brief.", true},
		{"markup stripped", "<i>Display</i> inventory", 1000, "Display inventory", true},
		{"empty", "", 1000, "", false},
		{"markup only", "<b></b>", 1000, "", false},
		{"names an id", "Ask about MR-2291.", 1000, "", false},
		{"names an id spaced out", "Ask about M R - 2 2 9 1.", 1000, "", false},
		{"names a whole-word term", "Sold to north.", 1000, "", false},
		{"whole-word term inside a word is fine", "Northwind Media thanks you.", 1000, "Northwind Media thanks you.", true},
		{"truncated at a space with an ellipsis", "aaaa bbbb cccc dddd eeee ffff gggg", 25, "aaaa bbbb cccc dddd…", true},
		{"truncated at a sentence end", "aaaa bbbb cccc dddd. eeee ffff gggg", 25, "aaaa bbbb cccc dddd.", true},
		{"truncated mid-word", strings.Repeat("a", 40), 25, strings.Repeat("a", 24) + "…", true},
		{"short enough", "short", 5, "short", true},
		// Cutting "Northwind" to "North" would make a whole-word hit; the
		// screen re-checks after truncation and drops the line.
		{"truncation never makes a hit", "ab Northwind", 9, "", false},
	} {
		t.Run(test.name, func(t *testing.T) {
			got, ok := s.Line(test.in, test.max)
			if got.String() != test.want || ok != test.wantOK {
				t.Errorf("Line(%q, %d) = %q, %v, want %q, %v", test.in, test.max, got, ok, test.want, test.wantOK)
			}
			if n := utf8.RuneCountInString(got.String()); n > test.max {
				t.Errorf("Line(%q, %d) is %d characters long", test.in, test.max, n)
			}
		})
	}
}

func TestLineLimits(t *testing.T) {
	s := testScreen()
	long := strings.Repeat("word ", 1000)
	for _, max := range []int{MaxReason, MaxSuggestion, MaxMessage, 1} {
		got, ok := s.Line(long, max)
		if !ok {
			t.Fatalf("Line(long, %d) was dropped", max)
		}
		if n := utf8.RuneCountInString(got.String()); n > max {
			t.Errorf("Line(long, %d) is %d characters, want at most %d", max, n, max)
		}
	}
	if MaxReason != 2000 || MaxSuggestion != 1000 || MaxSuggestions != 20 {
		t.Errorf("limits = %d/%d/%d, want the AdCP limits 2000/1000/20", MaxReason, MaxSuggestion, MaxSuggestions)
	}
}

func TestLines(t *testing.T) {
	s := testScreen()
	in := []string{
		"Display inventory would fit this brief.",
		"",
		"Ask MR-2291 about it.",
		"Display inventory would fit this brief.",          // duplicate
		"<b>Display</b>   inventory would fit this brief.", // same after cleaning
		"Online video inventory would fit this brief.",
	}
	got := s.Lines(in, MaxSuggestion, MaxSuggestions)
	want := []string{"Display inventory would fit this brief.", "Online video inventory would fit this brief."}
	if len(got) != len(want) {
		t.Fatalf("Lines(%q) = %q, want %q", in, got, want)
	}
	for i := range want {
		if got[i].String() != want[i] {
			t.Errorf("Lines(%q)[%d] = %q, want %q", in, i, got[i], want[i])
		}
	}

	many := make([]string, 50)
	for i := range many {
		many[i] = "Suggestion number " + strings.Repeat("x", i+1)
	}
	if got := s.Lines(many, MaxSuggestion, MaxSuggestions); len(got) != MaxSuggestions {
		t.Errorf("Lines(50 distinct) kept %d, want %d", len(got), MaxSuggestions)
	}
	if got := s.Lines([]string{strings.Repeat("y", 3000)}, MaxSuggestion, MaxSuggestions); len(got) != 1 || utf8.RuneCountInString(got[0].String()) > MaxSuggestion {
		t.Errorf("Lines(3000 chars) = %d items, first %d characters; want 1 item of at most %d", len(got), utf8.RuneCountInString(got[0].String()), MaxSuggestion)
	}
}

func TestProse(t *testing.T) {
	s := testScreen()
	canned := "The requested budget is below the minimum for this inventory."
	for _, test := range []struct {
		name      string
		in        string
		fallbacks []string
		want      string
	}{
		{"clean prose passes", "Thanks. Budgets from the low thousands fit.", []string{canned}, "Thanks. Budgets from the low thousands fit."},
		{"only the hitting sentence is dropped", "First fine. Then MR-2291 is the rule. Last fine.", []string{canned}, "First fine. Last fine."},
		{"hit in a question", "Why? Ask GAM! It is fine.", []string{canned}, "Why? It is fine."},
		{"disguised hit is dropped", "Hello. Ruled by ｍｒ\u200d２２９１ today. Bye.", []string{canned}, "Hello. Bye."},
		{"nothing survives: canned line", "MR-2291 fired.", []string{canned}, canned},
		{"empty: canned line", "", []string{canned}, canned},
		{"markup only: canned line", "<p></p>", []string{canned}, canned},
		{"canned line hits too: next fallback", "MR-2291 fired.", []string{"See MR-2291.", canned}, canned},
		{"every fallback hits: fixed line", "MR-2291 fired.", []string{"See MR-2291."}, Declined.String()},
		{"no fallbacks: fixed line", "MR-2291 fired.", nil, Declined.String()},
		// Each sentence alone is clean, but the term runs across the
		// boundary; the joined result names it, so the prose is refused.
		{"term split across two sentences", "Sold to Acme Retail. Group deals are closed.", []string{canned}, canned},
		{"term split across sentences that are kept with another", "Hi there. Sold to Acme. Retail Group. Bye.", []string{canned}, canned},
		{"no terminal punctuation", "a plain line with no full stop", []string{canned}, "a plain line with no full stop"},
	} {
		t.Run(test.name, func(t *testing.T) {
			got := s.Prose(test.in, MaxReason, Declined, test.fallbacks...)
			if got.String() != test.want {
				t.Errorf("Prose(%q, %q) = %q, want %q", test.in, test.fallbacks, got, test.want)
			}
		})
	}
}

func TestProseLimit(t *testing.T) {
	s := testScreen()
	in := strings.Repeat("This sentence is fine. ", 200) + "MR-2291 is not."
	got := s.Prose(in, MaxReason, Declined)
	if n := utf8.RuneCountInString(got.String()); n > MaxReason || n == 0 {
		t.Errorf("Prose(long) is %d characters, want 1..%d", n, MaxReason)
	}
	if s.Names(got.String()) {
		t.Errorf("Prose(long) = %q names a term", got)
	}
	if !strings.HasSuffix(got.String(), ".") {
		t.Errorf("Prose(long) = %q..., want a cut at a sentence end", got.String()[:40])
	}
}

func TestHits(t *testing.T) {
	s := testScreen()
	got := s.Hits("<b>MR-2291</b> for Acme Retail Group via GAM, north of Northwind, and MR 2291 again.")
	var names []string
	for _, h := range got {
		names = append(names, h.Term.Value+"/"+string(h.Term.Kind))
	}
	// 2291 is the id's number, a term of its own.
	want := "2291/rule_id Acme Retail Group/note_term GAM/note_term MR-2291/rule_id North/note_term"
	if strings.Join(names, " ") != want {
		t.Errorf("Hits() = %q, want %q", strings.Join(names, " "), want)
	}
	if got := s.Hits("nothing to see"); len(got) != 0 {
		t.Errorf("Hits(clean) = %v, want none", got)
	}
}

func TestNilDenyList(t *testing.T) {
	var d *DenyList
	if d.Len() != 0 || d.Ignored() != nil {
		t.Errorf("nil DenyList: Len() = %d, Ignored() = %v, want 0, nil", d.Len(), d.Ignored())
	}
	s := New(nil)
	if s.Names("MR-2291") {
		t.Error("New(nil).Names(...) = true, want false")
	}
	if got, ok := s.Line("<b>hi</b>", 10); !ok || got.String() != "hi" {
		t.Errorf("New(nil).Line(<b>hi</b>) = %q, %v, want \"hi\", true", got, ok)
	}
}

func TestText(t *testing.T) {
	var zero Text
	if !zero.IsZero() || zero.String() != "" {
		t.Errorf("zero Text: IsZero() = %v, String() = %q", zero.IsZero(), zero.String())
	}
	b, err := json.Marshal(struct {
		R Text `json:"r"`
	}{Text{"a < b & \"c\""}})
	if err != nil {
		t.Fatal(err)
	}
	// encoding/json escapes < and & for HTML safety; the value decodes
	// back to the plain text.
	var back struct{ R string }
	if err := json.Unmarshal(b, &back); err != nil || back.R != "a < b & \"c\"" {
		t.Errorf("Text JSON round trip = %q (%v), want %q", back.R, err, "a < b & \"c\"")
	}
	s := New(NewDenyList(VendorTerms(), nil))
	for _, fixed := range []Text{Declined, Internal, Unavailable} {
		if fixed.IsZero() {
			t.Errorf("fixed line %q is empty", fixed)
		}
		if got, ok := s.Line(fixed.String(), MaxMessage); !ok || got != fixed {
			t.Errorf("fixed line %q does not pass its own screen: %q, %v", fixed, got, ok)
		}
	}
}

// markupAt returns where s has something an HTML tokenizer would start a
// tag, an end tag or a comment at ("<a", "</a", "<!--"), or -1. A "<" that
// is followed by anything else is text.
func markupAt(s string) int {
	letter := func(i int) bool {
		return i < len(s) && (s[i] >= 'a' && s[i] <= 'z' || s[i] >= 'A' && s[i] <= 'Z')
	}
	for i := 0; i < len(s); i++ {
		if s[i] != '<' {
			continue
		}
		if letter(i+1) || (i+1 < len(s) && s[i+1] == '/' && letter(i+2)) || strings.HasPrefix(s[i:], "<!--") {
			return i
		}
	}
	return -1
}
