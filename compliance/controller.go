package compliance

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/storefront/storefront/access"
	"github.com/storefront/storefront/adcp"
	"github.com/storefront/storefront/internal/clock"
	"github.com/storefront/storefront/products"
	"github.com/storefront/storefront/sanitize"
	"github.com/storefront/storefront/store"
	"github.com/storefront/storefront/webhook"
)

// scenarios are the canonical scenarios the controller implements, in the
// order list_scenarios reports them. Aliases are accepted but not listed.
var scenarios = []string{"force_get_products_arm", "force_create_media_buy_arm", "force_task_completion", "force_upstream_unavailable",
	"force_account_status", "force_media_buy_status", "simulate_delivery", "simulate_budget_spend", "seed_product", "seed_pricing_option", "seed_creative", "seed_media_buy", "seed_account"}

// Scenarios returns the canonical scenarios the controller implements, in
// the order list_scenarios reports them.
func Scenarios() []string { return slices.Clone(scenarios) }

// scenarios30 is the closed list of scenarios AdCP 3.0's capabilities
// schema admits in compliance_testing.scenarios (an enum in every 3.0.x
// release, 3.0.0 to 3.0.28); 3.1 opened the list to any scenario.
var scenarios30 = []string{"force_creative_status", "force_account_status", "force_media_buy_status",
	"force_session_status", "simulate_delivery", "simulate_budget_spend"}

// Declared returns the scenarios the capabilities declare to a buyer served
// v: every one from 3.1 on, and for 3.0 those of them its schema
// enumerates (the rest stay discoverable through list_scenarios).
func Declared(v adcp.Version) []string {
	if v.AtLeast(3, 1) {
		return slices.Clone(scenarios)
	}
	var out []string
	for _, s := range scenarios {
		if slices.Contains(scenarios30, s) {
			out = append(out, s)
		}
	}
	return out
}

// aliases map accepted alternative names onto canonical scenarios.
var aliases = map[string]string{"force_get_products_rejected": "force_get_products_arm"}

// Controller error codes (comply-test-controller-response.json).
const (
	Forbidden         = "FORBIDDEN"
	UnknownScenario   = "UNKNOWN_SCENARIO"
	InvalidParams     = "INVALID_PARAMS"
	NotFound          = "NOT_FOUND"
	InvalidTransition = "INVALID_TRANSITION"
	InvalidState      = "INVALID_STATE"
	InternalError     = "INTERNAL_ERROR"
	maxResultBytes    = 256 << 10
)

// Store is what the controller reads and writes: the publisher, the
// sandbox's directives and seeds, tasks it completes, the accounts it
// resolves and provisions, and the buys and delivery it simulates.
type Store interface {
	store.Publishers
	store.Sandbox
	store.AsyncTasks
	store.Accounts
	store.MediaBuys
}

// Controller serves comply_test_controller.
type Controller struct {
	Store    Store
	Snaps    *store.Snapshots
	Webhooks *webhook.Sender
	Log      *slog.Logger
	Now      func() time.Time
}

// Request is a decoded controller request.
type Request struct {
	Scenario string
	Params   map[string]json.RawMessage
	Account  *products.AccountRef
	Context  json.RawMessage
	Version  adcp.Version
}

// failure is a controller error; current is the entity's state, for an
// INVALID_TRANSITION.
type failure struct {
	code, detail string
	current      string
}

func (f *failure) Error() string { return f.code + ": " + f.detail }

func fail(code, format string, args ...any) *failure {
	return &failure{code: code, detail: fmt.Sprintf(format, args...)}
}

// Handle answers one controller call. The reply is the controller's AdCP
// object and whether it is an error.
func (c *Controller) Handle(ctx context.Context, publisher string, p products.Principal, args []byte) ([]byte, bool) {
	req, verr := decode(args)
	if p.Anonymous() {
		return c.errorReply(req, fail(Forbidden, "comply_test_controller needs credentials for a sandbox account"))
	}
	if verr != nil {
		return c.errorReply(req, verr)
	}
	// The sandbox gate comes before the scenario is looked up: a live
	// caller learns nothing, not even whether a scenario exists.
	account, f := c.account(ctx, publisher, p, req)
	if f != nil {
		return c.errorReply(req, f)
	}
	scenario := req.Scenario
	if canon, ok := aliases[scenario]; ok {
		scenario = canon
		if req.Params == nil {
			req.Params = map[string]json.RawMessage{}
		}
		if _, ok := req.Params["arm"]; !ok {
			req.Params["arm"] = json.RawMessage(`"rejected"`)
		}
	}
	var body reply
	switch scenario {
	case "list_scenarios":
		body = &scenarioList{Success: true, Scenarios: scenarios}
	case "force_get_products_arm":
		body, f = c.forceArm(ctx, publisher, p, account, req)
	case "force_create_media_buy_arm":
		body, f = c.forceCreateArm(ctx, publisher, p, account, req)
	case "force_task_completion":
		body, f = c.completeTask(ctx, publisher, p, account, req)
	case "force_account_status":
		body, f = c.forceAccountStatus(ctx, publisher, p, req)
	case "force_media_buy_status":
		body, f = c.forceMediaBuyStatus(ctx, publisher, p, req)
	case "simulate_delivery":
		body, f = c.simulateDelivery(ctx, publisher, p, req)
	case "simulate_budget_spend":
		body, f = c.simulateBudgetSpend(ctx, publisher, p, req)
	case "seed_creative":
		body, f = c.seedCreative(req)
	case "seed_media_buy":
		body, f = c.seedMediaBuy(ctx, publisher, p, req)
	case "seed_account":
		body, f = c.seedAccount(ctx, publisher, p, req)
	case "force_upstream_unavailable":
		body, f = c.forceStale(ctx, publisher, p, account, req)
	case "seed_product":
		body, f = c.seedProduct(ctx, publisher, p, req)
	case "seed_pricing_option":
		body, f = c.seedPricingOption(ctx, publisher, p, req)
	default:
		f = fail(UnknownScenario, "scenario %q is not implemented by this seller; list_scenarios names those that are", req.Scenario)
	}
	if f != nil {
		return c.errorReply(req, f)
	}
	return c.encode(req, "completed", body), false
}

// decode reads the request; the envelope is returned even when the rest
// is invalid, so the error can echo context.
func decode(args []byte) (*Request, *failure) {
	r := &Request{Version: adcp.Default()}
	args = bytes.TrimSpace(args)
	if len(args) == 0 {
		args = []byte("{}")
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(args, &top); err != nil || top == nil {
		return r, fail(InvalidParams, "the request must be a JSON object")
	}
	if raw, ok := top["context"]; ok && len(bytes.TrimSpace(raw)) > 0 && bytes.TrimSpace(raw)[0] == '{' && products.Echoable(raw) {
		r.Context = raw
	}
	var pin string
	var major int
	// The door of dispatch checks every other tool against its official
	// request schema; the controller checks its own envelope's types.
	if raw, ok := top["adcp_version"]; ok && json.Unmarshal(raw, &pin) != nil {
		return r, fail(InvalidParams, "adcp_version must be a string")
	}
	if raw, ok := top["adcp_major_version"]; ok && json.Unmarshal(raw, &major) != nil {
		return r, fail(InvalidParams, "adcp_major_version must be an integer")
	}
	if raw, ok := top["context"]; ok && !isNull(raw) && (len(bytes.TrimSpace(raw)) == 0 || bytes.TrimSpace(raw)[0] != '{') {
		return r, fail(InvalidParams, "context must be an object")
	}
	if v, err := adcp.Negotiate(pin, major); err == nil {
		r.Version = v
	} else {
		return r, fail(InvalidParams, "%v", err)
	}
	// Text from the raw bytes, as every task reads it: what a scenario
	// seeds is stored and served.
	if ps := products.TextProblems(args, true); len(ps) > 0 {
		return r, fail(InvalidParams, "%s", ps[0].Detail)
	}
	if err := json.Unmarshal(top["scenario"], &r.Scenario); err != nil || r.Scenario == "" {
		return r, fail(InvalidParams, "scenario is required and must be a string")
	}
	if raw, ok := top["params"]; ok && !isNull(raw) {
		if err := json.Unmarshal(raw, &r.Params); err != nil || r.Params == nil {
			return r, fail(InvalidParams, "params must be an object")
		}
	}
	raw, ok := top["account"]
	if !ok || isNull(raw) {
		return r, fail(InvalidParams, "account is required, with sandbox: true")
	}
	var acct struct {
		Sandbox  *bool           `json:"sandbox"`
		Brand    json.RawMessage `json:"brand"`
		Operator string          `json:"operator"`
	}
	if err := json.Unmarshal(raw, &acct); err != nil {
		return r, fail(InvalidParams, "account must be an object")
	}
	if acct.Sandbox == nil {
		return r, fail(InvalidParams, "account.sandbox is required and must be true")
	}
	if !*acct.Sandbox {
		return r, fail(Forbidden, "account.sandbox is false: the controller acts on sandbox accounts only")
	}
	if len(acct.Brand) > 0 || acct.Operator != "" {
		var brand struct {
			Domain  string `json:"domain"`
			BrandID string `json:"brand_id"`
		}
		if err := json.Unmarshal(acct.Brand, &brand); err != nil || !adcp.IsDomain(brand.Domain) {
			return r, fail(InvalidParams, "account.brand.domain must be a lower-case domain name")
		}
		if !adcp.IsDomain(acct.Operator) {
			return r, fail(InvalidParams, "account.operator must be a lower-case domain name")
		}
		r.Account = &products.AccountRef{Brand: &products.BrandRef{Domain: brand.Domain, BrandID: brand.BrandID}, Operator: acct.Operator, Sandbox: true}
	}
	return r, nil
}

// account resolves the sandbox account the request names and checks the
// persisted record is a sandbox account. A bare {sandbox: true} names the
// caller's own sandbox scope, which only a sandbox (test-kit) caller has.
func (c *Controller) account(ctx context.Context, publisher string, p products.Principal, req *Request) (string, *failure) {
	if req.Account == nil {
		if !p.Sandbox {
			return "", fail(Forbidden, "these credentials are live: name a sandbox account they may use, or use sandbox credentials")
		}
		return "", nil
	}
	a, err := (access.Accounts{Store: c.Store}).Resolve(ctx, publisher, p, req.Account)
	if errors.Is(err, products.ErrAccountNotFound) {
		return "", fail(Forbidden, "the account is not a sandbox account these credentials may use")
	}
	if err != nil {
		c.Log.Error("controller account lookup failed", "err", err)
		return "", fail(InternalError, "the account could not be resolved")
	}
	if !a.Sandbox {
		return "", fail(Forbidden, "the persisted account is not a sandbox account")
	}
	return a.Key, nil
}

func (c *Controller) now() time.Time {
	return clock.Read(c.Now)
}

// reply is a controller response: one of the structs below. Each embeds
// head first and tail last, so that every response begins with status and
// the version served and ends with the caller's context, echoed unchanged,
// with its own members between them in the order they are declared.
type reply interface {
	setHead(status string, v adcp.Version)
	setTail(ctx json.RawMessage)
}

type head struct {
	Status      string `json:"status"`
	AdcpVersion string `json:"adcp_version"`
}

func (h *head) setHead(status string, v adcp.Version) { h.Status, h.AdcpVersion = status, v.String() }

type tail struct {
	Context json.RawMessage `json:"context,omitempty"`
}

func (t *tail) setTail(ctx json.RawMessage) { t.Context = ctx }

// done is a scenario's success with nothing more to say.
type done struct {
	head
	Success bool `json:"success"`
	tail
}

// said is a scenario's success with a line for the caller.
type said struct {
	head
	Success bool   `json:"success"`
	Message string `json:"message"`
	tail
}

// scenarioList answers list_scenarios.
type scenarioList struct {
	head
	Success   bool     `json:"success"`
	Scenarios []string `json:"scenarios"`
	tail
}

// forcedArm answers a scenario that forces an arm: what the next call
// will be answered with.
type forcedArm struct {
	head
	Success bool   `json:"success"`
	Forced  forced `json:"forced"`
	// Message is the forced submitted arm's own, when it has one.
	Message string `json:"message,omitempty"`
	tail
}

// forced is the arm forced. Its members are in the order of their names,
// as it was first written from a map.
type forced struct {
	Arm    string         `json:"arm"`
	Reason *sanitize.Text `json:"reason,omitempty"`
	// Suggestions is null, not absent, when every suggestion given was
	// screened out.
	Suggestions *[]sanitize.Text `json:"suggestions,omitempty"`
	TaskID      string           `json:"task_id,omitempty"`
}

// transition answers a scenario that moves an entity from one state to
// another.
type transition struct {
	head
	Success       bool   `json:"success"`
	PreviousState string `json:"previous_state"`
	CurrentState  string `json:"current_state"`
	tail
}

// simulation answers simulate_delivery and simulate_budget_spend.
type simulation struct {
	head
	Success    bool     `json:"success"`
	Simulated  delivery `json:"simulated"`
	Cumulative delivery `json:"cumulative"`
	tail
}

// failed is the controller's own error shape.
type failed struct {
	head
	Success     bool          `json:"success"`
	Error       string        `json:"error"`
	ErrorDetail sanitize.Text `json:"error_detail"`
	// CurrentState is the entity's state, for an INVALID_TRANSITION.
	CurrentState string `json:"current_state,omitempty"`
	tail
}

// encode writes a controller response: status, the version served, the
// reply's own members, and context echoed unchanged.
func (c *Controller) encode(req *Request, status string, r reply) []byte {
	r.setHead(status, req.Version)
	r.setTail(req.Context)
	b, err := json.Marshal(r)
	if err != nil {
		// Only a context that is not JSON could fail; it came parsed.
		c.log().Error("encoding a controller reply failed", "err", err)
		r.setTail(nil)
		b, _ = json.Marshal(r)
	}
	return b
}

func (c *Controller) log() *slog.Logger {
	if c.Log != nil {
		return c.Log
	}
	return slog.Default()
}

func (c *Controller) errorReply(req *Request, f *failure) ([]byte, bool) {
	if req == nil {
		req = &Request{Version: adcp.Default()}
	}
	detail := sanitize.Vendor().Prose(f.detail, sanitize.MaxMessage, sanitize.Internal)
	return c.encode(req, "failed", &failed{Success: false, Error: f.code, ErrorDetail: detail, CurrentState: f.current}), true
}

func isNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

// session names the seeding session of a request: the part of
// context.correlation_id before "--", which compliance runners set per
// storyboard. Seeds from a new session replace the old ones.
func session(req *Request) string {
	var ctx struct {
		CorrelationID string `json:"correlation_id"`
	}
	_ = json.Unmarshal(req.Context, &ctx)
	prefix, _, _ := strings.Cut(ctx.CorrelationID, "--")
	return prefix
}
