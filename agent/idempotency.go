package agent

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"time"

	"github.com/storefront/storefront/adcp"
	"github.com/storefront/storefront/internal/recovery"
	"github.com/storefront/storefront/outcome"
	"github.com/storefront/storefront/products"
	"github.com/storefront/storefront/sanitize"
	"github.com/storefront/storefront/store"
)

// The replay window the capabilities declare, and the lease of a
// reservation: how long a request holds its key in flight before another
// may take it over (in_flight_max_seconds).
const (
	ReplayTTL = 24 * time.Hour
	InFlight  = 30 * time.Second
	// runBudget bounds a call made under a reservation, so that it is
	// answered and its response cached well inside the lease: a call
	// that outlived its lease could be run a second time by a takeover.
	runBudget = InFlight - 5*time.Second
)

// idempotent runs a call of tool under its idempotency_key, if it has
// one. The same key with the same payload, from the same principal for
// the same account, replays the cached answer marked replayed: true,
// without a new decision, a second directive or a second task. The same
// key with a different payload is IDEMPOTENCY_CONFLICT; a key whose first
// request is still running is IDEMPOTENCY_IN_FLIGHT with retry_after, the
// seconds left of that request's lease.
//
// The key is reserved under a random token, and only that token caches
// the answer or releases the key: a request whose lease ran out and was
// taken over writes nothing. A release or a caching write the store
// refuses for an outage is retried in the background until the lease
// ends, so that a key does not stay in flight after the store is back.
func (a *Agent) idempotent(ctx context.Context, c Call, p products.Principal, tool string, run func(ctx context.Context, kept bool) Reply) Reply {
	key, scope, hash, ok := idempotencyOf(c.Args, p, tool)
	if !ok {
		return run(ctx, false)
	}
	env, _ := a.taskEnvelope(c.Args)
	token, err := store.NewToken()
	if err != nil {
		a.Log.Error("making an idempotency token failed", "err", err)
		return failedReply(env, outcome.Error{Code: adcp.ServiceUnavailable, Message: sanitize.Unavailable})
	}
	existing, err := a.Store.ReserveReplay(ctx, c.Publisher, store.Replay{Scope: scope, Key: key, RequestHash: hash, Token: token}, InFlight)
	if err != nil {
		a.Log.Error("idempotency store failed", "err", err)
		return failedReply(env, outcome.Error{Code: adcp.ServiceUnavailable, Message: sanitize.Unavailable})
	}
	if existing != nil {
		switch {
		case existing.RequestHash != hash:
			// Only code and message: nothing of the cached answer leaks
			// to a payload it was not made for.
			return reply(outcome.NewBareFailed(env, adcp.IdempotencyConflict,
				sanitize.Const("this idempotency_key was used with a different request; use a fresh key for a new request")))
		case !existing.Done:
			return failedReply(env, outcome.Error{Code: adcp.IdempotencyInFlight, RetryAfter: RetryAfter(existing.Expires, a.Now()),
				Message: sanitize.Const("a request with this idempotency_key is still in progress; retry with the same key after retry_after seconds")})
		case a.Now().Sub(existing.CreatedAt) > ReplayTTL:
			return failedReply(env, outcome.Error{Code: adcp.IdempotencyExpired, Message: sanitize.Const("this idempotency_key's cached response has expired; use a fresh key")})
		}
		return Reply{Payload: markReplayed(withContext(existing.Payload, env.Context)), Failed: existing.Failed, Slug: existing.Slug}
	}
	runCtx, cancel := context.WithTimeout(ctx, runBudget)
	var r Reply
	// kept: the answer is cached below, and settle may retry caching it
	// after the reply has gone, so its payload must not be lent.
	if recovery.Run(runCtx, a.Log, c.Transport, "tool "+tool, func() { r = run(runCtx, true) }) {
		// Answered here, not by Dispatch, so that the key is released
		// below like that of any transient failure.
		r = a.InternalReply(c.Args)
	}
	cancel()
	if transient(r) {
		// Nothing was decided: let a retry with the same key run afresh.
		a.settle(ctx, "releasing an idempotency key", func(ctx context.Context) error {
			return a.Store.ReleaseReplay(ctx, c.Publisher, scope, key, token)
		})
		return r
	}
	a.settle(ctx, "caching an idempotent response", func(ctx context.Context) error {
		return a.Store.CompleteReplay(ctx, c.Publisher, scope, key, token, r.Payload, r.Failed, r.Slug)
	})
	return r
}

// RetryAfter is the retry_after of an IDEMPOTENCY_IN_FLIGHT answer: the
// whole seconds, rounded up, until the lease that ends at expires has
// ended at now, from 1 to outcome.MaxRetryAfter. By then the first
// request's answer is cached, or the key is free.
func RetryAfter(expires, now time.Time) int {
	left := expires.Sub(now)
	secs := int(left / time.Second)
	if left%time.Second > 0 {
		secs++
	}
	return min(max(secs, 1), outcome.MaxRetryAfter)
}

// Backoff bounds of settle's retries.
const (
	settleFirstWait = 50 * time.Millisecond
	settleMaxWait   = 2 * time.Second
)

// settle runs op, a write of the reservation this request owns, at once,
// and if the store fails it, again in the background with backoff until
// it succeeds, the reservation is no longer the request's (ErrConflict,
// ErrNotFound: nothing is left to do), or the lease is over: by then the
// key is the next request's anyway. Wait waits for settlements in
// progress.
func (a *Agent) settle(ctx context.Context, what string, op func(context.Context) error) {
	ctx = context.WithoutCancel(ctx)
	done := func(err error) bool {
		switch {
		case err == nil:
			return true
		case errors.Is(err, store.ErrConflict):
			a.Log.Warn(what+": the reservation's lease ran out and another request took the key over", "err", err)
			return true
		case errors.Is(err, store.ErrNotFound):
			return true
		}
		return false
	}
	err := op(ctx)
	if done(err) {
		return
	}
	a.Log.Warn(what+" failed; retrying until the reservation's lease ends", "err", err)
	a.settling.Add(1)
	go func() {
		defer a.settling.Done()
		ctx, cancel := context.WithTimeout(ctx, InFlight)
		defer cancel()
		for wait := settleFirstWait; ; wait = min(2*wait, settleMaxWait) {
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				a.Log.Warn(what+" gave up: the reservation's lease has ended", "err", err)
				return
			case <-t.C:
			}
			if err = op(ctx); done(err) {
				return
			}
		}
	}()
}

// Wait waits, up to ctx, for background settlements of idempotency keys
// (see settle).
func (a *Agent) Wait(ctx context.Context) {
	finished := make(chan struct{})
	go func() { a.settling.Wait(); close(finished) }()
	select {
	case <-finished:
	case <-ctx.Done():
	}
}

func transient(r Reply) bool {
	var head struct {
		AdcpError struct {
			Recovery string `json:"recovery"`
		} `json:"adcp_error"`
	}
	return r.Failed && json.Unmarshal(r.Payload, &head) == nil && head.AdcpError.Recovery == string(adcp.Transient)
}

// markReplayed adds replayed: true as the last member, so the replay is the
// original byte for byte but for that member.
func markReplayed(payload []byte) []byte {
	p := bytes.TrimRight(payload, " \n\r\t")
	if len(p) < 2 || p[len(p)-1] != '}' {
		return payload
	}
	out := append([]byte{}, p[:len(p)-1]...)
	if len(bytes.TrimSpace(p[1:len(p)-1])) > 0 {
		out = append(out, ',')
	}
	return append(out, []byte(`"replayed":true}`)...)
}

// idempotencyOf extracts the key, the scope (principal, account, tool) and
// the canonical request hash (the request without its key, with object
// members sorted).
func idempotencyOf(args []byte, p products.Principal, tool string) (key, scope, hash string, ok bool) {
	if !mayHoldKey(args) {
		return "", "", "", false
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	var m map[string]any
	if dec.Decode(&m) != nil || m == nil {
		return "", "", "", false
	}
	k, _ := m["idempotency_key"].(string)
	if k == "" || !idempotencyKeyOK(k) {
		return "", "", "", false
	}
	// The spec's closed list of what payload equivalence leaves out: the
	// key, the buyer's echo data, a refreshed governance token and a
	// rotated webhook credential.
	delete(m, "idempotency_key")
	delete(m, "context")
	delete(m, "governance_context")
	if push, ok := m["push_notification_config"].(map[string]any); ok {
		if auth, ok := push["authentication"].(map[string]any); ok {
			delete(auth, "credentials")
		}
	}
	account, _ := json.Marshal(m["account"])
	canon, _ := json.Marshal(m)
	sum := sha256.Sum256(canon)
	return k, tool + "|" + p.ID + "|" + string(account), hex.EncodeToString(sum[:]), true
}

// mayHoldKey is false only for arguments that cannot name an
// idempotency_key member: the name is not in them, and they have no
// escape that could spell it. Most calls carry no key, and are not
// decoded whole to find that out.
func mayHoldKey(args []byte) bool { return mayName(args, "idempotency_key", false) }

func idempotencyKeyOK(k string) bool {
	if len(k) < 16 || len(k) > 255 {
		return false
	}
	for _, r := range k {
		if !(r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' || r == '.' || r == ':' || r == '-') {
			return false
		}
	}
	return true
}
