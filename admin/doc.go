// Package admin is the publishers' API, under /admin/v1: the catalogue,
// the versioned rulebook and its voice, previews of what a buyer would
// receive, the decision ledger with its stats and their SVG charts,
// accounts and buyer tokens. The publisher console (package console) is
// built on this API alone.
//
// Every request carries a bearer token scoped to one publisher. A token for
// one publisher gets the same 404 for another publisher's resources as for
// resources that do not exist. Every write is optimistic (If-Match on the
// version, 428 without it, 412 when stale) and whole: a document with any
// failure is refused with application/problem+json naming each offending
// field by JSON pointer, and nothing is saved. A browser may make changes
// only from a page on the API's own origin.
package admin
