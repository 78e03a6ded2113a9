package requestschema

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/storefront/storefront/internal/schemagen"
	"github.com/storefront/storefront/jsonfield"
)

// quickFields sorts every field of the validator's compiled schema: those
// the quick check judges, those that make it unsure, and those that do not
// bear on validity. A field that is in none (a newer validator's keyword)
// fails TestQuickKnowsEveryKeyword until quick is taught it or told to be
// unsure of it.
var quickFields = map[string][]string{
	"judged": {"Bool", "Types", "Const", "Enum", "Format", "Ref", "Not", "AllOf", "AnyOf", "OneOf", "If", "Then", "Else",
		"MaxProperties", "MinProperties", "Required", "PropertyNames", "Properties", "PatternProperties", "AdditionalProperties",
		"Dependencies", "MinItems", "MaxItems", "UniqueItems", "Contains", "Items", "AdditionalItems",
		"MinLength", "MaxLength", "Pattern", "Maximum", "Minimum", "ExclusiveMaximum", "ExclusiveMinimum", "MultipleOf",
		// Only draft 7 is judged.
		"DraftVersion"},
	"unsure": {"RecursiveRef", "DynamicRef", "DependentRequired", "DependentSchemas", "UnevaluatedProperties",
		"MinContains", "MaxContains", "PrefixItems", "Items2020", "UnevaluatedItems",
		"ContentEncoding", "ContentMediaType", "ContentSchema", "Extensions"},
	// Identity, anchors that only recursive and dynamic references read
	// (both unsure), and annotations.
	"inert": {"Location", "ID", "Anchor", "RecursiveAnchor", "DynamicAnchor",
		"Title", "Description", "Default", "Comment", "ReadOnly", "WriteOnly", "Examples", "Deprecated"},
}

func TestQuickKnowsEveryKeyword(t *testing.T) {
	typ := reflect.TypeOf(jsonschema.Schema{})
	for i := range typ.NumField() {
		f := typ.Field(i)
		if !f.IsExported() {
			continue
		}
		known := false
		for _, names := range quickFields {
			known = known || slices.Contains(names, f.Name)
		}
		if !known {
			t.Errorf("jsonschema.Schema.%s: a field the quick check neither judges nor is unsure of", f.Name)
		}
	}
}

// requestCorpus is every request the package's and the agent's tests and
// fuzz corpora hold, as raw arguments, with the task each is for ("" for
// every task): the cases above, the agent's fuzz seeds and the inputs its
// fuzzers found (each also read as a generator's choices).
func requestCorpus(t *testing.T) (raw map[string][]string, choices [][]byte) {
	raw = map[string][]string{"": {
		``, `{}`, `[]`, `"x"`, `null`, `{"adcp_version":3}`, `{"context":{"trace":"t-1"},"adcp_version":"3.1"}`,
		`{"account":{"account_id":""}}`, `{"account":{"account_id":5}}`, `{"account":{"brand":null,"operator":"x"}}`,
		`{"buying_mode":"brief","brief":"caf` + "\xff" + `"}`, `{"brand":{"domain":"a.example","industries":[null]}}`,
		`{"filters":{"budget_range":{"max":1e400,"currency":"USD"}}}`, `{"adcp_version":"3.2-rc.8"}`,
		`{"pagination":{"max_results":-1,"cursor":{}}}`, `{`, `{"a":` + strings.Repeat("[", 500) + strings.Repeat("]", 500) + `}`,
	}}
	for _, c := range checkCases {
		raw[c.task] = append(raw[c.task], c.args)
	}
	raw["get_products"] = append(raw["get_products"], benchArgs,
		`{"adcp_version":"3.2-beta.5","buying_mode":"brief","brief":"Video pre-roll for a coffee launch","filters":{"channels":["olv"],"budget_range":{"max":50000,"currency":"USD"},"countries":["US"]},"pagination":{"max_results":10}}`,
		`{"adcp_version":"3.2-beta.5","buying_mode":"brief","brief":"Display for a bakery in Lyon","filters":{"channels":["display"],"countries":["FR"],"budget_range":{"max":20000,"currency":"USD"}},"pagination":{"max_results":10}}`,
		`{"buying_mode":"wholesale","filters":{"format_ids":[{"agent_url":"https://buyer.example/hook","id":"x","height":10000,"pixel_ratio":100}]}}`)
	for _, dir := range []string{"FuzzDispatch", "FuzzFastPath"} {
		files, err := filepath.Glob(filepath.Join("..", "..", "agent", "testdata", "fuzz", dir, "*"))
		if err != nil || len(files) == 0 {
			t.Fatalf("the agent's %s corpus (agent/testdata/fuzz/%s) is missing: %v", dir, dir, err)
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			sc := bufio.NewScanner(bytes.NewReader(b))
			sc.Buffer(nil, 1<<20)
			for sc.Scan() {
				line := sc.Text()
				if !strings.HasPrefix(line, "[]byte(") {
					continue
				}
				s, err := strconv.Unquote(strings.TrimSuffix(strings.TrimPrefix(line, "[]byte("), ")"))
				if err != nil {
					t.Fatalf("%s: %v", f, err)
				}
				raw[""] = append(raw[""], s)
				choices = append(choices, []byte(s))
			}
		}
	}
	return raw, choices
}

// requestSchemas are the embedded request schemas by task, as the
// generator names them.
func requestSchemas(t *testing.T) map[string]string {
	b, err := os.ReadFile(filepath.Join(Root, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var man manifest
	if err := json.Unmarshal(b, &man); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, task := range tasks {
		out[task] = man.Tools[task].Request
	}
	return out
}

// TestQuickAgreesWithTheValidator: over the corpora and thousands of
// requests generated from the schemas, whole and broken, for every task,
// a request the quick check calls valid the validator accepts, one it
// calls invalid the validator refuses, and Check reports exactly what the
// validator alone does. The quick check must also be sure of most
// valid requests, or it saves nothing.
func TestQuickAgreesWithTheValidator(t *testing.T) {
	s := official(t)
	gen, err := schemagen.Load(Root)
	if err != nil {
		t.Fatalf("loading the embedded schemas for the generator: %v", err)
	}
	raw, choices := requestCorpus(t)
	schemas := requestSchemas(t)
	cases := map[string][]string{}
	for _, task := range tasks {
		cases[task] = append(slices.Clone(raw[""]), raw[task]...)
		sources := slices.Clone(choices)
		for i := range 400 {
			sources = append(sources, []byte(fmt.Sprintf("%s-%d-%x", task, i, i*7919)))
		}
		for i, c := range sources {
			src := schemagen.NewSource(c)
			doc := gen.Generate(schemas[task], src)
			cases[task] = append(cases[task], string(schemagen.Encode(doc)))
			cases[task] = append(cases[task], string(schemagen.Encode(schemagen.Mutate(doc, src, i%6))))
		}
	}
	type tally struct{ valid, judgedValid, invalid, judgedInvalid int }
	counts := map[string]*tally{}
	for task, list := range cases {
		c := &tally{}
		counts[task] = c
		for _, args := range list {
			if d := cmpIssues(s.Check(task, AsBuild, []byte(args)), s.check(task, AsBuild, []byte(args), nil, false)); d != "" {
				t.Errorf("Check(%s, %s): %s", task, args, d)
			}
			if d := cmpIssues(s.Check(task, Legacy, []byte(args)), s.check(task, Legacy, []byte(args), nil, false)); d != "" {
				t.Errorf("Check(%s, legacy, %s): %s", task, args, d)
			}
			doc, err := jsonschema.UnmarshalJSON(bytes.NewReader([]byte(args)))
			if err != nil {
				continue
			}
			parsed, err := jsonfield.Parse([]byte(args))
			if err != nil {
				t.Fatalf("%s: encoding/json reads it, jsonfield.Parse does not: %v", args, err)
			}
			v := s.quick[task].judge(parsed, 0)
			ok := s.byTask[task].Validate(doc) == nil
			switch {
			case v == valid && !ok:
				t.Errorf("%s: quick calls %s valid, the validator refuses it", task, args)
			case v == invalid && ok:
				t.Errorf("%s: quick calls %s invalid, the validator accepts it", task, args)
			}
			if ok {
				c.valid++
				if v == valid {
					c.judgedValid++
				}
			} else {
				c.invalid++
				if v == invalid {
					c.judgedInvalid++
				}
			}
		}
	}
	for task, c := range counts {
		t.Logf("%s: quick was sure of %d of %d valid requests and %d of %d invalid ones", task, c.judgedValid, c.valid, c.judgedInvalid, c.invalid)
		if c.judgedValid*2 < c.valid {
			t.Errorf("%s: quick was sure of only %d of %d valid requests", task, c.judgedValid, c.valid)
		}
	}
	if c := counts["get_products"]; c.valid < 100 || c.invalid < 100 {
		t.Errorf("get_products: %d valid and %d invalid requests compared, want 100 of each", c.valid, c.invalid)
	}
}

// FuzzQuick holds the quick check to the validator on generated and broken
// requests of every task.
func FuzzQuick(f *testing.F) {
	for i := range tasks {
		f.Add(uint8(i), uint8(0), []byte{})
		f.Add(uint8(i), uint8(3), []byte("\x01\x07\x03\x05\x02\x06\x04\x07"))
	}
	s, err := Official()
	if err != nil {
		f.Fatal(err)
	}
	gen, err := schemagen.Load(Root)
	if err != nil {
		f.Fatal(err)
	}
	var schemas map[string]string
	f.Fuzz(func(t *testing.T, taskByte, mutations uint8, data []byte) {
		if schemas == nil {
			schemas = requestSchemas(&testing.T{})
		}
		task := tasks[int(taskByte)%len(tasks)]
		src := schemagen.NewSource(data)
		doc := schemagen.Mutate(gen.Generate(schemas[task], src), src, int(mutations)%6)
		args := schemagen.Encode(doc)
		if d := cmpIssues(s.Check(task, AsBuild, args), s.check(task, AsBuild, args, nil, false)); d != "" {
			t.Fatalf("Check(%s, %s): %s", task, args, d)
		}
		if parsed, err := jsonschema.UnmarshalJSON(bytes.NewReader(args)); err == nil {
			read, err := jsonfield.Parse(args)
			if err != nil {
				t.Fatalf("%s: encoding/json reads it, jsonfield.Parse does not: %v", args, err)
			}
			v := s.quick[task].judge(read, 0)
			if ok := s.byTask[task].Validate(parsed) == nil; (v == valid && !ok) || (v == invalid && ok) {
				t.Fatalf("%s: quick's verdict on %s is %d, the validator's valid = %v", task, args, v, ok)
			}
		}
	})
}

func cmpIssues(got, want []Issue) string {
	if slices.Equal(got, want) {
		return ""
	}
	return fmt.Sprintf("with the quick check %+v, without %+v", got, want)
}

// TestQuickKeywords holds the quick check to the validator keyword by
// keyword, on small schemas and values chosen to reach what the request
// schemas rarely do: two oneOf branches at once, siblings of a $ref
// (draft 7 ignores them), integers written as decimals, numbers compared
// by value, cycles. Only a cycle may leave it unsure.
func TestQuickKeywords(t *testing.T) {
	var unsures []string
	for _, test := range []struct {
		schema string
		values []string
	}{
		{`{"oneOf":[{"type":"integer"},{"minimum":0}]}`, []string{`1`, `-1`, `0.5`, `-0.5`, `"x"`}},
		{`{"anyOf":[{"type":"string"},{"maximum":3}]}`, []string{`"x"`, `2`, `9`, `null`}},
		{`{"not":{"type":"string"}}`, []string{`"x"`, `1`}},
		{`{"if":{"required":["a"]},"then":{"required":["b"]},"else":{"required":["c"]}}`, []string{`{"a":1}`, `{"a":1,"b":2}`, `{"c":1}`, `{}`, `[]`}},
		{`{"definitions":{"s":{"type":"string"}},"$ref":"#/definitions/s","minLength":5,"type":"string"}`, []string{`"ab"`, `5`, `"abcdef"`}},
		{`{"definitions":{"s":{"minLength":3}},"$ref":"#/definitions/s","type":"integer"}`, []string{`"ab"`, `"abcd"`, `7`}},
		{`{"type":"integer","multipleOf":0.5,"exclusiveMinimum":1,"exclusiveMaximum":10}`, []string{`1`, `1.5`, `2.0`, `1e1`, `9.75`, `3`}},
		{`{"enum":[1,"a",null,[1,2],{"k":true}]}`, []string{`1.0`, `1e0`, `"a"`, `null`, `[1,2]`, `[2,1]`, `{"k":true}`, `{"k":false}`, `2`}},
		{`{"const":{"a":[1,{"b":2}]}}`, []string{`{"a":[1,{"b":2}]}`, `{"a":[1,{"b":2.0}]}`, `{"a":[1,{"b":3}]}`, `{"a":[1]}`}},
		{`{"type":"array","uniqueItems":true,"contains":{"const":3},"items":{"type":"number"},"maxItems":4}`, []string{`[1,2,3]`, `[1,1.0,3]`, `[1,2]`, `[3,"x"]`, `[1,2,3,4,5]`}},
		{`{"items":[{"type":"string"},{"type":"number"}],"additionalItems":false}`, []string{`["a",1]`, `["a"]`, `["a",1,2]`, `[1]`}},
		{`{"items":[{"type":"string"}],"additionalItems":{"type":"boolean"}}`, []string{`["a",true]`, `["a",1]`}},
		{`{"properties":{"a":{"type":"string"}},"patternProperties":{"^x-":{"type":"number"}},"additionalProperties":false,"propertyNames":{"maxLength":4}}`,
			[]string{`{"a":"s"}`, `{"x-1":1}`, `{"x-1":"s"}`, `{"b":1}`, `{"x-long":1}`, `{"\u0061":"s"}`, `{"\u0061":1}`, `{"a":1,"a":"s"}`, `{"a":"s","a":1}`, `{"x-\u0031":"s"}`}},
		{`{"dependencies":{"a":["b"],"c":{"required":["d"]}},"minProperties":1,"maxProperties":3}`, []string{`{"a":1}`, `{"a":1,"b":2}`, `{"c":1}`, `{"c":1,"d":2}`, `{}`, `{"e":1,"f":2,"g":3,"h":4}`}},
		{`{"type":"string","format":"date","pattern":"^2"}`, []string{`"2027-01-02"`, `"2027-13-02"`, `"1999-01-01"`, `5`}},
		{`{"type":"string","minLength":2,"maxLength":3}`, []string{`"é"`, `"éé"`, `"éééé"`}},
		{`{"$ref":"#"}`, []string{`1`, `{}`}},
		{`{"allOf":[{"$ref":"#/definitions/a"}],"definitions":{"a":{"allOf":[{"$ref":"#"}]}}}`, []string{`1`}},
		{`{"properties":{"n":{"$ref":"#"}},"required":["v"]}`, []string{`{"v":1,"n":{"v":2,"n":{"v":3}}}`, `{"v":1,"n":{"n":{}}}`}},
		{`false`, []string{`1`}},
		{`{"properties":{"a":false,"b":true}}`, []string{`{"a":1}`, `{"b":1}`}},
	} {
		c := jsonschema.NewCompiler()
		c.DefaultDraft(jsonschema.Draft7)
		c.AssertFormat()
		c.UseRegexpEngine(compilePattern)
		doc, err := jsonschema.UnmarshalJSON(strings.NewReader(test.schema))
		if err != nil {
			t.Fatal(err)
		}
		if err := c.AddResource("https://quick.example/s.json", doc); err != nil {
			t.Fatal(err)
		}
		sch, err := c.Compile("https://quick.example/s.json")
		if err != nil {
			t.Fatalf("%s: %v", test.schema, err)
		}
		q := quickOf(sch, map[*jsonschema.Schema]*quick{})
		for _, v := range test.values {
			val, err := jsonschema.UnmarshalJSON(strings.NewReader(v))
			if err != nil {
				t.Fatal(err)
			}
			ok := sch.Validate(val) == nil
			want := invalid
			if ok {
				want = valid
			}
			read, err := jsonfield.Parse([]byte(v))
			if err != nil {
				t.Fatal(err)
			}
			got := q.judge(read, 0)
			if got == unsure {
				unsures = append(unsures, test.schema+" "+v)
			}
			if got != want && got != unsure {
				t.Errorf("schema %s, value %s: quick says %d, the validator's valid = %v", test.schema, v, got, ok)
			}
		}
	}
	if len(unsures) != 5 {
		t.Errorf("quick was unsure of %d values, want the three cycles and the two repeated members: %q", len(unsures), unsures)
	}
}
