// Package agent is the one dispatch path every buyer transport shares: the
// tool catalogue (names, descriptions, input schemas, _meta), bearer
// authentication, and the handlers that turn a tool call into the flat AdCP
// object. MCP and A2A only decode, call Dispatch, and encode, so the two
// cannot drift apart.
//
// It must not know any transport's wire format, and it never builds
// buyer-visible text except through the sanitize screen.
package agent
