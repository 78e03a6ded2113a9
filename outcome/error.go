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
}

// MaxRetryAfter is the largest retry_after AdCP allows, in seconds.
const MaxRetryAfter = 3600

type wireError struct {
	Code       adcp.Code      `json:"code"`
	Message    sanitize.Text  `json:"message"`
	Recovery   adcp.Recovery  `json:"recovery"`
	Field      *sanitize.Text `json:"field,omitempty"`
	Suggestion *sanitize.Text `json:"suggestion,omitempty"`
	RetryAfter int            `json:"retry_after,omitempty"`
	Details    map[string]any `json:"details,omitempty"`
}

// MarshalJSON writes the AdCP error object.
func (e Error) MarshalJSON() ([]byte, error) {
	w := wireError{Code: e.Code, Message: e.Message, Recovery: e.Code.Recovery(), Details: e.Details}
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
