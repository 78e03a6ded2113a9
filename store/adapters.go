package store

// The adapters below implement the products package's ports over the
// storage roles. Who may use which account is not among them: that policy
// is package access's.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"time"

	"github.com/storefront/storefront/ledger"
	"github.com/storefront/storefront/products"
)

// Ledger implements products.Ledger over the ledger role.
type Ledger struct {
	Store Ledgers
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

// Directives implements products.Directives over the sandbox role.
type Directives struct{ Store Sandbox }

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

// Tasks implements products.Tasks over the task role.
type Tasks struct{ Store AsyncTasks }

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
