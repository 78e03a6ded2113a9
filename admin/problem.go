package admin

import (
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/storefront/storefront/bulk"
	"github.com/storefront/storefront/jsonfield"
	"github.com/storefront/storefront/store"
)

// Problem is an RFC 9457 problem detail.
type Problem struct {
	Type     string            `json:"type"`
	Title    string            `json:"title"`
	Status   int               `json:"status"`
	Detail   string            `json:"detail,omitempty"`
	Instance string            `json:"instance,omitempty"`
	Errors   []jsonfield.Field `json:"errors,omitempty"`
	// Pointer is the first offending field, for clients that show one.
	Pointer string `json:"pointer,omitempty"`
	// CurrentVersion tells a stale writer what to re-read.
	CurrentVersion *int64 `json:"current_version,omitempty"`
	// BadLines are the bad lines of a refused import.
	BadLines []bulk.LineError `json:"bad_lines,omitempty"`
}

const problemBase = "https://storefront.github.io/problems/"

// ProblemError is an error that renders as a problem detail.
type ProblemError struct{ P Problem }

func (e *ProblemError) Error() string { return e.P.Title + ": " + e.P.Detail }

func newProblem(status int, kind, title, detail string) *ProblemError {
	return &ProblemError{Problem{Type: problemBase + kind, Title: title, Status: status, Detail: detail}}
}

func invalid(err error, prefix string) error {
	var v jsonfield.Invalid
	if !errors.As(err, &v) {
		return newProblem(http.StatusUnprocessableEntity, "invalid", "Invalid document", err.Error())
	}
	fields := make([]jsonfield.Field, len(v))
	for i, f := range v {
		fields[i] = jsonfield.Field{Pointer: prefix + f.Pointer, Detail: f.Detail}
	}
	p := newProblem(http.StatusUnprocessableEntity, "invalid", "Invalid document",
		"the document was refused whole; nothing was saved")
	p.P.Errors = fields
	if len(fields) > 0 {
		p.P.Pointer = fields[0].Pointer
	}
	return p
}

// invalidQuery is the problem for a query string that names bad fields.
func invalidQuery(err error) error {
	p := invalid(err, "").(*ProblemError)
	p.P.Status = http.StatusBadRequest
	p.P.Title = "Invalid query"
	return p
}

func notFound() error {
	return newProblem(http.StatusNotFound, "not-found", "Not found", "no such resource")
}

func stale(current int64) error {
	p := newProblem(http.StatusPreconditionFailed, "stale", "Stale edit",
		"the resource changed since you read it; re-read it, reapply your change and send the new version in If-Match")
	p.P.CurrentVersion = &current
	return p
}

// errorHandler renders every error under /admin/v1 as problem+json. Store
// errors map onto statuses; anything unexpected is logged in full and
// reported as an internal error without detail.
func (h *Handler) errorHandler(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	var pe *ProblemError
	var he *echo.HTTPError
	refused, isRefused := storeInvalid(err)
	switch {
	case errors.As(err, &pe):
	case isRefused:
		pe = refused
	case errors.Is(err, store.ErrNotFound):
		pe = notFound().(*ProblemError)
	case errors.Is(err, errPanicked):
		pe = newProblem(http.StatusInternalServerError, "internal", "Internal error", "")
	case errors.As(err, &he):
		msg, _ := he.Message.(string)
		if msg == "" {
			msg = http.StatusText(he.Code)
		}
		pe = newProblem(he.Code, "http", http.StatusText(he.Code), msg)
	default:
		h.Log.Error("admin request failed", "method", c.Request().Method, "path", c.Request().URL.Path, "err", err)
		pe = newProblem(http.StatusInternalServerError, "internal", "Internal error", "")
		if isUnavailable(err) {
			pe = newProblem(http.StatusServiceUnavailable, "unavailable", "Storage unavailable", "the storefront cannot reach its database; retry shortly")
		}
	}
	pe.P.Instance = c.Request().URL.Path
	b, _ := jsonMarshal(pe.P)
	c.Response().Header().Set(echo.HeaderContentType, "application/problem+json")
	c.Response().WriteHeader(pe.P.Status)
	_, _ = c.Response().Write(b)
}
