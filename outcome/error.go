package outcome

import (
	"encoding/json"

	"github.com/storefront/storefront/adcp"
	"github.com/storefront/storefront/sanitize"
	"github.com/storefront/storefront/vocab"
)

// Error is an AdCP error object (core/error.json). Its recovery class comes
// from the code; its message and field are screened text.
type Error struct {
	Code    adcp.Code
	Message sanitize.Text
	// Field is the request field at fault, in JSONPath-lite form.
	Field sanitize.Text
	// Suggestion is a suggested fix.
	Suggestion sanitize.Text
	// Details carries public, structured detail such as the supported
	// versions. It never carries buyer-supplied or internal strings.
	Details *Details
	// RetryAfter, when positive, is how many seconds to wait before
	// retrying (retry_after: a whole number from 1 to 3600).
	RetryAfter int
	// Issues are the fields a VALIDATION_ERROR refuses, one each; Field
	// is then the first one's, in JSONPath-lite.
	Issues []Issue
}

// Issue is one field a request is refused for (core/error.json issues[]).
type Issue struct {
	// Pointer is the RFC 6901 JSON Pointer of the field in the request.
	Pointer sanitize.Text `json:"pointer"`
	// Message says why that field is refused.
	Message sanitize.Text `json:"message"`
	// Keyword is the JSON Schema keyword that refused it.
	Keyword string `json:"keyword"`
}

// MaxRetryAfter is the largest retry_after AdCP allows, in seconds.
const MaxRetryAfter = 3600

// ErrorWire is the error object as it is sent (core/error.json).
type ErrorWire struct {
	Code    adcp.Code     `json:"code"`
	Message sanitize.Text `json:"message"`
	// Recovery is the code's recovery class: transient, correctable or
	// terminal.
	Recovery adcp.Recovery `json:"recovery"`
	// Field is the request field at fault, in JSONPath-lite form.
	Field *sanitize.Text `json:"field,omitempty"`
	// Suggestion is a suggested fix.
	Suggestion *sanitize.Text `json:"suggestion,omitempty"`
	// RetryAfter is how many seconds to wait before retrying, from 1 to
	// 3600.
	RetryAfter int `json:"retry_after,omitempty" jsonschema:"minimum=1,maximum=3600"`
	// Details carries public, structured detail such as the supported
	// versions.
	Details *Details `json:"details,omitempty"`
	// Issues are the fields a VALIDATION_ERROR refuses.
	Issues []Issue `json:"issues,omitempty"`
}

// JSONSchemaAlias makes the published schemas describe Error as it is
// sent, not as it is held.
func (Error) JSONSchemaAlias() any { return ErrorWire{} }

// MarshalJSON writes the AdCP error object.
func (e Error) MarshalJSON() ([]byte, error) {
	w := ErrorWire{Code: e.Code, Message: e.Message, Recovery: e.Code.Recovery(), Details: e.Details, Issues: e.Issues}
	if e.RetryAfter > 0 {
		w.RetryAfter = min(e.RetryAfter, MaxRetryAfter)
	}
	if !e.Field.IsZero() {
		f := e.Field
		w.Field = &f
	}
	if !e.Suggestion.IsZero() {
		s := e.Suggestion
		w.Suggestion = &s
	}
	if w.Message.IsZero() {
		w.Message = sanitize.Internal
	}
	return json.Marshal(w)
}

// Details is the details object of an error: public, structured detail
// whose members depend on the code. Each kind of detail is a struct of its
// own, embedded so that its members sit flat in the object as AdCP has
// them; an error sets one kind and leaves the others nil, which leaves
// them out.
//
// Inside each kind the members are declared in alphabetical order on
// purpose: the details object was a map before it was a type, and
// encoding/json writes a map's keys sorted, so this order keeps every
// error's bytes as they were. A member the map always carried has no
// omitempty, so a zero value is still written.
type Details struct {
	*Declined
	*Versions
	*BuyStatus
	*BuyRevision
	*MinimumSpend
	*BillingScope
	*GovernanceDenial
	*Exclusion
	*Staleness
}

// JSONSchemaAlias keeps the published schemas describing details as an
// object whose members depend on the code, as AdCP does.
func (Details) JSONSchemaAlias() any { return map[string]any{} }

// Declined is the decline a typed error carries where the rejected arm
// does not exist: before 3.2, and on tasks without one.
type Declined struct {
	Decline DeclineDetail `json:"decline"`
	// Suggestions are the decline's screened suggestions, the first of
	// which is also the error's suggestion.
	Suggestions []sanitize.Text `json:"suggestions,omitempty"`
}

// DeclineDetail names the decline an error carries.
type DeclineDetail struct {
	Fixable bool       `json:"fixable"`
	Slug    vocab.Slug `json:"slug"`
}

// Versions is what a VERSION_UNSUPPORTED error tells the buyer the
// storefront serves (error-details/version-unsupported.json).
type Versions struct {
	BuildVersion      string   `json:"build_version"`
	SupportedMajors   []int    `json:"supported_majors"`
	SupportedVersions []string `json:"supported_versions"`
}

// BuyStatus is a media buy's status when it does not allow the action
// asked for.
type BuyStatus struct {
	CurrentStatus string `json:"current_status"`
}

// BuyRevision is a media buy's revision when an update named another one.
type BuyRevision struct {
	CurrentRevision int64 `json:"current_revision"`
}

// MinimumSpend is the least a pricing option accepts per package.
type MinimumSpend struct {
	Currency      string  `json:"currency"`
	MinimumBudget float64 `json:"minimum_budget"`
}

// BillingScope says which billing the seller supports
// (error-details/billing-not-supported.json).
type BillingScope struct {
	Scope            string   `json:"scope"`
	SupportedBilling []string `json:"supported_billing"`
}

// GovernanceDenial is the check a governance agent denied a buy on, with
// its findings, as the buyer may see them.
type GovernanceDenial struct {
	CheckID  string    `json:"check_id"`
	Findings []Finding `json:"findings"`
}

// Finding is one governance finding as an error's details carry it.
type Finding struct {
	CategoryID  string   `json:"category_id"`
	PolicyID    string   `json:"policy_id,omitempty"`
	Severity    string   `json:"severity"`
	Explanation string   `json:"explanation"`
	Confidence  *float64 `json:"confidence,omitempty"`
}

// Exclusion says which filter a product is excluded by.
type Exclusion struct {
	ExcludedBy string `json:"excluded_by"`
}

// Staleness marks a warning for an answer served from cache.
type Staleness struct {
	CacheAgeSeconds int  `json:"cache_age_seconds"`
	ServedFromCache bool `json:"served_from_cache"`
}

// DeclineSlug returns the slug of the decline e carries, or "".
func (e Error) DeclineSlug() vocab.Slug {
	if e.Details == nil || e.Details.Declined == nil {
		return ""
	}
	return e.Details.Decline.Slug
}

// VersionDetails is the details object of a VERSION_UNSUPPORTED error
// (error-details/version-unsupported.json).
func VersionDetails() *Details {
	return &Details{Versions: &Versions{
		SupportedVersions: adcp.SupportedStrings(),
		SupportedMajors:   adcp.Majors(),
		BuildVersion:      adcp.Build,
	}}
}
