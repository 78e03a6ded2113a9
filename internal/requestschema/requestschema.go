// Package requestschema holds the official AdCP request schemas of the
// tasks the storefront serves, embedded in the binary (official/, copied
// verbatim from the AdCP spec; official/SOURCE.md says from where), compiled
// once, and the check that turns a request they reject into issues: the
// JSON Pointer of the value at fault, the schema keyword that refused it,
// and a plain sentence.
//
// It must never put the caller's bytes into an issue: a pointer names only
// members the schemas declare and array positions, and a message says what
// the schema wants, never what it got.
package requestschema

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math/big"
	"path"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dlclark/regexp2"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"

	"github.com/storefront/storefront/jsonfield"
)

// Files holds the embedded schemas: official/schemas/… as in the spec.
//
//go:embed all:official
var Files embed.FS

// Root is the folder of Files the schemas are under.
const Root = "official/schemas"

// base is the URL every schema $id is resolved against: the $ids are
// scheme-less absolute paths (/schemas/…).
const base = "https://adcontextprotocol.org"

var tasks = []string{
	"get_adcp_capabilities", "get_products", "get_task_status", "list_tasks",
	"create_media_buy", "update_media_buy", "get_media_buys", "get_media_buy_delivery",
	"list_accounts", "sync_accounts", "sync_governance",
}

// Tasks returns the AdCP tasks whose request schemas are embedded: every
// task the storefront serves but comply_test_controller, which takes aliases
// and scenarios of its own and checks its requests itself. The schema of
// each is the release manifest's request_schema.
func Tasks() []string { return slices.Clone(tasks) }

// Embedded reports whether task's request schema is embedded (one of
// Tasks), without copying the list: the door asks it on every call.
func Embedded(task string) bool { return slices.Contains(tasks, task) }

// Issue is one way a request breaks its schema.
type Issue struct {
	// Pointer is the RFC 6901 JSON Pointer of the value at fault ("" for
	// the request itself; for a missing member, where it would be).
	Pointer string
	// Keyword is the JSON Schema keyword that refused it: type, required,
	// enum, minimum, …
	Keyword string
	// Message says what the schema wants there, in plain words.
	Message string
}

// Field is the pointer in the JSONPath-lite form of an AdCP error's field
// ("/packages/0/budget" is "packages[0].budget"); "" for the root.
func (i Issue) Field() string { return FieldOf(i.Pointer) }

// FieldOf translates a JSON Pointer into JSONPath-lite.
func FieldOf(pointer string) string {
	var b strings.Builder
	for _, seg := range segments(pointer) {
		if isIndex(seg) {
			b.WriteString("[" + seg + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(seg)
	}
	return b.String()
}

func segments(pointer string) []string {
	if pointer == "" {
		return nil
	}
	parts := strings.Split(strings.TrimPrefix(pointer, "/"), "/")
	for i, p := range parts {
		parts[i] = strings.ReplaceAll(strings.ReplaceAll(p, "~1", "/"), "~0", "~")
	}
	return parts
}

// Set is the compiled request schemas.
type Set struct {
	byTask map[string]*jsonschema.Schema
	// quick are the same schemas for the quick check.
	quick map[string]*quick
	// names are every member name the schemas declare: a pointer is cut
	// at the first segment that is not one of them (or an index).
	names map[string]bool
}

var (
	once    sync.Once
	set     *Set
	loadErr error
)

// Official is the set compiled from Files, once per process.
func Official() (*Set, error) {
	once.Do(func() { set, loadErr = compile(Files) })
	return set, loadErr
}

// manifest is what the set reads of the release manifest.
type manifest struct {
	Tools map[string]struct {
		Request string `json:"request_schema"`
	} `json:"tools"`
}

func compile(files fs.FS) (*Set, error) {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft7)
	c.AssertFormat()
	c.UseRegexpEngine(compilePattern)
	s := &Set{byTask: map[string]*jsonschema.Schema{}, quick: map[string]*quick{}, names: map[string]bool{}}
	err := fs.WalkDir(files, Root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".json") || path.Base(p) == "manifest.json" {
			return err
		}
		b, err := fs.ReadFile(files, p)
		if err != nil {
			return err
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		m, ok := doc.(map[string]any)
		if !ok {
			return nil
		}
		collectNames(m, s.names)
		id, _ := m["$id"].(string)
		if id == "" {
			return fmt.Errorf("%s has no $id", p)
		}
		return c.AddResource(base+id, doc)
	})
	if err != nil {
		return nil, err
	}
	b, err := fs.ReadFile(files, Root+"/manifest.json")
	if err != nil {
		return nil, err
	}
	var man manifest
	if err := json.Unmarshal(b, &man); err != nil {
		return nil, fmt.Errorf("the release manifest: %w", err)
	}
	for _, task := range tasks {
		rel := man.Tools[task].Request
		if rel == "" {
			return nil, fmt.Errorf("the release manifest names no request schema for %s", task)
		}
		sch, err := c.Compile(base + "/schemas/" + rel)
		if err != nil {
			return nil, fmt.Errorf("compiling %s: %w", rel, err)
		}
		s.byTask[task] = sch
	}
	seen := map[*jsonschema.Schema]*quick{}
	for task, sch := range s.byTask {
		s.quick[task] = quickOf(sch, seen)
	}
	return s, nil
}

// collectNames adds every key of every properties object in a schema
// document, and every required name, to names.
func collectNames(v any, names map[string]bool) {
	switch n := v.(type) {
	case map[string]any:
		if props, ok := n["properties"].(map[string]any); ok {
			for k := range props {
				names[k] = true
			}
		}
		if list, ok := n["required"].([]any); ok {
			for _, x := range list {
				if s, ok := x.(string); ok {
					names[s] = true
				}
			}
		}
		for _, x := range n {
			collectNames(x, names)
		}
	case []any:
		for _, x := range n {
			collectNames(x, names)
		}
	}
}

// Has reports whether the set holds task's request schema.
func (s *Set) Has(task string) bool { _, ok := s.byTask[task]; return ok }

// MaxIssues is how many issues Check reports at most.
const MaxIssues = 20

// Shapes says which releases' request shapes a check admits.
type Shapes int

const (
	// AsBuild admits what the embedded release's schemas admit: requests
	// of the 3.2 pre-releases.
	AsBuild Shapes = iota
	// Legacy admits, besides, the shapes 3.0 and 3.1 define that the
	// embedded release refuses (relaxations): requests served as 3.0 or
	// 3.1.
	Legacy
)

// Check validates args, a request of task, against its official schema and
// returns what is wrong, nil when nothing is. Empty args are the empty
// request. Arguments that are not JSON are one issue at the root.
func (s *Set) Check(task string, shapes Shapes, args []byte) []Issue {
	return s.check(task, shapes, args, nil, true)
}

// CheckParsed is Check of args that doc is jsonfield.Parse's reading of,
// for a caller that parsed them already.
func (s *Set) CheckParsed(task string, shapes Shapes, args []byte, doc jsonfield.Value) []Issue {
	return s.check(task, shapes, args, &doc, true)
}

// check is Check, asking the quick check first when quickly is set, of
// the document doc when it is not nil.
func (s *Set) check(task string, shapes Shapes, args []byte, doc *jsonfield.Value, quickly bool) []Issue {
	sch, ok := s.byTask[task]
	if !ok {
		return nil
	}
	if len(bytes.TrimSpace(args)) == 0 {
		args = []byte("{}")
	}
	if quickly {
		// The quick check walks the parsed bytes; only a request it is
		// not sure is valid is decoded for the validator.
		if doc == nil {
			if v, err := jsonfield.Parse(args); err == nil {
				doc = &v
			}
		}
		if doc != nil && s.quick[task].judge(*doc, 0) == valid {
			return nil
		}
	}
	decoded, err := jsonschema.UnmarshalJSON(bytes.NewReader(args))
	if err != nil {
		return []Issue{{Keyword: "type", Message: "the request must be a JSON object"}}
	}
	err = sch.Validate(decoded)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return []Issue{{Keyword: "type", Message: "the request is not valid"}}
	}
	var all []Issue
	for _, leaf := range leaves(ve) {
		if shapes == Legacy && relaxed(task, leaf) {
			continue
		}
		all = append(all, s.issue(leaf))
	}
	// The validator's order follows map iteration: sorted, messages
	// included, before one issue per place and keyword is kept, the same
	// request always gets the same answer (two dependencies naming one
	// missing member kept whichever came first).
	sort.Slice(all, func(i, j int) bool {
		if all[i].Pointer != all[j].Pointer {
			return all[i].Pointer < all[j].Pointer
		}
		if all[i].Keyword != all[j].Keyword {
			return all[i].Keyword < all[j].Keyword
		}
		return all[i].Message < all[j].Message
	})
	var out []Issue
	for i, is := range all {
		if i > 0 && is.Pointer == all[i-1].Pointer && is.Keyword == all[i-1].Keyword {
			continue
		}
		out = append(out, is)
	}
	if len(out) > MaxIssues {
		out = out[:MaxIssues]
	}
	return out
}

// leaves are the errors that say what is wrong. Below a oneOf or anyOf
// every branch says why it failed, and the branch the caller most likely
// meant is the one to report: not one refused by a discriminator (a const
// it does not match), then the one that got furthest into the value (its
// deepest leaf; a missing member counts as one level below its object),
// then the one with the fewest complaints. When no branch got past the
// value itself, or two are as likely, the value matched no form: the
// oneOf's own error, or, when every branch was refused by a const at one
// place, that place's allowed values.
func leaves(e *jsonschema.ValidationError) []*jsonschema.ValidationError {
	switch e.ErrorKind.(type) {
	case *kind.OneOf, *kind.AnyOf:
		if len(e.Causes) == 0 {
			return []*jsonschema.ValidationError{e}
		}
		type score struct {
			discriminated bool
			depth, leaves int
			branch        []*jsonschema.ValidationError
		}
		var best *score
		tie := false
		var consts []*jsonschema.ValidationError
		for _, c := range e.Causes {
			ls := leaves(c)
			sc := &score{branch: ls, leaves: len(ls)}
			for _, l := range ls {
				d := len(l.InstanceLocation)
				switch l.ErrorKind.(type) {
				case *kind.Required, *kind.Dependency:
					d++
				case *kind.Const:
					sc.discriminated = true
					consts = append(consts, l)
				}
				sc.depth = max(sc.depth, d)
			}
			switch {
			case best == nil || better(sc.discriminated, sc.depth, sc.leaves, best.discriminated, best.depth, best.leaves):
				best, tie = sc, false
			case !better(best.discriminated, best.depth, best.leaves, sc.discriminated, sc.depth, sc.leaves):
				tie = true
			}
		}
		if best.discriminated {
			if d := discriminator(consts, len(e.Causes)); d != nil {
				return []*jsonschema.ValidationError{d}
			}
		}
		if tie || best.depth <= len(e.InstanceLocation) {
			return []*jsonschema.ValidationError{e}
		}
		return best.branch
	}
	if len(e.Causes) == 0 {
		return []*jsonschema.ValidationError{e}
	}
	var out []*jsonschema.ValidationError
	for _, c := range e.Causes {
		out = append(out, leaves(c)...)
	}
	return out
}

// better reports whether branch a is likelier than branch b.
func better(aDisc bool, aDepth, aLeaves int, bDisc bool, bDepth, bLeaves int) bool {
	if aDisc != bDisc {
		return !aDisc
	}
	if aDepth != bDepth {
		return aDepth > bDepth
	}
	return aLeaves < bLeaves
}

// discriminator is, when each of n branches was refused by a const at one
// and the same place, an enum error there listing the consts.
func discriminator(consts []*jsonschema.ValidationError, n int) *jsonschema.ValidationError {
	if len(consts) != n {
		return nil
	}
	at := pointer(consts[0].InstanceLocation)
	var want []any
	for _, c := range consts {
		if pointer(c.InstanceLocation) != at {
			return nil
		}
		want = append(want, c.ErrorKind.(*kind.Const).Want)
	}
	return &jsonschema.ValidationError{InstanceLocation: consts[0].InstanceLocation, ErrorKind: &kind.Enum{Want: want}}
}

// issue describes one leaf error.
func (s *Set) issue(e *jsonschema.ValidationError) Issue {
	loc := s.declared(e.InstanceLocation)
	cut := len(loc) < len(e.InstanceLocation)
	is := Issue{Keyword: keyword(e.ErrorKind)}
	where := func(l []string) string {
		if f := FieldOf(pointer(l)); f != "" {
			return f
		}
		return "the request"
	}
	switch k := e.ErrorKind.(type) {
	case *kind.Required:
		if !cut && len(k.Missing) > 0 && s.names[k.Missing[0]] {
			loc = append(loc, k.Missing[0])
			is.Message = where(loc) + " is required"
		} else {
			is.Message = where(loc) + " lacks a required member"
		}
	case *kind.Dependency:
		if !cut && len(k.Missing) > 0 && s.names[k.Missing[0]] && s.names[k.Prop] {
			is.Message = FieldOf(pointer(append(append([]string{}, loc...), k.Missing[0]))) + " is required with " + FieldOf(pointer(append(append([]string{}, loc...), k.Prop)))
			loc = append(loc, k.Missing[0])
		} else {
			is.Message = where(loc) + " lacks a member another one requires"
		}
	default:
		if cut {
			is.Message = where(loc) + " holds a value that is not valid"
		} else {
			is.Message = where(loc) + " " + wants(e.ErrorKind)
		}
	}
	is.Pointer = pointer(loc)
	return is
}

// declared is loc up to its first segment that is neither an array index
// nor a member name the schemas declare.
func (s *Set) declared(loc []string) []string {
	for i, seg := range loc {
		if isIndex(seg) {
			continue
		}
		if !s.names[seg] {
			return append([]string{}, loc[:i]...)
		}
	}
	return append([]string{}, loc...)
}

// isIndex reports whether a segment is an array position as the
// validator writes one.
func isIndex(seg string) bool {
	n, err := strconv.Atoi(seg)
	return err == nil && n >= 0 && strconv.Itoa(n) == seg
}

func pointer(loc []string) string {
	var b strings.Builder
	for _, seg := range loc {
		b.WriteByte('/')
		b.WriteString(strings.ReplaceAll(strings.ReplaceAll(seg, "~", "~0"), "/", "~1"))
	}
	return b.String()
}

// keyword is the draft-07 keyword an error kind reports.
func keyword(k jsonschema.ErrorKind) string {
	switch k.(type) {
	case *kind.Dependency, *kind.DependentRequired:
		return "dependencies"
	case *kind.FalseSchema:
		return "false"
	}
	if p := k.KeywordPath(); len(p) > 0 {
		return p[0]
	}
	return "type"
}

// wants says what the schema wants where k failed, from the schema alone.
func wants(k jsonschema.ErrorKind) string {
	switch k := k.(type) {
	case *kind.Type:
		return "must be " + typeList(k.Want)
	case *kind.Enum:
		if vals, ok := scalars(k.Want); ok && len(vals) <= 12 {
			return "must be one of: " + strings.Join(vals, ", ")
		}
		return "must be one of the values the schema lists"
	case *kind.Const:
		if vals, ok := scalars([]any{k.Want}); ok {
			return "must be " + vals[0]
		}
		return "must be the value the schema fixes"
	case *kind.Format:
		return "must be a valid " + k.Want
	case *kind.Minimum:
		return "must be at least " + number(k.Want)
	case *kind.Maximum:
		return "must be at most " + number(k.Want)
	case *kind.ExclusiveMinimum:
		return "must be greater than " + number(k.Want)
	case *kind.ExclusiveMaximum:
		return "must be less than " + number(k.Want)
	case *kind.MultipleOf:
		return "must be a multiple of " + number(k.Want)
	case *kind.MinLength:
		return "must be at least " + count(k.Want, "character") + " long"
	case *kind.MaxLength:
		return "must be at most " + count(k.Want, "character") + " long"
	case *kind.Pattern:
		return "is not in the form the schema requires"
	case *kind.MinItems:
		return "must have at least " + count(k.Want, "item")
	case *kind.MaxItems:
		return "must have at most " + count(k.Want, "item")
	case *kind.UniqueItems:
		return "must not repeat an item"
	case *kind.MinProperties:
		return "must have at least " + count(k.Want, "member")
	case *kind.MaxProperties:
		return "must have at most " + count(k.Want, "member")
	case *kind.AdditionalProperties:
		return "has a member the schema does not allow here"
	case *kind.AdditionalItems:
		return "has more items than the schema allows"
	case *kind.PropertyNames:
		return "has a member name the schema does not allow"
	case *kind.Contains, *kind.MinContains, *kind.MaxContains:
		return "does not hold the items the schema requires"
	case *kind.OneOf:
		if len(k.Subschemas) > 1 {
			return "matches more than one of the forms the schema allows"
		}
		return "matches none of the forms the schema allows"
	case *kind.AnyOf:
		return "matches none of the forms the schema allows"
	case *kind.Not, *kind.FalseSchema:
		return "is not allowed in this form"
	}
	return "is not valid"
}

// count is n things, in the plural unless n is one.
func count(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return strconv.Itoa(n) + " " + thing + "s"
}

func typeList(want []string) string {
	names := map[string]string{"string": "a string", "integer": "an integer", "number": "a number", "boolean": "a boolean",
		"object": "an object", "array": "an array", "null": "null"}
	out := make([]string, 0, len(want))
	for _, w := range want {
		if n, ok := names[w]; ok {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	if len(out) == 0 {
		return "of another type"
	}
	return strings.Join(out, " or ")
}

// scalars renders schema values that are strings, numbers or booleans.
func scalars(vs []any) ([]string, bool) {
	out := make([]string, 0, len(vs))
	for _, v := range vs {
		switch x := v.(type) {
		case string:
			out = append(out, x)
		case json.Number:
			out = append(out, x.String())
		case bool:
			out = append(out, strconv.FormatBool(x))
		case nil:
			out = append(out, "null")
		default:
			return nil, false
		}
	}
	return out, true
}

func number(r *big.Rat) string {
	if r == nil {
		return "the schema's bound"
	}
	if r.IsInt() {
		return r.Num().String()
	}
	return strings.TrimRight(strings.TrimRight(r.FloatString(6), "0"), ".")
}

// matchTimeout bounds one match of a pattern Go's regexp cannot run (a
// look-ahead): regexp2 backtracks, and a hostile value must not hold a
// request. A match that times out is a value refused.
const matchTimeout = 50 * time.Millisecond

// compilePattern compiles a schema pattern as pieces when it is of their
// shape, with Go's regexp, whose matches take linear time, when not, and
// only when that cannot (look-ahead) with regexp2 in ECMAScript mode, as
// the schemas are written for.
func compilePattern(s string) (jsonschema.Regexp, error) {
	if ps, ok := piecesOf(s); ok {
		return ps, nil
	}
	if re, err := regexp.Compile(s); err == nil {
		return re, nil
	}
	re, err := regexp2.Compile(s, regexp2.ECMAScript)
	if err != nil {
		return nil, err
	}
	re.MatchTimeout = matchTimeout
	return backtracking{re}, nil
}

type backtracking struct{ re *regexp2.Regexp }

func (r backtracking) MatchString(s string) bool {
	ok, err := r.re.MatchString(s)
	return err == nil && ok
}

func (r backtracking) String() string { return r.re.String() }
