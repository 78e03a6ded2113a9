// Package governance calls the campaign-governance agent a buyer registered
// on an account (sync_governance): before the storefront commits a media
// buy on that account it asks the agent, over MCP, for a binary execution
// verdict on what it will deliver (check_governance, phase purchase).
//
// It must never report an approval the agent did not give (a conditions
// verdict, a lapsed approval or an unreadable answer is no approval), never
// wait longer than its timeout, never follow a redirect with the buyer's
// credentials, and never connect to an address the URL policy refuses,
// whatever a host name resolves to.
package governance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/storefront/storefront/internal/clock"
	"github.com/storefront/storefront/webhook"
)

// Tool is the governance agent's task the storefront calls.
const Tool = "check_governance"

// DefaultTimeout bounds one check: the protocol asks agents to answer an
// execution check within 10 seconds.
const DefaultTimeout = 10 * time.Second

// Agent is a registered governance agent: where it is and what the
// storefront presents to it.
type Agent struct {
	URL string
	// Scheme is the registered authentication scheme; the protocol's
	// wire format for calling agents is a Bearer token.
	Scheme      string
	Credentials string
}

// PlannedDelivery is core/planned-delivery.json: what the storefront will
// deliver if the buy is committed.
type PlannedDelivery struct {
	MediaBuyID  string   `json:"media_buy_id,omitempty"`
	Geo         *Geo     `json:"geo,omitempty"`
	Channels    []string `json:"channels,omitempty"`
	StartTime   string   `json:"start_time"`
	EndTime     string   `json:"end_time"`
	TotalBudget float64  `json:"total_budget"`
	Currency    string   `json:"currency"`
	Pacing      string   `json:"pacing,omitempty"`
}

// Geo is planned delivery's geography.
type Geo struct {
	Countries []string `json:"countries"`
}

// Commitment is an amount of money in a currency.
type Commitment struct {
	Amount   float64 `json:"amount"`
	Currency string  `json:"currency"`
}

// Check is a check_governance execution check
// (governance/check-governance-request.json): the buyer's
// governance_context, forwarded verbatim, and the planned delivery.
type Check struct {
	AdcpVersion       string `json:"adcp_version,omitempty"`
	Caller            string `json:"caller"`
	GovernanceContext string `json:"governance_context"`
	// PlanID is the deprecated plan identifier a buyer may still send
	// beside its context; the agent rejects a mismatch.
	PlanID              string          `json:"plan_id,omitempty"`
	PurchaseType        string          `json:"purchase_type"`
	Phase               string          `json:"phase"`
	PlannedDelivery     PlannedDelivery `json:"planned_delivery"`
	ExecutionCommitment Commitment      `json:"execution_commitment"`
}

// Verdicts.
const (
	Approved   = "approved"
	Denied     = "denied"
	Conditions = "conditions"
)

// Finding is one issue the agent found, as the buyer is told of it.
type Finding struct {
	CategoryID  string   `json:"category_id"`
	PolicyID    string   `json:"policy_id,omitempty"`
	Severity    string   `json:"severity"`
	Explanation string   `json:"explanation"`
	Confidence  *float64 `json:"confidence,omitempty"`
}

// Verdict is the agent's decision on a check.
type Verdict struct {
	// Approved is set only for an approved verdict that is still in date.
	Approved    bool
	CheckID     string
	Explanation string
	Findings    []Finding
	// Context is the approval's governance_context, which the storefront
	// keeps with the buy and forwards on later checks.
	Context   string
	ExpiresAt time.Time
}

// ErrUnavailable is wrapped by every failure to obtain a valid verdict:
// the agent could not be reached, timed out, failed, or answered with
// something that is not a decision (GOVERNANCE_UNAVAILABLE).
var ErrUnavailable = errors.New("the governance agent gave no valid decision")

// Client calls governance agents.
type Client struct {
	// Policy is the URL policy webhooks use: public https, and loopback
	// too in sandbox mode. Every address dialled is held to it as well.
	Policy webhook.Policy
	// Transport, when set, is the base transport (tests trust their
	// stub's certificate with it); its dialer is replaced by the
	// policy's guard.
	Transport *http.Transport
	Timeout   time.Duration
	Now       func() time.Time
	// Name and Version identify the storefront to the agent.
	Name, Version string
}

// Allowed reports why url may not be registered as a governance agent.
func (c *Client) Allowed(url string) error {
	if !strings.HasPrefix(url, "https://") {
		return errors.New("the governance agent URL must use https")
	}
	return c.Policy.CheckURL(url, "governance agent URL")
}

func (c *Client) now() time.Time {
	return clock.Read(c.Now)
}

// Check asks agent for an execution verdict. Any failure to obtain a valid
// decision wraps ErrUnavailable; a denial is a Verdict, not an error.
func (c *Client) Check(ctx context.Context, agent Agent, check Check) (Verdict, error) {
	if err := c.Allowed(agent.URL); err != nil {
		return Verdict{}, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: c.Name, Version: c.Version}, nil)
	session, err := client.Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint: agent.URL, HTTPClient: c.httpClient(agent), MaxRetries: -1, DisableStandaloneSSE: true,
	}, nil)
	if err != nil {
		return Verdict{}, fmt.Errorf("%w: connecting: %v", ErrUnavailable, err)
	}
	defer session.Close()
	res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: Tool, Arguments: check})
	if err != nil {
		return Verdict{}, fmt.Errorf("%w: calling %s: %v", ErrUnavailable, Tool, err)
	}
	if res.IsError {
		return Verdict{}, fmt.Errorf("%w: the agent answered with an error", ErrUnavailable)
	}
	raw, err := payload(res)
	if err != nil {
		return Verdict{}, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	return c.verdict(raw)
}

// httpClient presents the agent's credentials, follows no redirect (the
// credentials are for the registered URL only) and dials only addresses
// the policy's guard admits, whatever the agent's name resolves to.
func (c *Client) httpClient(agent Agent) *http.Client {
	return &http.Client{
		Transport:     bearer{token: agent.Credentials, next: c.Policy.Transport(c.Transport)},
		CheckRedirect: webhook.NoRedirects,
	}
}

type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// payload is the AdCP object of a tool result: structuredContent, or the
// JSON text of the first content item.
func payload(res *mcp.CallToolResult) ([]byte, error) {
	if res.StructuredContent != nil {
		return json.Marshal(res.StructuredContent)
	}
	if len(res.Content) > 0 {
		if t, ok := res.Content[0].(*mcp.TextContent); ok && json.Valid([]byte(t.Text)) {
			return []byte(t.Text), nil
		}
	}
	return nil, errors.New("the answer carries no JSON object")
}

// responseWire is governance/check-governance-response.json, the part
// the storefront reads. Agents before 3.1 put the verdict in status.
type responseWire struct {
	Verdict           string    `json:"verdict"`
	Status            string    `json:"status"`
	CheckType         string    `json:"check_type"`
	CheckID           string    `json:"check_id"`
	Explanation       string    `json:"explanation"`
	Findings          []Finding `json:"findings"`
	GovernanceContext string    `json:"governance_context"`
	ExpiresAt         string    `json:"expires_at"`
}

func (c *Client) verdict(raw []byte) (Verdict, error) {
	var w responseWire
	if err := json.Unmarshal(raw, &w); err != nil {
		return Verdict{}, fmt.Errorf("%w: the answer is not a check_governance response", ErrUnavailable)
	}
	verdict := w.Verdict
	if verdict == "" && (w.Status == Approved || w.Status == Denied || w.Status == Conditions) {
		verdict = w.Status
	}
	v := Verdict{CheckID: w.CheckID, Explanation: w.Explanation, Findings: w.Findings, Context: w.GovernanceContext}
	switch verdict {
	case Denied:
		return v, nil
	case Conditions:
		// Conditions negotiate an intent; an execution check is binary.
		return Verdict{}, fmt.Errorf("%w: the agent answered an execution check with conditions, which only an intent check may carry", ErrUnavailable)
	case Approved:
	default:
		return Verdict{}, fmt.Errorf("%w: the answer has no verdict", ErrUnavailable)
	}
	if w.CheckType != "" && w.CheckType != "execution" {
		return Verdict{}, fmt.Errorf("%w: the approval is for an %s check, not this execution check", ErrUnavailable, w.CheckType)
	}
	exp, err := time.Parse(time.RFC3339, w.ExpiresAt)
	if err != nil {
		return Verdict{}, fmt.Errorf("%w: the approval has no expires_at", ErrUnavailable)
	}
	if !exp.After(c.now()) {
		return Verdict{}, fmt.Errorf("%w: the approval expired at %s", ErrUnavailable, exp.UTC().Format(time.RFC3339))
	}
	v.Approved, v.ExpiresAt = true, exp.UTC()
	return v, nil
}
