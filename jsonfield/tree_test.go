package jsonfield

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

// TestAnyIsEncodingJSON: a parsed document's Any is what encoding/json
// decodes it into with UseNumber: escapes, invalid UTF-8, repeated
// members (the last one), number literals as written, nesting.
func TestAnyIsEncodingJSON(t *testing.T) {
	for _, doc := range []string{
		`null`, `true`, `false`, `0`, `-1.50e+3`, `"a\u00e9\n\"\ud83d\ude00"`, "\"\xff\xfe\"",
		`[]`, `{}`, `[1,"x",[null,{}]]`, `{"a":1,"a":{"b":[true]},"\u0061b":2}`,
		`{"k":[{"x":1.0},{"x":10000000000000000000000}],"s":"<&>"}`,
	} {
		v, err := Parse([]byte(doc))
		if err != nil {
			t.Fatalf("%s: %v", doc, err)
		}
		dec := json.NewDecoder(bytes.NewReader([]byte(doc)))
		dec.UseNumber()
		var want any
		if err := dec.Decode(&want); err != nil {
			t.Fatal(err)
		}
		if got := v.Any(); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: Any = %#v, encoding/json decodes %#v", doc, got, want)
		}
	}
}
