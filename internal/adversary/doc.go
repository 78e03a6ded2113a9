// Package adversary is the storefront's own adversarial suite for the
// screen. A generator writes publishers whose confidential fields hold
// secrets of every kind a careless sales rep types (people, codenames,
// tickets, short and hex ids, partners, vendors), plants the identifying
// part of each, disguised, in the text and JSON a buyer reads (voice
// templates, seller name, product names, descriptions, format params and
// identifiers), then probes as a buyer over the agent dispatch and the
// real MCP and A2A handlers at every version label. It counts leaks and
// oracle differences (twin probes that differ only in a guessed secret
// must be answered alike).
//
// The leak oracle is independent of the screen: the generator knows what
// it planted and undoes its own disguises (canon) to look for it. Nothing
// here imports sanitize's matching; it must never use the screen to judge
// the screen.
package adversary
