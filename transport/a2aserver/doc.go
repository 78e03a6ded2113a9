// Package a2aserver serves the agent over A2A JSON-RPC, for buyer agents
// that speak A2A 1.0 (SendMessage) or 0.3 (message/send), on one endpoint.
// It decodes the AdCP v3 profile's invocation (one data part holding
// {skill, input}), calls agent.Dispatch, and encodes the reply as a terminal
// task whose first artifact's data part is the flat AdCP object, the same
// JSON MCP carries in structuredContent. It also serves the agent card.
//
// It must never decide anything about a call: no business logic, no
// buyer-visible text that did not come from the agent or the sanitize
// screen, and no task state. Every reply is terminal, so nothing is kept
// after the response is written; tasks/get and friends find nothing.
//
// The wire, in short:
//
//   - completed and rejected: task state completed; artifacts[0]'s data
//     part is the AdCP object unchanged, preceded for a rejection by a text
//     part with the screened reason;
//   - failed (the error arm): task state failed; artifacts[0] holds a short
//     screened text part and then the data part with adcp_error;
//   - rejected, when the caller activated the refusal extension
//     (RefusalURI): the task's status message also carries the reason as
//     text and the typed refusal {rule, reason, detail?} as a data part of
//     media type RefusalMediaType. artifacts[0] is unchanged: AdCP clients
//     read it;
//   - a malformed invocation is a JSON-RPC invalid-params error whose
//     ErrorInfo metadata names the profile breach (adcp_profile_error).
//
// Extension activation. The card declares the AdCP v3 profile
// (ProfileURI) with required: true, as the profile asks. It is enforced on
// A2A 1.0 only: a SendMessage without ProfileURI in A2A-Extensions gets
// EXTENSION_SUPPORT_REQUIRED. A2A 0.3 predates the profile and 0.3 AdCP
// clients (the @adcp/sdk among them) send no extension header, so a 0.3
// message/send is served under the profile implicitly, and may name its
// arguments "parameters" as well as "input". Activated extensions are
// echoed in A2A-Extensions (1.0) or X-A2A-Extensions (0.3).
//
// The fast path (fast.go). a2a-go is the reference for every request, but
// the one buyers send all day, a single SendMessage with the profile
// activated or message/send carrying one {skill, input} data part for one
// of the agent's tools, in a shape the fast path has been shown to read
// as a2a-go does, is answered without it: the body is read once, the call
// admitted and dispatched as handler.send does, and the task written
// around the agent's JSON in one pass, under the same recover boundary as
// SendMessage's. Anything else, and any call admission or dispatch would
// refuse, is handed to a2a-go having written nothing. The two answer alike
// (agent's TestA2AFastPathMatchesA2AGo and FuzzA2AFastPath); over 0.3 the
// AdCP object keeps the agent's member order, where a2a-go sorts it.
// Config.SDKOnly (--a2a-sdk-only) turns the fast path off.
package a2aserver
