package admin

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/storefront/storefront/audit"
	"github.com/storefront/storefront/bulk"
	"github.com/storefront/storefront/internal/clock"
	"github.com/storefront/storefront/internal/limit"
	"github.com/storefront/storefront/jsonfield"
	"github.com/storefront/storefront/ledger"
	"github.com/storefront/storefront/products"
	"github.com/storefront/storefront/store"
)

// DefaultMaxImport is the largest catalogue file an import accepts by
// default, in bytes.
const DefaultMaxImport = 2 << 30

// ImportReport says what an import did.
type ImportReport struct {
	Saved bool `json:"saved"`
	// Version is the catalogue version the import saved.
	Version *store.CatalogueVersion `json:"version,omitempty"`
	// Lines were read; Products were good; BadLines were not.
	Lines    int64 `json:"lines"`
	Products int64 `json:"products"`
	BadLines int64 `json:"bad_lines"`
	// Skipped says the bad lines were left out at the caller's asking.
	Skipped bool `json:"skipped_bad_lines,omitempty"`
	// Errors are the bad lines of an unstreamed answer, the first
	// maxReportedLines of them; a streamed answer sends each bad line as
	// its own event instead.
	Errors []bulk.LineError `json:"errors,omitempty"`
}

// importEvent is one line of a streamed import.
type importEvent struct {
	Event string `json:"event"`
	// progress
	Lines    int64 `json:"lines,omitempty"`
	Products int64 `json:"products,omitempty"`
	BadLines int64 `json:"bad_lines,omitempty"`
	// bad_line
	Line   *bulk.LineError `json:"line,omitempty"`
	Report *ImportReport   `json:"report,omitempty"`
	// failed
	Problem *Problem `json:"problem,omitempty"`
}

// maxReportedLines bounds the bad lines an unstreamed answer lists.
const maxReportedLines = 10_000

// errRefused ends an import whose file has bad lines: nothing is saved.
var errRefused = errors.New("the file has bad lines")

// importCatalogue streams a file into the catalogue as one version.
//
// The file is the body, read line by line and never held whole: JSON Lines
// or CSV (?format=, else the Content-Type). Each line is checked as a
// single product save is checked. Any bad line refuses the whole file,
// unless ?skip_bad_lines=true, and every bad line is reported with its
// number and fields. ?mode=replace removes the products the file does not
// name; the default merges. If-Match is required, as for every catalogue
// write. With Accept: application/x-ndjson the answer streams progress,
// each bad line as it is found and the report at the end.
func (h *Handler) importCatalogue(c echo.Context) error {
	match, err := ifMatch(c)
	if err != nil {
		return err
	}
	if match, err = h.catalogueMatch(c, match); err != nil {
		return err
	}
	cats, ok := h.Store.(store.Catalogues)
	if !ok {
		return newProblem(http.StatusNotImplemented, "no-import", "Imports unavailable", "this store cannot import catalogues")
	}
	q := c.QueryParams()
	format := bulk.FormatOf(c.Request().Header.Get("Content-Type"), "")
	if s := q.Get("format"); s != "" {
		if format, err = bulk.ParseFormat(s); err != nil {
			return badQuery("/format", err.Error())
		}
	}
	replace := false
	switch q.Get("mode") {
	case "", "merge":
	case "replace":
		replace = true
	default:
		return badQuery("/mode", "mode must be merge or replace")
	}
	skip, _ := strconv.ParseBool(q.Get("skip_bad_lines"))
	note, err := changeNote(c)
	if err != nil {
		return err
	}
	lint, err := h.productLint(c.Request().Context(), pub(c))
	if err != nil {
		return err
	}

	// The server gives an import its bulk deadline (see Bulk): a large
	// file over a slow link takes longer than other requests may.
	w := c.Response()
	rc := http.NewResponseController(w)
	stream := wantsStream(c)
	var send func(importEvent)
	if stream {
		// Progress goes out while the file still comes in.
		_ = rc.EnableFullDuplex()
		w.Header().Set(echo.HeaderContentType, ndjson)
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(http.StatusOK)
		enc := json.NewEncoder(w)
		send = func(ev importEvent) {
			_ = enc.Encode(ev)
			w.Flush()
		}
	}

	rep := ImportReport{Skipped: skip}
	rd, err := bulk.NewReader(c.Request().Body, format, func(p *products.Product) error {
		if err := h.checkProduct(p); err != nil {
			return err
		}
		return lint.line(p)
	})
	var last clock.Stopwatch
	next := func() (products.Product, error) {
		for {
			if stream && last.Elapsed() >= 250*time.Millisecond {
				last = clock.Start()
				send(importEvent{Event: "progress", Lines: rd.Line(), Products: rep.Products, BadLines: rep.BadLines})
			}
			p, err := rd.Next()
			rep.Lines = rd.Line()
			var le *bulk.LineError
			switch {
			case errors.As(err, &le):
				rep.BadLines++
				if stream {
					send(importEvent{Event: "bad_line", Line: le})
				} else if len(rep.Errors) < maxReportedLines {
					rep.Errors = append(rep.Errors, *le)
				}
				continue
			case errors.Is(err, io.EOF):
				if rep.BadLines > 0 && !skip {
					return p, errRefused
				}
				return p, io.EOF
			case err != nil:
				return p, err
			}
			rep.Products++
			if rep.BadLines > 0 && !skip {
				// The file is refused already: read on only to report
				// every bad line, sending nothing more to the store.
				continue
			}
			return p, nil
		}
	}
	var v store.CatalogueVersion
	if err == nil {
		v, err = cats.ImportCatalogue(c.Request().Context(), pub(c), store.CatalogueImport{
			Replace: replace, IfMatch: match, Author: admin(c).Name, Note: note,
		}, next)
	}
	fail := h.importFailure(c, err, &rep)
	switch {
	case fail == nil:
		rep.Saved, rep.Version = true, &v
		h.Metrics.Import(pub(c), "saved")
		// Recorded before the answer: a failure to record is the answer.
		fail = h.Record(c, audit.CatalogueImport, "catalogue", importDetail(v, &rep, replace))
	case errors.Is(err, errRefused):
		h.Metrics.Import(pub(c), "refused")
	default:
		h.Metrics.Import(pub(c), "failed")
	}
	if !stream {
		if fail != nil {
			return fail
		}
		etag(c, v.Version)
		return c.JSON(http.StatusOK, rep)
	}
	if fail != nil {
		if c.Request().Context().Err() != nil {
			return nil
		}
		p := h.problemOf(fail, c)
		send(importEvent{Event: "failed", Problem: &p, Report: &rep})
		return nil
	}
	send(importEvent{Event: "done", Report: &rep})
	return nil
}

// importDetail is what the audit trail keeps of an import.
func importDetail(v store.CatalogueVersion, rep *ImportReport, replace bool) map[string]string {
	d := catalogueDetail(v)
	d["mode"] = "merge"
	if replace {
		d["mode"] = "replace"
	}
	d["lines"] = strconv.FormatInt(rep.Lines, 10)
	if rep.BadLines > 0 {
		d["bad_lines_skipped"] = strconv.FormatInt(rep.BadLines, 10)
	}
	return d
}

// importFailure turns an import's error into the problem to answer.
func (h *Handler) importFailure(c echo.Context, err error, rep *ImportReport) error {
	var (
		fe  *bulk.FileError
		mbe *http.MaxBytesError
	)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, errRefused):
		p := newProblem(http.StatusUnprocessableEntity, "bad-lines", "Bad lines",
			strconv.FormatInt(rep.BadLines, 10)+" line(s) of the file are not valid products; nothing was saved. Fix them, or import with skip_bad_lines=true to save the others")
		p.P.BadLines = rep.Errors
		if len(rep.Errors) > 0 && len(rep.Errors[0].Errors) > 0 {
			p.P.Pointer = rep.Errors[0].Errors[0].Pointer
		}
		return p
	case errors.As(err, &fe):
		return newProblem(http.StatusUnprocessableEntity, "bad-file", "Unreadable file", fe.Error()+"; nothing was saved")
	case errors.As(err, &mbe) || limit.Timeout(err):
		c.Response().Header().Set("Connection", "close")
		return bodyProblem(limit.Classify(err))
	case errors.Is(err, store.ErrConflict):
		return h.writeErr(c, store.ErrConflict)
	}
	return err
}

func badQuery(pointer, detail string) error {
	p := newProblem(http.StatusBadRequest, "invalid", "Invalid query", detail)
	p.P.Pointer = pointer
	p.P.Errors = []jsonfield.Field{{Pointer: pointer, Detail: detail}}
	return p
}

// checkProduct checks a product as every catalogue write does.
func (h *Handler) checkProduct(p *products.Product) error {
	return p.Validate()
}

// attachment starts a file download of format named name.
func attachment(c echo.Context, f bulk.Format, name string) {
	ext := ".jsonl"
	if f == bulk.CSV {
		ext = ".csv"
	}
	h := c.Response().Header()
	h.Set(echo.HeaderContentType, f.ContentType())
	h.Set(echo.HeaderContentDisposition, `attachment; filename="`+name+ext+`"`)
	h.Set("Cache-Control", "no-store")
	c.Response().WriteHeader(http.StatusOK)
}

func exportFormat(c echo.Context) (bulk.Format, error) {
	s := c.QueryParam("format")
	if s == "" {
		return bulk.JSONLines, nil
	}
	f, err := bulk.ParseFormat(s)
	if err != nil {
		return "", badQuery("/format", err.Error())
	}
	return f, nil
}

// exportCatalogue streams the catalogue as a file an import reads back.
func (h *Handler) exportCatalogue(c echo.Context) error {
	f, err := exportFormat(c)
	if err != nil {
		return err
	}
	cats, ok := h.Store.(store.Catalogues)
	if !ok {
		return newProblem(http.StatusNotImplemented, "no-export", "Exports unavailable", "this store cannot export catalogues")
	}
	started := false
	var cw *csv.Writer
	_, err = cats.WalkCatalogue(c.Request().Context(), pub(c), func(p products.Product) error {
		if !started {
			started = true
			attachment(c, f, pub(c)+"-catalogue")
			if f == bulk.CSV {
				cw = csv.NewWriter(c.Response())
				if err := cw.Write(bulk.Columns()); err != nil {
					return err
				}
			}
		}
		if f == bulk.CSV {
			return cw.Write(bulk.ProductRow(p))
		}
		_, err := c.Response().Write(bulk.EncodeProduct(p))
		return err
	})
	return h.finishExport(c, f, started, cw, err, bulk.Columns())
}

// decisionColumns are the columns of a decisions export in CSV.
var decisionColumns = []string{"sequence", "time", "task", "arm", "slug", "account", "principal", "rule_ids", "rulebook_version",
	"request_digest", "response_digest", "sandbox", "forced", "entry_hash", "prev_hash"}

func decisionRow(d Decision) []string {
	return []string{strconv.FormatInt(d.Sequence, 10), d.Time.UTC().Format(time.RFC3339Nano), d.Task, d.Arm, string(d.Slug), d.Account, d.Principal,
		bulk.Cell(d.RuleIDs), strconv.FormatInt(d.RulebookVersion, 10), d.RequestDigest, d.ResponseDigest,
		bulk.Bool(d.Sandbox), bulk.Bool(d.Forced), d.Hash, d.PrevHash}
}

// exportDecisions streams the ledger's entries that pass the decisions
// table's filters (arm, slug, account, since, until), oldest first.
func (h *Handler) exportDecisions(c echo.Context) error {
	f, err := exportFormat(c)
	if err != nil {
		return err
	}
	filter, err := filterOf(c)
	if err != nil {
		return err
	}
	filter.Limit, filter.Before = 0, 0
	ctx := c.Request().Context()
	if _, err := h.Store.Publisher(ctx, pub(c)); err != nil {
		return err
	}
	attachment(c, f, pub(c)+"-decisions")
	var cw *csv.Writer
	enc := json.NewEncoder(c.Response())
	if f == bulk.CSV {
		cw = csv.NewWriter(c.Response())
		if err := cw.Write(decisionColumns); err != nil {
			return nil
		}
	}
	err = h.Store.WalkLedger(ctx, pub(c), func(e ledger.Entry) error {
		if !store.Matches(e, filter) {
			return nil
		}
		if f == bulk.CSV {
			return cw.Write(decisionRow(decisionOf(e)))
		}
		return enc.Encode(decisionOf(e))
	})
	return h.finishExport(c, f, true, cw, err, decisionColumns)
}

// finishExport flushes an export. An error before anything was written is
// answered as a problem; after, the file is cut short, which the caller
// sees as a truncated download, and it is logged.
func (h *Handler) finishExport(c echo.Context, f bulk.Format, started bool, cw *csv.Writer, err error, header []string) error {
	if !started && err == nil {
		// An empty catalogue: a file with no products.
		attachment(c, f, pub(c)+"-catalogue")
		if f == bulk.CSV {
			cw = csv.NewWriter(c.Response())
			err = cw.Write(header)
		}
	}
	if cw != nil {
		cw.Flush()
	}
	if err != nil {
		if !started {
			return err
		}
		if !errors.Is(err, context.Canceled) {
			h.Log.Error("export cut short", "path", c.Request().URL.Path, "err", err)
		}
		return nil
	}
	return nil
}

func (h *Handler) problemOf(err error, c echo.Context) Problem {
	var pe *ProblemError
	if errors.As(err, &pe) {
		pe.P.Instance = c.Request().URL.Path
		return pe.P
	}
	h.Log.Error("import failed", "path", c.Request().URL.Path, "err", err)
	return newProblem(http.StatusInternalServerError, "internal", "Internal error", "the import failed; nothing was saved").P
}
