package sanitize

import "encoding/json"

// Text is a buyer-visible string that has passed the screen. Its zero value
// is the empty string. There is no exported way to build one from an
// arbitrary string: use a [Screen], [Const] for a string constant, or one
// of the fixed lines below.
type Text struct{ s string }

// String returns the screened text.
func (t Text) String() string { return t.s }

// IsZero reports whether t is empty.
func (t Text) IsZero() bool { return t.s == "" }

// MarshalJSON encodes t as a JSON string.
func (t Text) MarshalJSON() ([]byte, error) { return json.Marshal(t.s) }

// Fixed lines. They are owned by this package, contain no publisher data and
// so cannot leak any; they are what the screen falls back to when every
// other candidate was dropped.
var (
	// Declined is the last-resort decline reason.
	Declined = Text{"This request was declined."}
	// Internal is the message for any failure whose detail must stay inside.
	Internal = Text{"Internal error."}
	// Unavailable is the message for a transient outage.
	Unavailable = Text{"The service is temporarily unavailable. Please retry shortly."}
)
