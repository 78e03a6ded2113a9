package problem

import (
	"encoding/json"
	"errors"
	"testing"
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
