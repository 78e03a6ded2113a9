package agent

import (
	"github.com/storefront/storefront/adcp"
	"github.com/storefront/storefront/outcome"
	"github.com/storefront/storefront/sanitize"
)

// RequestRefused is the AdCP error for a request refused before dispatch
// for the way it arrived (a body too large, too slow or unreadable), not
// for what it asks. detail is the storefront's own sentence, never the
// caller's words.
func RequestRefused(detail string) outcome.Error {
	msg, _ := sanitize.Vendor().Line(detail, sanitize.MaxMessage)
	return outcome.Error{Code: adcp.InvalidRequest, Message: msg}
}
