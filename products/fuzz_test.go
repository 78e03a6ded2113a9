package products

import (
	"errors"
	"reflect"
	"testing"
	"unicode/utf8"

	"github.com/storefront/storefront/adcp"
)

// FuzzDecodeRequest checks that decoding never panics (DecodeRequest
// recovers, so a recovered panic shows as its fallback message), that every
// failure is a *RequestError naming at least one problem with a code and a
// message, that decoding is deterministic, and that an accepted request
// is within the limits.
func FuzzDecodeRequest(f *testing.F) {
	f.Add([]byte(`{"buying_mode":"brief","brief":"Video for sports fans","filters":{"channels":["olv"],"budget_range":{"max":5000,"currency":"USD"}}}`))
	f.Add([]byte(`{"buying_mode":"refine","refine":[{"scope":"product","product_id":"p","action":"omit"}]}`))
	f.Add([]byte(`{"filters":{"budget_range":{"min":-1,"max":-2,"currency":"usd"}}}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, args []byte) {
		r, err := DecodeRequest(args)
		if err != nil {
			var re *RequestError
			if !errors.As(err, &re) {
				t.Fatalf("DecodeRequest(%q) error %T is not a *RequestError", args, err)
			}
			if len(re.Problems) == 0 || len(re.Problems) > 20 {
				t.Fatalf("DecodeRequest(%q) reported %d problems", args, len(re.Problems))
			}
			for _, p := range re.Problems {
				if p.Detail == "" || (p.Code != adcp.InvalidRequest && p.Code != adcp.ValidationError) {
					t.Errorf("DecodeRequest(%q) problem %+v", args, p)
				}
				if p.Detail == "the request could not be decoded" {
					t.Errorf("DecodeRequest(%q) panicked and recovered", args)
				}
			}
		} else {
			if r == nil {
				t.Fatalf("DecodeRequest(%q) = nil, nil", args)
			}
			switch r.BuyingMode {
			case "brief", "wholesale", "refine":
			default:
				t.Errorf("DecodeRequest(%q) accepted buying_mode %q", args, r.BuyingMode)
			}
			if r.Pagination.MaxResults < 1 || r.Pagination.MaxResults > MaxPageSize {
				t.Errorf("DecodeRequest(%q) accepted max_results %d", args, r.Pagination.MaxResults)
			}
			if r.Brief != nil && utf8.RuneCountInString(*r.Brief) > MaxBriefChars {
				t.Errorf("DecodeRequest(%q) accepted a brief of %d characters", args, utf8.RuneCountInString(*r.Brief))
			}
			if r.Filters.Budget != nil && r.Filters.Budget.Min == nil && r.Filters.Budget.Max == nil {
				t.Errorf("DecodeRequest(%q) accepted a budget with neither min nor max", args)
			}
		}
		r2, err2 := DecodeRequest(args)
		if !reflect.DeepEqual(r, r2) || !reflect.DeepEqual(err, err2) {
			t.Errorf("DecodeRequest(%q) is not deterministic:\n%v\n%v", args, err, err2)
		}
	})
}
