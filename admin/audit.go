package admin

import (
	"context"
	"net"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/storefront/storefront/audit"
	"github.com/storefront/storefront/jsonfield"
	"github.com/storefront/storefront/store"
)

// recordTimeout bounds the audit append that follows an applied action.
const recordTimeout = 10 * time.Second

// Record appends an admin action to the publisher's audit trail, naming
// the admin token the request carried, its holder's name and the address
// the request came from, timed by the handler's clock. Every admin route
// that changes something calls it once the change is applied and before
// it answers; a feature that adds an admin action (an order decision, for
// example) adds its audit.Action and calls Record the same way.
//
// The append outlives a client that hangs up: the change is applied, so
// it is recorded whatever happens to the connection. If the trail cannot
// be written, Record logs the action in full and returns a problem that
// says the change was applied but not recorded; the route returns it
// instead of its success.
func (h *Handler) Record(c echo.Context, action audit.Action, target string, detail map[string]string) error {
	a := admin(c)
	ctx, cancel := context.WithTimeout(context.WithoutCancel(c.Request().Context()), recordTimeout)
	defer cancel()
	r := audit.Record{
		Publisher: a.Publisher, Actor: a.Name, TokenID: a.TokenID, Action: action, Target: target,
		Detail: detail, Address: clientAddress(c.Request()),
	}
	if _, err := h.Store.AppendAudit(ctx, r, h.now()); err != nil {
		h.Log.Error("an admin action was applied but the audit trail could not record it",
			"publisher", r.Publisher, "token", r.TokenID, "action", r.Action, "target", r.Target, "detail", r.Detail,
			"address", r.Address, "err", err)
		return newProblem(http.StatusInternalServerError, "unrecorded", "Applied but not recorded",
			"the change was applied, but the audit trail could not record it; the storefront's log has the details")
	}
	return nil
}

// clientAddress is the address of the client the listener accepted: the
// TCP peer, never a forwarding header, which any client can write. Behind
// a proxy it is the proxy's address.
func clientAddress(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// AuditEntry is one audit trail entry as the API returns it.
type AuditEntry struct {
	Sequence int64             `json:"sequence"`
	Time     time.Time         `json:"time"`
	Actor    string            `json:"actor"`
	TokenID  string            `json:"token_id,omitempty"`
	Action   audit.Action      `json:"action"`
	Target   string            `json:"target"`
	Detail   map[string]string `json:"detail,omitempty"`
	Address  string            `json:"address"`
	Hash     string            `json:"entry_hash"`
	PrevHash string            `json:"prev_hash"`
}

func auditEntryOf(e audit.Entry) AuditEntry {
	return AuditEntry{
		Sequence: e.Sequence, Time: e.Time, Actor: e.Actor, TokenID: e.TokenID, Action: e.Action, Target: e.Target,
		Detail: e.Detail, Address: e.Address, Hash: e.Hash, PrevHash: e.PrevHash,
	}
}

// auditFilterOf reads the audit filter from the query string.
func auditFilterOf(c echo.Context) (audit.Filter, error) {
	var f audit.Filter
	var v jsonfield.Invalid
	q := c.QueryParams()
	f.Token = q.Get("token")
	if s := q.Get("action"); s != "" {
		a, ok := audit.ParseAction(s)
		if !ok {
			v.Add("/action", "action must be one of the audit actions, such as rulebook.save or token.revoke")
		}
		f.Action = a
	}
	f.Limit, f.Before = pageOf(q, &v, audit.DefaultLimit)
	if err := v.Err(); err != nil {
		return f, invalidQuery(err)
	}
	return f, nil
}

func (h *Handler) auditTrail(c echo.Context) error {
	f, err := auditFilterOf(c)
	if err != nil {
		return err
	}
	es, err := h.Store.AuditTrail(c.Request().Context(), pub(c), f)
	if err != nil {
		return err
	}
	return listPage(c, "entries", es, f.Limit, func(e audit.Entry) int64 { return e.Sequence }, auditEntryOf)
}

func (h *Handler) auditVerify(c echo.Context) error {
	res, err := store.VerifyAudit(c.Request().Context(), h.Store, pub(c))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, res)
}
