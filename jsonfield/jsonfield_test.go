package jsonfield

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/storefront/storefront/adcp"
	"github.com/storefront/storefront/field"
)

func TestPointer(t *testing.T) {
	for _, test := range []struct {
		tokens []any
		want   string
	}{
		{nil, ""},
		{[]any{"rules", 3, "id"}, "/rules/3/id"},
		{[]any{"voice", "templates", "budget_below_minimum"}, "/voice/templates/budget_below_minimum"},
		{[]any{"a/b", "m~n"}, "/a~1b/m~0n"},
		{[]any{"~/"}, "/~0~1"},
		{[]any{""}, "/"},
		{[]any{int64(7)}, "/7"},
	} {
		if got := Pointer(test.tokens...); got != test.want {
			t.Errorf("Pointer(%v) = %q, want %q", test.tokens, got, test.want)
		}
	}
	if got := Join("/rules/0", "when", "per_channel", "a/b"); got != "/rules/0/when/per_channel/a~1b" {
		t.Errorf("Join = %q", got)
	}
}

func TestInvalid(t *testing.T) {
	var v Invalid
	if v.Err() != nil {
		t.Errorf("empty Invalid.Err() = %v, want nil", v.Err())
	}
	if got := v.Error(); got != "invalid document" {
		t.Errorf("empty Invalid.Error() = %q", got)
	}
	v.Add("", "rulebook is missing")
	v.Add("/rules/0/id", "id %q is used %d times", "MR-1", 2)
	err := v.Err()
	var got Invalid
	if !errors.As(err, &got) || len(got) != 2 {
		t.Fatalf("Err() = %v, want an Invalid with 2 fields", err)
	}
	if got[1] != (Field{Pointer: "/rules/0/id", Detail: `id "MR-1" is used 2 times`}) {
		t.Errorf("field = %+v", got[1])
	}
	if want := `(document): rulebook is missing; /rules/0/id: id "MR-1" is used 2 times`; err.Error() != want {
		t.Errorf("Error() = %q, want %q", err.Error(), want)
	}
	b, _ := json.Marshal(got[1])
	if string(b) != `{"pointer":"/rules/0/id","detail":"id \"MR-1\" is used 2 times"}` {
		t.Errorf("JSON = %s", b)
	}
}

func TestFault(t *testing.T) {
	for _, test := range []struct{ path, pointer string }{
		{"", ""},
		{"brief", "/brief"},
		{"brand.industries[0]", "/brand/industries/0"},
		{"refine[3].ask", "/refine/3/ask"},
		{"filters.format_ids[10].agent_url", "/filters/format_ids/10/agent_url"},
		{"fields[1]", "/fields/1"},
		{"account.a/b~c", "/account/a~1b~0c"},
	} {
		f := Fault(adcp.InvalidRequest, test.path, "detail")
		want := Field{Pointer: test.pointer, Detail: "detail", Code: adcp.InvalidRequest, Path: test.path}
		if f != want {
			t.Errorf("Fault(%q) = %+v, want %+v", test.path, f, want)
		}
	}
	got := FaultAt(adcp.ValidationError, field.Path{"filters", "a.b", 0}, "detail")
	if want := (Field{Pointer: "/filters/a.b/0", Detail: "detail", Code: adcp.ValidationError, Path: "filters.a.b[0]"}); got != want {
		t.Errorf("FaultAt = %+v, want %+v", got, want)
	}
	// The AdCP parts stay off the admin API's wire.
	b, _ := json.Marshal(got)
	if string(b) != `{"pointer":"/filters/a.b/0","detail":"detail"}` {
		t.Errorf("JSON = %s", b)
	}
}

func TestCheck(t *testing.T) {
	var v Invalid
	if !v.Check("/name", nil) || len(v) != 0 {
		t.Fatalf("Check(nil) recorded %v", v)
	}
	v.Check("/name", errors.New("is required"))
	v.Check("/buyer/accounts/2", errors.New("must not contain NUL (character 1)"))
	v.Check("/voice/a~1b", errors.New("is too long"))
	v.Check("", errors.New("must be valid UTF-8"))
	want := Invalid{
		{Pointer: "/name", Detail: "name is required"},
		{Pointer: "/buyer/accounts/2", Detail: "accounts[2] must not contain NUL (character 1)"},
		{Pointer: "/voice/a~1b", Detail: "a/b is too long"},
		{Pointer: "", Detail: "the value must be valid UTF-8"},
	}
	if len(v) != len(want) {
		t.Fatalf("Check recorded %v, want %v", v, want)
	}
	for i := range want {
		if v[i] != want[i] {
			t.Errorf("Check[%d] = %+v, want %+v", i, v[i], want[i])
		}
	}
}

func TestDecodeText(t *testing.T) {
	type doc struct {
		Name   string   `json:"name"`
		Tags   []string `json:"tags"`
		Nested struct {
			Note string `json:"note"`
		} `json:"nested"`
	}
	for _, test := range []struct {
		name, body, pointer, detail string
	}{
		{"invalid UTF-8", "{\"name\":\"Nord\xffwind\"}", "/name", "name must be valid UTF-8 (character 5 is not)"},
		{"NUL escape", `{"nested":{"note":"a\u0000"}}`, "/nested/note", "note must not contain NUL (character 2)"},
		{"control escape", `{"tags":["ok","\u001b[31m"]}`, "/tags/1", "tags[1] must not contain control characters (character 1 is U+001B)"},
		{"lone surrogate", `{"name":"\ud800"}`, "/name", "name must be valid Unicode"},
		{"null element", `{"tags":[null]}`, "/tags/0", "tags[0] must not be null"},
		{"null body", `null`, "", "the body is null; send the whole document"},
		{"null body with space", " null \n", "", "the body is null"},
	} {
		t.Run(test.name, func(t *testing.T) {
			d := doc{Name: "kept"}
			err := Decode([]byte(test.body), &d)
			var v Invalid
			if !errors.As(err, &v) || len(v) != 1 {
				t.Fatalf("Decode(%q) = %v, want one field failure", test.body, err)
			}
			if v[0].Pointer != test.pointer || !strings.HasPrefix(v[0].Detail, test.detail) {
				t.Errorf("Decode(%q) = %+v, want %q at %q", test.body, v[0], test.detail, test.pointer)
			}
			if d.Name != "kept" {
				t.Errorf("Decode(%q) wrote into v (name %q) although it refused the document", test.body, d.Name)
			}
		})
	}
	// Line breaks and tabs, and U+FFFD written as such, are text.
	var d doc
	if err := Decode([]byte(`{"name":"a\nb\tc \ufffd","tags":["é"]}`), &d); err != nil {
		t.Errorf("Decode of text with line breaks = %v, want nil", err)
	}
}
