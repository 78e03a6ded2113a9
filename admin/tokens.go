package admin

import (
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/storefront/storefront/audit"
	"github.com/storefront/storefront/field"
	"github.com/storefront/storefront/jsonfield"
	"github.com/storefront/storefront/store"
	"github.com/storefront/storefront/tokens"
)

// TokenView is a token as the API lists it: its record and its state now.
// It never holds the secret or its digest.
type TokenView struct {
	store.Token
	// Status is active, rotated, expired or revoked.
	Status string `json:"status"`
}

func (h *Handler) view(t store.Token) TokenView {
	return TokenView{Token: t, Status: t.Status(h.now())}
}

// Longest lifetimes and overlaps a request may ask for.
const (
	maxExpiresIn = 10 * 365 * 24 * time.Hour
	maxOverlap   = 30 * 24 * time.Hour
)

// TokenRequest creates a token.
type TokenRequest struct {
	// Kind is admin or buyer.
	Kind string `json:"kind"`
	Name string `json:"name"`
	// ExpiresIn, a Go duration such as "720h", makes the token expire
	// that long after it is made; without it the token lasts until it is
	// revoked.
	ExpiresIn string `json:"expires_in,omitempty"`
	// Buyer is the principal a buyer token speaks for.
	Buyer *BuyerTokenRequest `json:"buyer,omitempty"`
}

// RotateRequest rotates a token.
type RotateRequest struct {
	// Overlap is how long the old token keeps working beside the new one
	// (a Go duration; "0s" or absent revokes it at once).
	Overlap string `json:"overlap,omitempty"`
	// ExpiresIn is the new token's lifetime, as at creation; without it
	// the new token lasts as long as the old one was made to last.
	ExpiresIn string `json:"expires_in,omitempty"`
}

// duration reads an optional duration field into v's problems.
func duration(v *jsonfield.Invalid, pointer, s string, allowZero bool, limit time.Duration) time.Duration {
	if s == "" {
		return 0
	}
	d, err := time.ParseDuration(s)
	switch {
	case err != nil:
		v.Add(pointer, "%s must be a duration such as \"720h\" or \"30m\"", strings.TrimPrefix(pointer, "/"))
	case d < 0 || (d == 0 && !allowZero):
		v.Add(pointer, "%s must be more than zero", strings.TrimPrefix(pointer, "/"))
	case d > limit:
		v.Add(pointer, "%s must be at most %s", strings.TrimPrefix(pointer, "/"), limit)
	}
	return d
}

// checkBuyer validates a buyer token's principal.
func checkBuyer(v *jsonfield.Invalid, prefix string, b BuyerTokenRequest) {
	v.Check(prefix+"/id", field.Identifier(b.ID))
	v.Check(prefix+"/operator", field.Hostname(b.Operator))
	if len(b.Accounts) > 100 {
		v.Add(prefix+"/accounts", "at most 100 accounts")
	}
	for i, a := range b.Accounts {
		v.Check(jsonfield.Join(prefix, "accounts", i), field.Identifier(a))
	}
}

// mint makes a token for the signed-in publisher (package tokens), records
// it, and answers with the secret, shown this once.
func (h *Handler) mint(c echo.Context, t store.Token, expiresIn time.Duration) error {
	now := h.now()
	t.Publisher, t.CreatedAt, t.CreatedBy, t.ExpiresAt = pub(c), now, admin(c).TokenID, tokens.Expiry(now, expiresIn)
	secret, stored, err := tokens.Mint(c.Request().Context(), h.Store, t)
	if err != nil {
		return err
	}
	if err := h.Record(c, audit.TokenCreate, stored.ID, tokens.Detail(stored)); err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, map[string]any{"token": secret, "record": h.view(stored),
		"note": "the token is shown once; the storefront keeps only its SHA-256 digest"})
}

func (h *Handler) createToken(c echo.Context) error {
	var r TokenRequest
	if err := decodeBody(c, &r); err != nil {
		return err
	}
	var v jsonfield.Invalid
	kind, ok := store.ParseTokenKind(r.Kind)
	if !ok {
		v.Add("/kind", "kind must be admin or buyer")
	}
	if err := tokens.CheckName(r.Name); err != nil {
		v.Add("/name", "%v", err)
	}
	expiresIn := duration(&v, "/expires_in", r.ExpiresIn, false, maxExpiresIn)
	var buyer *store.Buyer
	switch {
	case kind == store.BuyerToken && r.Buyer == nil:
		v.Add("/buyer", "a buyer token needs the buyer it speaks for")
	case kind == store.BuyerToken:
		checkBuyer(&v, "/buyer", *r.Buyer)
		buyer = &store.Buyer{ID: r.Buyer.ID, Operator: r.Buyer.Operator, Accounts: r.Buyer.Accounts}
	case r.Buyer != nil:
		v.Add("/buyer", "an admin token has no buyer")
	}
	if err := v.Err(); err != nil {
		return invalid(err, "")
	}
	return h.mint(c, store.Token{Kind: kind, Name: r.Name, Buyer: buyer}, expiresIn)
}

func (h *Handler) listTokens(c echo.Context) error {
	var kind store.TokenKind
	if s := c.QueryParam("kind"); s != "" {
		k, ok := store.ParseTokenKind(s)
		if !ok {
			return invalidQuery(jsonfield.Invalid{{Pointer: "/kind", Detail: "kind must be admin or buyer"}})
		}
		kind = k
	}
	ts, err := h.Store.ListTokens(c.Request().Context(), pub(c))
	if err != nil {
		return err
	}
	out := make([]TokenView, 0, len(ts))
	for _, t := range ts {
		if kind == "" || t.Kind == kind {
			out = append(out, h.view(t))
		}
	}
	return c.JSON(http.StatusOK, map[string]any{"tokens": out})
}

func (h *Handler) getToken(c echo.Context) error {
	t, err := h.Store.Token(c.Request().Context(), pub(c), c.Param("id"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, h.view(t))
}

// revokeToken refuses the token from the next request on, on every
// replica: nothing caches tokens.
func (h *Handler) revokeToken(c echo.Context) error {
	t, err := h.Store.Token(c.Request().Context(), pub(c), c.Param("id"))
	if err != nil {
		return err
	}
	if t.RevokedAt != nil {
		// Already revoked: nothing changes, so nothing is recorded.
		return c.JSON(http.StatusOK, h.view(t))
	}
	if t, err = h.Store.RevokeToken(c.Request().Context(), pub(c), t.ID, h.now()); err != nil {
		return err
	}
	if err := h.Record(c, audit.TokenRevoke, t.ID, tokens.Detail(t)); err != nil {
		return err
	}
	return c.JSON(http.StatusOK, h.view(t))
}

// rotateToken makes the token's successor and lets the old one work for
// the overlap, then refuses it.
func (h *Handler) rotateToken(c echo.Context) error {
	var r RotateRequest
	if err := decodeBody(c, &r); err != nil {
		return err
	}
	var v jsonfield.Invalid
	overlap := duration(&v, "/overlap", r.Overlap, true, maxOverlap)
	expiresIn := duration(&v, "/expires_in", r.ExpiresIn, false, maxExpiresIn)
	if err := v.Err(); err != nil {
		return invalid(err, "")
	}
	now := h.now()
	next := store.Token{CreatedAt: now, CreatedBy: admin(c).TokenID, ExpiresAt: tokens.Expiry(now, expiresIn)}
	secret, old, created, err := tokens.Rotate(c.Request().Context(), h.Store, pub(c), c.Param("id"), next, now.Add(overlap))
	if errors.Is(err, store.ErrConflict) {
		return newProblem(http.StatusConflict, "not-rotatable", "Token cannot be rotated",
			"the token is revoked, expired or already rotated; create a new token instead")
	}
	if err != nil {
		return err
	}
	if err := h.Record(c, audit.TokenRotate, old.ID, tokens.RotationDetail(old, created)); err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, map[string]any{"token": secret, "record": h.view(created), "replaced": h.view(old),
		"note": "the token is shown once; the storefront keeps only its SHA-256 digest"})
}
