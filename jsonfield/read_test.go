package jsonfield

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"

	"github.com/storefront/storefront/adcp"
)

// generic is v as encoding/json decodes it into an any, with UseNumber.
func generic(v Value) any {
	switch v.kind {
	case kindBool:
		return v.raw[0] == 't'
	case kindNumber:
		return json.Number(v.raw)
	case kindString:
		return v.text()
	case kindArray:
		out := []any{}
		for _, e := range v.kids {
			out = append(out, generic(e))
		}
		return out
	case kindObject:
		out := map[string]any{}
		for _, m := range v.kids {
			out[string(m.name)] = generic(m)
		}
		return out
	}
	return nil
}

// depthOf is how deeply v, as encoding/json decodes into an any, nests
// arrays and objects.
func depthOf(v any) int {
	d := 0
	switch v := v.(type) {
	case []any:
		for _, e := range v {
			d = max(d, depthOf(e))
		}
		return d + 1
	case map[string]any:
		for _, e := range v {
			d = max(d, depthOf(e))
		}
		return d + 1
	}
	return 0
}

// FuzzParse checks Parse against encoding/json: it accepts exactly the
// documents json.Valid accepts, and reads each as json.Unmarshal does
// (strings and member names decoded alike, a repeated member the last).
func FuzzParse(f *testing.F) {
	for _, s := range []string{`{}`, `[1,-0.5e+3,"a\u00e9\ud83d\ude00",true,false,null]`, `{"a":1,"a":{"b":[]}}`, `{"\u0061":"\ud800"}`,
		"\"\xff\"", `01`, `1.`, `-`, `[1,]`, `{"a" 1}`, `"\x"`, "\"\t\"", ` {} `, `{} {}`, `[` + strings.Repeat("[", 10000) + `]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := Parse(data)
		if valid := json.Valid(data); (err == nil) != valid {
			t.Fatalf("Parse(%q) = %v; json.Valid says %v", data, err, valid)
		}
		if err != nil {
			return
		}
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		var want any
		if err := dec.Decode(&want); err != nil {
			t.Fatalf("json.Decode(%q) = %v", data, err)
		}
		if got := generic(v); !reflect.DeepEqual(got, want) {
			t.Errorf("Parse(%q) reads as %#v, encoding/json as %#v", data, got, want)
		}
		lent, loan, err := ParseLent(data)
		if err != nil {
			t.Fatalf("ParseLent(%q) = %v; Parse read it", data, err)
		}
		if got := generic(lent); !reflect.DeepEqual(got, want) {
			t.Errorf("ParseLent(%q) reads as %#v, encoding/json as %#v", data, got, want)
		}
		if got, want := loan.Depth(), depthOf(want); got != want {
			t.Errorf("ParseLent(%q) nests %d deep; it nests %d", data, got, want)
		}
		loan.Return()
	})
}

func TestParseDepth(t *testing.T) {
	for _, n := range []int{maxDepth, maxDepth + 1} {
		doc := []byte(strings.Repeat(`{"a":[`, n/2) + strings.Repeat(`]}`, n/2))
		if _, err := Parse(doc); (err == nil) != json.Valid(doc) {
			t.Errorf("Parse at depth %d = %v; json.Valid says %v", n, err, json.Valid(doc))
		}
	}
}

func TestDecodeFaults(t *testing.T) {
	type inner struct {
		N int8 `json:"n"`
	}
	type doc struct {
		Name  string             `json:"name"`
		Count int                `json:"count"`
		Ratio float64            `json:"ratio"`
		On    bool               `json:"on"`
		Tags  []string           `json:"tags"`
		Day   adcp.Date          `json:"day"`
		Sub   inner              `json:"sub"`
		By    map[string]float64 `json:"by"`
	}
	for _, test := range []struct {
		name, body string
		want       Invalid
	}{
		{"wrong types", `{"name":1,"count":"2","ratio":true,"on":null,"tags":"a","sub":[]}`, Invalid{
			{Pointer: "/count", Detail: "must be an integer, not a string"},
			{Pointer: "/name", Detail: "must be a string, not a number"},
			{Pointer: "/ratio", Detail: "must be a number, not a boolean"},
			{Pointer: "/sub", Detail: "must be an object, not an array"},
			{Pointer: "/tags", Detail: "must be an array, not a string"},
		}},
		{"numbers", `{"count":1.5,"ratio":1e400,"by":{"b~/":1e999,"a":"x"}}`, Invalid{
			{Pointer: "/by/a", Detail: "must be a number, not a string"},
			{Pointer: "/by/b~0~1", Detail: "must be a finite number"},
			{Pointer: "/count", Detail: "must be an integer, not 1.5"},
			{Pointer: "/ratio", Detail: "must be a finite number"},
		}},
		{"unknown fields among the known, in name order", `{"zz":1,"tags":[2],"Name":"x"}`, Invalid{
			{Pointer: "/Name", Detail: `unknown field "Name" (known: by, count, day, name, on, ratio, sub, tags)`},
			{Pointer: "/tags/0", Detail: "must be a string, not a number"},
			{Pointer: "/zz", Detail: `unknown field "zz" (known: by, count, day, name, on, ratio, sub, tags)`},
		}},
		{"the last of a repeated member", `{"name":"x","name":2,"count":"x","count":3}`, Invalid{
			{Pointer: "/name", Detail: "must be a string, not a number"},
		}},
		{"a value's own decoder", `{"day":"2024-02-30","sub":{"n":"x"}}`, Invalid{
			{Pointer: "/day", Detail: `"2024-02-30" is not a date in YYYY-MM-DD form`},
			{Pointer: "/sub/n", Detail: "must be an integer, not a string"},
		}},
		{"a second document", `{} {}`, Invalid{{Pointer: "", Detail: "the body holds more than one JSON document"}}},
		{"a bracket after the document", `{}]`, Invalid{{Pointer: "", Detail: "invalid character ']' after top-level value"}}},
		{"not JSON, in encoding/json's words", `{"name":}`, Invalid{{Pointer: "", Detail: "the body is not valid JSON: invalid character '}' looking for beginning of value"}}},
		{"cut short", `{"name":"x"`, Invalid{{Pointer: "", Detail: "the body is not valid JSON: unexpected EOF"}}},
	} {
		t.Run(test.name, func(t *testing.T) {
			var d doc
			err := Decode([]byte(test.body), &d)
			if diff := cmp.Diff(test.want, err); diff != "" {
				t.Errorf("Decode(%s) (-want +got):\n%s", test.body, diff)
			}
		})
	}
}

func TestReaderRequests(t *testing.T) {
	doc, err := Parse([]byte(`{"s":1,"n":"x","inf":1e400,"i":1.5,"big":2147483648,"b":"t","o":[],"l":{},"gone":null,
		"p":{"cursor":"c","x":1,"a":2},"list":[null,"a",{}],"dup":1,"dup":"last"}`))
	if err != nil {
		t.Fatal(err)
	}
	r := NewReader(Requests, 0)
	o, ok := r.Object(doc, "")
	if !ok {
		t.Fatal("Object of an object failed")
	}
	o.Str("s")
	o.Number("n")
	o.Int("i")
	// A refused value reads as zero, not as the bound strconv gives.
	if n := o.Int("big"); n != 0 {
		t.Errorf("Int(big) = %d, want 0", n)
	}
	o.Bool("b")
	o.Obj("o")
	o.List("l")
	if f := o.Number("inf"); f != 0 {
		t.Errorf("Number(inf) = %v, want 0", f)
	}
	if o.Has("gone") || o.Str("gone") != "" || o.Has("absent") {
		t.Error("a null or absent member reads as present")
	}
	if v, ok := o.Member("gone"); !ok || !v.IsNull() {
		t.Error("Member does not show a null member")
	}
	if o.Str("dup") != "last" {
		t.Errorf("Str(dup) = %q, want the last of the repeated member", o.Str("dup"))
	}
	if p, ok := o.Obj("p"); ok {
		p.Only("max_results", "cursor")
		if p.Path != "p" || p.Str("cursor") != "c" {
			t.Errorf("Obj(p) = %q at %q", p.Str("cursor"), p.Path)
		}
	}
	list, _ := o.List("list")
	for i, e := range list {
		r.StringAt(e, "list", i)
	}
	want := Invalid{
		Fault(adcp.InvalidRequest, "s", "s must be a string"),
		Fault(adcp.InvalidRequest, "n", "n must be a number"),
		Fault(adcp.InvalidRequest, "i", "i must be an integer"),
		Fault(adcp.InvalidRequest, "big", "big must be an integer"),
		Fault(adcp.InvalidRequest, "b", "b must be true or false"),
		Fault(adcp.InvalidRequest, "o", "o must be an object"),
		Fault(adcp.InvalidRequest, "l", "l must be an array"),
		Fault(adcp.InvalidRequest, "inf", "inf must be a number"),
		Fault(adcp.InvalidRequest, "p.a", "a is not allowed here (allowed: max_results, cursor)"),
		Fault(adcp.InvalidRequest, "p.x", "x is not allowed here (allowed: max_results, cursor)"),
		Fault(adcp.InvalidRequest, "list[0]", "list[0] must be a string"),
		Fault(adcp.InvalidRequest, "list[2]", "list[2] must be a string"),
	}
	if diff := cmp.Diff(want, r.Faults()); diff != "" {
		t.Errorf("faults (-want +got):\n%s", diff)
	}
	if got := o.Keys(); !slices.Equal(got, []string{"b", "big", "dup", "gone", "i", "inf", "l", "list", "n", "o", "p", "s"}) {
		t.Errorf("Keys() = %q", got)
	}
}

func TestReaderMax(t *testing.T) {
	doc, _ := Parse([]byte(`[1,2,3,4]`))
	r := NewReader(Requests, 3)
	elems, _ := r.Array(doc, "x")
	for _, e := range elems {
		r.String(e, "x[]")
	}
	r.Add(Fault(adcp.ValidationError, "y", "late"))
	if n := len(r.Faults()); n != 3 {
		t.Errorf("a Reader of at most 3 faults kept %d", n)
	}
}

// sample holds a field of every kind Unmarshal reads.
type sample struct {
	embedded
	S        string             `json:"s"`
	P        *string            `json:"p"`
	I        int32              `json:"i"`
	U        uint8              `json:"u"`
	F        float64            `json:"f"`
	G        float32            `json:"g"`
	B        *bool              `json:"b"`
	L        []int              `json:"l"`
	M        map[string]float64 `json:"m"`
	R        json.RawMessage    `json:"r"`
	N        []inner            `json:"n"`
	A        any                `json:"a"`
	Arr      [2]string          `json:"arr"`
	Bin      []byte             `json:"bin"`
	Q        *inner             `json:"q"`
	K        map[int8]string    `json:"k"`
	Untagged string
	hidden   string
}

type embedded struct {
	E string `json:"e"`
}

type inner struct {
	X string   `json:"x"`
	Y *float64 `json:"y"`
}

// TestUnmarshal: Reader.Unmarshal fills what encoding/json fills, and
// where it is stricter says so at every place, with indexes.
func TestUnmarshal(t *testing.T) {
	read := func(doc string, members Members) (sample, bool, Invalid) {
		t.Helper()
		v, err := Parse([]byte(doc))
		if err != nil {
			t.Fatalf("Parse(%s): %v", doc, err)
		}
		r := NewReader(Requests, 0)
		got := sample{S: "untouched"}
		ok := r.Unmarshal(v, &got, members)
		return got, ok, r.Faults()
	}
	const full = `{"e":"emb","s":"x","p":"y","i":-3,"u":200,"f":1.5,"g":2.5,"b":true,"l":[1,2],"m":{"k":0.5},"r":{ "raw" : 1 },` +
		`"n":[{"x":"a"},{"y":2}],"a":[1,"z"],"arr":["p","q","r"],"bin":"aGk=","q":{"x":"in"},"Untagged":"u","extra":{"any":"thing"}}`
	got, ok, faults := read(full, Open)
	if !ok {
		t.Fatalf("full document: faults %v", faults)
	}
	var want sample
	if err := json.Unmarshal([]byte(full), &want); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(sample{}, embedded{})); diff != "" {
		t.Errorf("Unmarshal differs from encoding/json (-json +Unmarshal):\n%s", diff)
	}

	if _, ok, faults := read(full, Closed); ok || len(faults) != 1 || faults[0].Path != "extra" {
		t.Errorf("closed: ok %v, faults %v; want extra refused alone", ok, faults)
	}

	// Every fault, each at its place; nothing written.
	got, ok, faults = read(`{"s":1,"i":1.5,"u":-1,"g":1e300,"l":[1,"two",3,{}],"n":[{"x":"a"},{"x":7,"y":"no"}],"m":{"a":"b"},"q":[],"bin":"%%"}`, Open)
	var places []string
	for _, f := range faults {
		places = append(places, f.Path+": "+f.Detail)
	}
	wantPlaces := []string{
		"bin: bin is not a valid value",
		"g: g must be a number",
		"i: i must be an integer",
		"l[1]: l[1] must be an integer",
		"l[3]: l[3] must be an integer",
		"m.a: m.a must be a number",
		"n[1].x: n[1].x must be a string",
		"n[1].y: n[1].y must be a number",
		"q: q must be an object",
		"s: s must be a string",
		"u: u must be a whole number not below zero, at most 255",
	}
	if diff := cmp.Diff(wantPlaces, places); ok || diff != "" {
		t.Errorf("ok %v; faults (-want +got):\n%s", ok, diff)
	}
	if got.S != "untouched" {
		t.Errorf("a refused document wrote %+v", got)
	}

	// Exact names only: encoding/json would fill S from "S" and fail on
	// "I"'s string.
	got, ok, faults = read(`{"S":"folded","I":"not a number","e":"kept"}`, Open)
	if !ok || got.S != "" || got.E != "kept" {
		t.Errorf("case-folded names: ok %v, got %+v, faults %v; want them ignored", ok, got, faults)
	}

	// What encoding/json refuses, refused at its place, and no panic.
	got, ok, faults = read(`{"a":{"deep":[1,1e400]},"k":{"x":"not a key","7":"kept"}}`, Open)
	places = places[:0]
	for _, f := range faults {
		places = append(places, f.Path+": "+f.Detail)
	}
	if diff := cmp.Diff([]string{"a: a must be a value whose numbers are finite", "k.x: k.x is not a valid value"}, places); ok || diff != "" {
		t.Errorf("ok %v; faults (-want +got):\n%s", ok, diff)
	}
	type stringer interface{ String() string }
	type hiddenPtr struct{ *embedded }
	for _, c := range []struct {
		name string
		dst  any
		doc  string
	}{
		{"a non-empty interface", &struct {
			V stringer `json:"v"`
		}{}, `{"v":"x"}`},
		{"an unexported embedded pointer", &hiddenPtr{}, `{"e":"x"}`},
		{"a root of another type", new(string), `{"a":1}`},
	} {
		v, _ := Parse([]byte(c.doc))
		r := NewReader(Requests, 0)
		if r.Unmarshal(v, c.dst, Open) || len(r.Faults()) != 1 || strings.HasPrefix(r.Faults()[0].Detail, " ") {
			t.Errorf("%s: faults %v, want one, worded", c.name, r.Faults())
		}
	}

	// A reader's cap on faults does not hide that there were more.
	v, _ := Parse([]byte(`{"s":1,"i":"x"}`))
	r := NewReader(Requests, 1)
	r.Add(Fault(adcp.InvalidRequest, "other", "other is wrong"))
	if r.Unmarshal(v, &sample{}, Open) {
		t.Error("Unmarshal reported success past the reader's cap on faults")
	}
}

// FuzzUnmarshal holds Reader.Unmarshal to encoding/json on every document
// without repeated or case-folded member names: one reads it exactly when
// the other does, into the same value.
func FuzzUnmarshal(f *testing.F) {
	for _, s := range []string{`{}`, `{"s":"x","i":1}`, `{"l":[1,2],"n":[{"x":"a","y":1.5}]}`, `{"u":256}`, `{"i":2147483648}`, `{"g":1e39}`,
		`{"arr":["a","b","c"]}`, `{"bin":"aGk="}`, `{"k":{"-3":"x","300":"y"}}`, `{"a":[1,1e400]}`, `{"r":null}`, `{"a":{"b":[null]}}`, `{"m":{"x":1,"y":null}}`, `{"p":null,"q":null}`, `[]`, `null`, `{"r":[1, 2]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := Parse(data)
		if err != nil || foldedOrRepeated(v) {
			return
		}
		var want, got sample
		jsonErr := json.Unmarshal(data, &want)
		ok := NewReader(Requests, 0).Unmarshal(v, &got, Open)
		if ok != (jsonErr == nil) {
			t.Fatalf("%s: Unmarshal ok = %v, encoding/json: %v", data, ok, jsonErr)
		}
		if ok {
			if diff := cmp.Diff(want, got, cmp.AllowUnexported(sample{}, embedded{})); diff != "" {
				t.Fatalf("%s: (-json +Unmarshal):\n%s", data, diff)
			}
		}
	})
}

// foldedOrRepeated reports whether an object in v names a member twice, or
// spells a name of sample's or inner's other than exactly.
func foldedOrRepeated(v Value) bool {
	names := []string{"e", "s", "p", "i", "u", "f", "g", "b", "l", "m", "r", "n", "a", "arr", "bin", "q", "k", "Untagged", "hidden", "x", "y"}
	switch v.kind {
	case kindArray:
		return slices.ContainsFunc(v.kids, foldedOrRepeated)
	case kindObject:
		seen := map[string]bool{}
		for _, m := range v.kids {
			k := string(m.name)
			if seen[k] || foldedOrRepeated(m) {
				return true
			}
			seen[k] = true
			for _, n := range names {
				if k != n && strings.EqualFold(k, n) {
					return true
				}
			}
		}
	}
	return false
}

// TestOthersIsKeysNotKnown: Others names what the sorted Keys name that
// known does not hold and whose value is not null, for objects with
// members given twice, null members and members in any order.
func TestOthersIsKeysNotKnown(t *testing.T) {
	known := map[string]bool{"a": true, "c": true}
	rapid.Check(t, func(t *rapid.T) {
		var doc []string
		for range rapid.IntRange(0, 8).Draw(t, "members") {
			k := rapid.SampledFrom([]string{"a", "b", "c", "d", "e", "\u00e9"}).Draw(t, "name")
			v := rapid.SampledFrom([]string{"null", "1", `"x"`, "{}"}).Draw(t, "value")
			doc = append(doc, `"`+k+`":`+v)
		}
		v, err := Parse([]byte("{" + strings.Join(doc, ",") + "}"))
		if err != nil {
			t.Fatal(err)
		}
		o, _ := NewReader(Requests, 100).Object(v, "")
		var want []string
		for _, k := range o.Keys() {
			if !known[k] && o.Has(k) {
				want = append(want, k)
			}
		}
		if got := o.Others(known); !slices.Equal(got, want) {
			t.Fatalf("%s: Others = %q, Keys not known = %q", doc, got, want)
		}
	})
}

// TestParsesShareNothing: a tree stays as it was read while other
// documents are parsed after it, deeper and wider ones included, since
// parses reuse their working stacks (openStacks).
func TestParsesShareNothing(t *testing.T) {
	docs := []string{`{"a":[1,{"b":[2,3]}],"c":{"d":"e"}}`, `[[[[[[1,2,3,4,5,6,7,8]]]]]]`, `{"x":` + strings.Repeat(`[{"y":1,"z":[0,0,0]},`, 300) + `0` + strings.Repeat(`]`, 300) + `}`, `{}`, `[]`}
	trees := make([]Value, len(docs))
	for i, d := range docs {
		v, err := Parse([]byte(d))
		if err != nil {
			t.Fatal(err)
		}
		trees[i] = v
	}
	for i, d := range docs {
		var want any
		dec := json.NewDecoder(strings.NewReader(d))
		dec.UseNumber()
		if err := dec.Decode(&want); err != nil {
			t.Fatal(err)
		}
		if got := generic(trees[i]); !reflect.DeepEqual(got, want) {
			t.Fatalf("%.80s reads as %#v after later parses", d, got)
		}
	}
}

// TestLentParses: a lent parse reads as Parse does however many parses
// the slab has served before it, small and large documents (ones that
// outgrow the lent slab) in turn, and a returned slab keeps nothing of
// the document it held.
func TestLentParses(t *testing.T) {
	docs := []string{`{"a":[1,{"b":[2,3]}],"c":{"d":"e"}}`, `{"x":` + strings.Repeat(`[{"y":1,"z":[0,0,0]},`, 300) + `0` + strings.Repeat(`]`, 300) + `}`,
		`[` + strings.Repeat(`{"k":"v"},`, 255) + `{"k":"w"}]`, `{}`, `[[["q"]]]`, `{"not":"valid"`}
	for round := range 3 {
		for _, d := range docs {
			want, werr := Parse([]byte(d))
			got, loan, err := ParseLent([]byte(d))
			if (err == nil) != (werr == nil) {
				t.Fatalf("round %d, %.60s: ParseLent err %v, Parse err %v", round, d, err, werr)
			}
			if err == nil && !reflect.DeepEqual(generic(got), generic(want)) {
				t.Fatalf("round %d, %.60s: lent parse reads as %#v", round, d, generic(got))
			}
			if loan.used > cap(loan.slab) {
				t.Fatalf("%.60s: used %d of a slab of %d", d, loan.used, cap(loan.slab))
			}
			slab := loan.slab[:cap(loan.slab)]
			loan.Return()
			for i, v := range slab {
				if v.raw != nil || v.kids != nil || v.name != nil {
					t.Fatalf("%.60s: the returned slab still holds value %d, %q", d, i, v.raw)
				}
			}
		}
	}
}

// BenchmarkParseRequest parses a get_products call as the MCP transport
// does on every request.
func BenchmarkParseRequest(b *testing.B) {
	body := []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"get_products","arguments":{"adcp_version":"3.2-beta.5","buying_mode":"brief","brief":"premium video for coffee lovers in the US","filters":{"channels":["olv","ctv"],"budget_range":{"min":1000,"max":50000,"currency":"USD"},"countries":["US"]},"pagination":{"max_results":10},"context":{"trace":"t-1"}}}}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(body); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseRequestLent is BenchmarkParseRequest with the slab lent,
// as the MCP transport parses.
func BenchmarkParseRequestLent(b *testing.B) {
	body := []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"get_products","arguments":{"adcp_version":"3.2-beta.5","buying_mode":"brief","brief":"premium video for coffee lovers in the US","filters":{"channels":["olv","ctv"],"budget_range":{"min":1000,"max":50000,"currency":"USD"},"countries":["US"]},"pagination":{"max_results":10},"context":{"trace":"t-1"}}}}`)
	b.ReportAllocs()
	for b.Loop() {
		_, loan, err := ParseLent(body)
		if err != nil {
			b.Fatal(err)
		}
		loan.Return()
	}
}
