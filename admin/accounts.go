package admin

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/storefront/storefront/adcp"
	"github.com/storefront/storefront/decline"
	"github.com/storefront/storefront/problem"
	"github.com/storefront/storefront/store"
)

func (h *Handler) listAccounts(c echo.Context) error {
	as, err := h.Store.ListAccounts(c.Request().Context(), pub(c))
	if err != nil {
		return err
	}
	if as == nil {
		as = []store.Account{}
	}
	return c.JSON(http.StatusOK, map[string]any{"accounts": as})
}

// AccountSettings are the account fields an admin sets.
type AccountSettings struct {
	Operator    string `json:"operator"`
	BrandDomain string `json:"brand_domain"`
	BrandID     string `json:"brand_id,omitempty"`
	Sandbox     bool   `json:"sandbox"`
	// DisclosureCap is the account's trust tier: the most any rule may
	// disclose to it.
	DisclosureCap *decline.Level `json:"disclosure_cap,omitempty"`
}

func (h *Handler) putAccount(c echo.Context) error {
	b, err := body(c)
	if err != nil {
		return err
	}
	var s AccountSettings
	if err := problem.Decode(b, &s); err != nil {
		return invalid(err, "")
	}
	var v problem.Invalid
	if !adcp.IsDomain(s.Operator) {
		v.Add("/operator", "operator must be a lower-case domain name")
	}
	if !adcp.IsDomain(s.BrandDomain) {
		v.Add("/brand_domain", "brand_domain must be a lower-case domain name")
	}
	if err := v.Err(); err != nil {
		return invalid(err, "")
	}
	a := store.Account{ID: c.Param("id"), Operator: s.Operator, BrandDomain: s.BrandDomain, BrandID: s.BrandID, Sandbox: s.Sandbox, Disclosure: decline.Exact}
	if s.DisclosureCap != nil {
		a.Disclosure = *s.DisclosureCap
	}
	err = h.Store.PutAccount(c.Request().Context(), pub(c), a)
	if errors.Is(err, store.ErrExists) {
		return newProblem(http.StatusConflict, "exists", "Account exists", "another account already has this operator and brand")
	}
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, a)
}

// BuyerTokenRequest creates a buyer token.
type BuyerTokenRequest struct {
	ID       string   `json:"id"`
	Operator string   `json:"operator"`
	Accounts []string `json:"accounts,omitempty"`
}

func (h *Handler) createBuyerToken(c echo.Context) error {
	b, err := body(c)
	if err != nil {
		return err
	}
	var r BuyerTokenRequest
	if err := problem.Decode(b, &r); err != nil {
		return invalid(err, "")
	}
	var v problem.Invalid
	if r.ID == "" || len(r.ID) > 128 {
		v.Add("/id", "id is required (at most 128 characters)")
	}
	if !adcp.IsDomain(r.Operator) {
		v.Add("/operator", "operator must be a lower-case domain name")
	}
	if err := v.Err(); err != nil {
		return invalid(err, "")
	}
	token := NewToken("sf_buyer_")
	if err := h.Store.PutBuyerToken(c.Request().Context(), pub(c), store.TokenDigest(token), store.Buyer{ID: r.ID, Operator: r.Operator, Accounts: r.Accounts}); err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, map[string]any{"token": token, "buyer": r,
		"note": "the token is shown once; the storefront keeps only its SHA-256 digest"})
}

// NewToken returns a fresh random token with a prefix.
func NewToken(prefix string) string {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return prefix + hex.EncodeToString(b)
}
