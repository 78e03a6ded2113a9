// Package decline is the composer: it turns the public grounds of a
// decision into a buyer-facing reason and suggestions, in the seller's
// voice, at the disclosure level a rule allows.
//
// The vocabulary it writes from (the slugs, the suggestion kinds, the
// levels, the grounds and the voice) is package vocab, the single source of
// truth for every slug the storefront may send: the composer, the MCP tool
// description, the A2A card's refusal extension, the capabilities and the
// published JSON are all generated from it.
//
// The composer never sees a rule's internal id, name or notes: its input
// type has no field for them. Everything it writes still passes the
// sanitize screen before it can leave.
package decline
