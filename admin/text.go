package admin

import (
	"errors"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/storefront/storefront/field"
	"github.com/storefront/storefront/jsonfield"
	"github.com/storefront/storefront/store"
)

// params checks the query string of every route before the route sees
// it: each value must be one line of text (field.Query), or the request
// is a 400 naming the parameter. (Ids in the path are the routes' own: a
// write checks the id it creates, and a lookup by an id no store can hold
// finds nothing.)
func (h *Handler) params(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		q := c.QueryParams()
		names := make([]string, 0, len(q))
		for name := range q {
			names = append(names, name)
		}
		sort.Strings(names)
		var bad jsonfield.Invalid
		for _, name := range names {
			if err := field.Text(name, false); err != nil {
				bad.Add("", "a query parameter's name %v", err)
				continue
			}
			for _, v := range q[name] {
				bad.Check(jsonfield.Pointer(name), field.Query.Check(v))
			}
		}
		if len(bad) > 0 {
			return invalidQuery(bad)
		}
		return next(c)
	}
}

// changeNote reads the X-Change-Note of a versioned write. Browsers send a
// header's characters as ISO-8859-1 bytes (the console allows Latin
// letters with accents), so a value that is not UTF-8 is read as
// ISO-8859-1; either way it must be a field.Note.
func changeNote(c echo.Context) (string, error) {
	note := c.Request().Header.Get("X-Change-Note")
	if !utf8.ValidString(note) {
		var b strings.Builder
		for i := 0; i < len(note); i++ {
			b.WriteRune(rune(note[i]))
		}
		note = b.String()
	}
	if err := field.Note.Check(note); err != nil {
		return "", invalid(jsonfield.Invalid{{Pointer: "", Detail: "the change note (X-Change-Note) " + err.Error()}}, "")
	}
	return note, nil
}

// storeInvalid is the problem for a write the store refused as
// store.ErrInvalid: the admin API checks every field before it writes, so
// this is the store's own guard speaking, with the store's pointers.
func storeInvalid(err error) (*ProblemError, bool) {
	if !errors.Is(err, store.ErrInvalid) {
		return nil, false
	}
	return invalid(err, "").(*ProblemError), true
}
