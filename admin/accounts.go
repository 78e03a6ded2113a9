package admin

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/storefront/storefront/audit"
	"github.com/storefront/storefront/field"
	"github.com/storefront/storefront/jsonfield"
	"github.com/storefront/storefront/store"
	"github.com/storefront/storefront/vocab"
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
	DisclosureCap *vocab.Level `json:"disclosure_cap,omitempty"`
}

func (h *Handler) putAccount(c echo.Context) error {
	b, err := body(c)
	if err != nil {
		return err
	}
	var s AccountSettings
	if err := jsonfield.Decode(b, &s); err != nil {
		return invalid(err, "")
	}
	var v jsonfield.Invalid
	v.Check("/account_id", field.Identifier(c.Param("id")))
	v.Check("/operator", field.Hostname(s.Operator))
	v.Check("/brand_domain", field.Hostname(s.BrandDomain))
	v.Check("/brand_id", field.Label.Check(s.BrandID))
	if err := v.Err(); err != nil {
		return invalid(err, "")
	}
	a := store.Account{ID: c.Param("id"), Operator: s.Operator, BrandDomain: s.BrandDomain, BrandID: s.BrandID, Sandbox: s.Sandbox, Disclosure: vocab.Exact}
	if s.DisclosureCap != nil {
		a.Disclosure = *s.DisclosureCap
	}
	stored, err := h.Store.PutAccount(c.Request().Context(), pub(c), a)
	if errors.Is(err, store.ErrExists) {
		return newProblem(http.StatusConflict, "exists", "Account exists", "another account already has this operator and brand")
	}
	if err != nil {
		return err
	}
	if err := h.Record(c, audit.AccountPut, stored.ID, map[string]string{
		"operator": stored.Operator, "brand_domain": stored.BrandDomain, "brand_id": stored.BrandID,
		"sandbox": strconv.FormatBool(stored.Sandbox), "disclosure_cap": stored.Disclosure.String(),
	}); err != nil {
		return err
	}
	// The stored record, creation time and all: what a GET would show.
	return c.JSON(http.StatusOK, stored)
}

// BuyerTokenRequest names the buyer principal a buyer token speaks for.
type BuyerTokenRequest struct {
	ID       string   `json:"id"`
	Operator string   `json:"operator"`
	Accounts []string `json:"accounts,omitempty"`
}

// BuyerTokenCreate is the body of POST /buyer-tokens, which makes a buyer
// token named after its buyer (POST /tokens does the same and more).
type BuyerTokenCreate struct {
	BuyerTokenRequest
	ExpiresIn string `json:"expires_in,omitempty"`
}

func (h *Handler) createBuyerToken(c echo.Context) error {
	var r BuyerTokenCreate
	if err := decodeBody(c, &r); err != nil {
		return err
	}
	var v jsonfield.Invalid
	checkBuyer(&v, "", r.BuyerTokenRequest)
	expiresIn := duration(&v, "/expires_in", r.ExpiresIn, false, maxExpiresIn)
	if err := v.Err(); err != nil {
		return invalid(err, "")
	}
	return h.mint(c, store.Token{Kind: store.BuyerToken, Name: r.ID,
		Buyer: &store.Buyer{ID: r.ID, Operator: r.Operator, Accounts: r.Accounts}}, expiresIn)
}
