package admin

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/storefront/storefront/audit"
	"github.com/storefront/storefront/jsonfield"
	"github.com/storefront/storefront/merch"
	"github.com/storefront/storefront/store"
	"github.com/storefront/storefront/vocab"
)

// Version is one rulebook version as the API returns it.
type Version struct {
	store.RulebookVersion
	// Current marks the version in force.
	Current bool `json:"current"`
}

// VersionSummary is a version without its body.
type VersionSummary struct {
	Version   int64  `json:"version"`
	CreatedAt string `json:"created_at"`
	Author    string `json:"author"`
	Note      string `json:"note,omitempty"`
	Rules     int    `json:"rules"`
	Current   bool   `json:"current"`
}

func (h *Handler) getRulebook(c echo.Context) error {
	rv, err := h.Store.Rulebook(c.Request().Context(), pub(c))
	if errors.Is(err, store.ErrNotFound) {
		etag(c, 0)
		return newProblem(http.StatusNotFound, "no-rulebook", "No rulebook",
			"this publisher has no rulebook yet; PUT one with If-Match \"0\". Until then get_products answers with the error arm")
	}
	if err != nil {
		return err
	}
	etag(c, rv.Version)
	return c.JSON(http.StatusOK, Version{rv, true})
}

// decodeRulebook reads and validates a whole rulebook document.
func decodeRulebook(b []byte, prefix string) (merch.Rulebook, error) {
	var rb merch.Rulebook
	if err := jsonfield.Decode(b, &rb); err != nil {
		return rb, invalid(err, prefix)
	}
	if err := rb.Validate(); err != nil {
		return rb, invalid(err, prefix)
	}
	if err := rb.Lint(); err != nil {
		return rb, invalid(err, prefix)
	}
	return rb, nil
}

func (h *Handler) putRulebook(c echo.Context) error {
	match, err := ifMatch(c)
	if err != nil {
		return err
	}
	b, err := body(c)
	if err != nil {
		return err
	}
	rb, err := decodeRulebook(b, "")
	if err != nil {
		return err
	}
	if err := h.servedRulebook(c.Request().Context(), pub(c), &rb); err != nil {
		return refused(err, "")
	}
	note, err := changeNote(c)
	if err != nil {
		return err
	}
	return h.save(c, rb, match, note, audit.RulebookSave)
}

// save stores rb as a new version and records the action in the audit
// trail.
func (h *Handler) save(c echo.Context, rb merch.Rulebook, match int64, note string, action audit.Action) error {
	rv, err := h.Store.SaveRulebook(c.Request().Context(), pub(c), rb, match, admin(c).Name, note)
	if errors.Is(err, store.ErrConflict) {
		vs, verr := h.Store.Versions(c.Request().Context(), pub(c))
		if verr != nil {
			return verr
		}
		return stale(vs.Rulebook)
	}
	if err != nil {
		return err
	}
	detail := map[string]string{"version": strconv.FormatInt(rv.Version, 10), "previous_version": strconv.FormatInt(match, 10)}
	if note != "" {
		detail["note"] = note
	}
	if err := h.Record(c, action, "rulebook", detail); err != nil {
		return err
	}
	etag(c, rv.Version)
	return c.JSON(http.StatusOK, Version{rv, true})
}

// validateRulebook checks a draft without saving it.
func (h *Handler) validateRulebook(c echo.Context) error {
	b, err := body(c)
	if err != nil {
		return err
	}
	rb, err := decodeRulebook(b, "")
	if err != nil {
		return err
	}
	if err := h.servedRulebook(c.Request().Context(), pub(c), &rb); err != nil {
		return refused(err, "")
	}
	return c.JSON(http.StatusOK, map[string]any{"valid": true})
}

func (h *Handler) listVersions(c echo.Context) error {
	hist, err := h.Store.RulebookHistory(c.Request().Context(), pub(c))
	if err != nil {
		return err
	}
	out := make([]VersionSummary, 0, len(hist))
	for i, v := range hist {
		out = append(out, VersionSummary{
			Version: v.Version, CreatedAt: v.CreatedAt.UTC().Format("2006-01-02T15:04:05Z"),
			Author: v.Author, Note: v.Note, Rules: len(v.Rulebook.Rules), Current: i == 0,
		})
	}
	return c.JSON(http.StatusOK, map[string]any{"versions": out})
}

func versionParam(s, name string) (int64, error) {
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v < 1 {
		return 0, newProblem(http.StatusBadRequest, "bad-version", "Bad version", name+" must be a version number (1 or more)")
	}
	return v, nil
}

func (h *Handler) getVersion(c echo.Context) error {
	n, err := versionParam(c.Param("version"), "version")
	if err != nil {
		return err
	}
	rv, err := h.Store.RulebookAt(c.Request().Context(), pub(c), n)
	if err != nil {
		return err
	}
	vs, err := h.Store.Versions(c.Request().Context(), pub(c))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, Version{rv, rv.Version == vs.Rulebook})
}

func (h *Handler) diff(c echo.Context) error {
	from, to, err := diffRange(c)
	if err != nil {
		return err
	}
	a, err := h.Store.RulebookAt(c.Request().Context(), pub(c), from)
	if err != nil {
		return err
	}
	b, err := h.Store.RulebookAt(c.Request().Context(), pub(c), to)
	if err != nil {
		return err
	}
	changes, err := Diff(a.Rulebook, b.Rulebook)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"from": from, "to": to, "changes": changes})
}

// diffRange reads the from and to versions of a diff.
func diffRange(c echo.Context) (from, to int64, err error) {
	if from, err = versionParam(c.QueryParam("from"), "from"); err != nil {
		return 0, 0, err
	}
	to, err = versionParam(c.QueryParam("to"), "to")
	return from, to, err
}

// RollbackRequest names the version to restore.
type RollbackRequest struct {
	Version int64 `json:"version"`
}

// rollbackRequest reads a rollback: the version to restore and the
// If-Match version.
func rollbackRequest(c echo.Context) (RollbackRequest, int64, error) {
	var req RollbackRequest
	match, err := versionedWrite(c, &req)
	if err != nil {
		return req, 0, err
	}
	if req.Version < 1 {
		return req, 0, invalid(jsonfield.Invalid{{Pointer: "/version", Detail: "version must be 1 or more"}}, "")
	}
	return req, match, nil
}

// rollback saves a copy of an earlier version as the newest version:
// history is never rewritten.
func (h *Handler) rollback(c echo.Context) error {
	req, match, err := rollbackRequest(c)
	if err != nil {
		return err
	}
	old, err := h.Store.RulebookAt(c.Request().Context(), pub(c), req.Version)
	if errors.Is(err, store.ErrNotFound) {
		return invalid(jsonfield.Invalid{{Pointer: "/version", Detail: "there is no version " + strconv.FormatInt(req.Version, 10)}}, "")
	}
	if err != nil {
		return err
	}
	if err := old.Rulebook.Validate(); err != nil {
		return invalid(err, "/rulebook")
	}
	// The version was served once, but the catalogue may have changed
	// since: what it would serve now is checked like a new save.
	if err := h.servedRulebook(c.Request().Context(), pub(c), &old.Rulebook); err != nil {
		return refused(err, "/rulebook")
	}
	return h.save(c, old.Rulebook, match, "rollback to version "+strconv.FormatInt(req.Version, 10), audit.RulebookRollback)
}

func (h *Handler) getVoice(c echo.Context) error {
	rv, err := h.Store.Rulebook(c.Request().Context(), pub(c))
	if err != nil {
		return err
	}
	etag(c, rv.Version)
	return c.JSON(http.StatusOK, rv.Rulebook.Voice)
}

// putVoice replaces the voice section: a new rulebook version with the
// same rules.
func (h *Handler) putVoice(c echo.Context) error {
	var v vocab.Voice
	match, err := versionedWrite(c, &v)
	if err != nil {
		return err
	}
	rv, err := h.Store.Rulebook(c.Request().Context(), pub(c))
	if errors.Is(err, store.ErrNotFound) {
		return newProblem(http.StatusConflict, "no-rulebook", "No rulebook", "save a rulebook before its voice")
	}
	if err != nil {
		return err
	}
	rb := rv.Rulebook
	rb.Voice = v
	if err := rb.Validate(); err != nil {
		return invalid(onlyVoice(err), "")
	}
	if err := rb.Lint(); err != nil {
		return invalid(onlyVoice(err), "")
	}
	if err := h.servedRulebook(c.Request().Context(), pub(c), &rb); err != nil {
		return refused(onlyVoice(err), "")
	}
	return h.save(c, rb, match, "voice", audit.VoiceSave)
}

// onlyVoice rewrites /voice/... pointers to be relative to the voice body.
func onlyVoice(err error) error {
	var inv jsonfield.Invalid
	if !errors.As(err, &inv) {
		return err
	}
	var out jsonfield.Invalid
	for _, f := range inv {
		if len(f.Pointer) >= 6 && f.Pointer[:6] == "/voice" {
			f.Pointer = f.Pointer[6:]
		}
		out = append(out, f)
	}
	return out
}
