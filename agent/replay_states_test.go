package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/storefront/storefront/access"
	"github.com/storefront/storefront/agent"
	"github.com/storefront/storefront/demo"
	"github.com/storefront/storefront/internal/spectest"
	"github.com/storefront/storefront/products"
	"github.com/storefront/storefront/store"
	"github.com/storefront/storefront/store/memstore"
	"github.com/storefront/storefront/vocab"
)

// replayStore is the in-memory store with the idempotency records
// scripted: ReserveReplay answers what existing makes of the request, and
// the calls that follow are counted.
type replayStore struct {
	store.Store
	existing func(r store.Replay) *store.Replay

	mu                  sync.Mutex
	completed, released int
}

func (s *replayStore) ReserveReplay(ctx context.Context, publisher string, r store.Replay, lease time.Duration) (*store.Replay, error) {
	if s.existing == nil {
		return nil, nil
	}
	return s.existing(r), nil
}

func (s *replayStore) CompleteReplay(ctx context.Context, publisher, scope, key, token string, payload []byte, failed bool, slug vocab.Slug) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.completed++
	return nil
}

func (s *replayStore) ReleaseReplay(ctx context.Context, publisher, scope, key, token string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.released++
	return nil
}

// brokenSnapshots is an outage of the catalogue.
type brokenSnapshots struct{}

func (brokenSnapshots) Snapshot(ctx context.Context, publisher string) (*products.Snapshot, error) {
	return nil, errors.New("catalogue unavailable")
}

// panickingSnapshots is a catalogue that panics.
type panickingSnapshots struct{}

func (panickingSnapshots) Snapshot(ctx context.Context, publisher string) (*products.Snapshot, error) {
	panic("xyzzy-internal-panic-detail")
}

func newAgent(t *testing.T, s *replayStore, snaps products.Snapshots) *agent.Agent {
	t.Helper()
	mem := memstore.New()
	if err := demo.Seed(context.Background(), mem, demo.Written); err != nil {
		t.Fatal(err)
	}
	s.Store = mem
	real := store.NewSnapshots(s)
	if snaps == nil {
		snaps = real
	}
	log := slog.New(slog.DiscardHandler)
	svc := &products.Service{Snapshots: snaps, Ledger: store.Ledger{Store: s}, Accounts: access.Accounts{Store: s},
		Now: func() time.Time { return statesNow }, Log: log}
	return agent.New(s, svc, real, nil, log)
}

// statesNow is the clock of TestReplayStates' agents: years away, so that
// nothing in it depends on today.
var statesNow = time.Date(2033, 2, 3, 4, 5, 6, 0, time.UTC)

// TestReplayStates: an answer still being made, an expired one, and an
// outage, each under an idempotency key.
func TestReplayStates(t *testing.T) {
	const args = `{"adcp_version":"3.2-beta.5","buying_mode":"brief","brief":"coffee video","idempotency_key":"state-key-0123456789","context":{"correlation_id":"states"}}`
	for _, test := range []struct {
		name     string
		existing func(r store.Replay) *store.Replay
		snaps    products.Snapshots
		code     string
		recovery string
		// retryAfter is the retry_after the error must carry (0: none).
		retryAfter int
		// completed and released are the calls the agent makes to the
		// idempotency records after answering.
		completed, released int
	}{
		{
			name: "in flight",
			existing: func(r store.Replay) *store.Replay {
				// Its lease has 12.3 s left on the agent's clock: the
				// buyer is told 13, rounded up, never earlier.
				r.Done, r.CreatedAt, r.Expires = false, statesNow.Add(-17700*time.Millisecond), statesNow.Add(12300*time.Millisecond)
				return &r
			},
			code: "IDEMPOTENCY_IN_FLIGHT", recovery: "transient", retryAfter: 13,
		},
		{
			// A lease ending this very instant still asks for a second.
			name: "in flight, lease ending",
			existing: func(r store.Replay) *store.Replay {
				r.Done, r.CreatedAt, r.Expires = false, statesNow.Add(-agent.InFlight), statesNow
				return &r
			},
			code: "IDEMPOTENCY_IN_FLIGHT", recovery: "transient", retryAfter: 1,
		},
		{
			name: "expired",
			existing: func(r store.Replay) *store.Replay {
				r.Done, r.Payload, r.CreatedAt = true, []byte(`{"status":"completed"}`), statesNow.Add(-agent.ReplayTTL-time.Minute)
				return &r
			},
			code: "IDEMPOTENCY_EXPIRED", recovery: "correctable",
		},
		{
			name: "conflict while in flight",
			existing: func(r store.Replay) *store.Replay {
				r.Done, r.RequestHash, r.CreatedAt, r.Expires = false, "another request", statesNow, statesNow.Add(agent.InFlight)
				return &r
			},
			code: "IDEMPOTENCY_CONFLICT",
		},
		{
			// Nothing was decided, so a retry with the key runs afresh.
			name: "outage", snaps: brokenSnapshots{},
			code: "SERVICE_UNAVAILABLE", recovery: "transient", released: 1,
		},
		{
			// A panic is transient too: the key is released, not left
			// in flight.
			name: "panic", snaps: panickingSnapshots{},
			code: "SERVICE_UNAVAILABLE", recovery: "transient", released: 1,
		},
		{
			name: "answered", code: "", completed: 1,
		},
	} {
		t.Run(test.name, func(t *testing.T) {
			s := &replayStore{existing: test.existing}
			a := newAgent(t, s, test.snaps)
			r, err := a.Dispatch(context.Background(), "get_products", agent.Call{Publisher: demo.PublisherID, Args: []byte(args)})
			if err != nil {
				t.Fatal(err)
			}
			spectest.GetProducts(t, r.Payload)
			var m struct {
				Status    string `json:"status"`
				AdcpError struct {
					Code       string `json:"code"`
					Recovery   string `json:"recovery"`
					RetryAfter int    `json:"retry_after"`
				} `json:"adcp_error"`
				Errors []struct {
					RetryAfter int `json:"retry_after"`
				} `json:"errors"`
				Context map[string]any `json:"context"`
			}
			if err := json.Unmarshal(r.Payload, &m); err != nil {
				t.Fatal(err)
			}
			if m.AdcpError.Code != test.code || (test.recovery != "" && m.AdcpError.Recovery != test.recovery) {
				t.Errorf("answer = %s, want %s (%s)", r.Payload, test.code, test.recovery)
			}
			if m.AdcpError.RetryAfter != test.retryAfter || (len(m.Errors) > 0 && m.Errors[0].RetryAfter != test.retryAfter) {
				t.Errorf("retry_after = %d in adcp_error and %+v in errors, want %d: %s", m.AdcpError.RetryAfter, m.Errors, test.retryAfter, r.Payload)
			}
			if r.Failed != (test.code != "") {
				t.Errorf("Failed = %v for %s", r.Failed, r.Payload)
			}
			if m.Context["correlation_id"] != "states" {
				t.Errorf("context not echoed: %s", r.Payload)
			}
			if s.completed != test.completed || s.released != test.released {
				t.Errorf("records completed %d and released %d times, want %d and %d", s.completed, s.released, test.completed, test.released)
			}
		})
	}
}
