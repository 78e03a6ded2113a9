// Package products holds the catalogue and the get_products pipeline.
//
// The catalogue model maps one to one onto AdCP core/product.json, plus the
// catalogue-only facts the storefront matches on (markets, availability
// windows, ranking keywords) and a confidential internal reference that
// never leaves.
//
// The Service turns a request into a Brief, evaluates the rulebook, matches
// the catalogue (structured filters always exclude what does not match;
// brief text is ranked deterministically), composes and screens a decline
// when one is due, records the decision in the ledger, and returns an
// outcome. It never answers with products when the rulebook cannot be
// evaluated or the decision cannot be recorded.
package products
