package outcome

import (
	"encoding/json"

	"github.com/storefront/storefront/adcp"
	"github.com/storefront/storefront/sanitize"
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
	Details map[string]any
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
	Details map[string]any `json:"details,omitempty"`
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

// VersionDetails is the details object of a VERSION_UNSUPPORTED error
// (error-details/version-unsupported.json).
func VersionDetails() map[string]any {
	return map[string]any{
		"supported_versions": adcp.SupportedStrings(),
		"supported_majors":   adcp.Majors(),
		"build_version":      adcp.Build,
	}
}
