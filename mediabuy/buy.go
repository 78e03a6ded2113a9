package mediabuy

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/storefront/storefront/adcp"
	"github.com/storefront/storefront/outcome"
)

// Status is a buy's lifecycle state (enums/media-buy-status.json).
type Status string

// The statuses. submitted, working and input-required are task states, not
// buy states: a buy waiting for the publisher does not exist yet.
const (
	PendingCreatives Status = "pending_creatives"
	PendingStart     Status = "pending_start"
	Active           Status = "active"
	Paused           Status = "paused"
	Completed        Status = "completed"
	Rejected         Status = "rejected"
	Canceled         Status = "canceled"
)

// statuses lists every status, in lifecycle order.
var statuses = []Status{PendingCreatives, PendingStart, Active, Paused, Completed, Rejected, Canceled}

// Terminal reports whether nothing more can happen to a buy in s.
func (s Status) Terminal() bool { return s == Completed || s == Rejected || s == Canceled }

// ParseStatus returns the status named s.
func ParseStatus(s string) (Status, bool) {
	for _, x := range statuses {
		if string(x) == s {
			return x, true
		}
	}
	return "", false
}

// Buy is a media buy as stored. Its status is not stored: Status derives it
// from these facts and the clock, so that a flight starting or ending needs
// no background job and cannot be missed.
type Buy struct {
	ID string `json:"media_buy_id"`
	// Account is the seller's account id; Principal the buyer that made it.
	Account   string `json:"account"`
	Principal string `json:"principal"`
	Sandbox   bool   `json:"sandbox,omitempty"`

	Name               string   `json:"name,omitempty"`
	BrandDomain        string   `json:"brand_domain"`
	BrandID            string   `json:"brand_id,omitempty"`
	Industries         []string `json:"industries,omitempty"`
	AdvertiserIndustry string   `json:"advertiser_industry,omitempty"`
	PONumber           string   `json:"po_number,omitempty"`
	Currency           string   `json:"currency"`
	Pacing             string   `json:"pacing,omitempty"`

	// Start and End bound the flight: Start inclusive, End exclusive.
	Start time.Time `json:"start_time"`
	End   time.Time `json:"end_time"`

	// Held is the buyer's pause: delivery held once nothing else blocks it.
	Held     bool          `json:"held,omitempty"`
	Canceled *Cancellation `json:"canceled,omitempty"`
	// Forced is a status the compliance controller put a sandbox buy in
	// (force_media_buy_status) that its facts alone would not give; the
	// flight's end and a cancellation still prevail.
	Forced Status `json:"forced_status,omitempty"`

	Packages []Package `json:"packages"`

	Revision    int64     `json:"revision"`
	ConfirmedAt time.Time `json:"confirmed_at"`
	CreatedAt   time.Time `json:"created_at"`
	UpdatedAt   time.Time `json:"updated_at"`

	// Context is the buyer's media-buy context, echoed on every read.
	Context json.RawMessage `json:"context,omitempty"`
	// Order is the task id of the order it came from, when it waited for
	// the publisher.
	Order string `json:"order,omitempty"`
	// Governance is the governance authorization the buy was made under,
	// kept for audit and for later checks.
	Governance *Governance `json:"governance,omitempty"`
	// RulebookVersion is the rulebook that last judged the buy's terms:
	// at creation (or when its order was judged) and at each update that
	// changed them. An update no rule judges (a pause, a creative, a
	// cancellation) is recorded on the ledger under it.
	RulebookVersion int64 `json:"rulebook_version,omitempty"`
}

// Governance is what a buy keeps of its governance: the buyer's intent
// authorization as it arrived and, when the account has a governance
// agent, that agent's approval of the purchase.
type Governance struct {
	// Context is the buyer's governance_context, verbatim.
	Context string `json:"governance_context"`
	// Agent is the registered agent's URL; CheckID, Approval and
	// ExpiresAt are its execution approval (empty when the account has
	// no agent).
	Agent     string    `json:"agent,omitempty"`
	CheckID   string    `json:"check_id,omitempty"`
	Approval  string    `json:"approval_context,omitempty"`
	ExpiresAt time.Time `json:"expires_at,omitzero"`
}

// Cancellation records who canceled, when and why.
type Cancellation struct {
	At     time.Time `json:"canceled_at"`
	By     string    `json:"canceled_by"` // buyer or seller
	Reason string    `json:"reason,omitempty"`
}

// Package is one line of a buy.
type Package struct {
	ID              string   `json:"package_id"`
	ProductID       string   `json:"product_id"`
	PricingOptionID string   `json:"pricing_option_id"`
	PricingModel    string   `json:"pricing_model"`
	Budget          float64  `json:"budget"`
	BidPrice        *float64 `json:"bid_price,omitempty"`
	// Rate is the unit rate agreed: the fixed price, or for an auction
	// the bid (else the floor).
	Rate   float64 `json:"rate"`
	Pacing string  `json:"pacing,omitempty"`
	// Impressions is the buyer's impression goal, if it gave one.
	Impressions *float64 `json:"impressions,omitempty"`

	// Start and End narrow the buy's flight for this package; zero means
	// the buy's.
	Start time.Time `json:"start_time,omitzero"`
	End   time.Time `json:"end_time,omitzero"`

	Held     bool          `json:"held,omitempty"`
	Canceled *Cancellation `json:"canceled,omitempty"`

	// Formats is what the package selected, as the buyer sent it, and
	// FormatKinds the canonical kinds that selection resolves to.
	FormatOptionRefs json.RawMessage `json:"format_option_refs,omitempty"`
	FormatKind       string          `json:"format_kind,omitempty"`
	Params           json.RawMessage `json:"params,omitempty"`
	FormatIDs        json.RawMessage `json:"format_ids,omitempty"`
	FormatKinds      []string        `json:"format_kinds,omitempty"`

	// Countries is targeting_overlay.geo_countries.
	Countries []string `json:"countries,omitempty"`

	Assignments       []Assignment    `json:"creative_assignments,omitempty"`
	OptimizationGoals json.RawMessage `json:"optimization_goals,omitempty"`
	Context           json.RawMessage `json:"context,omitempty"`
}

// Assignment is a creative assigned to a package. The storefront hosts no
// creatives: it names one the publisher's ad server receives.
type Assignment struct {
	CreativeID string   `json:"creative_id"`
	Weight     *float64 `json:"weight,omitempty"`
}

// Live reports whether the package still counts: not canceled.
func (p *Package) Live() bool { return p.Canceled == nil }

// Flight returns the package's flight, inheriting the buy's.
func (b *Buy) Flight(p *Package) (time.Time, time.Time) {
	start, end := b.Start, b.End
	if !p.Start.IsZero() {
		start = p.Start
	}
	if !p.End.IsZero() {
		end = p.End
	}
	return start, end
}

// TotalBudget is the sum of the live packages' budgets.
func (b *Buy) TotalBudget() float64 {
	t := 0.0
	for i := range b.Packages {
		if b.Packages[i].Live() {
			t += b.Packages[i].Budget
		}
	}
	return Round(t)
}

// Package returns the package with id, or nil.
func (b *Buy) Package(id string) *Package {
	for i := range b.Packages {
		if b.Packages[i].ID == id {
			return &b.Packages[i]
		}
	}
	return nil
}

// Status derives the buy's status at now: canceled; completed once the
// flight has ended; the status the compliance controller forced, if any;
// pending_creatives while a live package has no creative; pending_start
// before the flight; paused while the buyer holds it; else active.
func (b *Buy) Status(now time.Time) Status {
	switch {
	case b.Canceled != nil:
		return Canceled
	case !now.Before(b.End):
		return Completed
	case b.Forced != "":
		return b.Forced
	case b.missingCreatives():
		return PendingCreatives
	case now.Before(b.Start):
		return PendingStart
	case b.Held:
		return Paused
	}
	return Active
}

func (b *Buy) missingCreatives() bool {
	for i := range b.Packages {
		if b.Packages[i].Live() && len(b.Packages[i].Assignments) == 0 {
			return true
		}
	}
	return false
}

// StatusSince is when the buy entered the status it has at now, as far as
// the stored facts tell: the flight's start or end, a cancellation, or the
// last change.
func (b *Buy) StatusSince(now time.Time) time.Time {
	switch b.Status(now) {
	case Canceled:
		return b.Canceled.At
	case Completed:
		return b.End
	case Active:
		if b.Start.After(b.UpdatedAt) {
			return b.Start
		}
	}
	return b.UpdatedAt
}

// Refusal is a request the state machine or the buy's terms do not allow,
// with the AdCP code the spec names for it.
type Refusal struct {
	Code adcp.Code
	// Field is the request field at fault, if one is.
	Field   string
	Message string
	// Details is public structured detail, such as the current status.
	Details *outcome.Details
}

func (r *Refusal) Error() string { return string(r.Code) + ": " + r.Message }

func refuse(code adcp.Code, field, format string, args ...any) *Refusal {
	return &Refusal{Code: code, Field: field, Message: fmt.Sprintf(format, args...)}
}

// Pause holds delivery. Any buy that is not terminal can be held; a buy
// waiting for creatives or its start shows paused once those clear.
func (b *Buy) Pause(now time.Time) *Refusal {
	if s := b.Status(now); s.Terminal() {
		return stateRefusal(adcp.InvalidState, s, "pause")
	}
	b.Held = true
	if b.Forced == Active {
		b.Forced = Paused
	}
	return nil
}

// Resume releases the buyer's hold.
func (b *Buy) Resume(now time.Time) *Refusal {
	if s := b.Status(now); s.Terminal() {
		return stateRefusal(adcp.InvalidState, s, "resume")
	}
	b.Held = false
	if b.Forced == Paused {
		b.Forced = Active
	}
	return nil
}

// forceable are the statuses each status may be forced to: forward along
// the lifecycle, between active and paused, and never out of a terminal
// status (state-machine.yaml).
var forceable = map[Status][]Status{
	PendingCreatives: {PendingStart, Active, Paused, Completed, Rejected, Canceled},
	PendingStart:     {Active, Paused, Completed, Rejected, Canceled},
	Active:           {Paused, Completed, Canceled},
	Paused:           {Active, Completed, Canceled},
}

// Force puts a sandbox buy in status to at now, as the compliance
// controller's force_media_buy_status does, and returns the status it
// left. Completed ends the flight now and canceled cancels it (as the
// seller); the other statuses hold until the flight ends or the buyer
// pauses or resumes. A transition the lifecycle does not allow is refused
// with the current status, and forcing the current status changes nothing.
func (b *Buy) Force(now time.Time, to Status) (Status, bool) {
	from := b.Status(now)
	if from == to {
		return from, true
	}
	if !slices.Contains(forceable[from], to) {
		return from, false
	}
	switch to {
	case Completed:
		b.End, b.Forced = now.UTC(), ""
		if b.Start.After(b.End) {
			b.Start = b.End
		}
	case Canceled:
		b.Canceled = &Cancellation{At: now.UTC(), By: "seller", Reason: "forced by the compliance controller"}
	default:
		b.Forced = to
		b.Held = to == Paused
	}
	return from, true
}

// Cancel ends the buy. Canceling a terminal buy is NOT_CANCELLABLE: the
// cancellation-specific code wins over INVALID_STATE when the attempted
// transition is itself a cancellation.
func (b *Buy) Cancel(now time.Time, by, reason string) *Refusal {
	if s := b.Status(now); s.Terminal() {
		return stateRefusal(adcp.NotCancellable, s, "cancel")
	}
	b.Canceled = &Cancellation{At: now.UTC(), By: by, Reason: reason}
	return nil
}

func stateRefusal(code adcp.Code, s Status, action string) *Refusal {
	r := refuse(code, "", "the media buy is %s, so it cannot %s", s, action)
	r.Details = &outcome.Details{BuyStatus: &outcome.BuyStatus{CurrentStatus: string(s)}}
	return r
}

// ValidActions lists what update_media_buy can do to a buy in its status at
// now, in the coarse vocabulary every 3.x release defines
// (enums/media-buy-valid-action.json): nothing once it is terminal.
// Budgets, flight dates, package settings and creative assignments all
// change through update_media_buy; packages cannot be added.
func (b *Buy) ValidActions(now time.Time) []string {
	s := b.Status(now)
	if s.Terminal() {
		return []string{}
	}
	out := []string{}
	if b.Held {
		out = append(out, "resume")
	} else {
		out = append(out, "pause")
	}
	return append(out, "cancel", "update_budget", "update_dates", "update_packages")
}

// Round rounds a money amount to cents.
func Round(v float64) float64 { return math.Round(v*100) / 100 }

// Event is one entry of a buy's history.
type Event struct {
	Revision int64     `json:"revision"`
	At       time.Time `json:"timestamp"`
	// Actor is who made the change: the buyer principal, the publisher
	// (an admin token's name) or the system.
	Actor     string `json:"actor,omitempty"`
	Action    string `json:"action"`
	Summary   string `json:"summary,omitempty"`
	PackageID string `json:"package_id,omitempty"`
}

// DirectiveScope is the directive slot of create_media_buy for an account:
// apart from get_products', so that a directive forced for one task is
// never consumed by the other.
func DirectiveScope(account string) string { return "create_media_buy|" + account }
