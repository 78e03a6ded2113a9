// Package bulk reads and writes catalogues as files: JSON Lines (one
// product document a line) and CSV (one product a row, lists separated by
// ";" and nested objects as JSON in their cell). A file is read one line at
// a time, so a file of any size is never held in memory; each line is
// checked on its own and a bad one is reported with its line number and
// the fields at fault, so that a publisher can fix every bad line in one
// go.
//
// The package knows the formats only. What a good product is comes from
// the caller (the admin API checks a product as it checks a single save),
// and whether a file with bad lines is saved is the caller's choice.
package bulk

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/storefront/storefront/jsonfield"
	"github.com/storefront/storefront/products"
)

// Format is a file format.
type Format string

const (
	JSONLines Format = "jsonl"
	CSV       Format = "csv"
)

// ParseFormat reads a format name.
func ParseFormat(s string) (Format, error) {
	switch strings.ToLower(s) {
	case "jsonl", "ndjson", "json-lines":
		return JSONLines, nil
	case "csv":
		return CSV, nil
	}
	return "", fmt.Errorf("format %q: want jsonl or csv", s)
}

// FormatOf guesses a format from a media type or a file name: CSV for
// text/csv and .csv, JSON Lines otherwise.
func FormatOf(contentType, name string) Format {
	if strings.Contains(contentType, "csv") || strings.HasSuffix(strings.ToLower(name), ".csv") {
		return CSV
	}
	return JSONLines
}

// ContentType is the media type of a format.
func (f Format) ContentType() string {
	if f == CSV {
		return "text/csv; charset=utf-8"
	}
	return "application/x-ndjson"
}

// MaxLine is the longest line (or CSV record) a file may hold.
const MaxLine = 1 << 20

// LineError is one bad line: its number (from 1) and what is wrong with
// it, each problem pointing at its field within the product.
type LineError struct {
	Line   int64             `json:"line"`
	Errors []jsonfield.Field `json:"errors"`
}

func (e *LineError) Error() string {
	return fmt.Sprintf("line %d: %v", e.Line, jsonfield.Invalid(e.Errors))
}

// FileError is a fault of the file as a whole (an unreadable CSV header, a
// line past MaxLine): nothing after it can be read.
type FileError struct {
	Line   int64
	Detail string
}

func (e *FileError) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Detail) }

// Reader reads products from a file one line at a time.
type Reader struct {
	format Format
	check  func(*products.Product) error
	lines  *bufio.Reader
	csv    *csv.Reader
	cols   []column
	line   int64
	// seen is the line of each product id read so far, to report an id
	// given twice.
	seen map[string]int64
}

// NewReader reads a file in format f; check, when set, is applied to each
// product that decodes. A CSV file's header is read here.
func NewReader(r io.Reader, f Format, check func(*products.Product) error) (*Reader, error) {
	rd := &Reader{format: f, check: check, seen: map[string]int64{}}
	if f == JSONLines {
		rd.lines = bufio.NewReaderSize(r, 64<<10)
		return rd, nil
	}
	rd.csv = csv.NewReader(&limitedLines{r: bufio.NewReaderSize(r, 64<<10)})
	rd.csv.ReuseRecord = true
	header, err := rd.csv.Read()
	rd.line = 1
	if errors.Is(err, io.EOF) {
		return nil, &FileError{Line: 1, Detail: "the file is empty: a CSV catalogue starts with a header row naming its columns"}
	}
	if err != nil {
		return nil, &FileError{Line: 1, Detail: "the header row cannot be read: " + csvDetail(err)}
	}
	if rd.cols, err = columnsOf(header); err != nil {
		return nil, &FileError{Line: 1, Detail: err.Error()}
	}
	rd.csv.FieldsPerRecord = len(header)
	return rd, nil
}

// Line is the number of the last line read.
func (r *Reader) Line() int64 { return r.line }

// Next reads the next product. It returns a *LineError for a bad line
// (reading can go on), a *FileError or a read error when the file cannot
// be read further, and io.EOF at its end. Blank lines are skipped.
func (r *Reader) Next() (products.Product, error) {
	for {
		var (
			p      products.Product
			fields jsonfield.Invalid
			err    error
			line   int64
		)
		if r.format == JSONLines {
			var raw []byte
			raw, err = r.readLine()
			line = r.line
			if err != nil {
				return p, err
			}
			raw = bytes.TrimSpace(raw)
			if len(raw) == 0 {
				continue
			}
			if derr := jsonfield.Decode(raw, &p); derr != nil {
				fields = invalidOf(derr, "")
				for i := range fields {
					// The decoder speaks of a request body; here it is a line.
					fields[i].Detail = strings.Replace(fields[i].Detail, "the body", "the line", 1)
				}
			}
		} else {
			var rec []string
			rec, err = r.csv.Read()
			if errors.Is(err, io.EOF) {
				return p, io.EOF
			}
			if errors.Is(err, errLineTooLong) {
				return p, &FileError{Line: r.line + 1, Detail: fmt.Sprintf("a line is longer than %d bytes", MaxLine)}
			}
			var pe *csv.ParseError
			switch {
			case errors.As(err, &pe):
				r.line = max(r.line+1, int64(pe.StartLine))
				return p, &LineError{Line: r.line, Errors: []jsonfield.Field{{Pointer: "", Detail: csvDetail(err)}}}
			case err != nil:
				return p, err
			}
			start, _ := r.csv.FieldPos(0)
			r.line = int64(start)
			line = r.line
			if blank(rec) {
				continue
			}
			fields = r.decodeRecord(rec, &p)
		}
		if len(fields) == 0 && r.check != nil {
			if cerr := r.check(&p); cerr != nil {
				fields = invalidOf(cerr, "")
			}
		}
		if len(fields) == 0 && p.ProductID != "" {
			if first, dup := r.seen[p.ProductID]; dup {
				fields.Add("/product_id", "product %q is also on line %d; a file names each product once", p.ProductID, first)
			} else {
				r.seen[p.ProductID] = line
			}
		}
		if len(fields) > 0 {
			return products.Product{}, &LineError{Line: line, Errors: fields}
		}
		return p, nil
	}
}

// readLine reads one line of a JSON Lines file, without its newline.
func (r *Reader) readLine() ([]byte, error) {
	var buf []byte
	for {
		chunk, err := r.lines.ReadSlice('\n')
		if len(buf)+len(chunk) > MaxLine+1 {
			return nil, &FileError{Line: r.line + 1, Detail: fmt.Sprintf("a line is longer than %d bytes", MaxLine)}
		}
		buf = append(buf, chunk...)
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			if len(buf) == 0 {
				return nil, io.EOF
			}
			r.line++
			return buf, nil
		case err != nil:
			return nil, err
		}
		r.line++
		return buf, nil
	}
}

// invalidOf turns a validation error into field problems under prefix.
func invalidOf(err error, prefix string) jsonfield.Invalid {
	var inv jsonfield.Invalid
	if errors.As(err, &inv) {
		out := make(jsonfield.Invalid, len(inv))
		for i, f := range inv {
			out[i] = jsonfield.Field{Pointer: prefix + f.Pointer, Detail: f.Detail}
		}
		return out
	}
	return jsonfield.Invalid{{Pointer: prefix, Detail: err.Error()}}
}

func blank(rec []string) bool {
	for _, c := range rec {
		if strings.TrimSpace(c) != "" {
			return false
		}
	}
	return true
}

func csvDetail(err error) string {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

var errLineTooLong = errors.New("line too long")

// limitedLines passes bytes through, failing once a line runs past
// MaxLine, so that a CSV record cannot grow without bound.
type limitedLines struct {
	r   *bufio.Reader
	run int
}

func (l *limitedLines) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	for _, b := range p[:n] {
		if b == '\n' {
			l.run = 0
			continue
		}
		l.run++
		if l.run > MaxLine {
			return n, errLineTooLong
		}
	}
	return n, err
}

// jsonCell decodes a cell holding JSON into v, strictly.
func jsonCell(cell string, v any) error {
	return jsonfield.Decode([]byte(cell), v)
}

// encode writes v as compact JSON without HTML escaping.
func encode(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// EncodeProduct is a product as a line of a JSON Lines file.
func EncodeProduct(p products.Product) []byte {
	return []byte(encode(p) + "\n")
}
