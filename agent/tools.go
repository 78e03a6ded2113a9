package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/storefront/storefront/adcp"
	"github.com/storefront/storefront/compliance"
	"github.com/storefront/storefront/decline"
	"github.com/storefront/storefront/outcome"
	"github.com/storefront/storefront/products"
	"github.com/storefront/storefront/sanitize"
	"github.com/storefront/storefront/signing"
	"github.com/storefront/storefront/vocab"
)

// VocabularyMeta is the decline vocabulary as tool _meta carries it.
func VocabularyMeta() []map[string]any {
	entries := vocab.Vocabulary()
	out := make([]map[string]any, 0, len(entries))
	for _, e := range entries {
		kinds := make([]string, len(e.Suggests))
		for i, k := range e.Suggests {
			kinds[i] = string(k)
		}
		out = append(out, map[string]any{
			"slug": string(e.Slug), "reason": e.Reason, "fixable": e.Fixable,
			"suggests": kinds, "legacy_error_code": string(e.LegacyCode),
		})
	}
	return out
}

// GetProductsDescription is the get_products tool description, generated
// from the vocabulary so the two cannot disagree.
func GetProductsDescription() string {
	var b strings.Builder
	b.WriteString("Find advertising products for a brief. The answer's status is completed (products, possibly none), ")
	b.WriteString("rejected (the seller declines the brief on commercial grounds: a sanitized reason and, when the decline is fixable, suggestions), ")
	b.WriteString("or failed (errors[] and adcp_error). The rejected arm is served to buyers pinned to AdCP 3.2; earlier releases receive the decline as a typed, correctable error carrying the same text.\n")
	b.WriteString("Decline slugs (in ext." + outcome.Namespace + ".decline.slug and _meta):\n")
	for _, e := range vocab.Vocabulary() {
		fix := "final"
		if e.Fixable {
			fix = "fixable"
		}
		fmt.Fprintf(&b, "- %s (%s): %s\n", e.Slug, fix, e.Reason)
	}
	return b.String()
}

const capabilitiesSchema = `{
  "type": "object",
  "description": "get_adcp_capabilities request.",
  "properties": {
    "adcp_version": {"type": "string", "description": "Release pin, e.g. 3.2-rc.7."},
    "adcp_major_version": {"type": "integer"},
    "protocols": {"type": "array", "items": {"type": "string"}},
    "context": {"type": "object", "description": "Echoed unchanged."},
    "ext": {"type": "object"}
  },
  "additionalProperties": true
}`

const getProductsSchema = `{
  "type": "object",
  "description": "get_products request (AdCP media-buy/get-products-request.json). Unknown fields are accepted.",
  "properties": {
    "adcp_version": {"type": "string", "description": "Release pin: one of get_adcp_capabilities' adcp.supported_versions. The rejected arm needs a 3.2 pin."},
    "adcp_major_version": {"type": "integer"},
    "buying_mode": {"type": "string", "enum": ["brief", "wholesale", "refine"]},
    "brief": {"type": "string", "description": "Campaign brief (brief mode only)."},
    "refine": {"type": "array", "items": {"type": "object"}},
    "brand": {"type": "object", "properties": {"domain": {"type": "string"}, "industries": {"type": "array", "items": {"type": "string"}}}},
    "account": {"type": "object"},
    "filters": {"type": "object", "properties": {
      "channels": {"type": "array", "items": {"type": "string"}},
      "format_kinds": {"type": "array", "items": {"type": "string"}},
      "delivery_type": {"type": "string", "enum": ["guaranteed", "non_guaranteed"]},
      "budget_range": {"type": "object", "properties": {"min": {"type": "number"}, "max": {"type": "number"}, "currency": {"type": "string"}}},
      "start_date": {"type": "string", "format": "date"},
      "end_date": {"type": "string", "format": "date"},
      "pricing_currencies": {"type": "array", "items": {"type": "string"}}
    }},
    "targeting_overlay": {"type": "object", "properties": {"geo_countries": {"type": "array", "items": {"type": "string"}}}},
    "fields": {"type": "array", "items": {"type": "string"}},
    "pagination": {"type": "object", "properties": {"max_results": {"type": "integer", "minimum": 1, "maximum": 100}, "cursor": {"type": "string"}}},
    "idempotency_key": {"type": "string"},
    "context": {"type": "object", "description": "Echoed unchanged."},
    "ext": {"type": "object"}
  },
  "additionalProperties": true
}`

func (a *Agent) getProductsTool() *Tool {
	return &Tool{
		Name:        "get_products",
		Description: GetProductsDescription(),
		InputSchema: json.RawMessage(getProductsSchema),
		Meta:        map[string]any{outcome.Namespace + "/decline_vocabulary": VocabularyMeta()},
		Anonymous:   true,
		public:      a.publicDiscovery,
		handle: func(ctx context.Context, c Call, p products.Principal, authErr error) Reply {
			if authErr != nil {
				return authReply(c, authErr)
			}
			return a.idempotent(ctx, c, p, "get_products", func(ctx context.Context) Reply {
				return ReplyFor(a.Products.GetProducts(ctx, products.Call{PublisherID: c.Publisher, Principal: p, Args: c.Args}))
			})
		},
	}
}

func (a *Agent) capabilitiesTool() *Tool {
	return &Tool{
		Name:        "get_adcp_capabilities",
		Description: "Describe this seller: supported AdCP releases, protocols, buying modes, pricing models, portfolio and the decline vocabulary.",
		InputSchema: json.RawMessage(capabilitiesSchema),
		Anonymous:   true,
		handle: func(ctx context.Context, c Call, p products.Principal, authErr error) Reply {
			pin, major, ctxRaw, ok := envelopeOf(c.Args)
			v, err := adcp.Negotiate(pin, major)
			if err != nil {
				// Capabilities are how a buyer learns what to pin, so an
				// unsupported pin is answered with the default release.
				v = adcp.Default()
			}
			env := outcome.Envelope{Version: v, Context: ctxRaw}
			if !ok {
				msg, _ := baseScreen.Line("the request must be a JSON object", sanitize.MaxMessage)
				return reply(outcome.NewFailed(env, outcome.Error{Code: adcp.InvalidRequest, Message: msg}))
			}
			if authErr != nil {
				return reply(authFailure(env, authErr))
			}
			snap, err := a.Snaps.Snapshot(ctx, c.Publisher)
			if err != nil {
				return reply(outcome.NewFailed(env, outcome.Error{Code: adcp.ServiceUnavailable, Message: sanitize.Unavailable}))
			}
			return Reply{Payload: a.capabilities(env, snap, BaseURL(ctx)), Meta: map[string]any{}}
		},
	}
}

// capabilities writes the get_adcp_capabilities response for a snapshot.
// Everything in it is derived: versions from adcp, the portfolio from the
// catalogue, the vocabulary from decline.
//
// base is the publisher's public base URL, when the transport knows it.
func (a *Agent) capabilities(env outcome.Envelope, snap *products.Snapshot, base string) []byte {
	m := snap.Catalogue.Market()
	portfolio := map[string]any{
		"publisher_domains": publisherDomains(snap),
		"primary_channels":  nonNil(m.Channels),
		"primary_countries": nonNil(m.Countries),
	}
	if snap.Publisher.Name != "" && len(m.Channels) > 0 {
		desc := snap.Publisher.Name + " sells " + decline.ChannelList(m.Channels) + " inventory."
		if d, ok := snap.Screen.Line(desc, 500); ok {
			portfolio["description"] = d
		}
	}
	doc := []kv{
		{"status", "completed"},
		{"adcp_version", env.Version.String()},
		{"adcp", map[string]any{
			"major_versions":     adcp.Majors(),
			"supported_versions": adcp.SupportedStrings(),
			"build_version":      adcp.Build,
			"idempotency": map[string]any{
				"supported":             true,
				"replay_ttl_seconds":    int(ReplayTTL / time.Second),
				"in_flight_max_seconds": int(InFlight / time.Second),
			},
		}},
		{"supported_protocols", []string{"media_buy"}},
		{"account", a.accountCapabilities()},
		{"media_buy", a.mediaBuyCapabilities(portfolio)},
		{"creative", map[string]any{"has_creative_library": false}},
		{"ext", map[string]any{outcome.Namespace: map[string]any{"decline_vocabulary": VocabularyMeta()}}},
	}
	if strings.HasPrefix(base, "https://") {
		// The trust root for the publisher's signing keys. The schema
		// admits only an https URL, so a storefront reached over plain
		// http (a local one) names none; its brand.json is still served.
		doc = append(doc, kv{"identity", map[string]any{"brand_json_url": base + BrandPath}})
	}
	if a.WebhooksSigned {
		doc = append(doc, kv{"webhook_signing", map[string]any{
			"supported":            true,
			"profile":              signing.Tag,
			"algorithms":           []string{signing.Algorithm},
			"legacy_hmac_fallback": true,
			// The sender gives up within minutes (webhook.New); the
			// profile's floor is a day, and this is a maximum.
			"delivery_retry_horizon_seconds": 86400,
		}})
	}
	if a.Controller != nil {
		doc = append(doc, kv{"compliance_testing", map[string]any{"scenarios": compliance.Declared(env.Version)}})
	}
	if env.Context != nil {
		doc = append(doc, kv{"context", env.Context})
	}
	return writeObject(doc)
}

func publisherDomains(snap *products.Snapshot) []string {
	var out []string
	seen := map[string]bool{}
	if snap.Publisher.Domain != "" {
		out = append(out, snap.Publisher.Domain)
		seen[snap.Publisher.Domain] = true
	}
	for _, p := range snap.Catalogue.Products() {
		for _, pp := range p.PublisherProperties {
			if !seen[pp.PublisherDomain] {
				seen[pp.PublisherDomain] = true
				out = append(out, pp.PublisherDomain)
			}
		}
	}
	return nonNil(out)
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

type kv struct {
	k string
	v any
}

// writeObject encodes fields in order.
func writeObject(fields []kv) []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range fields {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(f.k)
		b.Write(k)
		b.WriteByte(':')
		if raw, ok := f.v.(json.RawMessage); ok && json.Valid(raw) {
			// Raw members (the buyer's context, a task's result) go out as
			// they came: json.Marshal would escape &, < and > and drop the
			// spacing, and a result must be returned byte for byte.
			b.Write(raw)
			continue
		}
		v, err := json.Marshal(f.v)
		if err != nil {
			v = []byte("null")
		}
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes()
}
