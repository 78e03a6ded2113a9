package products

import (
	"fmt"
	"reflect"
	"sync"
	"testing"

	"github.com/storefront/storefront/adcp"
	"github.com/storefront/storefront/decline"
	"github.com/storefront/storefront/merch"
	"github.com/storefront/storefront/sanitize"
	"github.com/storefront/storefront/vocab"
)

// fill sets v, and every field it has, to a value other than its zero. It
// fails on a field declineKey cannot see: one that is unexported or left
// out of JSON.
func fill(t *testing.T, path string, v reflect.Value) {
	t.Helper()
	if v.Type() == reflect.TypeOf(adcp.Date{}) {
		v.Set(reflect.ValueOf(adcp.MustDate("2027-03-04")))
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString("x")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int32, reflect.Int64:
		v.SetInt(7)
	case reflect.Float64:
		v.SetFloat(1.5)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(t, path, v.Elem())
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fill(t, path+"[0]", v.Index(0))
	case reflect.Struct:
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if !f.IsExported() || f.Tag.Get("json") == "-" {
				t.Fatalf("%s.%s: a field the decline key cannot see", path, f.Name)
			}
			fill(t, path+"."+f.Name, v.Field(i))
		}
	default:
		t.Fatalf("%s: fill knows no %s", path, v.Kind())
	}
}

// TestDeclineKeyCoversTheRequest: every field of the brief and the filters,
// the markets, the disclosure cap and the caller each change the key, so two requests
// whose declines could differ are never kept as one.
func TestDeclineKeyCoversTheRequest(t *testing.T) {
	base, ok := declineKey("", vocab.Exact, merch.Brief{}, &Request{})
	if !ok {
		t.Fatal("no key for an empty request")
	}
	seen := map[string]string{base: "nothing"}
	check := func(name, who string, cap vocab.Level, b merch.Brief, r *Request) {
		t.Helper()
		k, ok := declineKey(who, cap, b, r)
		if !ok {
			t.Fatalf("%s: no key", name)
		}
		if other, dup := seen[k]; dup {
			t.Errorf("%s: the same key as %s", name, other)
		}
		seen[k] = name
	}
	for _, typ := range []reflect.Type{reflect.TypeOf(merch.Brief{}), reflect.TypeOf(Filters{})} {
		for i := range typ.NumField() {
			name := typ.Name() + "." + typ.Field(i).Name
			var b merch.Brief
			r := &Request{}
			target := reflect.ValueOf(&b).Elem()
			if typ == reflect.TypeOf(Filters{}) {
				target = reflect.ValueOf(&r.Filters).Elem()
			}
			f := target.Field(i)
			if !typ.Field(i).IsExported() || typ.Field(i).Tag.Get("json") == "-" {
				t.Fatalf("%s: a field the decline key cannot see", name)
			}
			fill(t, name, f)
			check(name, "", vocab.Exact, b, r)
		}
	}
	check("geo", "", vocab.Exact, merch.Brief{}, &Request{GeoCountries: []string{"DE"}})
	check("cap", "", vocab.Range, merch.Brief{}, &Request{})
	// Another caller's decline is not its own: a kept one would answer
	// sooner and tell it what others asked.
	check("another caller", "buyer-2\x00id:acct-2", vocab.Exact, merch.Brief{}, &Request{})
	long := merch.Brief{Text: string(make([]byte, maxDeclineKey))}
	if _, ok := declineKey("", vocab.Exact, long, &Request{}); ok {
		t.Error("a key longer than maxDeclineKey is kept")
	}
}

// TestDeclinesAreBounded: however many briefs are declined, the snapshot
// keeps at most declinesKept declines, a decline asked for again is kept,
// and no caller can change one that is kept.
func TestDeclinesAreBounded(t *testing.T) {
	d := newDeclines(declineSources{})
	composed := 0
	compose := func(i int) decline.Composed {
		return d.compose(fmt.Sprint(i), true, func() decline.Composed {
			composed++
			return decline.Composed{Slug: vocab.BudgetBelowMinimum, Suggestions: []sanitize.Text{sanitize.Declined}, Offered: []decline.Change{{Edits: []decline.Edit{{Kind: vocab.RaiseBudget}}}}}
		})
	}
	first := compose(0)
	first.Suggestions[0] = sanitize.Text{}
	first.Offered[0].Edits[0].Kind = vocab.SwitchChannel
	for i := range 5 * declinesKept {
		compose(i)
		compose(0) // asked for all along: never dropped
		if n := len(d.new) + len(d.old); n > declinesKept {
			t.Fatalf("%d declines kept, at most %d allowed", n, declinesKept)
		}
	}
	if composed != 5*declinesKept {
		t.Errorf("composed %d times for %d briefs", composed, 5*declinesKept)
	}
	again := compose(0)
	if again.Suggestions[0] != sanitize.Declined || again.Offered[0].Edits[0].Kind != vocab.RaiseBudget {
		t.Errorf("a kept decline was changed through a copy handed out: %+v", again)
	}
	if got := (*declines)(nil).compose("k", true, func() decline.Composed { return decline.Composed{Slug: vocab.GeoNotServed} }); got.Slug != vocab.GeoNotServed {
		t.Errorf("a nil cache composed %v", got.Slug)
	}
}

// TestDeclinesConcurrent is for -race: many requests at once compose and
// read the same declines.
func TestDeclinesConcurrent(t *testing.T) {
	d := newDeclines(declineSources{})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 2000 {
				k := fmt.Sprint((i * (g + 1)) % 700)
				c := d.compose(k, true, func() decline.Composed { return decline.Composed{Slug: vocab.Slug(k)} })
				if string(c.Slug) != k {
					t.Errorf("key %s answered %s", k, c.Slug)
					return
				}
			}
		}()
	}
	wg.Wait()
}
