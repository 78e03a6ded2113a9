package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"

	"github.com/storefront/storefront/adcp"
	"github.com/storefront/storefront/outcome"
	"github.com/storefront/storefront/products"
	"github.com/storefront/storefront/sanitize"
)

// Admission refusals: what a transport answers with HTTP 401 before the
// call is dispatched.
var (
	// ErrCredentialsInvalid: an Authorization header that names no
	// principal (an unknown token or an unsupported scheme).
	ErrCredentialsInvalid = errors.New("credentials rejected")
	// ErrCredentialsMissing: no credentials on a call that needs them.
	ErrCredentialsMissing = errors.New("credentials required")
)

// admitted is the principal Admit resolved for one Authorization header,
// carried in the context so Dispatch does not look the token up again.
type admitted struct {
	header    string
	principal products.Principal
}

type admittedKey struct{}

// Admit decides, before a transport hands a call to Dispatch, whether its
// credentials let it through. tool is the tool called, or "" for a
// transport method that calls none (MCP initialize, tools/list; A2A task
// reads), which only needs credentials that are valid if present.
//
// It returns ErrCredentialsInvalid for an Authorization header that names
// no principal, whatever is called; ErrCredentialsMissing for a call
// without credentials that is not public discovery: a tool other than the
// anonymous ones (unknown tools included, so an anonymous caller learns
// nothing by probing), get_products naming an account, or any get_products
// of a publisher that has switched anonymous discovery off. Anything else
// (an outage while checking) is admitted, for the tool to answer in band.
// The context returned carries the resolved principal for Dispatch.
func (a *Agent) Admit(ctx context.Context, publisher, authorization, tool string, args []byte) (context.Context, error) {
	adm, ok := ctx.Value(admittedKey{}).(admitted)
	if !ok || adm.header != authorization {
		p, err := a.Authenticate(ctx, publisher, authorization)
		switch {
		case errors.Is(err, errAuthInvalid), errors.Is(err, errAuthScheme):
			return ctx, ErrCredentialsInvalid
		case err != nil:
			return ctx, nil
		}
		adm = admitted{header: authorization, principal: p}
		ctx = context.WithValue(ctx, admittedKey{}, adm)
	}
	if !adm.principal.Anonymous() || tool == "" {
		return ctx, nil
	}
	t, ok := a.byName[tool]
	if !ok || !t.Anonymous {
		return ctx, ErrCredentialsMissing
	}
	if t.public != nil && !t.public(ctx, publisher, args) {
		return ctx, ErrCredentialsMissing
	}
	return ctx, nil
}

// principalFor is the principal a call's credentials name: the one Admit
// resolved for the same header, else a fresh lookup.
func (a *Agent) principalFor(ctx context.Context, c Call) (products.Principal, error) {
	if adm, ok := ctx.Value(admittedKey{}).(admitted); ok && adm.header == c.Authorization {
		return adm.principal, nil
	}
	return a.Authenticate(ctx, c.Publisher, c.Authorization)
}

// publicDiscovery reports whether a get_products call is public
// discovery: it names no account, and the publisher allows anonymous
// discovery. A publisher that cannot be read now is left to the call's own
// answer.
func (a *Agent) publicDiscovery(ctx context.Context, publisher string, args []byte) bool {
	if namesAccount(args) {
		return false
	}
	// The cached snapshot costs no store round trip; right after a
	// settings change it may lag, and then get_products' own check (on a
	// current snapshot) answers AUTH_MISSING in band.
	snap := a.Snaps.Cached(publisher)
	if snap == nil {
		var err error
		if snap, err = a.Snaps.Snapshot(ctx, publisher); err != nil {
			return true
		}
	}
	return snap.Publisher.AnonymousDiscovery
}

// namesAccount reports whether args, decoded as encoding/json decodes
// them, name an account: an "account" member (its name matched without
// regard to case, as encoding/json matches it, the last one kept) that is
// not null. Only arguments that could spell the name, in any case or
// through an escape, are decoded: no rune outside ASCII folds to a letter
// of "account", so a body with neither is known not to name one.
func namesAccount(args []byte) bool {
	if !mayName(args, "account", true) {
		return false
	}
	var req struct {
		Account json.RawMessage `json:"account"`
	}
	return json.Unmarshal(args, &req) == nil && len(req.Account) > 0 && string(req.Account) != "null"
}

// mayName is false only for arguments that cannot hold a member called
// name (lower case): it is not in them (in any mix of ASCII cases, when
// folded), and they have no escape that could spell it. A call is decoded
// whole only when it may hold the member a decision needs.
func mayName(args []byte, name string, folded bool) bool {
	if bytes.IndexByte(args, '\\') >= 0 {
		return true
	}
	if !folded {
		return bytes.Contains(args, []byte(name))
	}
	for i := 0; i+len(name) <= len(args); i++ {
		j := 0
		for j < len(name) && lowerASCII(args[i+j]) == name[j] {
			j++
		}
		if j == len(name) {
			return true
		}
	}
	return false
}

func lowerASCII(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// AuthError is the AdCP error a transport carries with an admission
// refusal: AUTH_INVALID (terminal) or AUTH_MISSING (correctable).
func AuthError(err error) outcome.Error {
	if errors.Is(err, ErrCredentialsInvalid) {
		return outcome.Error{Code: adcp.AuthInvalid, Message: sanitize.Const("the credentials were not accepted: the bearer token is unknown, revoked or malformed")}
	}
	return outcome.Error{Code: adcp.AuthMissing, Message: sanitize.Const("this call needs credentials: send an Authorization: Bearer header")}
}

// BrandPath is where each publisher's brand.json is served, under its
// base URL (see WithBaseURL): the trust root a verifier follows to the
// publisher's signing keys.
const BrandPath = "/.well-known/brand.json"

// routeKey holds a route: the publisher a request is for and its base
// URL, one value in a request's context rather than two.
type routeKey struct{}

type route struct{ publisher, baseURL string }

func routeOf(ctx context.Context) route {
	switch r := ctx.Value(routeKey{}).(type) {
	case route:
		return r
	case *route:
		return *r
	}
	return route{}
}

// WithRouteSlot returns ctx holding an empty route for SetRoute to fill
// in: a request's first middleware makes the slot, so that the router
// sets the route without a second copy of the request for a new context.
// The route must be set before anything reads it or starts work that
// might (a request's handler, once routed).
func WithRouteSlot(ctx context.Context) context.Context {
	return context.WithValue(ctx, routeKey{}, &route{})
}

// SetRoute fills in ctx's route slot, as WithRoute would set a route,
// and reports true; without a slot it sets nothing and reports false.
func SetRoute(ctx context.Context, publisher, baseURL string) bool {
	r, ok := ctx.Value(routeKey{}).(*route)
	if ok {
		*r = route{publisher: publisher, baseURL: baseURL}
	}
	return ok
}

// WithRoute returns ctx carrying both what WithPublisher and WithBaseURL
// put in a context, as the HTTP server's routing found them.
func WithRoute(ctx context.Context, publisher, baseURL string) context.Context {
	return context.WithValue(ctx, routeKey{}, route{publisher: publisher, baseURL: baseURL})
}

// WithPublisher returns ctx carrying the publisher a request is for, as
// the HTTP server's routing found it, for the transports to hand to the
// agent.
func WithPublisher(ctx context.Context, id string) context.Context {
	return WithRoute(ctx, id, BaseURL(ctx))
}

// PublisherOf is the publisher WithPublisher put in ctx, or "".
func PublisherOf(ctx context.Context) string { return routeOf(ctx).publisher }

// WithBaseURL returns ctx carrying the public URL of the publisher's agent
// surfaces (the origin and the publisher's path prefix, with no trailing
// slash), for answers that name the storefront's own URLs.
func WithBaseURL(ctx context.Context, u string) context.Context {
	return WithRoute(ctx, PublisherOf(ctx), u)
}

// BaseURL is the URL WithBaseURL put in ctx, or "".
func BaseURL(ctx context.Context) string { return routeOf(ctx).baseURL }
