package memstore

import (
	"context"
	"encoding/json"
	"slices"
	"sort"

	"github.com/storefront/storefront/mediabuy"
	"github.com/storefront/storefront/store"
)

// buying is a publisher's media-buy state.
type buying struct {
	terms map[string]store.AccountTerms
	// governance is the governance agent per account.
	governance map[string]store.GovernanceAgent
	buys       map[string][]byte // id -> the buy as JSON, as PostgreSQL keeps it
	order      []string          // buy ids, oldest first
	history    map[string][]mediabuy.Event
	orders     map[string]store.Order
	delivery   map[[4]string]mediabuy.Row
}

func newBuying() *buying {
	return &buying{terms: map[string]store.AccountTerms{}, governance: map[string]store.GovernanceAgent{}, buys: map[string][]byte{}, history: map[string][]mediabuy.Event{},
		orders: map[string]store.Order{}, delivery: map[[4]string]mediabuy.Row{}}
}

func (s *Store) buying(publisher string) (*buying, *extra, error) {
	x, err := s.extra(publisher)
	if err != nil {
		return nil, nil, err
	}
	return x.buying, x, nil
}

func (s *Store) AccountTerms(ctx context.Context, publisher, account string) (store.AccountTerms, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, _, err := s.buying(publisher)
	if err != nil {
		return store.AccountTerms{}, err
	}
	t, ok := b.terms[account]
	if !ok {
		return store.AccountTerms{}, store.ErrNotFound
	}
	return t, nil
}

func (s *Store) PutAccountTerms(ctx context.Context, publisher string, t store.AccountTerms) error {
	if err := store.CheckStored(t); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	b, _, err := s.buying(publisher)
	if err != nil {
		return err
	}
	t.UpdatedAt = stamp(t.UpdatedAt)
	b.terms[t.Account] = t
	return nil
}

func encodeBuy(b mediabuy.Buy) ([]byte, error) { return json.Marshal(b) }

func decodeBuy(raw []byte) (mediabuy.Buy, error) {
	var b mediabuy.Buy
	err := json.Unmarshal(raw, &b)
	return b, err
}

func stampEvent(e mediabuy.Event) mediabuy.Event {
	e.At = stamp(e.At)
	return e
}

func (s *Store) CreateBuy(ctx context.Context, publisher string, b mediabuy.Buy, created mediabuy.Event) error {
	if err := store.CheckStored(b, created); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	st, _, err := s.buying(publisher)
	if err != nil {
		return err
	}
	return st.create(b, created)
}

func (st *buying) create(b mediabuy.Buy, created mediabuy.Event) error {
	if _, ok := st.buys[b.ID]; ok {
		return store.ErrExists
	}
	raw, err := encodeBuy(b)
	if err != nil {
		return err
	}
	st.buys[b.ID] = raw
	st.order = append(st.order, b.ID)
	st.history[b.ID] = []mediabuy.Event{stampEvent(created)}
	return nil
}

func (s *Store) Buy(ctx context.Context, publisher, id string) (mediabuy.Buy, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, _, err := s.buying(publisher)
	if err != nil {
		return mediabuy.Buy{}, err
	}
	raw, ok := st.buys[id]
	if !ok {
		return mediabuy.Buy{}, store.ErrNotFound
	}
	return decodeBuy(raw)
}

func (s *Store) Buys(ctx context.Context, publisher string, f store.BuyFilter) ([]mediabuy.Buy, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, _, err := s.buying(publisher)
	if err != nil {
		return nil, err
	}
	var out []mediabuy.Buy
	for _, id := range st.order {
		if len(f.IDs) > 0 && !slices.Contains(f.IDs, id) {
			continue
		}
		b, err := decodeBuy(st.buys[id])
		if err != nil {
			return nil, err
		}
		if (f.Account != "" && b.Account != f.Account) || (f.Principal != "" && b.Principal != f.Principal) {
			continue
		}
		out = append(out, b)
	}
	return out, nil
}

func (s *Store) UpdateBuy(ctx context.Context, publisher string, b mediabuy.Buy, revision int64, events []mediabuy.Event) error {
	if err := store.CheckStored(b, events); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	st, _, err := s.buying(publisher)
	if err != nil {
		return err
	}
	raw, ok := st.buys[b.ID]
	if !ok {
		return store.ErrNotFound
	}
	cur, err := decodeBuy(raw)
	if err != nil {
		return err
	}
	if cur.Revision != revision {
		return store.ErrConflict
	}
	if raw, err = encodeBuy(b); err != nil {
		return err
	}
	st.buys[b.ID] = raw
	for _, e := range events {
		st.history[b.ID] = append(st.history[b.ID], stampEvent(e))
	}
	return nil
}

func (s *Store) History(ctx context.Context, publisher, id string, limit int) ([]mediabuy.Event, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, _, err := s.buying(publisher)
	if err != nil {
		return nil, err
	}
	if _, ok := st.buys[id]; !ok {
		return nil, store.ErrNotFound
	}
	h := st.history[id]
	if limit > 0 && len(h) > limit {
		h = h[len(h)-limit:]
	}
	return slices.Clone(h), nil
}

func cloneOrder(o store.Order) (store.Order, error) {
	raw, err := json.Marshal(o)
	if err != nil {
		return o, err
	}
	var c store.Order
	err = json.Unmarshal(raw, &c)
	return c, err
}

func (s *Store) CreateOrder(ctx context.Context, publisher string, o store.Order, t store.Task) error {
	if err := store.CheckStored(o, t); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	st, x, err := s.buying(publisher)
	if err != nil {
		return err
	}
	if _, ok := st.orders[o.TaskID]; ok {
		return store.ErrExists
	}
	if err := s.createTask(publisher, x, t); err != nil {
		return err
	}
	o.CreatedAt, o.DecidedAt = stamp(o.CreatedAt), stamp(o.DecidedAt)
	c, err := cloneOrder(o)
	if err != nil {
		return err
	}
	st.orders[o.TaskID] = c
	return nil
}

func (s *Store) Order(ctx context.Context, publisher, taskID string) (store.Order, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, _, err := s.buying(publisher)
	if err != nil {
		return store.Order{}, err
	}
	o, ok := st.orders[taskID]
	if !ok {
		return store.Order{}, store.ErrNotFound
	}
	return cloneOrder(o)
}

func (s *Store) Orders(ctx context.Context, publisher, status string) ([]store.Order, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, _, err := s.buying(publisher)
	if err != nil {
		return nil, err
	}
	var out []store.Order
	for _, o := range st.orders {
		if status == "" || o.Status == status {
			c, err := cloneOrder(o)
			if err != nil {
				return nil, err
			}
			out = append(out, c)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].CreatedAt.Equal(out[j].CreatedAt) {
			return out[i].CreatedAt.After(out[j].CreatedAt)
		}
		return out[i].TaskID > out[j].TaskID
	})
	return out, nil
}

func (s *Store) DecideOrder(ctx context.Context, publisher string, d store.Decision) (store.Task, error) {
	if err := store.CheckStored(d); err != nil {
		return store.Task{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	st, x, err := s.buying(publisher)
	if err != nil {
		return store.Task{}, err
	}
	o, ok := st.orders[d.TaskID]
	if !ok {
		return store.Task{}, store.ErrNotFound
	}
	if o.Status != store.OrderPending {
		return store.Task{}, store.ErrConflict
	}
	if d.Status == store.OrderApproved {
		if _, taken := st.buys[o.Buy.ID]; taken {
			return store.Task{}, store.ErrExists
		}
	}
	t, err := finishTask(x, o.Owner, o.TaskID, d.TaskStatus, d.Result, d.At)
	if err != nil {
		return store.Task{}, err
	}
	if d.Status == store.OrderApproved {
		if err := st.create(o.Buy, d.Created); err != nil {
			return store.Task{}, err
		}
	}
	o.Status, o.DecidedAt, o.DecidedBy, o.Slug, o.Reason = d.Status, stamp(d.At), d.By, d.Slug, d.Reason
	st.orders[d.TaskID] = o
	return s.openTask(publisher, t)
}

func (s *Store) ReportDelivery(ctx context.Context, publisher string, rows []mediabuy.Row) error {
	if err := store.CheckStored(rows); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	st, _, err := s.buying(publisher)
	if err != nil {
		return err
	}
	for _, r := range rows {
		raw, ok := st.buys[r.MediaBuyID]
		if !ok {
			return store.ErrNotFound
		}
		b, err := decodeBuy(raw)
		if err != nil {
			return err
		}
		if b.Package(r.PackageID) == nil {
			return store.ErrNotFound
		}
	}
	// Merge into a copy first: one batch may name a key twice.
	staged := map[[4]string]mediabuy.Row{}
	for _, r := range rows {
		r.ReportedAt = stamp(r.ReportedAt)
		k := store.DeliveryKey(r)
		var cur *mediabuy.Row
		if prev, ok := staged[k]; ok {
			cur = &prev
		} else if prev, ok := st.delivery[k]; ok {
			cur = &prev
		}
		staged[k] = store.MergeDelivery(cur, r)
	}
	for k, r := range staged {
		st.delivery[k] = r
	}
	return nil
}

func (s *Store) Delivery(ctx context.Context, publisher string, buyIDs []string) ([]mediabuy.Row, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, _, err := s.buying(publisher)
	if err != nil {
		return nil, err
	}
	var out []mediabuy.Row
	for _, r := range st.delivery {
		if slices.Contains(buyIDs, r.MediaBuyID) {
			out = append(out, r)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if !a.Date.Time().Equal(b.Date.Time()) {
			return a.Date.Before(b.Date)
		}
		if a.MediaBuyID != b.MediaBuyID {
			return a.MediaBuyID < b.MediaBuyID
		}
		if a.PackageID != b.PackageID {
			return a.PackageID < b.PackageID
		}
		return a.Source < b.Source
	})
	return out, nil
}
