package bulk_test

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/storefront/storefront/bulk"
	"github.com/storefront/storefront/demo"
	"github.com/storefront/storefront/products"
)

func check(p *products.Product) error { return p.Validate() }

// readAll reads a file, returning the products and the bad lines.
func readAll(t *testing.T, f bulk.Format, file string) ([]products.Product, []*bulk.LineError, error) {
	t.Helper()
	r, err := bulk.NewReader(strings.NewReader(file), f, check)
	if err != nil {
		return nil, nil, err
	}
	var (
		ps  []products.Product
		bad []*bulk.LineError
	)
	for {
		p, err := r.Next()
		var le *bulk.LineError
		switch {
		case errors.Is(err, io.EOF):
			return ps, bad, nil
		case errors.As(err, &le):
			bad = append(bad, le)
		case err != nil:
			return ps, bad, err
		default:
			ps = append(ps, p)
		}
	}
}

func jsonLines(ps []products.Product) string {
	var b bytes.Buffer
	for _, p := range ps {
		b.Write(bulk.EncodeProduct(p))
	}
	return b.String()
}

func csvFile(t *testing.T, ps []products.Product) string {
	t.Helper()
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	if err := w.Write(bulk.Columns()); err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		if err := w.Write(bulk.ProductRow(p)); err != nil {
			t.Fatal(err)
		}
	}
	w.Flush()
	return b.String()
}

func same(t *testing.T, what string, got, want []products.Product) {
	t.Helper()
	g, _ := json.Marshal(got)
	w, _ := json.Marshal(want)
	if diff := cmp.Diff(string(w), string(g)); diff != "" {
		t.Errorf("%s (-want +got):\n%s", what, diff)
	}
}

// TestRoundTrip: the demo catalogue written in each format reads back as
// the same products, field for field.
func TestRoundTrip(t *testing.T) {
	want := demo.Products()
	for _, c := range []struct {
		f    bulk.Format
		file string
	}{{bulk.JSONLines, jsonLines(want)}, {bulk.CSV, csvFile(t, want)}} {
		got, bad, err := readAll(t, c.f, c.file)
		if err != nil || len(bad) > 0 {
			t.Fatalf("%s: %v, bad lines %v", c.f, err, bad)
		}
		same(t, string(c.f)+" round trip", got, want)
	}
}

// TestBadLines: every bad line is reported with its number and the
// fields at fault, and reading goes on after it.
func TestBadLines(t *testing.T) {
	ps := demo.Products()[:3]
	good := strings.Split(strings.TrimSuffix(jsonLines(ps), "\n"), "\n")
	badChannel := strings.Replace(good[1], `"channels":["`, `"channels":["carrier_pigeon","`, 1)
	file := strings.Join([]string{
		good[0],
		`{"product_id": "broken"`, // line 2: not JSON
		"",                        // line 3: blank, skipped
		badChannel,                // line 4: fails the check
		strings.Replace(good[2], `"name":`, `"nmae":"typo","name":`, 1), // line 5: unknown field
		good[0], // line 6: the id of line 1 again
		good[2],
	}, "\n")
	got, bad, err := readAll(t, bulk.JSONLines, file)
	if err != nil {
		t.Fatal(err)
	}
	same(t, "the good lines", got, []products.Product{ps[0], ps[2]})
	want := map[int64]string{2: "", 4: "/channels/0", 5: "/nmae", 6: "/product_id"}
	if len(bad) != len(want) {
		t.Fatalf("bad lines = %v, want lines 2, 4, 5 and 6", bad)
	}
	for _, le := range bad {
		ptr, ok := want[le.Line]
		if !ok || len(le.Errors) == 0 || le.Errors[0].Pointer != ptr || le.Errors[0].Detail == "" {
			t.Errorf("line %d reported as %+v, want a problem at %q", le.Line, le.Errors, ptr)
		}
	}
	if !strings.Contains(bad[3].Errors[0].Detail, "line 1") {
		t.Errorf("the repeated id does not name its first line: %s", bad[3].Errors[0].Detail)
	}
}

// TestBadCSV: CSV cells are checked one by one, pointing at their field;
// a record of the wrong length is a bad line; the header is checked
// before anything else.
func TestBadCSV(t *testing.T) {
	ps := demo.Products()[:2]
	file := csvFile(t, ps)
	lines := strings.SplitN(file, "\n", 3)
	row := strings.Replace(lines[1], ps[0].ProductID, "fresh-id", 1)
	badJSON := strings.Replace(row, `[{""format_option_id""`, `[{""format_option_idx""`, 1)
	if badJSON == row {
		t.Fatalf("the test's edit did not apply to %s", row)
	}
	short := "only,three,cells"
	got, bad, err := readAll(t, bulk.CSV, lines[0]+"\n"+badJSON+"\n"+short+"\n"+lines[2])
	if err != nil {
		t.Fatal(err)
	}
	same(t, "the good rows", got, ps[1:])
	if len(bad) != 2 || bad[0].Line != 2 || !strings.HasPrefix(bad[0].Errors[0].Pointer, "/format_options/0") || bad[1].Line != 3 {
		t.Fatalf("bad lines = %+v %+v", bad[0], bad[1])
	}

	for header, want := range map[string]string{
		"":                        "empty",
		"product_id,name,flavour": "flavour",
		"product_id,name":         "lacks",
		"product_id,product_id":   "twice",
	} {
		_, err := bulk.NewReader(strings.NewReader(header), bulk.CSV, check)
		var fe *bulk.FileError
		if !errors.As(err, &fe) || fe.Line != 1 || !strings.Contains(fe.Detail, want) {
			t.Errorf("header %q: %v, want a file error at line 1 saying %q", header, err, want)
		}
	}
}

// TestLineTooLong: a line past the limit stops the read instead of
// growing without bound.
func TestLineTooLong(t *testing.T) {
	long := `{"product_id":"` + strings.Repeat("x", bulk.MaxLine) + `"}`
	for _, f := range []bulk.Format{bulk.JSONLines, bulk.CSV} {
		file := long
		if f == bulk.CSV {
			file = strings.Join(bulk.Columns(), ",") + "\n" + strings.Repeat("x", bulk.MaxLine+1)
		}
		_, _, err := readAll(t, f, file)
		var fe *bulk.FileError
		if !errors.As(err, &fe) || !strings.Contains(fe.Detail, "longer than") {
			t.Errorf("%s: a line of over %d bytes read as %v", f, bulk.MaxLine, err)
		}
	}
}
