package requestschema

import (
	"encoding/json"
	"fmt"
	"math/big"
	"strconv"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/storefront/storefront/jsonfield"
)

// The quick check. The validator builds an error tree for every branch it
// tries (each oneOf and anyOf alternative, each if) and tracks what it has
// evaluated, which is most of what a valid request costs. A valid request
// needs none of that: quick walks the same compiled schemas and answers
// only whether the value is valid, and it answers "unsure" whenever it
// meets something it does not judge the way the validator does (a keyword
// it does not implement, a draft other than 7, a cycle); Check then asks
// the validator, which remains the reference for everything it reports.
// A request quick calls valid is one the validator calls valid:
// TestQuickAgreesWithTheValidator holds the two to that over the corpora
// and generated requests.

// verdict is what the quick check makes of a value.
type verdict int8

const (
	unsure verdict = iota
	valid
	invalid
)

// jsonKind is a JSON type as a bit, for a schema's type list.
type jsonKind uint8

const (
	kindNull jsonKind = 1 << iota
	kindBoolean
	kindNumber
	kindInteger
	kindString
	kindArray
	kindObject
)

var kindNames = map[string]jsonKind{
	"null": kindNull, "boolean": kindBoolean, "number": kindNumber, "integer": kindInteger,
	"string": kindString, "array": kindArray, "object": kindObject,
}

// quick is one compiled schema as the quick check reads it.
type quick struct {
	s *jsonschema.Schema
	// unjudged: the schema has a keyword the quick check does not judge,
	// so any value it applies to is unsure.
	unjudged bool
	types    jsonKind
	ref      *quick
	props    map[string]*quick
	// patternProps pairs each pattern with its schema.
	patternProps []quickPattern
	// additional is the additionalProperties schema; noAdditional is
	// additionalProperties false.
	additional   *quick
	noAdditional bool
	// depSchemas are the schema dependencies; depNames the name ones.
	depSchemas    map[string]*quick
	propertyNames *quick
	items         *quick
	itemList      []*quick
	addItems      *quick
	noAddItems    bool
	contains      *quick
	not           *quick
	allOf         []*quick
	anyOf         []*quick
	oneOf         []*quick
	ifS           *quick
	thenS         *quick
	elseS         *quick
	// ints are the number keywords as int64s, when every one the schema
	// has is an integer that fits: an integer value is then judged
	// without big.Rat.
	ints *intBounds
}

// intBounds are a schema's minimum, maximum, exclusive bounds and
// multipleOf as integers; nil for a keyword the schema does not have.
type intBounds struct {
	min, max, exMin, exMax, multipleOf *int64
}

type quickPattern struct {
	re jsonschema.Regexp
	q  *quick
}

// quickOf compiles s and everything it reaches, each schema once.
func quickOf(s *jsonschema.Schema, seen map[*jsonschema.Schema]*quick) *quick {
	if s == nil {
		return nil
	}
	if q, ok := seen[s]; ok {
		return q
	}
	q := &quick{s: s}
	seen[s] = q
	q.unjudged = s.DraftVersion != 7 || s.RecursiveRef != nil || s.DynamicRef != nil ||
		len(s.DependentRequired) > 0 || len(s.DependentSchemas) > 0 || s.UnevaluatedProperties != nil ||
		s.MinContains != nil || s.MaxContains != nil || len(s.PrefixItems) > 0 || s.Items2020 != nil ||
		s.UnevaluatedItems != nil || s.ContentEncoding != nil || s.ContentMediaType != nil || s.ContentSchema != nil ||
		len(s.Extensions) > 0
	if s.Types != nil {
		for _, n := range s.Types.ToStrings() {
			k, ok := kindNames[n]
			if !ok {
				q.unjudged = true
			}
			q.types |= k
		}
	}
	sub := func(s *jsonschema.Schema) *quick { return quickOf(s, seen) }
	list := func(ss []*jsonschema.Schema) []*quick {
		var out []*quick
		for _, s := range ss {
			out = append(out, sub(s))
		}
		return out
	}
	q.ref = sub(s.Ref)
	if len(s.Properties) > 0 {
		q.props = make(map[string]*quick, len(s.Properties))
		for name, p := range s.Properties {
			q.props[name] = sub(p)
		}
	}
	for re, p := range s.PatternProperties {
		q.patternProps = append(q.patternProps, quickPattern{re, sub(p)})
	}
	// additionalProperties and additionalItems are each nil, a boolean
	// (false forbids) or a schema.
	orSchema := func(v any) (forbid bool, sch *quick) {
		switch a := v.(type) {
		case nil:
		case bool:
			forbid = !a
		case *jsonschema.Schema:
			sch = sub(a)
		default:
			q.unjudged = true
		}
		return forbid, sch
	}
	q.noAdditional, q.additional = orSchema(s.AdditionalProperties)
	for name, d := range s.Dependencies {
		switch d := d.(type) {
		case []string:
		case *jsonschema.Schema:
			if q.depSchemas == nil {
				q.depSchemas = map[string]*quick{}
			}
			q.depSchemas[name] = sub(d)
		default:
			q.unjudged = true
		}
	}
	q.propertyNames = sub(s.PropertyNames)
	switch it := s.Items.(type) {
	case nil:
	case *jsonschema.Schema:
		q.items = sub(it)
	case []*jsonschema.Schema:
		q.itemList = list(it)
	default:
		q.unjudged = true
	}
	q.noAddItems, q.addItems = orSchema(s.AdditionalItems)
	q.contains = sub(s.Contains)
	q.not = sub(s.Not)
	q.allOf, q.anyOf, q.oneOf = list(s.AllOf), list(s.AnyOf), list(s.OneOf)
	q.ifS, q.thenS, q.elseS = sub(s.If), sub(s.Then), sub(s.Else)
	q.ints = intBoundsOf(s)
	return q
}

// intBoundsOf is s's number keywords as int64s, or nil when one of them
// is not an integer that fits (or multipleOf is zero).
func intBoundsOf(s *jsonschema.Schema) *intBounds {
	var b intBounds
	for _, k := range []struct {
		r   *big.Rat
		dst **int64
	}{{s.Minimum, &b.min}, {s.Maximum, &b.max}, {s.ExclusiveMinimum, &b.exMin}, {s.ExclusiveMaximum, &b.exMax}, {s.MultipleOf, &b.multipleOf}} {
		if k.r == nil {
			continue
		}
		if !k.r.IsInt() || !k.r.Num().IsInt64() {
			return nil
		}
		n := k.r.Num().Int64()
		*k.dst = &n
	}
	if b.multipleOf != nil && *b.multipleOf == 0 {
		return nil
	}
	return &b
}

// smallInt is v as an int64 when it is written as an integer that fits,
// the common case, which needs no big.Rat.
func smallInt(v json.Number) (int64, bool) {
	if len(v) > 18 {
		return 0, false
	}
	n, err := strconv.ParseInt(string(v), 10, 64)
	return n, err == nil
}

// maxSameValue bounds how many schemas in a row quick applies to one value
// (through $ref, allOf and the like): past it the chain may be a cycle,
// which the validator reports, and quick is unsure.
const maxSameValue = 64

// judge is the verdict of q on v, a value of a document jsonfield.Parse
// read (which accepts what encoding/json accepts and decodes strings as
// it does); depth counts the schemas applied to v so far.
func (q *quick) judge(v jsonfield.Value, depth int) verdict {
	s := q.s
	if s.Bool != nil {
		if *s.Bool {
			return valid
		}
		return invalid
	}
	if q.unjudged || depth > maxSameValue {
		return unsure
	}
	k := kinds[v.Kind()]
	// The validator's order: type, const, enum, format, then $ref, which
	// in draft 7 overrides every other keyword.
	if q.types != 0 && q.types&k == 0 {
		if q.types&kindInteger == 0 || k != kindNumber {
			return invalid
		}
		switch integral(v) {
		case unsure:
			return unsure
		case invalid:
			return invalid
		}
	}
	if s.Const != nil {
		if r := equalTo(v, *s.Const); r != valid {
			return r
		}
	}
	if s.Enum != nil {
		r := invalid
		for _, want := range s.Enum.Values {
			switch equalTo(v, want) {
			case valid:
				r = valid
			case unsure:
				return unsure
			}
			if r == valid {
				break
			}
		}
		if r != valid {
			return r
		}
	}
	if s.Format != nil {
		var x any
		if v.Kind() == jsonfield.Str {
			x = v.Text()
		} else {
			x = v.Any()
		}
		if s.Format.Validate(x) != nil {
			return invalid
		}
	}
	if q.ref != nil {
		return q.ref.judge(v, depth+1)
	}
	r := tally(valid)
	and := r.add
	switch v.Kind() {
	case jsonfield.Obj:
		if !and(q.object(v, depth)) {
			return invalid
		}
	case jsonfield.Arr:
		if !and(q.array(v.Kids())) {
			return invalid
		}
	case jsonfield.Str:
		if !and(q.str(v)) {
			return invalid
		}
	case jsonfield.Num:
		if !and(q.number(v.Number())) {
			return invalid
		}
	}
	if q.not != nil && !and(not(q.not.judge(v, depth+1))) {
		return invalid
	}
	for _, a := range q.allOf {
		if !and(a.judge(v, depth+1)) {
			return invalid
		}
	}
	if len(q.anyOf) > 0 {
		any := invalid
		for _, a := range q.anyOf {
			switch a.judge(v, depth+1) {
			case valid:
				any = valid
			case unsure:
				any = unsure
			}
			if any == valid {
				break
			}
		}
		if !and(any) {
			return invalid
		}
	}
	if len(q.oneOf) > 0 {
		good, doubt := 0, 0
		for _, a := range q.oneOf {
			switch a.judge(v, depth+1) {
			case valid:
				good++
			case unsure:
				doubt++
			}
		}
		one := unsure
		switch {
		case good > 1:
			one = invalid
		case doubt > 0:
		case good == 1:
			one = valid
		default:
			one = invalid
		}
		if !and(one) {
			return invalid
		}
	}
	if q.ifS != nil {
		switch q.ifS.judge(v, depth+1) {
		case unsure:
			and(unsure)
		case valid:
			if q.thenS != nil && !and(q.thenS.judge(v, depth+1)) {
				return invalid
			}
		case invalid:
			if q.elseS != nil && !and(q.elseS.judge(v, depth+1)) {
				return invalid
			}
		}
	}
	return verdict(r)
}

// tally folds the verdicts of keywords into the value's: add reports
// false once one is invalid, which ends the walk, and an unsure one is
// remembered.
type tally verdict

func (t *tally) add(v verdict) bool {
	switch v {
	case invalid:
		*t = tally(invalid)
		return false
	case unsure:
		*t = tally(unsure)
	}
	return true
}

func not(v verdict) verdict {
	switch v {
	case valid:
		return invalid
	case invalid:
		return valid
	}
	return unsure
}

// object judges the object keywords; depth is judge's, for the schema
// dependencies, which apply to obj itself.
func (q *quick) object(o jsonfield.Value, depth int) verdict {
	s := q.s
	members := o.Kids()
	if repeatsName(members) {
		// The validator sees a repeated member's last value only; quick
		// would judge them all.
		return unsure
	}
	if s.MinProperties != nil && len(members) < *s.MinProperties {
		return invalid
	}
	if s.MaxProperties != nil && len(members) > *s.MaxProperties {
		return invalid
	}
	for _, name := range s.Required {
		if !has(members, name) {
			return invalid
		}
	}
	r := tally(valid)
	for name, dep := range s.Dependencies {
		if !has(members, name) {
			continue
		}
		if names, ok := dep.([]string); ok {
			for _, n := range names {
				if !has(members, n) {
					return invalid
				}
			}
			continue
		}
		if !r.add(q.depSchemas[name].judge(o, depth+1)) {
			return invalid
		}
	}
	for _, v := range members {
		name := v.Name()
		evaluated := false
		if p, ok := q.props[string(name)]; ok {
			evaluated = true
			if !r.add(p.judge(v, 0)) {
				return invalid
			}
		}
		for _, pp := range q.patternProps {
			if !pp.re.MatchString(string(name)) {
				continue
			}
			evaluated = true
			if !r.add(pp.q.judge(v, 0)) {
				return invalid
			}
		}
		if evaluated {
			continue
		}
		if q.noAdditional {
			return invalid
		}
		if q.additional != nil && !r.add(q.additional.judge(v, 0)) {
			return invalid
		}
	}
	if q.propertyNames != nil {
		for _, v := range members {
			name, err := jsonfield.Parse(appendQuoted(nil, v.Name()))
			if err != nil {
				return unsure
			}
			if !r.add(q.propertyNames.judge(name, 0)) {
				return invalid
			}
		}
	}
	return verdict(r)
}

// repeatsName reports whether two of an object's members have one name.
func repeatsName(members []jsonfield.Value) bool {
	for i := 1; i < len(members); i++ {
		for j := range i {
			if string(members[i].Name()) == string(members[j].Name()) {
				return true
			}
		}
	}
	return false
}

// has reports whether an object has a member named name.
func has(members []jsonfield.Value, name string) bool {
	for _, m := range members {
		if string(m.Name()) == name {
			return true
		}
	}
	return false
}

// appendQuoted appends name as a JSON string.
func appendQuoted(dst, name []byte) []byte {
	b, _ := json.Marshal(string(name))
	return append(dst, b...)
}

// maxUnique is the longest array whose items quick compares pairwise for
// uniqueItems; a longer one is unsure.
const maxUnique = 64

func (q *quick) array(arr []jsonfield.Value) verdict {
	s := q.s
	if s.MinItems != nil && len(arr) < *s.MinItems {
		return invalid
	}
	if s.MaxItems != nil && len(arr) > *s.MaxItems {
		return invalid
	}
	r := tally(valid)
	fold := r.add
	if s.UniqueItems && len(arr) > 1 {
		if len(arr) > maxUnique {
			fold(unsure)
		} else {
			for i := 1; i < len(arr); i++ {
				for j := range i {
					if !fold(not(equal(arr[i].Any(), arr[j].Any()))) {
						return invalid
					}
				}
			}
		}
	}
	evaluated := 0
	switch {
	case q.items != nil:
		for _, it := range arr {
			if !fold(q.items.judge(it, 0)) {
				return invalid
			}
		}
		evaluated = len(arr)
	case q.itemList != nil:
		evaluated = min(len(arr), len(q.itemList))
		for i, it := range arr[:evaluated] {
			if !fold(q.itemList[i].judge(it, 0)) {
				return invalid
			}
		}
	}
	if q.noAddItems && evaluated != len(arr) {
		return invalid
	}
	if q.addItems != nil {
		for _, it := range arr[evaluated:] {
			if !fold(q.addItems.judge(it, 0)) {
				return invalid
			}
		}
	}
	if q.contains != nil {
		found := invalid
		for _, it := range arr {
			switch q.contains.judge(it, 0) {
			case valid:
				found = valid
			case unsure:
				found = unsure
			}
			if found == valid {
				break
			}
		}
		if !fold(found) {
			return invalid
		}
	}
	return verdict(r)
}

func (q *quick) str(sv jsonfield.Value) verdict {
	s := q.s
	if s.MinLength == nil && s.MaxLength == nil && s.Pattern == nil {
		return valid
	}
	v := sv.Text()
	if s.MinLength != nil || s.MaxLength != nil {
		n := utf8.RuneCountInString(v)
		if s.MinLength != nil && n < *s.MinLength {
			return invalid
		}
		if s.MaxLength != nil && n > *s.MaxLength {
			return invalid
		}
	}
	if s.Pattern != nil && !s.Pattern.MatchString(v) {
		return invalid
	}
	return valid
}

func (q *quick) number(v json.Number) verdict {
	s := q.s
	if s.Minimum == nil && s.Maximum == nil && s.ExclusiveMinimum == nil && s.ExclusiveMaximum == nil && s.MultipleOf == nil {
		return valid
	}
	if b := q.ints; b != nil {
		if i, ok := smallInt(v); ok {
			if (b.min != nil && i < *b.min) || (b.max != nil && i > *b.max) ||
				(b.exMin != nil && i <= *b.exMin) || (b.exMax != nil && i >= *b.exMax) ||
				(b.multipleOf != nil && i%*b.multipleOf != 0) {
				return invalid
			}
			return valid
		}
	}
	n, ok := new(big.Rat).SetString(v.String())
	if !ok {
		return unsure
	}
	if (s.Minimum != nil && n.Cmp(s.Minimum) < 0) || (s.Maximum != nil && n.Cmp(s.Maximum) > 0) ||
		(s.ExclusiveMinimum != nil && n.Cmp(s.ExclusiveMinimum) <= 0) || (s.ExclusiveMaximum != nil && n.Cmp(s.ExclusiveMaximum) >= 0) {
		return invalid
	}
	if s.MultipleOf != nil {
		if s.MultipleOf.Sign() == 0 {
			return unsure
		}
		if !new(big.Rat).Quo(n, s.MultipleOf).IsInt() {
			return invalid
		}
	}
	return valid
}

// kinds are the JSON types of jsonfield's kinds.
var kinds = [...]jsonKind{jsonfield.Null: kindNull, jsonfield.Bool: kindBoolean, jsonfield.Num: kindNumber,
	jsonfield.Str: kindString, jsonfield.Arr: kindArray, jsonfield.Obj: kindObject}

// integral is whether a number is an integer, as the validator decides it.
func integral(v jsonfield.Value) verdict {
	n := v.Number()
	if _, ok := smallInt(n); ok {
		return valid
	}
	r, ok := new(big.Rat).SetString(n.String())
	if !ok {
		return unsure
	}
	if r.IsInt() {
		return valid
	}
	return invalid
}

// equalTo is whether v is the schema's value want, as the validator
// compares them: strings, booleans and null directly, anything else as
// equal compares its decoded value.
func equalTo(v jsonfield.Value, want any) verdict {
	switch v.Kind() {
	case jsonfield.Str:
		w, ok := want.(string)
		if !ok {
			return equal(v.Text(), want)
		}
		if v.Text() == w {
			return valid
		}
		return invalid
	case jsonfield.Bool:
		return equal(v.Truth(), want)
	case jsonfield.Null:
		return equal(nil, want)
	}
	return equal(v.Any(), want)
}

// equal is whether a and b are the same JSON value, as the validator
// compares them: numbers by value. Values of a type the decoder does not
// make are unsure.
func equal(a, b any) verdict {
	is := func(ok bool) verdict {
		if ok {
			return valid
		}
		return invalid
	}
	switch a := a.(type) {
	case map[string]any:
		b, ok := b.(map[string]any)
		if !ok || len(a) != len(b) {
			return invalid
		}
		for k, x := range a {
			y, ok := b[k]
			if !ok {
				return invalid
			}
			if r := equal(x, y); r != valid {
				return r
			}
		}
		return valid
	case []any:
		b, ok := b.([]any)
		if !ok || len(a) != len(b) {
			return invalid
		}
		for i := range a {
			if r := equal(a[i], b[i]); r != valid {
				return r
			}
		}
		return valid
	case nil:
		return is(b == nil)
	case bool:
		y, ok := b.(bool)
		return is(ok && a == y)
	case string:
		y, ok := b.(string)
		return is(ok && a == y)
	case json.Number:
		switch b.(type) {
		case json.Number, float64, int, int64:
		case nil, bool, string, []any, map[string]any:
			return invalid
		default:
			return unsure
		}
		x, ok1 := new(big.Rat).SetString(a.String())
		y, ok2 := new(big.Rat).SetString(fmt.Sprint(b))
		if !ok1 || !ok2 {
			return unsure
		}
		return is(x.Cmp(y) == 0)
	}
	return unsure
}
