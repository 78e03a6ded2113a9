// Package access is the storefront's account access policy: which buyer
// accounts a principal may use, and which sandbox rules bind a compliance
// test-kit principal. It reads and provisions accounts through the store's
// accounts role (store.Accounts) and keeps nothing itself; the rules are
// here, beside each other, rather than in any store.
//
// The rules:
//
//   - A principal may use the accounts listed on its token, by id.
//   - A principal may use the natural-key accounts (operator and brand)
//     of the operator it acts as; one it names that does not exist yet is
//     provisioned on first use (a buyer-declared account), with the
//     rules' own disclosure.
//   - A live principal may also name an account of its operator by id.
//   - A sandbox principal (a compliance test-kit key) acts only in
//     sandbox: every natural-key account it names is the sandbox account
//     of that brand and operator, provisioned on first use, and by id it
//     may name sandbox accounts only, never a live one.
//
// Whatever a principal may not use is answered as if it did not exist
// (products.ErrAccountNotFound), so that no one learns of another's
// accounts.
//
// It must never import a store implementation nor keep accounts of its
// own: the store is the one record, read on every call.
package access

import (
	"context"
	"errors"
	"slices"

	"github.com/storefront/storefront/products"
	"github.com/storefront/storefront/store"
	"github.com/storefront/storefront/vocab"
)

// Accounts implements products.Accounts: the policy over the store's
// accounts.
type Accounts struct{ Store store.Accounts }

var _ products.Accounts = Accounts{}

// Resolve finds the account a request names and checks the principal may
// use it (the rules in the package comment), provisioning a natural-key
// account on first use. It returns products.ErrAccountNotFound when the
// account does not exist or the principal may not use it, and the store's
// error for anything else (an outage, store.ErrInvalid for a name no store
// keeps).
func (a Accounts) Resolve(ctx context.Context, publisher string, p products.Principal, ref *products.AccountRef) (products.Account, error) {
	if p.Sandbox && ref.AccountID == "" && !ref.Sandbox {
		r := *ref
		r.Sandbox = true
		ref = &r
	}
	var acct store.Account
	var err error
	switch {
	case ref.AccountID != "":
		acct, err = a.Store.AccountByID(ctx, publisher, ref.AccountID)
		if errors.Is(err, store.ErrNotFound) {
			return products.Account{}, products.ErrAccountNotFound
		}
		if err != nil {
			return products.Account{}, err
		}
		if !MayName(p, acct) {
			return products.Account{}, products.ErrAccountNotFound
		}
	default:
		if !p.Sandbox && ref.Operator != p.Operator {
			return products.Account{}, products.ErrAccountNotFound
		}
		acct, err = a.Store.EnsureAccount(ctx, publisher, store.Account{
			Operator: ref.Operator, BrandDomain: ref.Brand.Domain, BrandID: ref.Brand.BrandID,
			Sandbox: ref.Sandbox, Disclosure: vocab.Exact,
		})
		if err != nil {
			return products.Account{}, err
		}
	}
	return products.Account{Key: acct.ID, Sandbox: acct.Sandbox, Disclosure: acct.Disclosure}, nil
}

// MayName reports whether p may use acct when it names it by id: an
// account on its token, or one of its operator's; a sandbox principal,
// any sandbox account and nothing else.
func MayName(p products.Principal, acct store.Account) bool {
	if p.Sandbox {
		return acct.Sandbox
	}
	return slices.Contains(p.Accounts, acct.ID) || (p.Operator != "" && p.Operator == acct.Operator)
}

// Listed reports whether a listing of accounts shows acct to p: its
// token's accounts and its operator's live accounts; to a sandbox
// principal, the sandbox accounts. It is narrower than MayName: a live
// principal's listing leaves out its operator's sandbox accounts, which it
// may still name by id.
func Listed(p products.Principal, acct store.Account) bool {
	if p.Sandbox {
		return acct.Sandbox
	}
	return slices.Contains(p.Accounts, acct.ID) || (p.Operator != "" && p.Operator == acct.Operator && !acct.Sandbox)
}
