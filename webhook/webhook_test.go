package webhook_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/storefront/storefront/demo"
	"github.com/storefront/storefront/internal/spectest"
	"github.com/storefront/storefront/metrics"
	"github.com/storefront/storefront/signing"
	"github.com/storefront/storefront/store"
	"github.com/storefront/storefront/store/memstore"
	"github.com/storefront/storefront/webhook"
)

func TestPolicyCheck(t *testing.T) {
	for _, test := range []struct {
		url                 string
		production, sandbox bool // allowed?
	}{
		{"https://buyer.example/hooks/adcp", true, true},
		{"https://buyer.example:8443/hooks?op=1", true, true},
		{"https://93.184.215.14/hook", true, true},
		{"http://buyer.example/hooks/adcp", false, false},
		{"http://93.184.215.14/hook", false, false},
		{"http://127.0.0.1:9000/hook", false, true},
		{"https://127.0.0.1:9000/hook", false, true},
		{"http://127.8.9.10/hook", false, true},
		{"http://localhost:9000/hook", false, true},
		{"http://[::1]:9000/hook", false, true},
		{"https://[::1]/hook", false, true},
		// Spellings of loopback that must not pass as public names.
		{"https://LOCALHOST/hook", false, true},
		{"https://localhost./hook", false, true},
		{"https://hooks.localhost/hook", false, true},
		{"ftp://127.0.0.1/hook", false, false},
		{"http://10.0.0.8/hook", false, false},
		{"https://10.0.0.8/hook", false, false},
		{"https://172.16.4.1/hook", false, false},
		{"https://192.168.1.20/hook", false, false},
		{"http://169.254.169.254/latest/meta-data", false, false},
		{"https://[fe80::1]/hook", false, false},
		{"https://[fd00::1]/hook", false, false},
		{"https://[::ffff:10.0.0.1]/hook", false, false},
		{"https://0.0.0.0/hook", false, false},
		{"https://[::]/hook", false, false},
		{"https://224.0.0.1/hook", false, false},
		{"ftp://buyer.example/hook", false, false},
		{"/hooks/adcp", false, false},
		{"buyer.example/hook", false, false},
		{"https://", false, false},
		{"", false, false},
		{"https://buyer.example/%zz", false, false},
	} {
		for _, mode := range []struct {
			name   string
			policy webhook.Policy
			want   bool
		}{
			{"production", webhook.Policy{}, test.production},
			{"sandbox", webhook.Policy{AllowLoopback: true}, test.sandbox},
		} {
			err := mode.policy.Check(test.url)
			if (err == nil) != mode.want {
				t.Errorf("%s Policy.Check(%q) = %v, want allowed %v", mode.name, test.url, err, mode.want)
			}
		}
	}
}

// receiver is a loopback webhook endpoint that answers with the scripted
// statuses in turn (then 200) and keeps every request.
type receiver struct {
	*httptest.Server
	mu       sync.Mutex
	statuses []int
	got      []delivery
}

type delivery struct {
	header http.Header
	body   []byte
}

func newReceiver(t *testing.T, statuses ...int) *receiver {
	r := &receiver{statuses: statuses}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.got = append(r.got, delivery{header: req.Header.Clone(), body: b})
		status := http.StatusOK
		if len(r.statuses) > 0 {
			status, r.statuses = r.statuses[0], r.statuses[1:]
		}
		r.mu.Unlock()
		if status == -1 {
			// A network failure: drop the connection without answering.
			hj, _ := w.(http.Hijacker)
			conn, _, _ := hj.Hijack()
			conn.Close()
			return
		}
		w.WriteHeader(status)
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *receiver) deliveries() []delivery {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]delivery(nil), r.got...)
}

var clock = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

// finished stores a submitted task with the webhook w and finishes it with
// result, as the controller does.
func finished(t *testing.T, s store.Store, w *store.Webhook, status string, result []byte) store.Task {
	t.Helper()
	ctx := context.Background()
	owner := store.TaskOwner{Account: "acct_1", Principal: "demo-acme-outdoor-v1"}
	id := "task-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	if err := s.CreateTask(ctx, demo.PublisherID, store.Task{ID: id, Owner: owner, Type: "get_products", Status: "submitted", Webhook: w}); err != nil {
		t.Fatal(err)
	}
	task, err := s.FinishTask(ctx, demo.PublisherID, owner, id, status, result, clock)
	if err != nil {
		t.Fatal(err)
	}
	return task
}

func newStore(t *testing.T) store.Store {
	t.Helper()
	s := memstore.New()
	if err := demo.Seed(context.Background(), s, demo.Written); err != nil {
		t.Fatal(err)
	}
	return s
}

func sender(s store.Store, p webhook.Policy) *webhook.Sender {
	w := webhook.New(s, p, slog.New(slog.DiscardHandler))
	w.Backoff = time.Millisecond
	w.Now = func() time.Time { return clock }
	return w
}

// deliver sends the terminal webhook of task and waits for it to settle;
// it returns the task's recorded delivery state.
func deliver(t *testing.T, s store.Store, w *webhook.Sender, task store.Task) store.Delivery {
	t.Helper()
	w.Deliver(context.Background(), demo.PublisherID, task)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	w.Wait(ctx)
	if ctx.Err() != nil {
		t.Fatal("the delivery did not settle")
	}
	got, err := s.Task(context.Background(), demo.PublisherID, task.Owner, task.ID)
	if err != nil {
		t.Fatal(err)
	}
	return got.Delivery
}

const completedResult = `{"status":"completed","products":[],"cache_scope":"public","context":{"correlation_id":"terminal"}}`

// TestDeliveryRetries: a delivery is retried on 5xx, 429 and network
// failures, with the same body (idempotency key and timestamp included)
// every time, and given up at once on any other refusal.
func TestDeliveryRetries(t *testing.T) {
	for _, test := range []struct {
		name      string
		statuses  []int
		attempts  int
		delivered bool
	}{
		{"accepted at once", nil, 1, true},
		{"503 twice then 200", []int{503, 503}, 3, true},
		{"429 then 204", []int{429, 204}, 2, true},
		{"500, 502, 504 then 200", []int{500, 502, 504}, 4, true},
		{"network failure then 200", []int{-1}, 2, true},
		{"408 then 200", []int{408}, 2, true},
		{"400 is final", []int{400}, 1, false},
		{"401 is final", []int{401}, 1, false},
		{"404 is final", []int{404}, 1, false},
		{"410 after a 503 is final", []int{503, 410}, 2, false},
		{"always 503 gives up", []int{503, 503, 503, 503, 503, 503, 503, 503, 503, 503}, 8, false},
	} {
		t.Run(test.name, func(t *testing.T) {
			s := newStore(t)
			r := newReceiver(t, test.statuses...)
			w := sender(s, webhook.Policy{AllowLoopback: true})
			task := finished(t, s, &store.Webhook{URL: r.URL + "/hook", OperationID: "op-1"}, "completed", []byte(completedResult))
			d := deliver(t, s, w, task)

			got := r.deliveries()
			if len(got) != test.attempts {
				t.Fatalf("the receiver saw %d attempts, want %d", len(got), test.attempts)
			}
			for i, g := range got[1:] {
				if !bytes.Equal(g.body, got[0].body) {
					t.Errorf("attempt %d body differs from the first:\n%s\n%s", i+2, g.body, got[0].body)
				}
			}
			var p struct {
				IdempotencyKey string `json:"idempotency_key"`
				Timestamp      string `json:"timestamp"`
			}
			if err := json.Unmarshal(got[0].body, &p); err != nil {
				t.Fatal(err)
			}
			if d.Attempts != test.attempts || d.IdempotencyKey != p.IdempotencyKey || !d.Timestamp.Equal(clock) {
				t.Errorf("recorded delivery = %+v, want %d attempts with key %s at %v", d, test.attempts, p.IdempotencyKey, clock)
			}
			if p.Timestamp != "2026-11-29T12:00:00Z" {
				t.Errorf("timestamp = %q", p.Timestamp)
			}
			if (d.DeliveredAt != nil) != test.delivered {
				t.Errorf("delivered_at = %v, want delivered %v", d.DeliveredAt, test.delivered)
			}
			if test.delivered != (d.LastError == "") {
				t.Errorf("last_error = %q for delivered %v", d.LastError, test.delivered)
			}
		})
	}
}

// TestDeliveryResumes: a task whose delivery already began keeps its
// idempotency key and timestamp.
func TestDeliveryResumes(t *testing.T) {
	s := newStore(t)
	r := newReceiver(t)
	w := sender(s, webhook.Policy{AllowLoopback: true})
	task := finished(t, s, &store.Webhook{URL: r.URL, OperationID: "op-1"}, "completed", []byte(completedResult))
	first := clock.Add(-time.Hour)
	task.Delivery = store.Delivery{IdempotencyKey: "whk_0123456789abcdef", Timestamp: first, Attempts: 2, LastError: "receiver answered 503"}
	d := deliver(t, s, w, task)
	var p map[string]any
	_ = json.Unmarshal(r.deliveries()[0].body, &p)
	if p["idempotency_key"] != "whk_0123456789abcdef" || p["timestamp"] != first.Format(time.RFC3339) {
		t.Errorf("resumed delivery = %v, want the first key and timestamp", p)
	}
	if d.Attempts != 3 || d.DeliveredAt == nil {
		t.Errorf("recorded delivery = %+v, want the third attempt delivered", d)
	}
}

// TestDeliveryPayload: the body is core/mcp-webhook-payload.json, with
// the operation id and token echoed and the result verbatim.
func TestDeliveryPayload(t *testing.T) {
	for _, test := range []struct {
		name, status, result string
	}{
		{"completed", "completed", `{"status":"completed","adcp_version":"3.2-beta.5","products":[],"cache_scope":"account","context":{"correlation_id":"terminal","n":[1,2.5]}}`},
		{"rejected, with characters json.Marshal escapes", "rejected", `{"status":"rejected","reason":"Q4 & Q1 are sold out for <premium> video.","suggestions":["Move the flight to February."],"context":{"correlation_id":"terminal"}}`},
		{"failed", "failed", `{"status":"failed","errors":[{"code":"SERVICE_UNAVAILABLE","message":"Try again later."}]}`},
		{"completed, spaced as the buyer sent it", "completed", "{\"status\": \"completed\",\n  \"products\": [],\n  \"cache_scope\": \"public\"}"},
	} {
		t.Run(test.name, func(t *testing.T) {
			s := newStore(t)
			r := newReceiver(t)
			w := sender(s, webhook.Policy{AllowLoopback: true})
			task := finished(t, s, &store.Webhook{URL: r.URL + "/hook?x=1", OperationID: "op_terminal.1", Token: "buyer-token-0123456789"}, test.status, []byte(test.result))
			deliver(t, s, w, task)
			got := r.deliveries()
			if len(got) != 1 {
				t.Fatalf("%d deliveries, want 1", len(got))
			}
			body := got[0].body
			spectest.Validate(t, "core/mcp-webhook-payload.json", body)
			var p map[string]json.RawMessage
			if err := json.Unmarshal(body, &p); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(p["result"], []byte(test.result)) {
				t.Errorf("result is not verbatim:\n got %s\nwant %s", p["result"], test.result)
			}
			for k, want := range map[string]string{
				"operation_id": `"op_terminal.1"`, "task_id": `"` + task.ID + `"`, "task_type": `"get_products"`,
				"protocol": `"media-buy"`, "status": `"` + test.status + `"`, "token": `"buyer-token-0123456789"`,
			} {
				if string(p[k]) != want {
					t.Errorf("%s = %s, want %s", k, p[k], want)
				}
			}
			if ct := got[0].header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type = %q", ct)
			}
			if got[0].header.Get("Authorization") != "" || got[0].header.Get("X-ADCP-Signature") != "" {
				t.Errorf("a webhook without authentication carries credentials: %v", got[0].header)
			}
		})
	}
}

// TestDeliveryAuthentication: the legacy authentication block is honoured:
// a bearer token, or an HMAC-SHA256 signature over timestamp and body.
func TestDeliveryAuthentication(t *testing.T) {
	const secret = "a-shared-secret-of-at-least-32-characters"
	s := newStore(t)
	w := sender(s, webhook.Policy{AllowLoopback: true})

	t.Run("Bearer", func(t *testing.T) {
		r := newReceiver(t)
		deliver(t, s, w, finished(t, s, &store.Webhook{URL: r.URL, OperationID: "op-1", Scheme: "Bearer", Credentials: secret}, "completed", []byte(completedResult)))
		h := r.deliveries()[0].header
		if got := h.Get("Authorization"); got != "Bearer "+secret {
			t.Errorf("Authorization = %q, want the bearer credentials", got)
		}
		if h.Get("X-ADCP-Signature") != "" {
			t.Error("a bearer webhook is also signed")
		}
	})

	t.Run("HMAC-SHA256", func(t *testing.T) {
		r := newReceiver(t, 503)
		deliver(t, s, w, finished(t, s, &store.Webhook{URL: r.URL, OperationID: "op-1", Scheme: "HMAC-SHA256", Credentials: secret}, "completed", []byte(completedResult)))
		got := r.deliveries()
		if len(got) != 2 {
			t.Fatalf("%d attempts, want 2", len(got))
		}
		for i, d := range got {
			ts := d.header.Get("X-ADCP-Timestamp")
			if ts != strconv.FormatInt(clock.Unix(), 10) {
				t.Errorf("attempt %d: X-ADCP-Timestamp = %q, want %d", i+1, ts, clock.Unix())
			}
			mac := hmac.New(sha256.New, []byte(secret))
			mac.Write([]byte(ts + "."))
			mac.Write(d.body)
			want := "sha256=" + hex.EncodeToString(mac.Sum(nil))
			if sig := d.header.Get("X-ADCP-Signature"); !hmac.Equal([]byte(sig), []byte(want)) {
				t.Errorf("attempt %d: X-ADCP-Signature = %q, want %q", i+1, sig, want)
			}
			if d.header.Get("Authorization") != "" {
				t.Errorf("attempt %d: a signed webhook also carries Authorization", i+1)
			}
		}
	})
}

// TestDeliveryPolicy: the sender itself refuses a URL the policy refuses,
// so that no path around the request-time check reaches the network.
func TestDeliveryPolicy(t *testing.T) {
	s := newStore(t)
	r := newReceiver(t)
	w := sender(s, webhook.Policy{})
	d := deliver(t, s, w, finished(t, s, &store.Webhook{URL: r.URL, OperationID: "op-1"}, "completed", []byte(completedResult)))
	if n := len(r.deliveries()); n != 0 {
		t.Errorf("a production sender delivered to a loopback receiver %d times", n)
	}
	if d.Attempts != 0 || d.DeliveredAt != nil || d.LastError == "" {
		t.Errorf("recorded delivery = %+v, want no attempt and the refusal", d)
	}

	// A task without a webhook sends nothing.
	w = sender(s, webhook.Policy{AllowLoopback: true})
	deliver(t, s, w, finished(t, s, nil, "completed", []byte(completedResult)))
	if n := len(r.deliveries()); n != 0 {
		t.Errorf("a task without a webhook was delivered %d times", n)
	}
}

// TestSignedDelivery: a webhook registered without legacy authentication
// is signed under the RFC 9421 webhook profile with the publisher's key,
// every attempt afresh (a new nonce, the same body and idempotency key);
// one registered with legacy authentication gets that and no signature.
func TestSignedDelivery(t *testing.T) {
	s := newStore(t)
	keys := &signing.Keys{Store: s, Now: func() time.Time { return clock }}
	r := newReceiver(t, 503, 503)
	w := sender(s, webhook.Policy{AllowLoopback: true})
	w.Signer = keys
	task := finished(t, s, &store.Webhook{URL: r.URL + "/hooks/adcp?op=1", OperationID: "op-1"}, "completed", []byte(completedResult))
	deliver(t, s, w, task)

	set, err := keys.JWKS(context.Background(), demo.PublisherID)
	if err != nil || len(set.Keys) != 1 {
		t.Fatalf("JWKS = %+v, %v", set, err)
	}
	pub, _ := base64.RawURLEncoding.DecodeString(set.Keys[0].X)
	got := r.deliveries()
	if len(got) != 3 {
		t.Fatalf("the receiver saw %d attempts, want 3", len(got))
	}
	nonces := map[string]bool{}
	for i, d := range got {
		input := d.header.Get("Signature-Input")
		m := regexp.MustCompile(`;created=(\d+);expires=(\d+);nonce="([^"]+)";keyid="([^"]+)";alg="ed25519";tag="adcp/webhook-signing/v1"$`).FindStringSubmatch(input)
		if m == nil || m[4] != set.Keys[0].Kid {
			t.Fatalf("attempt %d Signature-Input = %q, want the profile's parameters and key %s", i+1, input, set.Keys[0].Kid)
		}
		if nonces[m[3]] {
			t.Errorf("attempt %d reuses nonce %s", i+1, m[3])
		}
		nonces[m[3]] = true
		if d.header.Get("Content-Digest") != signing.ContentDigest(d.body) || d.header.Get("X-ADCP-Signature") != "" {
			t.Errorf("attempt %d: Content-Digest %q for its body, X-ADCP-Signature %q", i+1, d.header.Get("Content-Digest"), d.header.Get("X-ADCP-Signature"))
		}
		// Rebuild the request as the receiver saw it and check the
		// signature over it with the published key.
		req, _ := http.NewRequest(http.MethodPost, r.URL+"/hooks/adcp?op=1", nil)
		req.Header = d.header
		created, _ := strconv.ParseInt(m[1], 10, 64)
		expires, _ := strconv.ParseInt(m[2], 10, 64)
		base, _, err := signing.SignatureBase(req, signing.Params{Created: time.Unix(created, 0), Expires: time.Unix(expires, 0), Nonce: m[3], KeyID: m[4]})
		sig, _ := base64.RawURLEncoding.DecodeString(strings.TrimSuffix(strings.TrimPrefix(d.header.Get("Signature"), "sig1=:"), ":"))
		if err != nil || !ed25519.Verify(pub, []byte(base), sig) {
			t.Errorf("attempt %d: the signature does not verify with the published key (%v)", i+1, err)
		}
	}

	// Legacy HMAC: the buyer's choice, and no RFC 9421 signature beside it.
	r2 := newReceiver(t)
	hmacTask := finished(t, s, &store.Webhook{URL: r2.URL + "/hook", OperationID: "op-2", Scheme: "HMAC-SHA256", Credentials: strings.Repeat("k", 32)}, "completed", []byte(completedResult))
	deliver(t, s, w, hmacTask)
	if d := r2.deliveries(); len(d) != 1 || d[0].header.Get("X-ADCP-Signature") == "" || d[0].header.Get("Signature") != "" || d[0].header.Get("Signature-Input") != "" {
		t.Errorf("an HMAC registration got headers %v, want the HMAC signature alone", d[0].header)
	}
}

// panickingSigner is a dependency of the delivery that panics.
type panickingSigner struct{}

func (panickingSigner) Sign(context.Context, string, *http.Request, []byte) error {
	panic("xyzzy-internal-panic-detail")
}

// TestDeliveryPanic: a delivery that panics ends alone, counted; Wait
// still returns, and the next delivery goes out.
func TestDeliveryPanic(t *testing.T) {
	s := newStore(t)
	r := newReceiver(t)
	w := sender(s, webhook.Policy{AllowLoopback: true})
	w.Signer = panickingSigner{}
	before := metrics.RecoveredPanics("webhook")
	hook := &store.Webhook{URL: r.URL + "/hook", OperationID: "op-1"}
	if d := deliver(t, s, w, finished(t, s, hook, "completed", []byte(completedResult))); d.DeliveredAt != nil {
		t.Errorf("a delivery that panicked is recorded delivered: %+v", d)
	}
	if got := metrics.RecoveredPanics("webhook") - before; got != 1 {
		t.Errorf("recovered panics on webhook moved by %v, want 1", got)
	}
	w.Signer = nil
	if d := deliver(t, s, w, finished(t, s, hook, "completed", []byte(completedResult))); d.DeliveredAt == nil {
		t.Errorf("the next delivery = %+v, want it delivered", d)
	}
}
