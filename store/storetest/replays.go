package storetest

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/storefront/storefront/store"
	"github.com/storefront/storefront/vocab"
)

// An hour: long enough that no reservation in these tests goes stale by
// accident.
const fresh = time.Hour

// owned returns r reserved under token.
func owned(r store.Replay, token string) store.Replay {
	r.Token = token
	return r
}

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

// wantAt fails unless got is exactly want (to the microsecond stores
// keep) and in UTC.
func wantAt(t *testing.T, what string, got, want time.Time) {
	t.Helper()
	if !got.Equal(want.Truncate(time.Microsecond)) || got.Location() != time.UTC {
		t.Errorf("%s = %v, want %v, in UTC", what, got, want.UTC().Truncate(time.Microsecond))
	}
}

// reserve calls ReserveReplay and fails on an error. A request without a
// token of its own reserves under one derived from its hash.
func reserve(t *testing.T, s store.Store, publisher string, r store.Replay, lease time.Duration) *store.Replay {
	t.Helper()
	if r.Token == "" {
		r.Token = "token-" + r.RequestHash
	}
	got, err := s.ReserveReplay(t.Context(), publisher, r, lease)
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
		len(got.Payload) != 0 || got.Failed || got.Slug != "" || got.Token != "" {
		t.Errorf("%s = %+v, want the in-flight reservation of %s/%s for request %s, without its owner's token", what, *got, r.Scope, r.Key, r.RequestHash)
	}
}

// wantDone fails unless got is a completed record with exactly payload.
func wantDone(t *testing.T, what string, got *store.Replay, r store.Replay, payload []byte, failed bool, slug vocab.Slug) {
	t.Helper()
	if got == nil {
		t.Fatalf("%s = nil, want the completed record", what)
	}
	if !got.Done || got.Scope != r.Scope || got.Key != r.Key || got.RequestHash != r.RequestHash ||
		got.Failed != failed || got.Slug != slug || got.Token != "" {
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
	start := t0
	withTestClock(t, s, start)
	r := store.Replay{Scope: scope("buyer"), Key: "key-1", RequestHash: "hash-1"}
	const tok = "token-hash-1" // reserve's token for r

	wantOwned(t, "ReserveReplay(new key)", reserve(t, s, alpha.ID, r, fresh))

	// While it is in flight, every other caller sees the reservation,
	// whatever its request: a different hash is the caller's conflict to
	// report, not the store's.
	got := reserve(t, s, alpha.ID, r, fresh)
	wantInFlight(t, "ReserveReplay(key in flight)", got, r)
	wantAt(t, "the reservation's CreatedAt", got.CreatedAt, start)
	wantAt(t, "the reservation's Expires", got.Expires, start.Add(fresh))
	other := r
	other.RequestHash = "hash-2"
	wantInFlight(t, "ReserveReplay(key in flight, another request)", reserve(t, s, alpha.ID, other, fresh), r)

	// Keys of different scopes, or at another publisher, never collide.
	otherScope := r
	otherScope.Scope = scope("other-buyer")
	wantOwned(t, "ReserveReplay(the same key in another scope)", reserve(t, s, alpha.ID, otherScope, fresh))
	wantOwned(t, "ReserveReplay(the same key at beta)", reserve(t, s, beta.ID, r, fresh))

	// Completing stores the response; every later reservation replays it,
	// even one whose lease would have ended: a response never goes
	// stale, and is never taken over.
	payload := []byte(`{"products":[],"note":"déjà vu"}`)
	stored := bytes.Clone(payload)
	wantErr(t, "CompleteReplay", s.CompleteReplay(ctx, alpha.ID, r.Scope, r.Key, tok, stored, false, ""), nil)
	stored[0] = 'X' // the store kept its own copy
	wantDone(t, "ReserveReplay(completed key)", reserve(t, s, alpha.ID, r, fresh), r, payload, false, "")
	wantDone(t, "ReserveReplay(completed key, another request)", reserve(t, s, alpha.ID, other, fresh), r, payload, false, "")
	wantDone(t, "ReserveReplay(completed key, lease=0)", reserve(t, s, alpha.ID, r, 0), r, payload, false, "")
	got = reserve(t, s, alpha.ID, r, fresh)
	got.Payload[0] = 'X' // nor does it share its copy
	wantDone(t, "ReserveReplay(completed key) after the caller altered a replay", reserve(t, s, alpha.ID, r, fresh), r, payload, false, "")

	// Releasing or completing a completed record does nothing: a late
	// release never un-caches a response, nor a second answer replace it.
	wantErr(t, "ReleaseReplay(completed key)", s.ReleaseReplay(ctx, alpha.ID, r.Scope, r.Key, tok), nil)
	wantErr(t, "CompleteReplay(completed key)", s.CompleteReplay(ctx, alpha.ID, r.Scope, r.Key, tok, []byte(`{}`), true, "x"), store.ErrConflict)
	wantDone(t, "ReserveReplay(completed key) after ReleaseReplay", reserve(t, s, alpha.ID, r, fresh), r, payload, false, "")

	// Releasing an in-flight reservation frees the key for a fresh run.
	wantInFlight(t, "ReserveReplay(other scope in flight)", reserve(t, s, alpha.ID, otherScope, fresh), otherScope)
	wantErr(t, "ReleaseReplay(key in flight)", s.ReleaseReplay(ctx, alpha.ID, otherScope.Scope, otherScope.Key, tok), nil)
	wantOwned(t, "ReserveReplay(released key)", reserve(t, s, alpha.ID, otherScope, fresh))
	// Releasing a key nobody holds is no error.
	wantErr(t, "ReleaseReplay(unknown key)", s.ReleaseReplay(ctx, alpha.ID, r.Scope, "no-such-key", tok), nil)

	// A cached rejection keeps its failed flag and decline slug.
	rejected := store.Replay{Scope: scope("buyer"), Key: "key-2", RequestHash: "hash-3"}
	wantOwned(t, "ReserveReplay(key-2)", reserve(t, s, alpha.ID, rejected, fresh))
	rejection := []byte(`{"errors":[{"code":"POLICY_VIOLATION"}]}`)
	wantErr(t, "CompleteReplay(failed)", s.CompleteReplay(ctx, alpha.ID, rejected.Scope, rejected.Key, "token-hash-3", rejection, true, "budget_below_minimum"), nil)
	wantDone(t, "ReserveReplay(cached rejection)", reserve(t, s, alpha.ID, rejected, fresh), rejected, rejection, true, "budget_below_minimum")

	// Completing a key nobody reserved fails and creates nothing.
	missing := store.Replay{Scope: scope("buyer"), Key: "never-reserved", RequestHash: "h"}
	wantErr(t, "CompleteReplay(unreserved key)", s.CompleteReplay(ctx, alpha.ID, missing.Scope, missing.Key, "token-h", payload, false, ""), store.ErrNotFound)
	wantErr(t, "CompleteReplay(alpha's key at beta, other scope)", s.CompleteReplay(ctx, beta.ID, otherScope.Scope, otherScope.Key, tok, payload, false, ""), store.ErrNotFound)
	wantOwned(t, "ReserveReplay(key whose completion failed)", reserve(t, s, alpha.ID, missing, fresh))

	// Beta's reservation of key-1 is still its own and in flight.
	wantInFlight(t, "ReserveReplay(beta's key-1)", reserve(t, s, beta.ID, r, fresh), r)

	// A reservation needs an owner.
	if _, err := s.ReserveReplay(ctx, alpha.ID, store.Replay{Scope: scope("buyer"), Key: "no-token", RequestHash: "h"}, fresh); err == nil {
		t.Error("ReserveReplay(without a token) = nil error, want a refusal")
	}
}

// testReplayOwnership checks that only the token that reserved a key
// completes or releases it: another token's writes are refused or do
// nothing, whoever sends them.
func testReplayOwnership(t *testing.T, s store.Store) {
	ctx := t.Context()
	withPublishers(t, s)
	withTestClock(t, s, t0)
	r := owned(store.Replay{Scope: scope("buyer"), Key: "owned", RequestHash: "h"}, "owner-token")
	wantOwned(t, "ReserveReplay(owner)", reserve(t, s, alpha.ID, r, fresh))

	wantErr(t, "CompleteReplay(another token)", s.CompleteReplay(ctx, alpha.ID, r.Scope, r.Key, "intruder", []byte(`{"forged":true}`), false, ""), store.ErrConflict)
	wantErr(t, "CompleteReplay(no token)", s.CompleteReplay(ctx, alpha.ID, r.Scope, r.Key, "", []byte(`{"forged":true}`), false, ""), store.ErrConflict)
	wantErr(t, "ReleaseReplay(another token)", s.ReleaseReplay(ctx, alpha.ID, r.Scope, r.Key, "intruder"), nil)
	wantErr(t, "ReleaseReplay(no token)", s.ReleaseReplay(ctx, alpha.ID, r.Scope, r.Key, ""), nil)
	wantInFlight(t, "ReserveReplay after another token's writes", reserve(t, s, alpha.ID, owned(r, "third"), fresh), r)

	// The owner's own writes go through.
	payload := []byte(`{"status":"completed"}`)
	wantErr(t, "CompleteReplay(owner)", s.CompleteReplay(ctx, alpha.ID, r.Scope, r.Key, r.Token, payload, false, ""), nil)
	wantDone(t, "ReserveReplay after the owner completed", reserve(t, s, alpha.ID, owned(r, "third"), fresh), r, payload, false, "")
}

// testReplayLease checks a reservation's lease on the store's clock: the
// key is the owner's until the lease ends, to the microsecond; then a
// takeover owns it under a new token and a fresh lease, and the old
// owner's late completion and release are refused, whichever comes first.
func testReplayLease(t *testing.T, s store.Store) {
	ctx := t.Context()
	withPublishers(t, s)
	clock := withTestClock(t, s, t0)
	const lease = 30 * time.Second
	first := owned(store.Replay{Scope: scope("buyer"), Key: "leased", RequestHash: "first"}, "first-owner")
	wantOwned(t, "ReserveReplay(first)", reserve(t, s, alpha.ID, first, lease))

	next := owned(first, "second-owner")
	next.RequestHash = "second"
	clock.advance(lease - time.Microsecond)
	got := reserve(t, s, alpha.ID, next, lease)
	wantInFlight(t, "ReserveReplay a microsecond before the lease ends", got, first)
	wantAt(t, "its Expires", got.Expires, t0.Add(lease))

	clock.advance(time.Microsecond)
	wantOwned(t, "ReserveReplay as the lease ends", reserve(t, s, alpha.ID, next, lease))
	taken := reserve(t, s, alpha.ID, owned(next, "onlooker"), lease)
	wantInFlight(t, "ReserveReplay(key taken over)", taken, next)
	if taken != nil {
		wantAt(t, "the takeover's CreatedAt", taken.CreatedAt, t0.Add(lease))
		wantAt(t, "the takeover's Expires", taken.Expires, t0.Add(2*lease))
	}

	// The first owner wakes up late: its answer is refused and its
	// release drops nothing.
	wantErr(t, "CompleteReplay(the old owner, after the takeover)",
		s.CompleteReplay(ctx, alpha.ID, first.Scope, first.Key, first.Token, []byte(`{"late":true}`), false, ""), store.ErrConflict)
	wantErr(t, "ReleaseReplay(the old owner, after the takeover)", s.ReleaseReplay(ctx, alpha.ID, first.Scope, first.Key, first.Token), nil)
	wantInFlight(t, "ReserveReplay after the old owner's late writes", reserve(t, s, alpha.ID, owned(next, "onlooker"), lease), next)

	// The new owner completes as usual.
	payload := []byte(`{"status":"completed","second":true}`)
	wantErr(t, "CompleteReplay(the new owner)", s.CompleteReplay(ctx, alpha.ID, next.Scope, next.Key, next.Token, payload, false, ""), nil)
	clock.advance(10 * lease)
	wantDone(t, "ReserveReplay long after the new owner completed", reserve(t, s, alpha.ID, owned(first, "later"), lease), next, payload, false, "")

	// An owner whose lease ended but whom nobody took over still owns
	// the key: its completion is kept.
	slow := owned(store.Replay{Scope: scope("buyer"), Key: "slow", RequestHash: "h"}, "slow-owner")
	wantOwned(t, "ReserveReplay(slow)", reserve(t, s, alpha.ID, slow, lease))
	clock.advance(2 * lease)
	wantErr(t, "CompleteReplay(slow owner, lease ended, not taken over)", s.CompleteReplay(ctx, alpha.ID, slow.Scope, slow.Key, slow.Token, payload, false, ""), nil)
	wantDone(t, "ReserveReplay(slow)", reserve(t, s, alpha.ID, owned(slow, "other"), lease), slow, payload, false, "")

	// A released key is free at once, lease or not.
	freed := owned(store.Replay{Scope: scope("buyer"), Key: "freed", RequestHash: "h"}, "freed-owner")
	wantOwned(t, "ReserveReplay(freed)", reserve(t, s, alpha.ID, freed, lease))
	wantErr(t, "ReleaseReplay(freed)", s.ReleaseReplay(ctx, alpha.ID, freed.Scope, freed.Key, freed.Token), nil)
	wantOwned(t, "ReserveReplay(freed) right after its release", reserve(t, s, alpha.ID, owned(freed, "next"), lease))
	if err := s.CompleteReplay(ctx, alpha.ID, freed.Scope, freed.Key, freed.Token, payload, false, ""); !errors.Is(err, store.ErrConflict) {
		t.Errorf("CompleteReplay(the releasing owner, after another reserved) = %v, want %v", err, store.ErrConflict)
	}
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
		wantErr(t, "CompleteReplay", s.CompleteReplay(ctx, alpha.ID, r.Scope, r.Key, "token-h", payload, false, ""), nil)
		wantDone(t, fmt.Sprintf("replay of payload %d", i), reserve(t, s, alpha.ID, r, fresh), r, payload, false, "")
	}
	// A response with no body replays as none.
	r := store.Replay{Scope: scope("buyer"), Key: "empty", RequestHash: "h"}
	wantOwned(t, "ReserveReplay(empty)", reserve(t, s, alpha.ID, r, fresh))
	wantErr(t, "CompleteReplay(nil payload)", s.CompleteReplay(ctx, alpha.ID, r.Scope, r.Key, "token-h", nil, true, "x"), nil)
	wantDone(t, "replay of a nil payload", reserve(t, s, alpha.ID, r, fresh), r, nil, true, "x")
}

// testReplayStale checks that of many callers finding one reservation's
// lease ended, exactly one takes it over; the others see the takeover in
// flight.
func testReplayStale(t *testing.T, s store.Store) {
	withPublishers(t, s)
	clock := withTestClock(t, s, t0)
	const lease = 30 * time.Second
	r := store.Replay{Scope: scope("buyer"), Key: "stale", RequestHash: "first"}
	wantOwned(t, "ReserveReplay(new key)", reserve(t, s, alpha.ID, r, lease))
	clock.advance(lease)
	var owners atomic.Int32
	parallel(16, func(i int) {
		again := r
		again.RequestHash = fmt.Sprintf("racer-%d", i)
		again.Token = fmt.Sprintf("racer-token-%d", i)
		got, err := s.ReserveReplay(t.Context(), alpha.ID, again, lease)
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
			r := store.Replay{Scope: scope("buyer"), Key: key, RequestHash: fmt.Sprintf("racer-%d", i), Token: fmt.Sprintf("racer-token-%d", i)}
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
	clock := withTestClock(t, s, t0)
	rec := func(key string) store.Replay { return store.Replay{Scope: scope("buyer"), Key: key, RequestHash: "h"} }
	wantOwned(t, "ReserveReplay(old-1)", reserve(t, s, alpha.ID, rec("old-1"), fresh))
	wantOwned(t, "ReserveReplay(old-2)", reserve(t, s, alpha.ID, rec("old-2"), fresh))
	wantErr(t, "CompleteReplay(old-1)", s.CompleteReplay(ctx, alpha.ID, scope("buyer"), "old-1", "token-h", []byte(`{}`), false, ""), nil)
	wantOwned(t, "ReserveReplay(beta's old-1)", reserve(t, s, beta.ID, rec("old-1"), fresh))
	clock.advance(20 * time.Millisecond)
	wantOwned(t, "ReserveReplay(new)", reserve(t, s, alpha.ID, rec("new"), fresh))
	cutoff := clock.now()

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

	n, err = s.PurgeReplays(ctx, alpha.ID, clock.now().Add(time.Hour))
	wantErr(t, "PurgeReplays(an hour ahead)", err, nil)
	if n != 3 {
		t.Errorf("PurgeReplays(an hour ahead) = %d, want 3", n)
	}
	n, err = s.PurgeReplays(ctx, alpha.ID, clock.now().Add(time.Hour))
	wantErr(t, "PurgeReplays(nothing left)", err, nil)
	if n != 0 {
		t.Errorf("PurgeReplays(nothing left) = %d, want 0", n)
	}
	wantInFlight(t, "ReserveReplay(beta's old-1) after alpha's purge", reserve(t, s, beta.ID, rec("old-1"), fresh), rec("old-1"))
}
