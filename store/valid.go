package store

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/storefront/storefront/field"
	"github.com/storefront/storefront/jsonfield"
	"github.com/storefront/storefront/ledger"
	"github.com/storefront/storefront/products"
)

// ErrInvalid: a value no store keeps: text that is not valid UTF-8 or
// holds a NUL or another control character, an identifier outside its
// alphabet, a domain that is not a hostname, a name past its length. Both
// stores check every write with the functions below before anything is
// written, so they refuse the same input the same way, whichever caller
// built it; the error also holds a jsonfield.Invalid (errors.As) naming each
// field of the record at fault.
var ErrInvalid = errors.New("invalid value")

// refuse is v as an ErrInvalid, or nil.
func refuse(v jsonfield.Invalid) error {
	if len(v) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %w", ErrInvalid, v)
}

// CheckPublisher checks a publisher's settings.
func CheckPublisher(p products.Publisher) error {
	var v jsonfield.Invalid
	v.Check("/id", field.Identifier(p.ID))
	v.Check("/name", field.Name.Check(p.Name))
	v.Check("/domain", field.Hostname(p.Domain))
	return refuse(v)
}

// CheckAccount checks an account; an empty id is one the store assigns.
func CheckAccount(a Account) error {
	var v jsonfield.Invalid
	if a.ID != "" {
		v.Check("/account_id", field.Identifier(a.ID))
	}
	v.Check("/operator", field.Hostname(a.Operator))
	v.Check("/brand_domain", field.Hostname(a.BrandDomain))
	v.Check("/brand_id", field.Label.Check(a.BrandID))
	return refuse(v)
}

// CheckToken checks a token record; an empty id is one the store assigns.
// The name and the buyer's operator may be empty (the admin API requires
// a name; a buyer without an operator acts for none); an admin token's
// buyer is dropped, not checked.
func CheckToken(t Token) error {
	var v jsonfield.Invalid
	if t.ID != "" {
		v.Check("/id", field.Identifier(t.ID))
	}
	v.Check("/publisher", field.Identifier(t.Publisher))
	v.Check("/name", field.Rule{Max: field.TokenName.Max}.Check(t.Name))
	v.Check("/prefix", field.Label.Check(t.Prefix))
	v.Check("/created_by", field.Label.Check(t.CreatedBy))
	if b := t.Buyer; b != nil && t.Kind == BuyerToken {
		v.Check("/buyer/id", field.Identifier(b.ID))
		if b.Operator != "" {
			v.Check("/buyer/operator", field.Hostname(b.Operator))
		}
		for i, a := range b.Accounts {
			v.Check(jsonfield.Pointer("buyer", "accounts", i), field.Identifier(a))
		}
	}
	return refuse(v)
}

// CheckChange checks who made a versioned change and the note saying why.
func CheckChange(author, note string) error {
	var v jsonfield.Invalid
	v.Check("/author", field.Label.Check(author))
	v.Check("/note", field.Note.Check(note))
	return refuse(v)
}

// CheckStored checks every string a record holds (field.Value): no store
// keeps text that is not valid UTF-8 or that holds a control character
// other than line breaks and tabs, whatever record it sits in. Rulebooks,
// products, ledger records, tasks, media buys and the rest are checked
// with it. (Audit records are cleaned instead, never refused: see
// audit.Clean.)
func CheckStored(records ...any) error {
	var v jsonfield.Invalid
	for _, r := range records {
		v.Faults("", field.Value(r))
	}
	return refuse(v)
}

// CheckRecord is CheckStored(r) for a ledger record, written for every
// decision: a record whose text is all printable ASCII, as the
// storefront's own are, is passed without CheckStored's reflective walk,
// which could fault nothing in it (TestCheckRecordIsCheckStored).
func CheckRecord(r *ledger.Record) error {
	plain := field.Plain(r.Publisher) && field.Plain(r.Account) && field.Plain(r.Principal) &&
		field.Plain(r.RequestDigest) && field.Plain(r.Task) && field.Plain(r.Arm) &&
		field.Plain(string(r.Slug)) && field.Plain(r.ResponseDigest)
	for _, id := range r.RuleIDs {
		plain = plain && field.Plain(id)
	}
	// The other fields are numbers, flags and Request, bytes the walk
	// takes for binary.
	if plain {
		return nil
	}
	return CheckStored(*r)
}

// Unkeepable reports whether any of keys is text no store can hold: not
// valid UTF-8, or holding a NUL. A lookup by such a key finds nothing in
// either store (the memory store compares and misses); the PostgreSQL
// store, which would be refused the comparison, answers the same without
// asking.
func Unkeepable(keys ...string) bool {
	for _, k := range keys {
		if strings.IndexByte(k, 0) >= 0 || !utf8.ValidString(k) {
			return true
		}
	}
	return false
}

// CheckDirective checks a compliance directive and the account and
// principal it is kept for.
func CheckDirective(account, principal string, d products.Directive) error {
	return CheckStored(struct {
		Account   string             `json:"account"`
		Principal string             `json:"principal"`
		Directive products.Directive `json:"directive"`
	}{account, principal, d})
}
