// Package outcome is the closed set of answers the storefront gives a
// get_products call: Completed, Rejected, Failed and Submitted. Each is built
// only by its constructor, so a rejected outcome cannot hold products or
// errors, a failed one cannot hold a reason, and whether the call succeeded
// is derived from the arm, never set.
//
// Every string in an outcome that a buyer reads is a sanitize.Text. The
// wire encoding is the one flat AdCP object every transport carries.
package outcome
