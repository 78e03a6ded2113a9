package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"slices"
	"time"

	"github.com/storefront/storefront/ledger"
	"github.com/storefront/storefront/products"
	"github.com/storefront/storefront/vocab"
)

// Accounts implements products.Accounts over a Store.
type Accounts struct{ Store Store }

// Resolve finds the account a request names and checks the principal may
// use it. A principal may use the accounts listed on its token, and the
// natural-key accounts of the operator it acts as, which are provisioned
// on first use (buyer-declared accounts). A sandbox principal (a compliance
// test-kit key) acts only in sandbox: every natural-key account it names is
// the sandbox account of that brand and operator, provisioned on first use,
// and it may name no live account by id.
func (a Accounts) Resolve(ctx context.Context, publisher string, p products.Principal, ref *products.AccountRef) (products.Account, error) {
	if p.Sandbox && ref.AccountID == "" && !ref.Sandbox {
		r := *ref
		r.Sandbox = true
		ref = &r
	}
	var acct Account
	var err error
	switch {
	case ref.AccountID != "":
		acct, err = a.Store.AccountByID(ctx, publisher, ref.AccountID)
		if errors.Is(err, ErrNotFound) {
			return products.Account{}, products.ErrAccountNotFound
		}
		if err != nil {
			return products.Account{}, err
		}
		allowed := slices.Contains(p.Accounts, acct.ID) || (p.Operator != "" && p.Operator == acct.Operator && !p.Sandbox)
		if p.Sandbox {
			allowed = acct.Sandbox
		}
		if !allowed {
			return products.Account{}, products.ErrAccountNotFound
		}
	default:
		if !p.Sandbox && ref.Operator != p.Operator {
			return products.Account{}, products.ErrAccountNotFound
		}
		acct, err = a.Store.EnsureAccount(ctx, publisher, Account{
			Operator: ref.Operator, BrandDomain: ref.Brand.Domain, BrandID: ref.Brand.BrandID,
			Sandbox: ref.Sandbox, Disclosure: vocab.Exact,
		})
		if err != nil {
			return products.Account{}, err
		}
	}
	return products.Account{Key: acct.ID, Sandbox: acct.Sandbox, Disclosure: acct.Disclosure}, nil
}

// Ledger implements products.Ledger over a Store.
type Ledger struct {
	Store Store
	// KeepRequests keeps each decision's request beside the chain, for
	// backtests; without it only the request's digest is recorded.
	KeepRequests bool
}

// Append implements products.Ledger.
func (l Ledger) Append(ctx context.Context, r ledger.Record) (ledger.Entry, error) {
	if !l.KeepRequests {
		r.Request = nil
	}
	return l.Store.Append(ctx, r)
}

// DirectiveLease is how long a call's claim on a directive holds: far
// longer than any call takes to be answered, so that only a call that died
// holding it leaves the directive claimed, and then not for long.
const DirectiveLease = 30 * time.Second

// Directives implements products.Directives over a Store.
type Directives struct{ Store Store }

// Claim implements products.Directives, under a fresh random token.
func (d Directives) Claim(ctx context.Context, publisher, account, principal string) (*products.Claim, error) {
	token, err := NewToken()
	if err != nil {
		return nil, err
	}
	dir, err := d.Store.ClaimDirective(ctx, publisher, account, principal, token, DirectiveLease)
	if err != nil || dir == nil {
		return nil, err
	}
	return &products.Claim{Directive: *dir, Publisher: publisher, Account: account, Principal: principal, Token: token}, nil
}

// Spend implements products.Directives.
func (d Directives) Spend(ctx context.Context, c *products.Claim) error {
	return d.Store.SpendDirective(ctx, c.Publisher, c.Account, c.Principal, c.Token)
}

// Release implements products.Directives.
func (d Directives) Release(ctx context.Context, c *products.Claim) error {
	return d.Store.ReleaseDirective(ctx, c.Publisher, c.Account, c.Principal, c.Token)
}

// NewToken returns a fresh ownership token for a reservation or a claim:
// 128 random bits, so that no other owner's token can be guessed.
func NewToken() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// Tasks implements products.Tasks over a Store.
type Tasks struct{ Store Store }

// Submit implements products.Tasks.
func (t Tasks) Submit(ctx context.Context, publisher string, sub products.Submission) error {
	task := Task{
		ID: sub.TaskID, Owner: TaskOwner{Account: sub.Account, Principal: sub.Principal},
		Type: "get_products", Status: "submitted", Message: sub.Message, Request: sub.Request,
	}
	if p := sub.Push; p != nil {
		task.Webhook = &Webhook{URL: p.URL, OperationID: p.OperationID, Token: p.Token, Scheme: p.Scheme, Credentials: p.Credentials}
	}
	err := t.Store.CreateTask(ctx, publisher, task)
	if errors.Is(err, ErrExists) {
		return products.ErrTaskExists
	}
	return err
}
