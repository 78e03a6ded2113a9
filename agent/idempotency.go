package agent

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"time"

	"github.com/storefront/storefront/adcp"
	"github.com/storefront/storefront/outcome"
	"github.com/storefront/storefront/products"
	"github.com/storefront/storefront/sanitize"
	"github.com/storefront/storefront/store"
)

// The replay window the capabilities declare, and how long a request may
// hold its key before another may take it over.
const (
	ReplayTTL = 24 * time.Hour
	InFlight  = 60 * time.Second
)

// idempotent runs a call of tool under its idempotency_key, if it has
// one. The same key with the same payload, from the same principal for
// the same account, replays the cached answer marked replayed: true,
// without a new decision, a second directive or a second task. The same
// key with a different payload is IDEMPOTENCY_CONFLICT.
func (a *Agent) idempotent(ctx context.Context, c Call, p products.Principal, tool string, run func() Reply) Reply {
	key, scope, hash, ok := idempotencyOf(c.Args, p, tool)
	if !ok {
		return run()
	}
	env, _ := a.taskEnvelope(c.Args)
	existing, err := a.Store.ReserveReplay(ctx, c.Publisher, store.Replay{Scope: scope, Key: key, RequestHash: hash}, InFlight)
	if err != nil {
		a.Log.Error("idempotency store failed", "err", err)
		return failedReply(env, outcome.Error{Code: adcp.ServiceUnavailable, Message: sanitize.Unavailable})
	}
	if existing != nil {
		switch {
		case existing.RequestHash != hash:
			// Only code and message: nothing of the cached answer leaks
			// to a payload it was not made for.
			msg, _ := baseScreen.Line("this idempotency_key was used with a different request; use a fresh key for a new request", sanitize.MaxMessage)
			return conflict(env, msg)
		case !existing.Done:
			msg, _ := baseScreen.Line("a request with this idempotency_key is still in progress; retry shortly", sanitize.MaxMessage)
			return failedReply(env, outcome.Error{Code: adcp.IdempotencyInFlight, Message: msg})
		case a.now().Sub(existing.CreatedAt) > ReplayTTL:
			msg, _ := baseScreen.Line("this idempotency_key's cached response has expired; use a fresh key", sanitize.MaxMessage)
			return failedReply(env, outcome.Error{Code: adcp.IdempotencyExpired, Message: msg})
		}
		r := Reply{Payload: markReplayed(withContext(existing.Payload, env.Context)), Failed: existing.Failed, Meta: map[string]any{}}
		if existing.Slug != "" {
			r.Meta[outcome.Namespace+"/decline"] = map[string]any{"slug": existing.Slug}
		}
		return r
	}
	r := run()
	if transient(r) {
		// Nothing was decided: let a retry with the same key run afresh.
		_ = a.Store.ReleaseReplay(context.WithoutCancel(ctx), c.Publisher, scope, key)
		return r
	}
	slug := ""
	if d, ok := r.Meta[outcome.Namespace+"/decline"].(map[string]any); ok {
		slug, _ = d["slug"].(string)
	}
	if err := a.Store.CompleteReplay(context.WithoutCancel(ctx), c.Publisher, scope, key, r.Payload, r.Failed, slug); err != nil {
		a.Log.Warn("caching an idempotent response failed", "err", err)
	}
	return r
}

// conflict is IDEMPOTENCY_CONFLICT carrying only code and message.
func conflict(env outcome.Envelope, msg sanitize.Text) Reply {
	e := map[string]any{"code": adcp.IdempotencyConflict, "message": msg}
	fields := []kv{{"status", "failed"}, {"adcp_version", env.Version.String()}, {"errors", []any{e}}, {"adcp_error", e}}
	if env.Context != nil {
		fields = append(fields, kv{"context", env.Context})
	}
	return Reply{Payload: writeObject(fields), Failed: true, Meta: map[string]any{}, Summary: msg}
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
