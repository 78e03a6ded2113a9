package verbatim

import (
	"encoding/json"
	"testing"
)

func TestMarshal(t *testing.T) {
	type head struct {
		Status string `json:"status"`
		Note   string `json:"note,omitempty"`
	}
	for _, test := range []struct {
		name    string
		v       any
		members []Member
		want    string
	}{
		{"no members", head{Status: "completed"}, nil, `{"status":"completed"}`},
		{"a member as it came", head{Status: "completed"},
			[]Member{{"context", json.RawMessage(`{"a": "<b> & c"}`)}}, `{"status":"completed","context":{"a": "<b> & c"}}`},
		{"an absent member", head{Status: "completed"},
			[]Member{{"result", nil}, {"context", json.RawMessage(`{}`)}}, `{"status":"completed","context":{}}`},
		{"an invalid member is null", head{Status: "completed"},
			[]Member{{"context", json.RawMessage(`{`)}}, `{"status":"completed","context":null}`},
		{"an empty object", struct{}{},
			[]Member{{"a", json.RawMessage(`1`)}, {"b", json.RawMessage(`2`)}}, `{"a":1,"b":2}`},
	} {
		got, err := Marshal(test.v, test.members...)
		if err != nil || string(got) != test.want {
			t.Errorf("%s: Marshal = %s, %v, want %s", test.name, got, err, test.want)
		}
	}
}
