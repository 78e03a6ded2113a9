package storetest

import (
	"bytes"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/storefront/storefront/store"
)

// An hour: long enough that no reservation in these tests goes stale by
// accident.
const fresh = time.Hour

// scope is an idempotency scope as the storefront builds them: principal,
// account and tool.
func scope(principal string) string { return principal + "|acct_1|get_products" }

// wantNear fails unless got is within a few seconds of [lo, hi] and in
// UTC. Stores may keep microseconds only, so the window is generous; what
// it catches is a zero, a stale or a local time, and, the store's clock
// being years from the machine's (Epoch), a time from any other clock.
func wantNear(t *testing.T, what string, got, lo, hi time.Time) {
	t.Helper()
	if got.Before(lo.Add(-2*time.Second)) || got.After(hi.Add(2*time.Second)) || got.Location() != time.UTC {
		t.Errorf("%s = %v, want between %v and %v, in UTC", what, got, lo.UTC(), hi.UTC())
	}
}

// reserve calls ReserveReplay and fails on an error.
func reserve(t *testing.T, s store.Store, publisher string, r store.Replay, staleAfter time.Duration) *store.Replay {
	t.Helper()
	got, err := s.ReserveReplay(t.Context(), publisher, r, staleAfter)
	wantErr(t, fmt.Sprintf("ReserveReplay(%q, %q, %q)", publisher, r.Scope, r.Key), err, nil)
	return got
}

// wantOwned fails unless the reservation went to the caller (nil).
func wantOwned(t *testing.T, what string, got *store.Replay) {
	t.Helper()
	if got != nil {
		t.Fatalf("%s = %+v, want nil: the caller owns the key", what, *got)
	}
}

// wantInFlight fails unless got is r's reservation, still in flight.
func wantInFlight(t *testing.T, what string, got *store.Replay, r store.Replay) {
	t.Helper()
	if got == nil {
		t.Fatalf("%s = nil, want the in-flight reservation", what)
	}
	if got.Done || got.Scope != r.Scope || got.Key != r.Key || got.RequestHash != r.RequestHash ||
		len(got.Payload) != 0 || got.Failed || got.Slug != "" {
		t.Errorf("%s = %+v, want the in-flight reservation of %s/%s for request %s", what, *got, r.Scope, r.Key, r.RequestHash)
	}
}

// wantDone fails unless got is a completed record with exactly payload.
func wantDone(t *testing.T, what string, got *store.Replay, r store.Replay, payload []byte, failed bool, slug string) {
	t.Helper()
	if got == nil {
		t.Fatalf("%s = nil, want the completed record", what)
	}
	if !got.Done || got.Scope != r.Scope || got.Key != r.Key || got.RequestHash != r.RequestHash ||
		got.Failed != failed || got.Slug != slug {
		t.Errorf("%s = done %v, %s/%s for request %s, failed %v, slug %q; want done, %s/%s for request %s, failed %v, slug %q",
			what, got.Done, got.Scope, got.Key, got.RequestHash, got.Failed, got.Slug,
			r.Scope, r.Key, r.RequestHash, failed, slug)
	}
	if !bytes.Equal(got.Payload, payload) {
		t.Errorf("%s payload = %q, want byte for byte %q", what, got.Payload, payload)
	}
}

// testReplays walks an idempotency key through its life: reserved, seen in
// flight, completed and replayed; and checks that scopes and publishers
// keep their keys apart.
func testReplays(t *testing.T, s store.Store) {
	ctx := t.Context()
	withPublishers(t, s)
	r := store.Replay{Scope: scope("buyer"), Key: "key-1", RequestHash: "hash-1"}

	start := now(t, s)
	wantOwned(t, "ReserveReplay(new key)", reserve(t, s, alpha.ID, r, fresh))
	end := now(t, s)

	// While it is in flight, every other caller sees the reservation,
	// whatever its request: a different hash is the caller's conflict to
	// report, not the store's.
	got := reserve(t, s, alpha.ID, r, fresh)
	wantInFlight(t, "ReserveReplay(key in flight)", got, r)
	wantNear(t, "the reservation's CreatedAt", got.CreatedAt, start, end)
	if !got.CreatedAt.Equal(got.CreatedAt.Truncate(time.Microsecond)) {
		t.Errorf("the reservation's CreatedAt = %v, want whole microseconds", got.CreatedAt)
	}
	other := r
	other.RequestHash = "hash-2"
	wantInFlight(t, "ReserveReplay(key in flight, another request)", reserve(t, s, alpha.ID, other, fresh), r)

	// Keys of different scopes, or at another publisher, never collide.
	otherScope := r
	otherScope.Scope = scope("other-buyer")
	wantOwned(t, "ReserveReplay(the same key in another scope)", reserve(t, s, alpha.ID, otherScope, fresh))
	wantOwned(t, "ReserveReplay(the same key at beta)", reserve(t, s, beta.ID, r, fresh))

	// Completing stores the response; every later reservation replays it,
	// even one that would find the record stale: a response never goes
	// stale, and is never taken over.
	payload := []byte(`{"products":[],"note":"déjà vu"}`)
	stored := bytes.Clone(payload)
	wantErr(t, "CompleteReplay", s.CompleteReplay(ctx, alpha.ID, r.Scope, r.Key, stored, false, ""), nil)
	stored[0] = 'X' // the store kept its own copy
	wantDone(t, "ReserveReplay(completed key)", reserve(t, s, alpha.ID, r, fresh), r, payload, false, "")
	wantDone(t, "ReserveReplay(completed key, another request)", reserve(t, s, alpha.ID, other, fresh), r, payload, false, "")
	wantDone(t, "ReserveReplay(completed key, staleAfter=1ns)", reserve(t, s, alpha.ID, r, time.Nanosecond), r, payload, false, "")
	got = reserve(t, s, alpha.ID, r, fresh)
	got.Payload[0] = 'X' // nor does it share its copy
	wantDone(t, "ReserveReplay(completed key) after the caller altered a replay", reserve(t, s, alpha.ID, r, fresh), r, payload, false, "")

	// Releasing a completed record does nothing: a late release never
	// un-caches a response.
	wantErr(t, "ReleaseReplay(completed key)", s.ReleaseReplay(ctx, alpha.ID, r.Scope, r.Key), nil)
	wantDone(t, "ReserveReplay(completed key) after ReleaseReplay", reserve(t, s, alpha.ID, r, fresh), r, payload, false, "")

	// Releasing an in-flight reservation frees the key for a fresh run.
	wantInFlight(t, "ReserveReplay(other scope in flight)", reserve(t, s, alpha.ID, otherScope, fresh), otherScope)
	wantErr(t, "ReleaseReplay(key in flight)", s.ReleaseReplay(ctx, alpha.ID, otherScope.Scope, otherScope.Key), nil)
	wantOwned(t, "ReserveReplay(released key)", reserve(t, s, alpha.ID, otherScope, fresh))
	// Releasing a key nobody holds is no error.
	wantErr(t, "ReleaseReplay(unknown key)", s.ReleaseReplay(ctx, alpha.ID, r.Scope, "no-such-key"), nil)

	// A cached rejection keeps its failed flag and decline slug.
	rejected := store.Replay{Scope: scope("buyer"), Key: "key-2", RequestHash: "hash-3"}
	wantOwned(t, "ReserveReplay(key-2)", reserve(t, s, alpha.ID, rejected, fresh))
	rejection := []byte(`{"errors":[{"code":"POLICY_VIOLATION"}]}`)
	wantErr(t, "CompleteReplay(failed)", s.CompleteReplay(ctx, alpha.ID, rejected.Scope, rejected.Key, rejection, true, "budget_below_minimum"), nil)
	wantDone(t, "ReserveReplay(cached rejection)", reserve(t, s, alpha.ID, rejected, fresh), rejected, rejection, true, "budget_below_minimum")

	// Completing a key nobody reserved fails and creates nothing.
	missing := store.Replay{Scope: scope("buyer"), Key: "never-reserved", RequestHash: "h"}
	wantErr(t, "CompleteReplay(unreserved key)", s.CompleteReplay(ctx, alpha.ID, missing.Scope, missing.Key, payload, false, ""), store.ErrNotFound)
	wantErr(t, "CompleteReplay(alpha's key at beta, other scope)", s.CompleteReplay(ctx, beta.ID, otherScope.Scope, otherScope.Key, payload, false, ""), store.ErrNotFound)
	wantOwned(t, "ReserveReplay(key whose completion failed)", reserve(t, s, alpha.ID, missing, fresh))

	// Beta's reservation of key-1 is still its own and in flight.
	wantInFlight(t, "ReserveReplay(beta's key-1)", reserve(t, s, beta.ID, r, fresh), r)
}

// testReplayPayloadBytes checks that a replay is byte for byte the
// response stored: key order, whitespace, escapes and non-ASCII text
// survive, as they must for a replay to be identical to the original.
func testReplayPayloadBytes(t *testing.T, s store.Store) {
	ctx := t.Context()
	withPublishers(t, s)
	var large strings.Builder
	large.WriteString(`{"products":[`)
	for i := range 3000 {
		if i > 0 {
			large.WriteString(",")
		}
		fmt.Fprintf(&large, `{"product_id":"p-%04d","name":"Продукт %d — 製品 🚀","z":%d,"a":null}`, i, i, i)
	}
	large.WriteString(`]}`)
	for i, payload := range [][]byte{
		[]byte(`{"zeta":"日本語 — ünïcödé 😀","alpha":[3,1,2],"mid":{"b":1,"a":2}}`),
		[]byte("{\n  \"b\" : \"\\u00e9\\n\\\"\\u0000\",\t\"a\": 1.50e+00 }\n"),
		[]byte(`{"a":1,"a":2,"A":3}`),
		[]byte(`{"html":"<b>&amp;</b>","emoji":"\ud83d\ude00"}`),
		[]byte(`"just a string"`),
		[]byte(large.String()),
	} {
		r := store.Replay{Scope: scope("buyer"), Key: fmt.Sprintf("bytes-%d", i), RequestHash: "h"}
		wantOwned(t, "ReserveReplay", reserve(t, s, alpha.ID, r, fresh))
		wantErr(t, "CompleteReplay", s.CompleteReplay(ctx, alpha.ID, r.Scope, r.Key, payload, false, ""), nil)
		wantDone(t, fmt.Sprintf("replay of payload %d", i), reserve(t, s, alpha.ID, r, fresh), r, payload, false, "")
	}
	// A response with no body replays as none.
	r := store.Replay{Scope: scope("buyer"), Key: "empty", RequestHash: "h"}
	wantOwned(t, "ReserveReplay(empty)", reserve(t, s, alpha.ID, r, fresh))
	wantErr(t, "CompleteReplay(nil payload)", s.CompleteReplay(ctx, alpha.ID, r.Scope, r.Key, nil, true, "x"), nil)
	wantDone(t, "replay of a nil payload", reserve(t, s, alpha.ID, r, fresh), r, nil, true, "x")
}

// testReplayStale checks that a reservation left in flight longer than
// staleAfter is taken over, and that the takeover is a reservation of its
// own: fresh, for the new request.
func testReplayStale(t *testing.T, s store.Store) {
	withPublishers(t, s)
	r := store.Replay{Scope: scope("buyer"), Key: "stale", RequestHash: "first"}
	wantOwned(t, "ReserveReplay(new key)", reserve(t, s, alpha.ID, r, fresh))
	first := reserve(t, s, alpha.ID, r, fresh)
	wantInFlight(t, "ReserveReplay(key in flight)", first, r)

	time.Sleep(100 * time.Millisecond)
	// Not yet stale by an hour's measure, stale by 50ms's.
	wantInFlight(t, "ReserveReplay(key in flight 100ms, staleAfter=1h)", reserve(t, s, alpha.ID, r, fresh), r)
	next := r
	next.RequestHash = "second"
	wantOwned(t, "ReserveReplay(key in flight 100ms, staleAfter=50ms)", reserve(t, s, alpha.ID, next, 50*time.Millisecond))
	taken := reserve(t, s, alpha.ID, r, fresh)
	wantInFlight(t, "ReserveReplay(key taken over)", taken, next)
	if taken != nil && !taken.CreatedAt.After(first.CreatedAt) {
		t.Errorf("the takeover's CreatedAt = %v, want after the stale reservation's %v", taken.CreatedAt, first.CreatedAt)
	}

	// Of many callers finding one reservation stale, exactly one takes it
	// over; the others see the takeover in flight. (They must all call
	// within staleAfter of the takeover, or it is stale in its turn: a
	// generous staleAfter keeps a slow scheduler from failing the test.)
	time.Sleep(600 * time.Millisecond)
	var owners atomic.Int32
	parallel(16, func(i int) {
		again := r
		again.RequestHash = fmt.Sprintf("racer-%d", i)
		got, err := s.ReserveReplay(t.Context(), alpha.ID, again, 300*time.Millisecond)
		switch {
		case err != nil:
			t.Errorf("ReserveReplay(stale key, racer %d) = %v", i, err)
		case got == nil:
			owners.Add(1)
		case got.Done || !strings.HasPrefix(got.RequestHash, "racer-"):
			t.Errorf("ReserveReplay(stale key, racer %d) = %+v, want nil or a racer's reservation", i, *got)
		}
	})
	if n := owners.Load(); n != 1 {
		t.Errorf("%d of 16 callers took over one stale reservation, want exactly 1", n)
	}
}

// testReplayRace checks that of many callers reserving one fresh key at
// once exactly one gets it, and every other sees that reservation.
func testReplayRace(t *testing.T, s store.Store) {
	withPublishers(t, s)
	for round := range 5 {
		key := fmt.Sprintf("race-%d", round)
		var owners atomic.Int32
		parallel(16, func(i int) {
			r := store.Replay{Scope: scope("buyer"), Key: key, RequestHash: fmt.Sprintf("racer-%d", i)}
			got, err := s.ReserveReplay(t.Context(), alpha.ID, r, fresh)
			switch {
			case err != nil:
				t.Errorf("ReserveReplay(%s, racer %d) = %v", key, i, err)
			case got == nil:
				owners.Add(1)
			case got.Done || got.Key != key || !strings.HasPrefix(got.RequestHash, "racer-") || got.RequestHash == r.RequestHash:
				t.Errorf("ReserveReplay(%s, racer %d) = %+v, want nil or another racer's reservation", key, i, *got)
			}
		})
		if n := owners.Load(); n != 1 {
			t.Errorf("round %d: %d of 16 concurrent callers got key %s, want exactly 1", round, n, key)
		}
	}
}

// testPurgeReplays checks that purging removes the records created before
// the cutoff, completed or not, and only the publisher's own.
func testPurgeReplays(t *testing.T, s store.Store) {
	ctx := t.Context()
	withPublishers(t, s)
	rec := func(key string) store.Replay { return store.Replay{Scope: scope("buyer"), Key: key, RequestHash: "h"} }
	// createdAt reads a record's creation time from the store, so that
	// cutoffs are on the store's clock.
	createdAt := func(key string) time.Time {
		t.Helper()
		got := reserve(t, s, alpha.ID, rec(key), fresh)
		if got == nil {
			t.Fatalf("ReserveReplay(%s) = nil, want the existing record", key)
		}
		return got.CreatedAt
	}
	wantOwned(t, "ReserveReplay(old-1)", reserve(t, s, alpha.ID, rec("old-1"), fresh))
	wantOwned(t, "ReserveReplay(old-2)", reserve(t, s, alpha.ID, rec("old-2"), fresh))
	wantErr(t, "CompleteReplay(old-1)", s.CompleteReplay(ctx, alpha.ID, scope("buyer"), "old-1", []byte(`{}`), false, ""), nil)
	wantOwned(t, "ReserveReplay(beta's old-1)", reserve(t, s, beta.ID, rec("old-1"), fresh))
	time.Sleep(20 * time.Millisecond)
	wantOwned(t, "ReserveReplay(new)", reserve(t, s, alpha.ID, rec("new"), fresh))
	cutoff := createdAt("new")
	if old := createdAt("old-2"); !old.Before(cutoff) {
		t.Fatalf("old-2 created at %v, not before new at %v", old, cutoff)
	}

	n, err := s.PurgeReplays(ctx, alpha.ID, cutoff.Add(-time.Hour))
	wantErr(t, "PurgeReplays(an hour before)", err, nil)
	if n != 0 {
		t.Errorf("PurgeReplays(an hour before every record) = %d, want 0", n)
	}
	n, err = s.PurgeReplays(ctx, alpha.ID, cutoff)
	wantErr(t, "PurgeReplays(cutoff)", err, nil)
	if n != 2 {
		t.Errorf("PurgeReplays(cutoff) = %d, want 2 (old-1 completed, old-2 in flight)", n)
	}
	wantOwned(t, "ReserveReplay(purged old-1)", reserve(t, s, alpha.ID, rec("old-1"), fresh))
	wantOwned(t, "ReserveReplay(purged old-2)", reserve(t, s, alpha.ID, rec("old-2"), fresh))
	wantInFlight(t, "ReserveReplay(new, created at the cutoff)", reserve(t, s, alpha.ID, rec("new"), fresh), rec("new"))
	wantInFlight(t, "ReserveReplay(beta's old-1)", reserve(t, s, beta.ID, rec("old-1"), fresh), rec("old-1"))

	n, err = s.PurgeReplays(ctx, alpha.ID, now(t, s).Add(time.Hour))
	wantErr(t, "PurgeReplays(an hour ahead)", err, nil)
	if n != 3 {
		t.Errorf("PurgeReplays(an hour ahead) = %d, want 3", n)
	}
	n, err = s.PurgeReplays(ctx, alpha.ID, now(t, s).Add(time.Hour))
	wantErr(t, "PurgeReplays(nothing left)", err, nil)
	if n != 0 {
		t.Errorf("PurgeReplays(nothing left) = %d, want 0", n)
	}
	wantInFlight(t, "ReserveReplay(beta's old-1) after alpha's purge", reserve(t, s, beta.ID, rec("old-1"), fresh), rec("old-1"))
}
