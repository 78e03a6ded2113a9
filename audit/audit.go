// Package audit defines the admin audit trail: who did what to a
// publisher's storefront, with which token, when and from where. Every
// admin action (a rulebook or catalogue save, a rollback, a token or
// account change, a webhook-signing key rotation, an order decision, a
// delivery report) is appended to the publisher's trail before the reply
// says it succeeded.
//
// The trail is a hash chain kept with the decision ledger's discipline:
// each entry's hash covers its canonical bytes and the previous entry's
// hash, and verification goes through the ledger's own verifier, so
// changing, removing or reordering an entry breaks every later link.
//
// This package holds no storage and imports nothing from the storefront
// but the ledger's chain verifier. It never holds a token's secret: a
// token is named by its public id.
package audit

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/storefront/storefront/ledger"
)

// Action is what an admin did. The set is closed: a feature that adds an
// admin action adds its constant here, and filters refuse any other.
type Action string

// The admin actions.
const (
	PublisherCreate   Action = "publisher.create"
	PublisherUpdate   Action = "publisher.update"
	ProductPut        Action = "product.put"
	ProductDelete     Action = "product.delete"
	CatalogueImport   Action = "catalogue.import"
	CatalogueRollback Action = "catalogue.rollback"
	RulebookSave      Action = "rulebook.save"
	RulebookRollback  Action = "rulebook.rollback"
	VoiceSave         Action = "voice.save"
	AccountPut        Action = "account.put"
	TokenCreate       Action = "token.create"
	TokenRevoke       Action = "token.revoke"
	TokenRotate       Action = "token.rotate"
	SigningKeyRotate  Action = "signing_key.rotate"
	OrderApprove      Action = "order.approve"
	OrderDecline      Action = "order.decline"
	DeliveryReport    Action = "delivery.report"
)

var actions = []Action{
	RulebookSave, RulebookRollback, VoiceSave, ProductPut, ProductDelete, CatalogueImport, CatalogueRollback,
	OrderApprove, OrderDecline, DeliveryReport,
	PublisherCreate, PublisherUpdate, AccountPut, TokenCreate, TokenRevoke, TokenRotate,
	SigningKeyRotate,
}

// Actions returns every action, in the order the console offers them.
func Actions() []Action { return slices.Clone(actions) }

// ParseAction checks an action name.
func ParseAction(s string) (Action, bool) {
	a := Action(s)
	return a, slices.Contains(actions, a)
}

// Actors and addresses of actions taken on the storefront's own machine,
// by its commands (which reach the database directly) or by serve itself
// (the demo tokens it makes at start).
const (
	CommandLine = "command line"
	Serve       = "storefront serve"
	Local       = "local"
)

// Record is one admin action as the storefront submits it.
type Record struct {
	Publisher string
	// Actor is who acted: the admin token's name, or CommandLine with the
	// operating-system user and host, or Serve.
	Actor string
	// TokenID is the public id of the admin token the request carried;
	// empty for the command line.
	TokenID string
	Action  Action
	// Target is what was acted on: a product id, a rulebook version, an
	// account id, a token id, a signing key's kid.
	Target string
	// Detail holds the facts of the action, such as the version saved or
	// the change note.
	Detail map[string]string
	// Address is where the request came from: the client address the
	// storefront's listener saw (a proxy's, behind one), or Local.
	Address string
}

// Limits on what an entry keeps, so that one request cannot grow the
// trail without bound.
const (
	maxField  = 256
	maxDetail = 16
	maxValue  = 1024
)

// clean makes a record storable, readable as it is and its hash
// reproducible: valid UTF-8, no control or format characters (PostgreSQL
// text cannot hold NUL; a bidi override could disguise an entry), bounded
// sizes.
func (r Record) clean() Record {
	r.Publisher = cleanText(r.Publisher, maxField)
	r.Actor = cleanText(r.Actor, maxField)
	r.TokenID = cleanText(r.TokenID, maxField)
	r.Action = Action(cleanText(string(r.Action), maxField))
	r.Target = cleanText(r.Target, maxField)
	r.Address = cleanText(r.Address, maxField)
	if len(r.Detail) > 0 {
		keys := make([]string, 0, len(r.Detail))
		for k := range r.Detail {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		d := make(map[string]string, min(len(keys), maxDetail))
		for _, k := range keys[:min(len(keys), maxDetail)] {
			d[cleanText(k, maxField)] = cleanText(r.Detail[k], maxValue)
		}
		r.Detail = d
	} else {
		r.Detail = nil
	}
	return r
}

func cleanText(s string, limit int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.Map(func(r rune) rune {
		// Control characters, and format characters such as bidi
		// overrides, which could make an entry read as another.
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			return -1
		}
		return r
	}, s)
	if len(s) <= limit {
		return s
	}
	cut := limit
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}

// Entry is a record placed in a publisher's trail.
type Entry struct {
	Record
	Sequence int64
	Time     time.Time
	PrevHash string
	Hash     string
}

// canonical is the fixed-order, fixed-format encoding the hash covers.
// Changing it is a format change: old trails would no longer verify.
type canonical struct {
	V         int               `json:"v"`
	Publisher string            `json:"publisher"`
	Sequence  int64             `json:"sequence"`
	Time      string            `json:"time"`
	Actor     string            `json:"actor"`
	TokenID   string            `json:"token_id"`
	Action    string            `json:"action"`
	Target    string            `json:"target"`
	Detail    map[string]string `json:"detail"`
	Address   string            `json:"address"`
	PrevHash  string            `json:"prev_hash"`
}

// Canonical returns the bytes e's hash covers. Detail keys are encoded in
// sorted order, so the bytes do not depend on map order.
func (e Entry) Canonical() []byte {
	d := e.Detail
	if d == nil {
		d = map[string]string{}
	}
	b, err := json.Marshal(canonical{
		V: 1, Publisher: e.Publisher, Sequence: e.Sequence, Time: e.Time.UTC().Format(time.RFC3339Nano),
		Actor: e.Actor, TokenID: e.TokenID, Action: string(e.Action), Target: e.Target, Detail: d,
		Address: e.Address, PrevHash: e.PrevHash,
	})
	if err != nil {
		// Only strings and ints: Marshal cannot fail.
		panic(err)
	}
	return b
}

// ComputeHash returns the hash e should carry.
func (e Entry) ComputeHash() string {
	sum := sha256.Sum256(e.Canonical())
	return hex.EncodeToString(sum[:])
}

// Link returns e as a link of its chain, for ledger.Verifier.
func (e Entry) Link() ledger.Link {
	return ledger.Link{Sequence: e.Sequence, PrevHash: e.PrevHash, Hash: e.Hash, Computed: e.ComputeHash()}
}

// Head is where a trail stands: its newest entry's sequence, hash and
// time (zero for an empty trail).
type Head struct {
	Sequence int64
	Hash     string
	Time     time.Time
}

// Next places r in the trail after head and returns the sealed entry. Its
// time is at, to the microsecond, but never before the newest entry's:
// replicas' clocks may disagree a little, and the trail's order is its
// sequence.
func Next(head Head, r Record, at time.Time) Entry {
	at = at.UTC().Truncate(time.Microsecond)
	if at.Before(head.Time) {
		at = head.Time.UTC()
	}
	e := Entry{Record: r.clean(), Sequence: head.Sequence + 1, Time: at, PrevHash: head.Hash}
	if head.Sequence == 0 {
		e.PrevHash = ledger.Genesis
	}
	e.Hash = e.ComputeHash()
	return e
}

// Head returns the trail's head once e is its newest entry.
func (e Entry) Head() Head { return Head{Sequence: e.Sequence, Hash: e.Hash, Time: e.Time} }

// Filter selects audit entries.
type Filter struct {
	// Token selects entries made with the token or acting on it: its
	// last actions and what was done to it.
	Token  string
	Action Action
	// Before returns entries with a lower sequence, for paging backwards.
	Before int64
	Limit  int
}

// Matches reports whether e passes f (apart from Limit). Both stores
// select with it, or with SQL that agrees with it.
func (f Filter) Matches(e Entry) bool {
	switch {
	case f.Token != "" && e.TokenID != f.Token && e.Target != f.Token:
		return false
	case f.Action != "" && e.Action != f.Action:
		return false
	case f.Before > 0 && e.Sequence >= f.Before:
		return false
	}
	return true
}

// DefaultLimit is how many entries a Filter without a limit returns.
const DefaultLimit = 100

// Result is the outcome of verifying a trail.
type Result struct {
	OK bool `json:"ok"`
	// Checked is how many entries verified; Total is the trail's length
	// by its head.
	Checked int64 `json:"checked"`
	Total   int64 `json:"total"`
	// Break names the first broken entry.
	Break *Break `json:"first_break,omitempty"`
}

// Break names the first entry at which a trail stops verifying.
type Break struct {
	Sequence int64  `json:"sequence"`
	Reason   string `json:"reason"`
}

// Verify checks a trail: walk calls its argument on every entry in
// sequence order, and head is where the trail says it ends. Entries
// missing at the end, where no later link would show the gap, are a break
// too, and so is a newest entry other than the one the head names.
func Verify(head Head, walk func(fn func(Entry) error) error) (Result, error) {
	var v ledger.Verifier
	var last Entry
	err := walk(func(e Entry) error {
		if err := v.CheckLink(e.Link()); err != nil {
			return err
		}
		last = e
		return nil
	})
	res := Result{Checked: v.Checked(), Total: head.Sequence}
	var b *ledger.Break
	switch {
	case errors.As(err, &b):
		res.Break = &Break{Sequence: b.Sequence, Reason: b.Reason}
	case err != nil:
		return res, err
	case last.Sequence < head.Sequence:
		res.Break = &Break{Sequence: last.Sequence + 1, Reason: "the entry is missing (the trail ends before its head)"}
	case last.Sequence > 0 && last.Sequence == head.Sequence && last.Hash != head.Hash:
		res.Break = &Break{Sequence: head.Sequence, Reason: "the newest entry is not the one the trail's head names"}
	default:
		res.OK = true
	}
	return res, nil
}
