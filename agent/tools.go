package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/storefront/storefront/adcp"
	"github.com/storefront/storefront/compliance"
	"github.com/storefront/storefront/decline"
	"github.com/storefront/storefront/internal/verbatim"
	"github.com/storefront/storefront/outcome"
	"github.com/storefront/storefront/products"
	"github.com/storefront/storefront/sanitize"
	"github.com/storefront/storefront/signing"
	"github.com/storefront/storefront/vocab"
)

// VocabularyEntry is one entry of the decline vocabulary as tool _meta
// and the capabilities' ext carry it. Members are in the order of their
// names, as the entries were first written from maps.
type VocabularyEntry struct {
	Fixable    bool      `json:"fixable"`
	LegacyCode adcp.Code `json:"legacy_error_code"`
	Reason     string    `json:"reason"`
	Slug       string    `json:"slug"`
	Suggests   []string  `json:"suggests"`
}

// VocabularyMeta is the decline vocabulary as tool _meta carries it.
func VocabularyMeta() []VocabularyEntry {
	entries := vocab.Vocabulary()
	out := make([]VocabularyEntry, 0, len(entries))
	for _, e := range entries {
		kinds := make([]string, len(e.Suggests))
		for i, k := range e.Suggests {
			kinds[i] = string(k)
		}
		out = append(out, VocabularyEntry{Slug: string(e.Slug), Reason: e.Reason, Fixable: e.Fixable, Suggests: kinds, LegacyCode: e.LegacyCode})
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
    "adcp_version": {"type": "string", "description": "Release pin: one of the releases adcp.supported_versions lists in the answer."},
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
			return a.idempotent(ctx, c, p, "get_products", func(ctx context.Context, kept bool) Reply {
				// An answer cached for replay is kept: it cannot be lent.
				return ReplyFor(a.Products.GetProducts(ctx, products.Call{Publisher: c.Publisher, Principal: p, Args: c.Args, Doc: c.Doc, Lent: c.Lent && !kept}))
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
				return reply(outcome.NewFailed(env, outcome.Error{Code: adcp.InvalidRequest, Message: sanitize.Const("the request must be a JSON object")}))
			}
			if authErr != nil {
				return reply(authFailure(env, authErr))
			}
			snap, err := a.Snaps.Snapshot(ctx, c.Publisher)
			if err != nil {
				return reply(outcome.NewFailed(env, outcome.Error{Code: adcp.ServiceUnavailable, Message: sanitize.Unavailable}))
			}
			payload, err := a.capabilities(env, snap, BaseURL(ctx))
			if err != nil {
				return internalReply(c.Args)
			}
			return Reply{Payload: payload}
		},
	}
}

// capabilitiesWire is the get_adcp_capabilities response but for its
// context, which goes out verbatim after it. The objects below it were
// first written from maps, so their members are in the order of their
// names.
type capabilitiesWire struct {
	Status             string               `json:"status"`
	AdcpVersion        string               `json:"adcp_version"`
	Adcp               adcpCapabilities     `json:"adcp"`
	SupportedProtocols []string             `json:"supported_protocols"`
	Account            accountCapabilities  `json:"account"`
	MediaBuy           mediaBuyCapabilities `json:"media_buy"`
	Creative           creativeCapabilities `json:"creative"`
	Ext                capabilitiesExt      `json:"ext"`
	Identity           *identity            `json:"identity,omitempty"`
	WebhookSigning     *webhookSigning      `json:"webhook_signing,omitempty"`
	ComplianceTesting  *complianceTesting   `json:"compliance_testing,omitempty"`
}

type adcpCapabilities struct {
	BuildVersion      string      `json:"build_version"`
	Idempotency       idempotency `json:"idempotency"`
	MajorVersions     []int       `json:"major_versions"`
	SupportedVersions []string    `json:"supported_versions"`
}

type idempotency struct {
	InFlightMaxSeconds int  `json:"in_flight_max_seconds"`
	ReplayTTLSeconds   int  `json:"replay_ttl_seconds"`
	Supported          bool `json:"supported"`
}

type creativeCapabilities struct {
	HasCreativeLibrary bool `json:"has_creative_library"`
}

type capabilitiesExt struct {
	Storefront vocabularyExt `json:"io.github.storefront"`
}

type vocabularyExt struct {
	DeclineVocabulary []VocabularyEntry `json:"decline_vocabulary"`
}

type identity struct {
	BrandJSONURL string `json:"brand_json_url"`
}

type webhookSigning struct {
	Algorithms                  []string `json:"algorithms"`
	DeliveryRetryHorizonSeconds int      `json:"delivery_retry_horizon_seconds"`
	LegacyHMACFallback          bool     `json:"legacy_hmac_fallback"`
	Profile                     string   `json:"profile"`
	Supported                   bool     `json:"supported"`
}

type complianceTesting struct {
	Scenarios []string `json:"scenarios"`
}

type portfolio struct {
	Description      *sanitize.Text `json:"description,omitempty"`
	PrimaryChannels  []string       `json:"primary_channels"`
	PrimaryCountries []string       `json:"primary_countries"`
	PublisherDomains []string       `json:"publisher_domains"`
}

// capabilities writes the get_adcp_capabilities response for a snapshot.
// Everything in it is derived: versions from adcp, the portfolio from the
// catalogue, the vocabulary from decline.
//
// base is the publisher's public base URL, when the transport knows it.
func (a *Agent) capabilities(env outcome.Envelope, snap *products.Snapshot, base string) ([]byte, error) {
	m := snap.Catalogue.Market()
	pf := portfolio{
		PublisherDomains: publisherDomains(snap),
		PrimaryChannels:  nonNil(m.Channels),
		PrimaryCountries: nonNil(m.Countries),
	}
	if snap.Publisher.Name != "" && len(m.Channels) > 0 {
		desc := snap.Publisher.Name + " sells " + decline.ChannelList(m.Channels) + " inventory."
		if d, ok := snap.Screen.Line(desc, 500); ok {
			pf.Description = &d
		}
	}
	doc := capabilitiesWire{
		Status:      "completed",
		AdcpVersion: env.Version.String(),
		Adcp: adcpCapabilities{
			MajorVersions:     adcp.Majors(),
			SupportedVersions: adcp.SupportedStrings(),
			BuildVersion:      adcp.Build,
			Idempotency: idempotency{
				Supported:          true,
				ReplayTTLSeconds:   int(ReplayTTL / time.Second),
				InFlightMaxSeconds: int(InFlight / time.Second),
			},
		},
		SupportedProtocols: []string{"media_buy"},
		Account:            a.accountCapabilities(),
		MediaBuy:           a.mediaBuyCapabilities(pf),
		Creative:           creativeCapabilities{HasCreativeLibrary: false},
		Ext:                capabilitiesExt{vocabularyExt{DeclineVocabulary: VocabularyMeta()}},
	}
	if strings.HasPrefix(base, "https://") {
		// The trust root for the publisher's signing keys. The schema
		// admits only an https URL, so a storefront reached over plain
		// http (a local one) names none; its brand.json is still served.
		doc.Identity = &identity{BrandJSONURL: base + BrandPath}
	}
	if a.WebhooksSigned {
		doc.WebhookSigning = &webhookSigning{
			Supported:          true,
			Profile:            signing.Tag,
			Algorithms:         []string{signing.Algorithm},
			LegacyHMACFallback: true,
			// The sender gives up within minutes (webhook.New); the
			// profile's floor is a day, and this is a maximum.
			DeliveryRetryHorizonSeconds: 86400,
		}
	}
	if a.Controller != nil {
		doc.ComplianceTesting = &complianceTesting{Scenarios: compliance.Declared(env.Version)}
	}
	return verbatim.Marshal(doc, verbatim.Member{Key: "context", Value: env.Context})
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
