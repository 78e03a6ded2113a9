package outcome

import (
	"github.com/storefront/storefront/internal/jsonesc"
	"github.com/storefront/storefront/sanitize"
	"github.com/storefront/storefront/vocab"
)

// Sent is an answer as it leaves for the buyer: the one result type every
// buyer task hands its transport, whichever service made it (get_products,
// the media-buy tasks, the controller, tasks and capabilities).
type Sent struct {
	// Payload is the flat AdCP object, exactly as the transport sends it.
	Payload []byte
	// Failed is true only for the error arm: transports flip their
	// failure markers on it and on nothing else.
	Failed bool
	// Slug is the public decline category of a decline, "" otherwise;
	// the transports carry it beside the payload.
	Slug vocab.Slug
	// Summary is a short screened line for transports that want a text
	// part beside the data.
	Summary sanitize.Text
	// Compact is true when Payload is known to have no whitespace
	// outside its strings (Outcome.EncodesCompact), so a transport that
	// writes it compacted can copy it as it is without looking. False
	// says nothing: the payload may be compact or not.
	Compact bool
	// Escaped are stretches of Payload whose escaped form, as a JSON
	// string's contents, is known already (Outcome.Escaped), in order: a
	// transport writing the payload as a string copies them rather than
	// escaping them again. Nil says nothing.
	Escaped []jsonesc.Span
	// Release, when set, hands Payload's buffer back for another answer:
	// the transport that asked for a lent payload (agent.Call.Lent) calls
	// it once the payload is written and reads none of it after. A second
	// call does nothing. Nil for a payload that is the reply's own.
	Release func()
}
