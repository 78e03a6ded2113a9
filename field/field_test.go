package field_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/storefront/storefront/field"
)

func TestRule(t *testing.T) {
	for _, test := range []struct {
		name string
		rule field.Rule
		in   string
		want string // a part of the error, "" for none
	}{
		{"plain", field.Name, "Northwind Media", ""},
		{"unicode", field.Name, "Nördwind Médias 北風", ""},
		{"empty required", field.Name, "", "is required"},
		{"empty optional", field.Note, "", ""},
		{"at the limit", field.Name, strings.Repeat("é", 200), ""},
		{"over the limit", field.Name, strings.Repeat("é", 201), "is 201 characters; the limit is 200"},
		{"NUL", field.Name, "North\x00wind", "must not contain NUL (character 6)"},
		{"invalid UTF-8", field.Name, "North\xffwind", "must be valid UTF-8 (byte 6 is not)"},
		{"truncated UTF-8", field.Name, "Nord\xc3", "must be valid UTF-8"},
		{"bell", field.Name, "a\x07", "control characters (character 2 is U+0007)"},
		{"DEL", field.Name, "a\x7f", "U+007F"},
		{"C1", field.Name, "a\u0085", "U+0085"},
		{"newline in a name", field.Name, "a\nb", "must be one line"},
		{"tab in a name", field.Name, "a\tb", "must be one line"},
		{"newline in prose", field.Prose, "first line\nsecond line\r\n\tindented", ""},
		{"NUL in prose", field.Prose, "a\n\x00", "NUL"},
		{"minimum", field.Rule{Min: 3}, "ab", "at least 3 characters"},
		// U+FFFD written as such is a character like any other.
		{"replacement character", field.Name, "a\ufffdb", ""},
	} {
		t.Run(test.name, func(t *testing.T) {
			err := test.rule.Check(test.in)
			switch {
			case test.want == "" && err != nil:
				t.Errorf("Check(%q) = %v, want nil", test.in, err)
			case test.want != "" && (err == nil || !strings.Contains(err.Error(), test.want)):
				t.Errorf("Check(%q) = %v, want an error containing %q", test.in, err, test.want)
			}
		})
	}
}

func TestIdentifier(t *testing.T) {
	for _, ok := range []string{"acct_1", "tok_0123abcd", "MR-0412.x:y", strings.Repeat("a", 128)} {
		if err := field.Identifier(ok); err != nil {
			t.Errorf("Identifier(%q) = %v, want nil", ok, err)
		}
	}
	for _, bad := range []string{"", "a b", "a/b", "a\x00b", "acct\xff", "é", "<script>", strings.Repeat("a", 129)} {
		if err := field.Identifier(bad); err == nil {
			t.Errorf("Identifier(%q) = nil, want an error", bad)
		}
	}
}

func TestHostname(t *testing.T) {
	for _, ok := range []string{
		"example.com", "northwind.example", "a.b", "localhost", "my-site.co.uk",
		"xn--bcher-kva.example", // bücher.example
		"a1.example", "1a.example", strings.Repeat("a", 63) + ".example",
	} {
		if err := field.Hostname(ok); err != nil {
			t.Errorf("Hostname(%q) = %v, want nil", ok, err)
		}
	}
	for _, test := range []struct{ in, want string }{
		{"", "is required"},
		{"not a domain <script>", "label 1 holds a character other than a-z, 0-9 and -"},
		{"not-a-domain<script>", "holds a character other than"},
		{"<script>alert(1)</script>", "holds a character other than"},
		{"Example.com", "must be a lower-case domain name"},
		{"bücher.example", "must be a domain name written in ASCII: send xn--bcher-kva.example"},
		{"example.com.", "label 3 is empty"},
		{".example.com", "label 1 is empty"},
		{"a..b", "label 2 is empty"},
		{"-a.example", "starts or ends with a hyphen"},
		{"a-.example", "starts or ends with a hyphen"},
		{strings.Repeat("a", 64) + ".example", "longer than 63"},
		{strings.Repeat("abcdefghi.", 26) + "com", "at most 253 characters"},
		{"192.168.0.1", "not an IP address"},
		{"exa_mple.com", "holds a character other than"},
		{"xn--zz-.example", "starts or ends with a hyphen"},
		{"xn--a.example", "not valid punycode"},
		{"exam\x00ple.com", "NUL"},
		{"exam\xffple.com", "UTF-8"},
		{"http://example.com", "holds a character other than"},
	} {
		err := field.Hostname(test.in)
		if err == nil || !strings.Contains(err.Error(), test.want) {
			t.Errorf("Hostname(%q) = %v, want an error containing %q", test.in, err, test.want)
		}
	}
}

func TestScan(t *testing.T) {
	ctxOpaque := func(p field.Path) bool { return len(p) > 0 && p[0] == "context" }
	for _, test := range []struct {
		name string
		doc  string
		want []string // "pointer: part of the error"
	}{
		{"clean", `{"brief":"Sports fans","brand":{"industries":["retail"]}}`, nil},
		{"escapes that are fine", `{"brief":"line\nline\ttab \"quoted\" \u00e9 \ud83d\ude00 \\ \/"}`, nil},
		{"invalid UTF-8 in a value", "{\"brief\":\"caf\xe9\"}", []string{"/brief: must be valid UTF-8 (character 4 is not)"}},
		{"invalid UTF-8 deep", "{\"a\":[1,{\"b\":[\"ok\",\"x\xff\"]}]}", []string{"/a/1/b/1: must be valid UTF-8"}},
		{"invalid UTF-8 in a name", "{\"k\xff\":1}", []string{"/k\ufffd: must be valid UTF-8"}},
		{"NUL escape", `{"name":"a\u0000b"}`, []string{"/name: must not contain NUL (character 2)"}},
		{"bell escape", `{"name":"\u0007"}`, []string{"/name: control characters"}},
		{"backspace escape", `{"name":"\b"}`, []string{"/name: U+0008"}},
		{"lone high surrogate", `{"brief":"a\ud800"}`, []string{"/brief: lone UTF-16 surrogate"}},
		{"lone low surrogate", `{"brief":"\udc00a"}`, []string{"/brief: lone UTF-16 surrogate"}},
		{"reversed pair", `{"brief":"\ude00\ud83d"}`, []string{"/brief: lone UTF-16 surrogate"}},
		{"null in an array", `{"brand":{"industries":[null]}}`, []string{"/brand/industries/0: must not be null"}},
		{"null second", `{"l":["a",null]}`, []string{"/l/1: must not be null"}},
		{"null member is fine", `{"brief":null,"a":[]}`, nil},
		{"word null in a string", `{"brief":"null and void"}`, nil},
		{"pointer escaping", "{\"a/b\":{\"c~d\":\"\xff\"}}", []string{"/a~1b/c~0d: UTF-8"}},
		{"opaque control is kept", `{"context":{"note":"\u0001","l":[null]}}`, nil},
		{"opaque invalid UTF-8 is not", "{\"context\":{\"note\":\"\xff\"}}", []string{"/context/note: UTF-8"}},
		{"opaque lone surrogate is not", `{"context":{"note":"\ud800"}}`, []string{"/context/note: surrogate"}},
		{"top-level string", "\"\xff\"", []string{": UTF-8"}},
		{"several", "{\"a\":\"\xff\",\"b\":\"\\u0000\"}", []string{"/a: UTF-8", "/b: NUL"}},
		{"syntax error stops", "{\"a\":", nil},
	} {
		t.Run(test.name, func(t *testing.T) {
			var got []string
			for _, f := range field.Scan([]byte(test.doc), ctxOpaque) {
				got = append(got, f.Path.Pointer()+": "+f.Err.Error())
			}
			if len(got) != len(test.want) {
				t.Fatalf("Scan(%q) = %q, want %d faults like %q", test.doc, got, len(test.want), test.want)
			}
			for i, w := range test.want {
				ptr, part, _ := strings.Cut(w, ": ")
				if !strings.HasPrefix(got[i], ptr+": ") || !strings.Contains(got[i], part) {
					t.Errorf("Scan(%q)[%d] = %q, want %q", test.doc, i, got[i], w)
				}
			}
		})
	}
}

func TestScanLimit(t *testing.T) {
	doc := "[" + strings.Repeat("\"\xff\",", 100) + "\"\xff\"]"
	if got := len(field.Scan([]byte(doc), nil)); got != field.MaxFaults {
		t.Errorf("Scan of 101 bad strings reported %d faults, want %d", got, field.MaxFaults)
	}
}

func TestPath(t *testing.T) {
	p := field.Path{"brand", "industries", 0}
	if got, want := p.Pointer(), "/brand/industries/0"; got != want {
		t.Errorf("Pointer() = %q, want %q", got, want)
	}
	if got, want := p.String(), "brand.industries[0]"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	if got := (field.Path{}).String(); got != "" {
		t.Errorf("String() of the document = %q, want \"\"", got)
	}
}

func TestValue(t *testing.T) {
	type inner struct {
		Note string `json:"note,omitempty"`
	}
	type embedded struct {
		Tag string `json:"tag"`
	}
	type doc struct {
		embedded
		Name    string            `json:"name"`
		Skip    string            `json:"-"`
		Items   []inner           `json:"items"`
		Labels  map[string]string `json:"labels"`
		Raw     json.RawMessage   `json:"raw"`
		Binary  []byte            `json:"binary"`
		Ptr     *inner            `json:"ptr"`
		private string
	}
	d := doc{
		embedded: embedded{Tag: "t\x00"},
		Name:     "a\nb", // line breaks are for the field's own rule
		Skip:     "\x00",
		Items:    []inner{{"ok"}, {"bad\xff"}},
		Labels:   map[string]string{"k": "\x01"},
		Raw:      json.RawMessage(`{"x":"\u0000"}`),
		Binary:   []byte{0, 0xff},
		Ptr:      &inner{"\x7f"},
		private:  "\x00",
	}
	got := map[string]bool{}
	for _, f := range field.Value(d) {
		got[f.Path.Pointer()] = true
	}
	want := map[string]bool{"/tag": true, "/items/1/note": true, "/labels/k": true, "/raw/x": true, "/ptr/note": true}
	for p := range want {
		if !got[p] {
			t.Errorf("Value missed %s (got %v)", p, got)
		}
	}
	for p := range got {
		if !want[p] {
			t.Errorf("Value reported %s, which is fine", p)
		}
	}
}

// FuzzScan checks Scan against encoding/json on arbitrary documents: it
// never panics, it finds invalid UTF-8 in any valid JSON document (such
// bytes can only sit in strings), and a document it passes decodes to
// strings that Text passes, with no null array element.
func FuzzScan(f *testing.F) {
	for _, seed := range []string{
		`{"brief":"a"}`, "{\"brief\":\"\xff\"}", `{"a":["\u0000",null]}`, `{"x":"\ud800"}`,
		`[1,true,null,{"a":{"b":[[]]}}]`, `"\ud83d\ude00"`, `{"context":{"a":"\u0001"}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		faults := field.Scan(doc, nil)
		if !json.Valid(doc) {
			return
		}
		if !utf8.Valid(doc) && len(faults) == 0 {
			t.Fatalf("Scan(%q) found nothing in a document that is not UTF-8", doc)
		}
		if len(faults) > 0 {
			return
		}
		var v any
		dec := json.NewDecoder(bytes.NewReader(doc))
		dec.UseNumber()
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("json.Valid but Decode: %v", err)
		}
		var check func(v any, inArray bool)
		check = func(v any, inArray bool) {
			switch x := v.(type) {
			case nil:
				if inArray {
					t.Fatalf("Scan(%q) passed a null array element", doc)
				}
			case string:
				if err := field.Text(x, true); err != nil {
					t.Fatalf("Scan(%q) passed a string Text refuses: %v", doc, err)
				}
			case []any:
				for _, e := range x {
					check(e, true)
				}
			case map[string]any:
				for k, e := range x {
					check(k, false)
					check(e, false)
				}
			}
		}
		check(v, false)
	})
}

func TestScanDeep(t *testing.T) {
	deep := strings.Repeat("[", 20000) + "\"\xff\"" + strings.Repeat("]", 20000)
	if got := field.Scan([]byte(deep), nil); len(got) != 0 {
		t.Errorf("Scan past the depth encoding/json accepts = %d faults, want it to stop", len(got))
	}
	ok := strings.Repeat("[", 100) + "\"\xff\"" + strings.Repeat("]", 100)
	if got := field.Scan([]byte(ok), nil); len(got) != 1 || len(got[0].Path) != 100 {
		t.Errorf("Scan at depth 100 = %v, want one fault 100 deep", got)
	}
}
