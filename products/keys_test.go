package products

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"

	"github.com/storefront/storefront/adcp"
	"github.com/storefront/storefront/merch"
	"github.com/storefront/storefront/vocab"
)

// marshalQueryKey is queryKey as it was first written, through
// json.Marshal: the bytes of every cursor issued so far.
func marshalQueryKey(r *Request) []byte {
	b, _ := json.Marshal(struct {
		Mode, Brief string
		F           Filters
		Geo, Fields []string
		Refine      []RefineEntry
		Size        int
	}{r.BuyingMode, deref(r.Brief), r.Filters, r.GeoCountries, r.Fields, r.Refine, r.Pagination.MaxResults})
	return b
}

// declineInput is what declineKey reads, in the form it was first keyed
// on through json.Marshal.
type declineInput struct {
	Who     string
	Cap     int
	Brief   merch.Brief
	Filters Filters
	Geo     []string
}

func (in declineInput) key() (string, bool) {
	return declineKey(in.Who, vocab.Level(in.Cap), in.Brief, &Request{Filters: in.Filters, GeoCountries: in.Geo})
}

// keyText draws strings of the pieces json.Marshal spells apart: plain
// ASCII, what it escapes (quotes, backslashes, control characters, <, >
// and &), invalid UTF-8 (which it writes as U+FFFD), U+FFFD itself, the
// line separators it escapes, other non-ASCII, and the text of an escape.
var keyText = rapid.Custom(func(t *rapid.T) string {
	pieces := []string{"a", "Z", "0", " ", "-", "<", ">", "&", `"`, `\`, "\x00", "\x1f", "\t", "\n", "\x7f",
		"\xff", "\xc3", "\xe2\x80", "\ufffd", "\u2028", "\u2029", "é", "日", "😀", `\u003c`}
	return strings.Join(rapid.SliceOfN(rapid.SampledFrom(pieces), 0, 6).Draw(t, "pieces"), "")
})

// keyFloat draws the floats encoding/json spells apart: whole numbers
// either side of 1e15 and past 2^53, around the exponent cut-offs (1e-6, 1e21), with
// exponents that need cleaning up, signed zeros, extremes and the values it
// refuses to write.
var keyFloat = rapid.OneOf(
	rapid.Float64(),
	rapid.Map(rapid.Int64Range(-1e18, 1e18), func(n int64) float64 { return float64(n) }),
	rapid.Map(rapid.Float64Range(1e14, 1e18), math.Trunc),
	rapid.SampledFrom([]float64{
		0, math.Copysign(0, -1), 1, -1, 0.1, 25000, 120000.5,
		999999999999999, 1e15, -1e15 + 1, 18032134110659392,
		1e-6, 9.99999e-7, 1e-7, -1e-9, 1e-10, 1.5e-300, 5e-324,
		1e20, 1e21, 999999999999999999999, -1e21, 1e100, math.MaxFloat64,
		math.NaN(), math.Inf(1), math.Inf(-1),
	}),
)

// keyDate draws the zero Date and dates whose years have fewer or more
// than four digits, or a sign, at the edges of those and anywhere.
var keyDate = rapid.Custom(func(t *rapid.T) adcp.Date {
	switch rapid.IntRange(0, 2).Draw(t, "kind") {
	case 0:
		return adcp.Date{}
	case 1:
		y := rapid.SampledFrom([]int{-10000, -1000, -10, -1, 0, 1, 10, 999, 1000, 2027, 9999, 10000}).Draw(t, "year")
		return adcp.DateOf(time.Date(y, time.Month(rapid.IntRange(1, 12).Draw(t, "month")), rapid.IntRange(1, 31).Draw(t, "day"), 0, 0, 0, 0, time.UTC))
	}
	return adcp.DateOf(time.Unix(rapid.Int64Range(-1e11, 4e11).Draw(t, "unix"), 0))
})

var dateType = reflect.TypeFor[adcp.Date]()

// gen sets v to a drawn value of its type, and so every field of it:
// pointers nil or not, slices nil, empty or not. A field added to a type
// is drawn with the rest.
func gen(t *rapid.T, path string, v reflect.Value) {
	if v.Type() == dateType {
		v.Set(reflect.ValueOf(keyDate.Draw(t, path)))
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(keyText.Draw(t, path))
	case reflect.Bool:
		v.SetBool(rapid.Bool().Draw(t, path))
	case reflect.Int:
		v.SetInt(int64(rapid.Int().Draw(t, path)))
	case reflect.Uint8:
		v.SetUint(uint64(rapid.Byte().Draw(t, path)))
	case reflect.Float64:
		v.SetFloat(keyFloat.Draw(t, path))
	case reflect.Pointer:
		if rapid.IntRange(0, 3).Draw(t, path+" nil") == 0 {
			v.SetZero()
			return
		}
		v.Set(reflect.New(v.Type().Elem()))
		gen(t, path, v.Elem())
	case reflect.Slice:
		n := rapid.IntRange(-1, 3).Draw(t, path+" len")
		if n < 0 {
			v.SetZero()
			return
		}
		v.Set(reflect.MakeSlice(v.Type(), n, n))
		for i := range n {
			gen(t, fmt.Sprintf("%s[%d]", path, i), v.Index(i))
		}
	case reflect.Struct:
		for i := range v.NumField() {
			gen(t, path+"."+v.Type().Field(i).Name, v.Field(i))
		}
	default:
		t.Fatalf("%s: gen knows no %s", path, v.Kind())
	}
}

// clone sets dst to a copy of src that shares nothing with it.
func clone(dst, src reflect.Value) {
	switch {
	case src.Type() == dateType:
		dst.Set(src)
	case src.Kind() == reflect.Pointer && !src.IsNil():
		dst.Set(reflect.New(src.Type().Elem()))
		clone(dst.Elem(), src.Elem())
	case src.Kind() == reflect.Slice && !src.IsNil():
		dst.Set(reflect.MakeSlice(src.Type(), src.Len(), src.Len()))
		for i := range src.Len() {
			clone(dst.Index(i), src.Index(i))
		}
	case src.Kind() == reflect.Struct:
		for i := range src.NumField() {
			clone(dst.Field(i), src.Field(i))
		}
	default:
		dst.Set(src)
	}
}

// parts lists v and every value inside it, for a mutation to pick one.
func parts(v reflect.Value, out []reflect.Value) []reflect.Value {
	out = append(out, v)
	switch {
	case v.Type() == dateType:
	case v.Kind() == reflect.Pointer && !v.IsNil():
		out = parts(v.Elem(), out)
	case v.Kind() == reflect.Slice:
		for i := range v.Len() {
			out = parts(v.Index(i), out)
		}
	case v.Kind() == reflect.Struct:
		for i := range v.NumField() {
			out = parts(v.Field(i), out)
		}
	}
	return out
}

// validText reports whether every string in v is valid UTF-8.
func validText(v reflect.Value) bool {
	for _, p := range parts(v, nil) {
		if p.Kind() == reflect.String && !utf8.ValidString(p.String()) {
			return false
		}
	}
	return true
}

// TestQueryKeyIsMarshal: for every request, whatever its fields hold,
// queryKey writes the bytes json.Marshal wrote, so that every cursor
// issued by an earlier build still verifies.
func TestQueryKeyIsMarshal(t *testing.T) {
	written := 0
	rapid.Check(t, func(t *rapid.T) {
		var r Request
		gen(t, "request", reflect.ValueOf(&r).Elem())
		got, want := queryKey(&r), marshalQueryKey(&r)
		if string(got) != string(want) || (got == nil) != (want == nil) {
			t.Fatalf("queryKey wrote\n%q\njson.Marshal writes\n%q", got, want)
		}
		if want != nil {
			written++
		}
	})
	// A control: most requests must be written, not refused for a float.
	if written < 50 {
		t.Errorf("only %d requests had a key: the generator draws too many NaNs", written)
	}
}

// TestQueryFingerprintIsTheCursors: the fingerprint a cursor carries is
// the first eight bytes of SHA-256 over each part after its length, the
// parts the snapshot "publisher|catalogue|rulebook" and queryKey, as every
// cursor already issued was fingerprinted.
func TestQueryFingerprintIsTheCursors(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var r Request
		gen(t, "request", reflect.ValueOf(&r).Elem())
		snap := &Snapshot{Publisher: Publisher{ID: rapid.StringN(0, 40, -1).Draw(t, "publisher")},
			CatalogueVersion: rapid.Int64().Draw(t, "catalogue"), RulebookVersion: rapid.Int64().Draw(t, "rulebook")}
		h := sha256.New()
		for _, p := range [][]byte{[]byte(fmt.Sprintf("%s|%d|%d", snap.Publisher.ID, snap.CatalogueVersion, snap.RulebookVersion)), marshalQueryKey(&r)} {
			_ = binary.Write(h, binary.BigEndian, uint64(len(p)))
			h.Write(p)
		}
		if got, want := queryFingerprint(snap, &r), [8]byte(h.Sum(nil)[:8]); got != want {
			t.Fatalf("queryFingerprint = %x; cursors were fingerprinted %x", got, want)
		}
	})
}

// TestDeclineKeyIsInjective: a key kept is json.Marshal of what the
// decline depends on, and two inputs share a key only when they are the
// same: pairs differ in one part, often by what json.Marshal spells alike
// (invalid UTF-8 and U+FFFD) or apart (nil and empty lists, 0 and -0).
func TestDeclineKeyIsInjective(t *testing.T) {
	kept, near := 0, 0
	rapid.Check(t, func(t *rapid.T) {
		var a, b declineInput
		gen(t, "a", reflect.ValueOf(&a).Elem())
		// Invalid UTF-8 or a float json.Marshal refuses anywhere leaves an
		// input out of the cache; mostly they are in the one part a
		// mutation draws, or nowhere.
		if rapid.Bool().Draw(t, "writable") {
			for _, p := range parts(reflect.ValueOf(&a).Elem(), nil) {
				switch p.Kind() {
				case reflect.String:
					p.SetString(strings.ToValidUTF8(p.String(), "\ufffd"))
				case reflect.Float64:
					if math.IsNaN(p.Float()) || math.IsInf(p.Float(), 0) {
						p.SetFloat(1)
					}
				}
			}
		}
		if rapid.IntRange(0, 3).Draw(t, "long") == 3 {
			a.Brief.Text += strings.Repeat("a", rapid.IntRange(2000, maxDeclineKey).Draw(t, "length"))
		}
		clone(reflect.ValueOf(&b).Elem(), reflect.ValueOf(a))
		for i := range rapid.IntRange(1, 2).Draw(t, "mutations") {
			ps := parts(reflect.ValueOf(&b).Elem(), nil)
			gen(t, fmt.Sprintf("b mutation %d", i), ps[rapid.IntRange(0, len(ps)-1).Draw(t, "part")])
		}
		var keys [2]string
		for i, in := range []declineInput{a, b} {
			k, ok := in.key()
			ref, err := json.Marshal(in)
			keep := err == nil && len(ref) <= maxDeclineKey && validText(reflect.ValueOf(in))
			if ok && k != string(ref) {
				t.Fatalf("declineKey wrote\n%q\njson.Marshal writes\n%q", k, ref)
			}
			// A key that holds the text of an escape json.Marshal writes
			// for invalid UTF-8 may be left out of the cache as well.
			if ok != keep && !(keep && strings.Contains(string(ref), `\ufffd`)) {
				t.Fatalf("%+v: kept %v, want %v (marshal error %v, %d bytes)", in, ok, keep, err, len(ref))
			}
			if !ok {
				return
			}
			keys[i] = k
			kept++
		}
		// The format filters are read by their length alone, so nil and
		// empty are one input, as json.Marshal (omitempty) writes them.
		for _, in := range []*declineInput{&a, &b} {
			if len(in.Filters.FormatOptionRefs) == 0 {
				in.Filters.FormatOptionRefs = nil
			}
			if len(in.Filters.FormatIDs) == 0 {
				in.Filters.FormatIDs = nil
			}
		}
		same := reflect.DeepEqual(a, b)
		if keys[0] == keys[1] && !same {
			t.Fatalf("one key for two inputs:\n%+v\n%+v", a, b)
		}
		if !same {
			near++
		}
	})
	if kept < 40 || near < 10 {
		t.Errorf("%d keys kept, %d pairs of different inputs both kept: the generator should reach more", kept, near)
	}
}

// TestDeclineKeyRefuses: the inputs json.Marshal could not write or would
// write as another's are never kept, nor a key longer than maxDeclineKey.
func TestDeclineKeyRefuses(t *testing.T) {
	nan := math.NaN()
	for _, test := range []struct {
		name string
		in   declineInput
	}{
		{"a NaN budget", declineInput{Brief: merch.Brief{Budget: &merch.Budget{Max: &nan}}}},
		{"an infinite duration", declineInput{Filters: Filters{FormatIDs: []FormatRef{{DurationMS: math.Inf(1)}}}}},
		{"invalid UTF-8", declineInput{Brief: merch.Brief{Text: "ctv \xff"}}},
		{"a long brief", declineInput{Brief: merch.Brief{Text: strings.Repeat("a", maxDeclineKey)}}},
	} {
		if k, ok := test.in.key(); ok {
			t.Errorf("%s: kept under %q", test.name, k)
		}
	}
	if k, ok := (declineInput{Brief: merch.Brief{Text: "ctv \ufffd"}}).key(); !ok {
		t.Errorf("U+FFFD itself: not kept (%q)", k)
	}
	// A key of maxDeclineKey bytes is kept, one a byte longer is not.
	empty, _ := declineInput{}.key()
	for n, want := range map[int]bool{maxDeclineKey - len(empty): true, maxDeclineKey - len(empty) + 1: false} {
		in := declineInput{Brief: merch.Brief{Text: strings.Repeat("a", n)}}
		if k, ok := in.key(); ok != want {
			t.Errorf("a key of %d bytes: kept %v, want %v", len(k), ok, want)
		}
	}
}

// TestKeyWritersCoverEveryField: keys.go writes each field of these types
// by name. One added, renamed, retyped or retagged must be written there
// too (a field added to Filters with omitempty, so that cursors issued
// before it still verify); then this list is brought up to date.
func TestKeyWritersCoverEveryField(t *testing.T) {
	for _, test := range []struct {
		typ    reflect.Type
		fields []string
	}{
		{reflect.TypeFor[Filters](), []string{
			"Channels []string", "FormatKinds []string", "DeliveryType string", "Budget *products.BudgetRange",
			"StartDate adcp.Date", "EndDate adcp.Date", "PricingCurrencies []string", "Countries []string",
			"IsFixedPrice *bool", "PricingStructures []string", "Exclusivity string", "VideoPlacementTypes []string",
			"AudioDistributionTypes []string", "RequiredMetrics []string", "StandardFormatsOnly bool",
			"FormatOptionRefs []products.FormatOptionRef `json:\",omitempty\"`", "FormatIDs []products.FormatRef `json:\",omitempty\"`",
			"Unmodelled []string",
		}},
		{reflect.TypeFor[BudgetRange](), []string{"Min *float64", "Max *float64", "Currency string"}},
		{reflect.TypeFor[FormatOptionRef](), []string{"Scope string", "PublisherDomain string", "FormatOptionID string"}},
		{reflect.TypeFor[FormatRef](), []string{"AgentURL string", "ID string", "Width int", "Height int", "DurationMS float64"}},
		{reflect.TypeFor[RefineEntry](), []string{"Scope string", "Ask string", "ProductID string", "ProposalID string", "Action string"}},
		{reflect.TypeFor[merch.Brief](), []string{
			"Mode string", "Text string", "Channels []string", "FormatKinds []string", "DeliveryType string",
			"Budget *merch.Budget", "Flight adcp.DateRange", "Currencies []string", "Countries []string",
			"BrandDomain string", "Industries []string", "Today adcp.Date",
		}},
		{reflect.TypeFor[merch.Budget](), []string{"Min *float64", "Max *float64", "Currency string"}},
		{reflect.TypeFor[adcp.DateRange](), []string{"Start adcp.Date `json:\"start\"`", "End adcp.Date `json:\"end\"`"}},
	} {
		var got []string
		for i := range test.typ.NumField() {
			f := test.typ.Field(i)
			s := f.Name + " " + f.Type.String()
			if f.Tag != "" {
				s += " `" + string(f.Tag) + "`"
			}
			got = append(got, s)
		}
		if d := cmp.Diff(test.fields, got); d != "" {
			t.Errorf("%s has fields keys.go does not write (-written +declared):\n%s", test.typ, d)
		}
	}
}

// benchRequest is a get_products request as buyers send it: a brief with
// filters, markets and a page size.
func benchRequest(b *testing.B) *Request {
	b.Helper()
	r, err := DecodeRequest([]byte(`{"adcp_version":"3.1","buying_mode":"brief",
		"brief":"Premium CTV and online video for a spring launch of a sparkling water brand, adults 25-54",
		"filters":{"channels":["ctv","olv"],"format_kinds":["video_vast"],"delivery_type":"guaranteed",
			"budget_range":{"min":25000,"max":120000.5,"currency":"USD"},"start_date":"2027-03-01","end_date":"2027-04-15",
			"pricing_currencies":["USD"],"is_fixed_price":true},
		"targeting_overlay":{"geo_countries":["US","CA"]},
		"pagination":{"max_results":25}}`))
	if err != nil {
		b.Fatal(err)
	}
	return r
}

func BenchmarkQueryKey(b *testing.B) {
	r := benchRequest(b)
	b.ReportAllocs()
	for b.Loop() {
		queryKey(r)
	}
}

func BenchmarkDeclineKey(b *testing.B) {
	r := benchRequest(b)
	brief := NormaliseBrief(r, time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC))
	b.ReportAllocs()
	for b.Loop() {
		declineKey("buyer-1\x00id:acct-1", vocab.Range, brief, r)
	}
}
