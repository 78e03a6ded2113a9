package admin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/storefront/storefront/agent"
	"github.com/storefront/storefront/backtest"
	"github.com/storefront/storefront/jsonfield"
	"github.com/storefront/storefront/products"
	"github.com/storefront/storefront/store"
	"github.com/storefront/storefront/transport/mcpserver"
	"github.com/storefront/storefront/vocab"
)

// PreviewResult pairs the internal decision with exactly what the buyer
// would receive.
type PreviewResult struct {
	// RulebookVersion is the version previewed; 0 for a draft.
	RulebookVersion int64 `json:"rulebook_version"`
	Draft           bool  `json:"draft"`
	// Decision is internal: rules fired with their ids and names, the
	// disclosure applied, the suggestions verified. Never sent to buyers.
	Decision products.Trace `json:"decision"`
	Buyer    BuyerView      `json:"buyer"`
}

// BuyerView is what the buyer receives.
type BuyerView struct {
	// Status is the arm.
	Status string `json:"status"`
	// Payload is the AdCP object.
	Payload json.RawMessage `json:"payload"`
	// PayloadText is the same object as the exact bytes the transports
	// send (MCP content[0].text, A2A data part).
	PayloadText string `json:"payload_text"`
	// MCPResult is the MCP tools/call result exactly as the MCP transport
	// encodes it.
	MCPResult json.RawMessage `json:"mcp_result"`
	// MCPIsError is the result's isError marker.
	MCPIsError bool `json:"mcp_is_error"`
}

// DraftPreview is the body of a draft preview: a rulebook not yet saved
// and a get_products request to try against it.
type DraftPreview struct {
	Rulebook json.RawMessage `json:"rulebook"`
	Request  json.RawMessage `json:"request"`
}

// preview runs a get_products request against the saved rulebook (the
// current version, or ?version=N) without recording anything.
func (h *Handler) preview(c echo.Context) error {
	req, err := body(c)
	if err != nil {
		return err
	}
	if err := previewRequest(req, ""); err != nil {
		return err
	}
	ctx := c.Request().Context()
	snap, err := h.Snaps.Snapshot(ctx, pub(c))
	if err != nil {
		return err
	}
	if q := c.QueryParam("version"); q != "" {
		n, err := versionParam(q, "version")
		if err != nil {
			return err
		}
		rv, err := h.Store.RulebookAt(ctx, pub(c), n)
		if err != nil {
			return err
		}
		rb := rv.Rulebook
		snap = products.NewSnapshot(snap.Publisher, snap.Catalogue.Products(), snap.CatalogueVersion, &rb, rv.Version)
	}
	return h.previewWith(c, snap, req, false)
}

// previewDraft runs a request against a draft rulebook and the current
// catalogue. The draft is validated as a save would validate it.
func (h *Handler) previewDraft(c echo.Context) error {
	b, err := body(c)
	if err != nil {
		return err
	}
	var d DraftPreview
	if err := jsonfield.Decode(b, &d); err != nil {
		return invalid(err, "")
	}
	if len(d.Rulebook) == 0 {
		return invalid(jsonfield.Invalid{{Pointer: "/rulebook", Detail: "a draft rulebook is required"}}, "")
	}
	rb, err := decodeRulebook(d.Rulebook, "/rulebook")
	if err != nil {
		return err
	}
	if err := previewRequest(d.Request, "/request"); err != nil {
		return err
	}
	ctx := c.Request().Context()
	snap, err := h.Snaps.Snapshot(ctx, pub(c))
	if err != nil {
		return err
	}
	draft := products.NewSnapshot(snap.Publisher, snap.Catalogue.Products(), snap.CatalogueVersion, &rb, 0)
	req := []byte(d.Request)
	if len(req) == 0 {
		req = []byte("{}")
	}
	return h.previewWith(c, draft, req, true)
}

// previewRequest refuses, as a problem naming each field (under prefix,
// the request's place in the body), a get_products request a buyer's call
// would be refused at the door for (agent.SchemaIssues): a preview shows
// what a buyer would be served, and this request would be served nothing.
// An empty request is the empty request, which the preview takes.
func previewRequest(req []byte, prefix string) error {
	if len(bytes.TrimSpace(req)) == 0 {
		return nil
	}
	issues, _, err := agent.SchemaIssues("get_products", req)
	if err != nil {
		return err
	}
	if len(issues) == 0 {
		return nil
	}
	v := make(jsonfield.Invalid, len(issues))
	for i, is := range issues {
		v[i] = jsonfield.Field{Pointer: prefix + is.Pointer, Detail: is.Message}
	}
	return invalid(v, "")
}

func (h *Handler) previewWith(c echo.Context, snap *products.Snapshot, req []byte, draft bool) error {
	res := h.Preview.Preview(c.Request().Context(), products.Call{
		Publisher: pub(c),
		Principal: products.Principal{ID: "preview:" + admin(c).Name, Operator: backtest.OperatorOf(req)},
		Args:      req,
	}, snap)
	reply := agent.ReplyFor(res)
	mcpResult, err := json.Marshal(mcpserver.Result(reply))
	if err != nil {
		return err
	}
	payload := res.Payload
	if !json.Valid(payload) {
		payload = []byte("null")
	}
	return c.JSON(http.StatusOK, PreviewResult{
		RulebookVersion: snap.RulebookVersion,
		Draft:           draft,
		Decision:        res.Trace,
		Buyer: BuyerView{
			Status: res.Outcome.Arm().String(), Payload: payload, PayloadText: string(res.Payload),
			MCPResult: mcpResult, MCPIsError: reply.Failed,
		},
	})
}

// PreviewAccounts resolves accounts for previews without creating any: an
// account that does not exist yet is previewed as it would be created.
type PreviewAccounts struct{ Store store.Accounts }

// Resolve implements products.Accounts.
func (p PreviewAccounts) Resolve(ctx context.Context, publisher string, pr products.Principal, ref *products.AccountRef) (products.Account, error) {
	if ref.AccountID != "" {
		a, err := p.Store.AccountByID(ctx, publisher, ref.AccountID)
		if errors.Is(err, store.ErrNotFound) {
			return products.Account{}, products.ErrAccountNotFound
		}
		if err != nil {
			return products.Account{}, err
		}
		return products.Account{Key: a.ID, Sandbox: a.Sandbox, Disclosure: a.Disclosure}, nil
	}
	key := store.Account{Operator: ref.Operator, BrandDomain: ref.Brand.Domain, BrandID: ref.Brand.BrandID, Sandbox: ref.Sandbox}.NaturalKey()
	a, err := p.Store.AccountByKey(ctx, publisher, key)
	if errors.Is(err, store.ErrNotFound) {
		return products.Account{Key: "(new) " + key, Sandbox: ref.Sandbox, Disclosure: vocab.Exact}, nil
	}
	if err != nil {
		return products.Account{}, err
	}
	return products.Account{Key: a.ID, Sandbox: a.Sandbox, Disclosure: a.Disclosure}, nil
}
