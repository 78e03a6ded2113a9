package admin

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/storefront/storefront/signing"
	"github.com/storefront/storefront/store"
)

// SigningKeyView is a webhook-signing key as the admin API shows it: its
// public JWK and where it is in its life. The private key is never shown.
type SigningKeyView struct {
	JWK       signing.JWK `json:"jwk"`
	CreatedAt time.Time   `json:"created_at"`
	RetiredAt *time.Time  `json:"retired_at,omitempty"`
	// Active: the key new webhooks are signed with.
	Active bool `json:"active"`
	// Published: the key is in the publisher's JWKS now (the active key,
	// and a retired key for signing.RetiredGrace after its rotation).
	Published bool `json:"published"`
}

func (h *Handler) signingKeyViews(c echo.Context) ([]SigningKeyView, error) {
	listed, err := h.Keys.List(c.Request().Context(), pub(c))
	if err != nil {
		return nil, err
	}
	out := make([]SigningKeyView, len(listed))
	for i, l := range listed {
		out[i] = signingKeyView(l.Key, l.Published)
	}
	return out, nil
}

func signingKeyView(k store.SigningKey, published bool) SigningKeyView {
	return SigningKeyView{JWK: signing.PublicJWK(k), CreatedAt: k.CreatedAt, RetiredAt: k.RetiredAt, Active: k.RetiredAt == nil, Published: published}
}

// listSigningKeys shows every key the publisher has had, newest first.
func (h *Handler) listSigningKeys(c echo.Context) error {
	views, err := h.signingKeyViews(c)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"keys": views})
}

// rotateSigningKey makes a new active key. The key it replaces signs
// nothing more and stays in the JWKS for signing.RetiredGrace, so that
// webhooks signed just before still verify.
func (h *Handler) rotateSigningKey(c echo.Context) error {
	k, err := h.Keys.Rotate(c.Request().Context(), pub(c))
	if err != nil {
		return err
	}
	views, err := h.signingKeyViews(c)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, map[string]any{"active": signingKeyView(k, true), "keys": views})
}
