package agent

import (
	"context"
	"encoding/json"
	"slices"

	"github.com/storefront/storefront/buying"
	"github.com/storefront/storefront/products"
)

// The media-buy tools' input schemas: the shape a client needs to build a
// call; the official request schemas are the contract, and unknown fields
// are accepted as they allow.
const (
	accountRefSchema = `{"type": "object", "description": "An account: {account_id} or the natural key {brand: {domain}, operator, sandbox?}."}`

	syncAccountsSchema = `{
  "type": "object",
  "description": "sync_accounts request (AdCP account/sync-accounts-request.json), provisioning mode: brand + operator + billing per entry.",
  "properties": {
    "accounts": {"type": "array", "items": {"type": "object", "properties": {
      "brand": {"type": "object", "properties": {"domain": {"type": "string"}}},
      "operator": {"type": "string"},
      "billing": {"type": "string", "enum": ["operator"]},
      "payment_terms": {"type": "string"},
      "sandbox": {"type": "boolean"}}}},
    "dry_run": {"type": "boolean"},
    "idempotency_key": {"type": "string"},
    "context": {"type": "object"}
  },
  "required": ["accounts", "idempotency_key"],
  "additionalProperties": true
}`

	syncGovernanceSchema = `{
  "type": "object",
  "description": "sync_governance request (AdCP account/sync-governance-request.json): bind one governance agent to each account, replacing the one it had.",
  "properties": {
    "accounts": {"type": "array", "minItems": 1, "maxItems": 100, "items": {"type": "object", "properties": {
      "account": ` + accountRefSchema + `,
      "governance_agents": {"type": "array", "minItems": 1, "maxItems": 1, "items": {"type": "object", "properties": {
        "url": {"type": "string", "description": "https URL of the governance agent's MCP endpoint"},
        "authentication": {"type": "object", "properties": {
          "schemes": {"type": "array", "items": {"type": "string", "enum": ["Bearer"]}},
          "credentials": {"type": "string", "minLength": 32}}}},
        "required": ["url", "authentication"]}}},
      "required": ["account", "governance_agents"]}},
    "idempotency_key": {"type": "string"},
    "context": {"type": "object"}
  },
  "required": ["accounts", "idempotency_key"],
  "additionalProperties": true
}`

	listAccountsSchema = `{
  "type": "object",
  "description": "list_accounts request: the accounts these credentials may use.",
  "properties": {"account": ` + accountRefSchema + `, "status": {"type": "string"}, "sandbox": {"type": "boolean"},
    "pagination": {"type": "object", "properties": {"max_results": {"type": "integer"}, "cursor": {"type": "string"}}}, "context": {"type": "object"}},
  "additionalProperties": true
}`

	createMediaBuySchema = `{
  "type": "object",
  "description": "create_media_buy request (AdCP media-buy/create-media-buy-request.json): explicit packages with fixed budgets.",
  "properties": {
    "account": ` + accountRefSchema + `,
    "brand": {"type": "object", "properties": {"domain": {"type": "string"}}},
    "start_time": {"type": "string", "description": "\"asap\" or an ISO 8601 date-time"},
    "end_time": {"type": "string"},
    "packages": {"type": "array", "items": {"type": "object", "properties": {
      "product_id": {"type": "string"}, "pricing_option_id": {"type": "string"}, "budget": {"type": "number"},
      "targeting_overlay": {"type": "object", "properties": {"geo_countries": {"type": "array", "items": {"type": "string"}}}},
      "creative_assignments": {"type": "array", "items": {"type": "object", "properties": {"creative_id": {"type": "string"}}}}},
      "required": ["product_id", "pricing_option_id", "budget"]}},
    "push_notification_config": {"type": "object"},
    "governance_context": {"type": "string", "description": "The governance_context the buyer's governance agent issued approving this buy; required on an account with a registered governance agent."},
    "idempotency_key": {"type": "string"},
    "context": {"type": "object"}
  },
  "required": ["account", "brand", "start_time", "end_time", "packages", "idempotency_key"],
  "additionalProperties": true
}`

	updateMediaBuySchema = `{
  "type": "object",
  "description": "update_media_buy request (AdCP media-buy/update-media-buy-request.json): pause, resume, cancel, flight, budgets, creative assignments.",
  "properties": {
    "account": ` + accountRefSchema + `,
    "media_buy_id": {"type": "string"},
    "revision": {"type": "integer"},
    "paused": {"type": "boolean"},
    "canceled": {"type": "boolean", "const": true},
    "cancellation_reason": {"type": "string"},
    "end_time": {"type": "string"},
    "total_budget": {"type": "object", "properties": {"amount": {"type": "number"}, "currency": {"type": "string"}}},
    "packages": {"type": "array", "items": {"type": "object"}},
    "idempotency_key": {"type": "string"},
    "context": {"type": "object"}
  },
  "required": ["account", "media_buy_id", "idempotency_key"],
  "additionalProperties": true
}`

	getMediaBuysSchema = `{
  "type": "object",
  "description": "get_media_buys request: buys by id and/or status (default active when no ids).",
  "properties": {
    "account": ` + accountRefSchema + `,
    "media_buy_ids": {"type": "array", "items": {"type": "string"}},
    "status_filter": {},
    "include_history": {"type": "integer"},
    "pagination": {"type": "object"},
    "context": {"type": "object"}
  },
  "additionalProperties": true
}`

	deliverySchema = `{
  "type": "object",
  "description": "get_media_buy_delivery request: reported delivery over the half-open UTC range [start_date, end_date).",
  "properties": {
    "account": ` + accountRefSchema + `,
    "media_buy_ids": {"type": "array", "items": {"type": "string"}},
    "status_filter": {},
    "start_date": {"type": "string", "format": "date"},
    "end_date": {"type": "string", "format": "date"},
    "include_package_daily_breakdown": {"type": "boolean"},
    "context": {"type": "object"}
  },
  "additionalProperties": true
}`
)

// decidingBuyTools are the media-buy tools that change something: their
// answers are decisions on the ledger, with an arm (completed, submitted
// or failed), and they take an idempotency_key.
var decidingBuyTools = []string{"sync_accounts", "sync_governance", "create_media_buy", "update_media_buy"}

// EnableBuying registers the media-buy tools, run by b.
func (a *Agent) EnableBuying(b *buying.Service) {
	a.Buying = b
	tool := func(name, desc, schema string, run func(context.Context, products.Call) Reply) *Tool {
		mutating := slices.Contains(decidingBuyTools, name)
		return &Tool{
			Name: name, Description: desc, InputSchema: json.RawMessage(schema),
			handle: func(ctx context.Context, c Call, p products.Principal, authErr error) Reply {
				if authErr != nil {
					return authReply(c, authErr)
				}
				do := func(ctx context.Context, _ bool) Reply {
					return run(ctx, products.Call{Publisher: c.Publisher, Principal: p, Args: c.Args, Caller: callerURL(ctx)})
				}
				if !mutating {
					return do(ctx, false)
				}
				return a.idempotent(ctx, c, p, name, do)
			},
		}
	}
	a.register(tool("sync_accounts", "Provision buyer-declared accounts (brand + operator, billing operator). Accounts are active at once; the seller assigns the timezone.",
		syncAccountsSchema, b.SyncAccounts))
	a.register(tool("list_accounts", "List the accounts these credentials may use, with billing, payment terms, timezone and status.",
		listAccountsSchema, b.ListAccounts))
	if b.Governance != nil {
		a.register(tool("sync_governance", "Bind one campaign-governance agent to each account (replacing the one it had). "+
			"Before it makes a media buy on such an account, the seller sends that agent a check_governance execution check (phase purchase) "+
			"with the buy's governance_context and planned delivery, and makes the buy only on an approved verdict: "+
			"a denial is GOVERNANCE_DENIED with the agent's findings, no valid answer within 10 seconds is GOVERNANCE_UNAVAILABLE.",
			syncGovernanceSchema, b.SyncGovernance))
	}
	a.register(tool("create_media_buy", "Buy packages of products from get_products. Each package is checked against the same merchandising rules as a brief: "+
		"a package the rules decline is refused with the decline's typed error and the same sanitized reason get_products gives for those terms. "+
		"The answer is completed (media_buy_id, packages), submitted (the order waits for the publisher's approval; poll the task or wait for the webhook), or failed.",
		createMediaBuySchema, b.Create))
	a.register(tool("get_media_buys", "Read media buys: status, packages, valid actions and, on request, history.",
		getMediaBuysSchema, b.Get))
	a.register(tool("update_media_buy", "Pause, resume or cancel a media buy, change its flight, budgets or creative assignments. Changed terms are checked against the merchandising rules again.",
		updateMediaBuySchema, b.Update))
	a.register(tool("get_media_buy_delivery", "Delivery reported for media buys: totals and per package (daily on request) over a half-open UTC date range.",
		deliverySchema, b.Delivery))
}

// callerURL is the storefront's MCP endpoint as the buyer reached it.
func callerURL(ctx context.Context) string {
	if base := BaseURL(ctx); base != "" {
		return base + "/mcp"
	}
	return ""
}

// authReply is the answer to a call whose credentials failed, in the
// version it pinned.
func authReply(c Call, authErr error) Reply {
	return reply(authFailure(envelope(c.Args), authErr))
}

// accountCapabilities is the capabilities' account object. Its members,
// like those of every object below it, are in the order of their names.
type accountCapabilities struct {
	IdentityUpdates               *supported `json:"identity_updates,omitempty"`
	RequireOperatorAuth           bool       `json:"require_operator_auth"`
	RequiredForProducts           bool       `json:"required_for_products"`
	Sandbox                       bool       `json:"sandbox"`
	SupportedAccountCurrencyModes []string   `json:"supported_account_currency_modes,omitempty"`
	SupportedBilling              []string   `json:"supported_billing"`
	Timezone                      *timezone  `json:"timezone,omitempty"`
}

type supported struct {
	Supported bool `json:"supported"`
}

type timezone struct {
	AccountSelection string `json:"account_selection"`
	Mode             string `json:"mode"`
}

// mediaBuyCapabilities is the capabilities' media_buy object; the members
// that describe the media-buy tools are absent when they are not served.
type mediaBuyCapabilities struct {
	BuyingModes                []string          `json:"buying_modes"`
	Execution                  *execution        `json:"execution,omitempty"`
	Features                   *mediaBuyFeatures `json:"features,omitempty"`
	GovernanceAware            *bool             `json:"governance_aware,omitempty"`
	MeasurementTermsAcceptance *bool             `json:"measurement_terms_acceptance,omitempty"`
	Portfolio                  portfolio         `json:"portfolio"`
	SupportedPricingModels     []string          `json:"supported_pricing_models"`
	SupportsProposals          *bool             `json:"supports_proposals,omitempty"`
}

type mediaBuyFeatures struct {
	CatalogItemAvailabilityUpdates bool `json:"catalog_item_availability_updates"`
	CatalogManagement              bool `json:"catalog_management"`
	CommittedMetricsSupported      bool `json:"committed_metrics_supported"`
	InlineCreativeManagement       bool `json:"inline_creative_management"`
	PropertyListFiltering          bool `json:"property_list_filtering"`
	SellerOptimizedBudget          bool `json:"seller_optimized_budget"`
}

type execution struct {
	Targeting targeting `json:"targeting"`
}

type targeting struct {
	CollectionList     bool      `json:"collection_list"`
	Demographics       supported `json:"demographics"`
	GeoCountries       bool      `json:"geo_countries"`
	PlacementSelection bool      `json:"placement_selection"`
	PropertyList       bool      `json:"property_list"`
}

// accountCapabilities declares how accounts work here: buyer-declared
// natural keys, billed to the operator, each account on a clock the seller
// assigns (UTC), currency chosen per media buy.
func (a *Agent) accountCapabilities() accountCapabilities {
	caps := accountCapabilities{
		SupportedBilling:    buying.SupportedBilling,
		RequireOperatorAuth: false,
		RequiredForProducts: false,
		Sandbox:             a.Sandbox,
	}
	if a.Buying != nil {
		caps.Timezone = &timezone{Mode: "account_fixed", AccountSelection: "seller_assigned"}
		caps.SupportedAccountCurrencyModes = []string{"per_media_buy"}
		// sync_accounts refuses settings-update entries, operator identity
		// changes among them.
		caps.IdentityUpdates = &supported{Supported: false}
	}
	return caps
}

// mediaBuyCapabilities declares exactly what the media-buy tools do: the
// features and targeting they refuse are declared false, so that a buyer
// (or a compliance runner) does not try them.
func (a *Agent) mediaBuyCapabilities(pf portfolio) mediaBuyCapabilities {
	caps := mediaBuyCapabilities{
		SupportedPricingModels: []string{"cpm", "vcpm"},
		BuyingModes:            []string{"brief", "wholesale", "refine"},
		Portfolio:              pf,
	}
	if a.Buying == nil {
		return caps
	}
	no := false
	caps.SupportsProposals = &no
	caps.MeasurementTermsAcceptance = &no
	// Online governance consultation for create_media_buy: a registered
	// agent is asked before every buy on its account.
	aware := a.Buying.Governance != nil
	caps.GovernanceAware = &aware
	caps.Features = &mediaBuyFeatures{
		InlineCreativeManagement:       false,
		PropertyListFiltering:          false,
		CatalogManagement:              false,
		CatalogItemAvailabilityUpdates: false,
		CommittedMetricsSupported:      false,
		SellerOptimizedBudget:          false,
	}
	// The storefront keeps no creative library: creative assignments are
	// references to creatives the publisher's ad server receives.
	caps.Execution = &execution{Targeting: targeting{
		GeoCountries:       true,
		PlacementSelection: false,
		PropertyList:       false,
		CollectionList:     false,
		Demographics:       supported{Supported: false},
	}}
	return caps
}
