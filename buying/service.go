// Package buying runs the media-buy tasks (sync_accounts, list_accounts,
// create_media_buy, get_media_buys, update_media_buy,
// get_media_buy_delivery) and the publisher's order desk, over the same
// snapshots, accounts and ledger get_products uses. Every package of a buy
// is judged by merch on the brief get_products would build for the same
// terms, a refusal is composed by decline and screened, and every decision
// is appended to the hash-chained ledger before its answer leaves.
//
// It must never refuse a buy for a reason get_products would not give for
// the same terms, never answer without recording, and never let a buyer
// see or touch another account's buys.
package buying

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/storefront/storefront/adcp"
	"github.com/storefront/storefront/internal/clock"
	"github.com/storefront/storefront/ledger"
	"github.com/storefront/storefront/mediabuy"
	"github.com/storefront/storefront/outcome"
	"github.com/storefront/storefront/products"
	"github.com/storefront/storefront/sanitize"
	"github.com/storefront/storefront/store"
	"github.com/storefront/storefront/vocab"
)

// Store is what the media-buy tasks read and write: buys, orders and
// delivery, governance registrations, the tasks a buy or an order
// answers with, and the accounts sync_accounts and list_accounts show.
type Store interface {
	store.MediaBuys
	store.Governance
	store.AsyncTasks
	store.Accounts
}

// Service runs the media-buy tasks.
type Service struct {
	Store     Store
	Snapshots products.Snapshots
	Accounts  products.Accounts
	Ledger    products.Ledger
	// Seeds, when set, serves sandbox principals their seeded catalogue,
	// as get_products does.
	Seeds products.Seeds
	// Directives, when set, supplies force_create_media_buy_arm: a
	// claimed directive is spent by the buy answered with it and
	// released by every other answer.
	Directives products.Directives
	// WebhookAllowed vets a push_notification_config URL before a task
	// registers it.
	WebhookAllowed func(rawURL string) error
	// Governance, when set, offers sync_governance and calls an
	// account's registered governance agent before a buy is made.
	Governance Governance
	// Timezone is the clock accounts are assigned: every calendar the
	// storefront keeps is UTC.
	Timezone string
	Now      func() time.Time
	Log      *slog.Logger
}

// Task names, as the ledger records them.
const (
	TaskSyncAccounts = "sync_accounts"
	TaskCreate       = "create_media_buy"
	TaskUpdate       = "update_media_buy"
	TaskDecide       = "order_decision"
)

func (s *Service) now() time.Time {
	return clock.Read(s.Now).UTC()
}

func (s *Service) log() *slog.Logger {
	if s.Log != nil {
		return s.Log
	}
	return slog.Default()
}

func (s *Service) timezone() string {
	if s.Timezone != "" {
		return s.Timezone
	}
	return DefaultTimezone
}

// newID is a fresh, unguessable id with a prefix.
func newID(prefix string) string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return prefix + hex.EncodeToString(b)
}

// errorOf builds an error whose message and field pass the screen.
var errorOf = products.ErrorOf

var unavailable = outcome.Error{Code: adcp.ServiceUnavailable, Message: sanitize.Unavailable}

// answer is a task's answer in the making: its envelope, and the ledger
// record its decision goes into.
type answer struct {
	s    *Service
	c    products.Call
	task string
	env  outcome.Envelope
	rec  ledger.Record
	// kept is the request as it may be kept at rest and digested
	// (products.KeptRequest): without its webhook secrets.
	kept []byte
	// shape, when set, adds what a task's schema requires of every
	// answer, errors included (a read's empty result).
	shape func(outcome.FailedWire) any
}

// begin starts a task's answer and says why the task cannot go on, if it
// cannot. The version comes first; then every string of the raw arguments must be
// text (products.TextProblems), for the tasks that decode with
// encoding/json, which would read invalid UTF-8 as U+FFFD. A context that
// is not valid Unicode is never echoed.
func (s *Service) begin(c products.Call, task string, envelope mediabuy.Envelope) (*answer, *outcome.Error) {
	echo := envelope.Context
	if !products.Echoable(echo) {
		echo = nil
	}
	a := &answer{s: s, c: c, task: task, env: outcome.Envelope{Version: adcp.Default(), Context: echo}, kept: products.KeptRequest(c.Args)}
	a.rec = ledger.Record{Publisher: c.Publisher, Principal: c.Principal.ID, RequestDigest: ledger.Digest(a.kept), Task: task}
	if e := a.negotiated(envelope); e != nil {
		return a, e
	}
	if ps := products.TextProblems(c.Args, true); len(ps) > 0 {
		e := errorOf(sanitize.Vendor(), ps[0].Code, ps[0].Path, ps[0].Detail, nil)
		return a, &e
	}
	return a, nil
}

// negotiated sets the version served, or says why none can be.
func (a *answer) negotiated(envelope mediabuy.Envelope) *outcome.Error {
	v, err := adcp.Negotiate(envelope.AdcpVersion, envelope.AdcpMajorVersion)
	if err != nil {
		var ne *adcp.NegotiationError
		field := ""
		if errors.As(err, &ne) {
			field = ne.Field
		}
		e := errorOf(sanitize.Vendor(), adcp.VersionUnsupported, field, err.Error(), outcome.VersionDetails())
		return &e
	}
	a.env.Version = v
	return nil
}

// start begins a task's answer from its decoded envelope and decoding
// error: it returns a finished Result when the version or the request is
// refused (recorded when record is set).
func (s *Service) start(ctx context.Context, c products.Call, task string, env mediabuy.Envelope, decodeErr error, record bool) (*answer, *outcome.Sent) {
	a, _ := s.begin(c, task, env)
	return s.startFrom(ctx, a, env, decodeErr, record)
}

func (s *Service) startFrom(ctx context.Context, a *answer, env mediabuy.Envelope, decodeErr error, record bool) (*answer, *outcome.Sent) {
	if verr := a.negotiated(env); verr != nil {
		r := a.fail(ctx, record, *verr)
		return a, &r
	}
	if decodeErr != nil {
		errs := problems(decodeErr)
		r := a.fail(ctx, record, errs[0], errs[1:]...)
		return a, &r
	}
	return a, nil
}

// problems turns request problems into errors.
func problems(err error) []outcome.Error {
	var re *products.RequestError
	if errors.As(err, &re) && len(re.Problems) > 0 {
		out := make([]outcome.Error, 0, len(re.Problems))
		for _, p := range re.Problems {
			out = append(out, errorOf(sanitize.Vendor(), p.Code, p.Path, p.Detail, nil))
		}
		return out
	}
	return []outcome.Error{errorOf(sanitize.Vendor(), adcp.InvalidRequest, "", "the request could not be read", nil)}
}

// refusal turns a domain refusal into an error.
func refusal(screen *sanitize.Screen, r *mediabuy.Refusal) outcome.Error {
	return errorOf(screen, r.Code, r.Field, r.Message, r.Details)
}

// fail answers with the error arm. Decisions of mutating tasks are
// recorded; failing to record a failure does not change the answer.
func (a *answer) fail(ctx context.Context, record bool, first outcome.Error, more ...outcome.Error) outcome.Sent {
	o := outcome.NewFailed(a.env, first, more...)
	payload, err := o.Encode()
	if err == nil && a.shape != nil {
		errs := append([]outcome.Error{first}, more...)
		payload, err = encode(a.shape(outcome.FailedWire{Status: "failed", AdcpVersion: a.env.Version.String(),
			Errors: errs, AdcpError: first, Context: a.env.Context}))
	}
	if err != nil {
		return a.internal(err)
	}
	if record && a.s.Ledger != nil {
		a.rec.Arm = "failed"
		a.rec.ResponseDigest = ledger.Digest(payload)
		if _, err := a.s.Ledger.Append(ctx, a.rec); err != nil {
			a.s.log().Warn("could not record a failed decision", "task", a.task, "err", err)
		}
	}
	return outcome.Sent{Payload: payload, Failed: true, Slug: a.rec.Slug, Summary: first.Message}
}

func (a *answer) internal(err error) outcome.Sent {
	a.s.log().Error("encoding a response failed", "task", a.task, "err", err)
	o := outcome.NewFailed(a.env, outcome.Error{Code: adcp.ServiceUnavailable, Message: sanitize.Internal})
	p, _ := o.Encode()
	return outcome.Sent{Payload: p, Failed: true, Summary: sanitize.Internal}
}

// record appends the decision with its response, before the answer
// leaves. A decision that cannot be recorded is not answered.
func (a *answer) record(ctx context.Context, arm string, payload []byte) error {
	if a.s.Ledger == nil {
		return nil
	}
	a.rec.Arm, a.rec.ResponseDigest = arm, ledger.Digest(payload)
	if _, err := a.s.Ledger.Append(ctx, a.rec); err != nil {
		a.s.log().Error("ledger append failed: answering with the error arm", "task", a.task, "err", err)
		return err
	}
	return nil
}

// account resolves the account a request names for the principal. A
// media-buy task always acts for an account, so it needs credentials.
func (a *answer) account(ctx context.Context, ref *products.AccountRef, required bool) (products.Account, *outcome.Error) {
	p := a.c.Principal
	if p.Anonymous() {
		e := errorOf(sanitize.Vendor(), adcp.AuthMissing, "", "this task needs credentials: send an Authorization: Bearer header", nil)
		return products.Account{}, &e
	}
	if ref == nil {
		if required {
			e := errorOf(sanitize.Vendor(), adcp.InvalidRequest, "account", "account is required", nil)
			return products.Account{}, &e
		}
		return products.Account{Sandbox: p.Sandbox, Disclosure: vocab.Exact}, nil
	}
	acct, err := a.s.Accounts.Resolve(ctx, a.c.Publisher, p, ref)
	switch {
	case errors.Is(err, products.ErrAccountNotFound):
		e := errorOf(sanitize.Vendor(), adcp.AccountNotFound, "account", "the account could not be resolved for these credentials", nil)
		return products.Account{}, &e
	case err != nil:
		a.s.log().Error("account lookup failed", "publisher", a.c.Publisher, "err", err)
		return products.Account{}, &unavailable
	}
	a.rec.Account, a.rec.Sandbox = acct.Key, acct.Sandbox
	return acct, nil
}

// snapshot is the publisher's snapshot as this principal sees it: a
// sandbox principal that seeded fixtures buys from them.
func (a *answer) snapshot(ctx context.Context, acct products.Account) (*products.Snapshot, *outcome.Error) {
	snap, err := a.s.Snapshots.Snapshot(ctx, a.c.Publisher)
	if err != nil {
		a.s.log().Error("snapshot unavailable", "publisher", a.c.Publisher, "err", err)
		return nil, &unavailable
	}
	if a.s.Seeds != nil && (a.c.Principal.Sandbox || acct.Sandbox) {
		seeded, err := a.s.Seeds.SeededSnapshot(ctx, a.c.Publisher, a.c.Principal.ID)
		if err != nil {
			a.s.log().Error("seeded snapshot unavailable", "publisher", a.c.Publisher, "err", err)
			return nil, &unavailable
		}
		if seeded != nil {
			snap = seeded
		}
	}
	if snap.Rulebook == nil {
		a.s.log().Error("no rulebook: refusing to take orders", "publisher", a.c.Publisher)
		return nil, &unavailable
	}
	a.rec.RulebookVersion = snap.RulebookVersion
	return snap, nil
}

// owned loads a buy the account (or, without one, the principal) owns:
// anyone else's buy is the same MEDIA_BUY_NOT_FOUND as a missing one.
func (a *answer) owned(ctx context.Context, id string, acct products.Account) (mediabuy.Buy, *outcome.Error) {
	b, err := a.s.Store.Buy(ctx, a.c.Publisher, BuyScope(acct, a.c.Principal).Stored(id))
	if err == nil && !owns(b, acct, a.c.Principal) {
		err = store.ErrNotFound
	}
	switch {
	case errors.Is(err, store.ErrNotFound):
		e := errorOf(sanitize.Vendor(), adcp.MediaBuyNotFound, "media_buy_id", fmt.Sprintf("no media buy %s for this account", id), nil)
		return b, &e
	case err != nil:
		a.s.log().Error("reading a media buy failed", "err", err)
		return b, &unavailable
	}
	return b, nil
}

// owns reports whether a request may see or change b: the account's buys,
// or without an account the principal's own. A test-kit principal has one
// sandbox whatever account a call names (as its directives and tasks do),
// so it sees exactly its own buys.
func owns(b mediabuy.Buy, acct products.Account, p products.Principal) bool {
	if acct.Key != "" && !p.Sandbox {
		return b.Account == acct.Key
	}
	return b.Principal == p.ID
}

// filter is the buys a read may see, as owns decides, among those with
// the ids the caller names.
func filter(acct products.Account, p products.Principal, ids []string) store.BuyFilter {
	ids = BuyScope(acct, p).StoredIDs(ids)
	if acct.Key != "" && !p.Sandbox {
		return store.BuyFilter{Account: acct.Key, IDs: ids}
	}
	return store.BuyFilter{Principal: p.ID, IDs: ids}
}

// BuyScope is the namespace of the buy ids a request sends and is sent,
// drawn as owns draws the sandbox: a sandbox principal's own, else a
// sandbox account's; none outside a sandbox.
func BuyScope(acct products.Account, p products.Principal) mediabuy.Scope {
	switch {
	case p.Sandbox:
		return mediabuy.PrincipalScope(p.ID)
	case acct.Sandbox && acct.Key != "":
		return mediabuy.AccountScope(acct.Key)
	}
	return ""
}

// taskOwner is who owns a task a call creates: the account and principal
// pair, as for get_products tasks (a task id is visible to that pair only).
func taskOwner(acct products.Account, p products.Principal) store.TaskOwner {
	return store.TaskOwner{Account: acct.Key, Principal: p.ID}
}

// present reports whether a member was sent with a value.
func present(raw json.RawMessage) bool {
	t := strings.TrimSpace(string(raw))
	return t != "" && t != "null"
}

// encode marshals a wire value, for answers built outside outcome.
func encode(v any) ([]byte, error) { return json.Marshal(v) }
