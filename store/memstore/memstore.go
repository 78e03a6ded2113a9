// Package memstore is the in-memory Store: the embedded default. It keeps
// everything in process memory, so every edit is lost when the process
// stops. It is exact about the Store contract (versions, conflicts,
// exactly-once directives, one unbroken ledger chain) so that the same
// conformance suite passes against it and against PostgreSQL.
package memstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/storefront/storefront/ledger"
	"github.com/storefront/storefront/merch"
	"github.com/storefront/storefront/products"
	"github.com/storefront/storefront/store"
	"github.com/storefront/storefront/store/keyring"
)

// Store is an in-memory store.Store.
type Store struct {
	mu     sync.Mutex
	order  []string
	pubs   map[string]*publisher
	tokens tokenTable
	trails map[string]*trail
	extras map[string]*extra
	clock  func() time.Time
	// keys seal the secrets kept (secrets.go).
	keys *keyring.Keyring

	subMu sync.Mutex
	subs  map[*subscriber]struct{}

	// LedgerRetain bounds each publisher's in-memory chain: once it would
	// pass LedgerRetain and a tenth, the oldest entries, and the requests
	// kept with them, are dropped down to LedgerRetain, and verification
	// starts from the newest dropped one. The kept entries are never
	// copied to do so. Zero keeps every entry. Set it before use.
	LedgerRetain int
}

type publisher struct {
	info products.Publisher
	// products is the current catalogue, in catalogue order. Each value
	// is the store's own copy, shared with catChanges and interned by
	// shelf, and never written after it is kept: reads hand out copies
	// (history.go).
	products   []*products.Product
	catVersion int64
	// catHistory and catChanges are the catalogue's versions and, per
	// product, the state each version left it in (see history.go).
	catHistory []store.CatalogueVersion
	catChanges map[string][]catChange
	// shelf shares equal lists among the kept products. It holds a key
	// (the JSON) for each distinct list ever kept, which the history
	// keeps alive anyway.
	shelf     *products.Interner
	rulebooks []store.RulebookVersion
	accounts  map[string]store.Account
	byKey     map[string]string
	// chain is the part of the chain held within LedgerRetain, and the
	// checkpoint verification starts from.
	chain window
	// requests are the requests kept beside the chain, by sequence.
	requests   map[int64][]byte
	directives map[string]directive
	// signingKeys are newest first; at most the first is active.
	signingKeys []store.SigningKey
}

// DefaultLedgerRetain is how many recent decisions per publisher the
// in-memory store keeps: about 10 MiB, enough for the console's charts on
// the embedded demo, and a ceiling on memory however long it serves.
const DefaultLedgerRetain = 20_000

// New returns an empty store.
func New() *Store {
	return &Store{pubs: map[string]*publisher{}, subs: map[*subscriber]struct{}{},
		LedgerRetain: DefaultLedgerRetain, keys: keyring.Random()}
}

var (
	// The composite, which embeds every role.
	_ store.Store = (*Store)(nil)

	// The optional roles it adds.
	_ store.LedgerWindow    = (*Store)(nil)
	_ store.BulkCatalogue   = (*Store)(nil)
	_ store.Catalogues      = (*Store)(nil)
	_ store.Recordings      = (*Store)(nil)
	_ store.Retention       = (*Store)(nil)
	_ store.Secrets         = (*Store)(nil)
	_ store.SharedCatalogue = (*Store)(nil)
)

func (s *Store) pub(id string) (*publisher, error) {
	p, ok := s.pubs[id]
	if !ok {
		return nil, store.ErrNotFound
	}
	return p, nil
}

// clone deep-copies through JSON so callers can never alias stored state.
// locked runs fn holding s.mu and releases it however fn ends: a panic
// (a failed clone, a clock that fails) recovered further up must not leave
// the store locked for every later call, on every publisher. Writes that
// announce a change do so after it, outside the lock.
func locked[T any](s *Store, fn func() (T, error)) (T, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return fn()
}

func clone[T any](v T) T {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	var out T
	if err := json.Unmarshal(b, &out); err != nil {
		panic(err)
	}
	return out
}

func (s *Store) Publishers(ctx context.Context) ([]products.Publisher, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]products.Publisher, 0, len(s.order))
	for _, id := range s.order {
		out = append(out, s.pubs[id].info)
	}
	return out, nil
}

func (s *Store) Publisher(ctx context.Context, id string) (products.Publisher, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, err := s.pub(id)
	if err != nil {
		return products.Publisher{}, err
	}
	return p.info, nil
}

func (s *Store) PutPublisher(ctx context.Context, info products.Publisher) error {
	if err := store.CheckPublisher(info); err != nil {
		return err
	}
	_, _ = locked(s, func() (struct{}, error) {
		p, ok := s.pubs[info.ID]
		if !ok {
			p = &publisher{accounts: map[string]store.Account{}, byKey: map[string]string{},
				directives: map[string]directive{}, catChanges: map[string][]catChange{}, requests: map[int64][]byte{}}
			s.pubs[info.ID] = p
			s.order = append(s.order, info.ID)
		}
		p.info = info
		return struct{}{}, nil
	})
	s.notify(info.ID)
	return nil
}

func (s *Store) Versions(ctx context.Context, publisher string) (store.Versions, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, err := s.pub(publisher)
	if err != nil {
		return store.Versions{}, err
	}
	return store.Versions{Catalogue: p.catVersion, Rulebook: int64(len(p.rulebooks))}, nil
}

func (s *Store) Catalogue(ctx context.Context, id string) ([]products.Product, int64, error) {
	return s.readCatalogue(id, (*publisher).catalogue)
}

// SharedCatalogue implements store.SharedCatalogue: the store's values
// are never written after they are kept (history.go), so a reader that
// does not write either may hold them as they are.
func (s *Store) SharedCatalogue(ctx context.Context, id string) ([]products.Product, int64, error) {
	return s.readCatalogue(id, (*publisher).shared)
}

// readCatalogue reads a publisher's products with read, and the version
// they belong to, under the lock.
func (s *Store) readCatalogue(id string, read func(*publisher) []products.Product) ([]products.Product, int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, err := s.pub(id)
	if err != nil {
		return nil, 0, err
	}
	return read(p), p.catVersion, nil
}

func (s *Store) PutProduct(ctx context.Context, publisher string, prod products.Product, ifMatch int64) (int64, error) {
	v, err := s.EditCatalogue(ctx, publisher, store.CatalogueEdit{Put: []products.Product{prod}, IfMatch: ifMatch})
	return v.Version, err
}

// PutProducts implements store.BulkCatalogue: one version for the lot.
func (s *Store) PutProducts(ctx context.Context, publisher string, ps []products.Product, ifMatch int64) (int64, error) {
	v, err := s.EditCatalogue(ctx, publisher, store.CatalogueEdit{Put: ps, IfMatch: ifMatch})
	return v.Version, err
}

func (s *Store) DeleteProduct(ctx context.Context, publisher, productID string, ifMatch int64) (int64, error) {
	v, err := s.EditCatalogue(ctx, publisher, store.CatalogueEdit{Delete: []string{productID}, IfMatch: ifMatch})
	return v.Version, err
}

func (s *Store) Rulebook(ctx context.Context, publisher string) (store.RulebookVersion, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, err := s.pub(publisher)
	if err != nil {
		return store.RulebookVersion{}, err
	}
	if len(p.rulebooks) == 0 {
		return store.RulebookVersion{}, store.ErrNotFound
	}
	return clone(p.rulebooks[len(p.rulebooks)-1]), nil
}

func (s *Store) RulebookAt(ctx context.Context, publisher string, version int64) (store.RulebookVersion, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, err := s.pub(publisher)
	if err != nil {
		return store.RulebookVersion{}, err
	}
	if version < 1 || version > int64(len(p.rulebooks)) {
		return store.RulebookVersion{}, store.ErrNotFound
	}
	return clone(p.rulebooks[version-1]), nil
}

func (s *Store) RulebookHistory(ctx context.Context, publisher string) ([]store.RulebookVersion, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, err := s.pub(publisher)
	if err != nil {
		return nil, err
	}
	out := make([]store.RulebookVersion, 0, len(p.rulebooks))
	for i := len(p.rulebooks) - 1; i >= 0; i-- {
		out = append(out, clone(p.rulebooks[i]))
	}
	return out, nil
}

func (s *Store) SaveRulebook(ctx context.Context, publisher string, rb merch.Rulebook, ifMatch int64, author, note string) (store.RulebookVersion, error) {
	if err := errors.Join(store.CheckChange(author, note), store.CheckStored(rb)); err != nil {
		return store.RulebookVersion{}, err
	}
	v, err := locked(s, func() (store.RulebookVersion, error) {
		p, err := s.pub(publisher)
		if err != nil {
			return store.RulebookVersion{}, err
		}
		if ifMatch != int64(len(p.rulebooks)) {
			return store.RulebookVersion{}, store.ErrConflict
		}
		v := store.RulebookVersion{Version: int64(len(p.rulebooks)) + 1, Rulebook: clone(rb), CreatedAt: s.now().UTC(), Author: author, Note: note}
		p.rulebooks = append(p.rulebooks, v)
		return v, nil
	})
	if err != nil {
		return v, err
	}
	s.notify(publisher)
	return clone(v), nil
}

func (s *Store) AccountByID(ctx context.Context, publisher, id string) (store.Account, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, err := s.pub(publisher)
	if err != nil {
		return store.Account{}, err
	}
	a, ok := p.accounts[id]
	if !ok {
		return store.Account{}, store.ErrNotFound
	}
	return a, nil
}

func (s *Store) AccountByKey(ctx context.Context, publisher, key string) (store.Account, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, err := s.pub(publisher)
	if err != nil {
		return store.Account{}, err
	}
	id, ok := p.byKey[key]
	if !ok {
		return store.Account{}, store.ErrNotFound
	}
	return p.accounts[id], nil
}

func (s *Store) EnsureAccount(ctx context.Context, publisher string, a store.Account) (store.Account, error) {
	if err := store.CheckAccount(a); err != nil {
		return store.Account{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p, err := s.pub(publisher)
	if err != nil {
		return store.Account{}, err
	}
	if id, ok := p.byKey[a.NaturalKey()]; ok {
		return p.accounts[id], nil
	}
	if a.ID == "" {
		a.ID = "acct_" + randomHex(8)
	}
	if _, taken := p.accounts[a.ID]; taken {
		return store.Account{}, store.ErrExists
	}
	a.CreatedAt = s.now().UTC()
	p.accounts[a.ID] = a
	p.byKey[a.NaturalKey()] = a.ID
	return a, nil
}

func (s *Store) PutAccount(ctx context.Context, publisher string, a store.Account) (store.Account, error) {
	if err := store.CheckAccount(a); err != nil {
		return store.Account{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p, err := s.pub(publisher)
	if err != nil {
		return store.Account{}, err
	}
	// Check before changing anything: a refused put leaves the old
	// account reachable by its key.
	if id, ok := p.byKey[a.NaturalKey()]; ok && id != a.ID {
		return store.Account{}, store.ErrExists
	}
	if old, ok := p.accounts[a.ID]; ok {
		delete(p.byKey, old.NaturalKey())
		a.CreatedAt = old.CreatedAt
	} else {
		a.CreatedAt = s.now().UTC()
	}
	p.accounts[a.ID] = a
	p.byKey[a.NaturalKey()] = a.ID
	return a, nil
}

func (s *Store) ListAccounts(ctx context.Context, publisher string) ([]store.Account, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, err := s.pub(publisher)
	if err != nil {
		return nil, err
	}
	out := make([]store.Account, 0, len(p.accounts))
	for _, a := range p.accounts {
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

func (s *Store) Append(ctx context.Context, r ledger.Record) (ledger.Entry, error) {
	if err := store.CheckRecord(&r); err != nil {
		return ledger.Entry{}, err
	}
	if err := ctx.Err(); err != nil {
		return ledger.Entry{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p, err := s.pub(r.Publisher)
	if err != nil {
		return ledger.Entry{}, err
	}
	var prev *ledger.Entry
	if n := p.chain.Len(); n > 0 {
		prev = p.chain.At(n - 1)
	}
	r.RuleIDs = append([]string(nil), r.RuleIDs...)
	request := r.Request
	r.Request = nil
	if cp := p.chain.Checkpoint(); prev == nil && cp.Sequence > 0 {
		prev = &cp
	}
	e := ledger.Next(prev, r, s.now())
	p.chain.Append(e, s.LedgerRetain, func(old *ledger.Entry) { delete(p.requests, old.Sequence) })
	if len(request) > 0 && len(request) <= store.MaxKeptRequest {
		p.requests[e.Sequence] = slices.Clone(request)
	}
	return e, nil
}

func (s *Store) Decisions(ctx context.Context, publisher string, f store.DecisionFilter) ([]ledger.Entry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, err := s.pub(publisher)
	if err != nil {
		return nil, err
	}
	limit := f.Limit
	if limit <= 0 {
		limit = 100
	}
	out := []ledger.Entry{}
	for i := p.chain.Len() - 1; i >= 0 && len(out) < limit; i-- {
		e := *p.chain.At(i)
		if store.Matches(e, f) {
			out = append(out, e)
		}
	}
	return out, nil
}

func (s *Store) WalkLedger(ctx context.Context, publisher string, fn func(ledger.Entry) error) error {
	return s.WalkWindow(ctx, publisher, func(int64, string) {}, fn)
}

// WalkWindow implements store.LedgerWindow.
func (s *Store) WalkWindow(ctx context.Context, publisher string, start func(seq int64, hash string), fn func(ledger.Entry) error) error {
	s.mu.Lock()
	p, err := s.pub(publisher)
	if err != nil {
		s.mu.Unlock()
		return err
	}
	chain := p.chain.Clone()
	cp := p.chain.Checkpoint()
	s.mu.Unlock()
	start(cp.Sequence, cp.Hash)
	return walk(ctx, chain, fn)
}

// walk calls fn on each item in order, stopping at fn's first error or
// when ctx ends.
func walk[T any](ctx context.Context, items []T, fn func(T) error) error {
	for _, it := range items {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := fn(it); err != nil {
			return err
		}
	}
	return nil
}

func (s *Store) LedgerLen(ctx context.Context, publisher string) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, err := s.pub(publisher)
	if err != nil {
		return 0, err
	}
	return p.chain.Checkpoint().Sequence + int64(p.chain.Len()), nil
}

// Tamper replaces one ledger entry in place. It exists for tests that show
// verification catches an altered row.
func (s *Store) Tamper(publisher string, seq int64, edit func(*ledger.Entry)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p, ok := s.pubs[publisher]; ok {
		if i := seq - p.chain.Checkpoint().Sequence - 1; i >= 0 && i < int64(p.chain.Len()) {
			edit(p.chain.At(int(i)))
		}
	}
}

func directiveKey(account, principal string) string { return account + "\x00" + principal }

// directive is a stored directive and the claim on it, if any.
type directive struct {
	d products.Directive
	// token claimed it until until; "" when unclaimed.
	token string
	until time.Time
}

func (s *Store) SetDirective(ctx context.Context, publisher, account, principal string, d products.Directive) error {
	if err := store.CheckDirective(account, principal, d); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p, err := s.pub(publisher)
	if err != nil {
		return err
	}
	p.directives[directiveKey(account, principal)] = directive{d: clone(d)}
	return nil
}

func (s *Store) ClaimDirective(ctx context.Context, publisher, account, principal, token string, lease time.Duration) (*products.Directive, error) {
	if token == "" {
		return nil, errNoToken
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p, err := s.pub(publisher)
	if err != nil {
		return nil, err
	}
	k := directiveKey(account, principal)
	d, ok := p.directives[k]
	now := stamp(s.now())
	if !ok || (d.token != "" && now.Before(d.until)) {
		return nil, nil
	}
	d.token, d.until = token, stamp(now.Add(lease))
	p.directives[k] = d
	out := clone(d.d)
	return &out, nil
}

// claimed finds the directive token holds a claim on: ErrNotFound for an
// unknown publisher, ok false when token holds none. The caller holds s.mu.
func (s *Store) claimed(pubID, account, principal, token string) (p *publisher, k string, d directive, ok bool, err error) {
	if p, err = s.pub(pubID); err != nil {
		return nil, "", d, false, err
	}
	k = directiveKey(account, principal)
	d, ok = p.directives[k]
	return p, k, d, ok && token != "" && d.token == token, nil
}

func (s *Store) SpendDirective(ctx context.Context, publisher, account, principal, token string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, k, _, ok, err := s.claimed(publisher, account, principal, token)
	switch {
	case err != nil:
		return err
	case !ok:
		return store.ErrConflict
	}
	delete(p.directives, k)
	return nil
}

func (s *Store) ReleaseDirective(ctx context.Context, publisher, account, principal, token string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, k, d, ok, err := s.claimed(publisher, account, principal, token)
	if ok {
		p.directives[k] = directive{d: d.d}
	}
	return err
}

// Changes subscribes before it returns, so every change made after it
// returns is announced.
func (s *Store) Changes(ctx context.Context) <-chan string {
	sub := &subscriber{queued: map[string]bool{}, wake: make(chan struct{}, 1)}
	s.subMu.Lock()
	s.subs[sub] = struct{}{}
	s.subMu.Unlock()
	ch := make(chan string)
	go func() {
		defer close(ch)
		defer func() {
			s.subMu.Lock()
			delete(s.subs, sub)
			s.subMu.Unlock()
		}()
		sub.deliver(ctx, ch)
	}()
	return ch
}

// subscriber holds the publishers changed since its reader last heard of
// them. A writer never waits for a reader: it adds the publisher to the
// set, which holds each one once however often it changes, and the
// subscriber's own goroutine hands them over. A burst of changes while the
// reader is busy is coalesced, never dropped.
type subscriber struct {
	mu      sync.Mutex
	pending []string
	queued  map[string]bool
	// wake holds one token while pending may be non-empty.
	wake chan struct{}
}

func (sub *subscriber) add(publisher string) {
	sub.mu.Lock()
	if !sub.queued[publisher] {
		sub.queued[publisher] = true
		sub.pending = append(sub.pending, publisher)
	}
	sub.mu.Unlock()
	select {
	case sub.wake <- struct{}{}:
	default: // a token is there already: the reader will look at pending
	}
}

// next takes the oldest pending publisher. A change after it is taken
// queues it again: the reader may have read the store before that change.
func (sub *subscriber) next() (string, bool) {
	sub.mu.Lock()
	defer sub.mu.Unlock()
	if len(sub.pending) == 0 {
		return "", false
	}
	id := sub.pending[0]
	sub.pending = sub.pending[1:]
	delete(sub.queued, id)
	return id, true
}

func (sub *subscriber) deliver(ctx context.Context, ch chan<- string) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-sub.wake:
		}
		for id, ok := sub.next(); ok; id, ok = sub.next() {
			select {
			case ch <- id:
			case <-ctx.Done():
				return
			}
		}
	}
}

func (s *Store) notify(publisher string) {
	s.subMu.Lock()
	defer s.subMu.Unlock()
	for sub := range s.subs {
		sub.add(publisher)
	}
}

func (s *Store) Close() error { return nil }

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)
}
