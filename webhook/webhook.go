// Package webhook delivers the terminal notification of an asynchronous
// task to the buyer's push_notification_config URL: one AdCP
// mcp-webhook-payload per task, with a stable idempotency key and
// timestamp across retries, retried with backoff on failure and bounded in
// time. Delivery state is kept in the Store.
//
// It must never send to a URL the policy refuses, nor connect to an
// address the guard refuses whatever a name resolves to: in production
// only public https endpoints; in sandbox mode loopback http receivers
// too, for compliance runners. The guard (guard.go) is the one dial-time
// check for every outbound call to a buyer-chosen URL.
package webhook

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/storefront/storefront/internal/clock"
	"github.com/storefront/storefront/internal/recovery"
	"github.com/storefront/storefront/store"
)

// Policy decides which URLs may receive webhooks, and which addresses the
// storefront connects to when it calls a URL a buyer chose (guard.go).
type Policy struct {
	// AllowLoopback admits http and https to loopback addresses: sandbox
	// mode, for compliance runners' local receivers. It never admits
	// private, link-local or other non-public addresses.
	AllowLoopback bool
	// Resolver, when set, resolves names for the guarded dialer (tests
	// answer with addresses of their choosing); nil is the system's.
	Resolver *net.Resolver
}

// Check reports why rawURL may not receive webhooks, or nil.
func (p Policy) Check(rawURL string) error { return p.CheckURL(rawURL, "webhook URL") }

// CheckURL reports why the storefront may not call rawURL, or nil; what
// names the URL in the reason (the storefront calls governance agents
// under the same policy as webhooks).
func (p Policy) CheckURL(rawURL, what string) error {
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" {
		return fmt.Errorf("the %s is not an absolute URL", what)
	}
	// Host names are case-insensitive, may end in the root's dot, and
	// every name under localhost is loopback too (RFC 6761): none of
	// those spellings may pass as a public name.
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	loopback := host == "localhost" || strings.HasSuffix(host, ".localhost")
	if ip := net.ParseIP(host); ip != nil {
		loopback = ip.IsLoopback()
		if !loopback && !Public(ip) {
			return fmt.Errorf("the %s points at a private address", what)
		}
	}
	switch {
	case loopback && p.AllowLoopback && (u.Scheme == "http" || u.Scheme == "https"):
		return nil
	case loopback:
		return fmt.Errorf("the %s points at a loopback address, which only a sandbox storefront calls", what)
	case u.Scheme != "https":
		return fmt.Errorf("the %s must use https", what)
	}
	return nil
}

// Payload is core/mcp-webhook-payload.json for a task's terminal state.
type Payload struct {
	IdempotencyKey string          `json:"idempotency_key"`
	OperationID    string          `json:"operation_id"`
	NotificationID string          `json:"notification_id"`
	TaskID         string          `json:"task_id"`
	TaskType       string          `json:"task_type"`
	Protocol       string          `json:"protocol"`
	Status         string          `json:"status"`
	Timestamp      string          `json:"timestamp"`
	Token          string          `json:"token,omitempty"`
	Result         json.RawMessage `json:"result,omitempty"`
}

// Sender delivers task webhooks.
type Sender struct {
	// Store is where each delivery's state is recorded (RecordDelivery).
	Store  store.AsyncTasks
	Policy Policy
	Client *http.Client
	Log    *slog.Logger
	// Attempts bounds deliveries per task; Backoff is the first wait,
	// doubled after each failure; Timeout bounds each attempt.
	Attempts int
	Backoff  time.Duration
	Timeout  time.Duration
	// Now is the program's clock (nil: the machine's); it stamps each
	// delivery and its signature.
	Now func() time.Time
	// Signer signs each delivery the buyer registered no legacy
	// authentication for, under the RFC 9421 webhook profile.
	Signer Signer

	wg sync.WaitGroup
}

// Signer signs a webhook request, whose body is body, for a publisher.
type Signer interface {
	Sign(ctx context.Context, publisher string, req *http.Request, body []byte) error
}

// New returns a sender with production defaults: 8 attempts over about
// four minutes, 10 seconds per attempt, through the policy's guarded
// client, which follows no redirect.
func New(s store.AsyncTasks, p Policy, log *slog.Logger) *Sender {
	return &Sender{Store: s, Policy: p, Client: p.Client(10 * time.Second), Log: log,
		Attempts: 8, Backoff: time.Second, Timeout: 10 * time.Second}
}

func (s *Sender) now() time.Time { return clock.Read(s.Now) }

// Deliver sends the terminal notification of a finished task in the
// background. It returns at once; Wait waits for deliveries in flight.
func (s *Sender) Deliver(ctx context.Context, publisher string, t store.Task) {
	if t.Webhook == nil {
		return
	}
	// Under a recover boundary: a panic ends this delivery, logged and
	// counted before Wait sees it done, and nothing else.
	s.wg.Go(func() {
		recovery.Run(ctx, s.Log, "webhook", "delivering the webhook of task "+t.ID, func() {
			if err := s.deliver(context.WithoutCancel(ctx), publisher, t); err != nil {
				s.Log.Warn("webhook not delivered", "publisher", publisher, "task", t.ID, "err", err)
			}
		})
	})
}

// Wait waits for deliveries in flight, up to ctx.
func (s *Sender) Wait(ctx context.Context) {
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
	}
}

func (s *Sender) deliver(ctx context.Context, publisher string, t store.Task) error {
	if err := s.Policy.Check(t.Webhook.URL); err != nil {
		t.Delivery.LastError = err.Error()
		_ = s.Store.RecordDelivery(ctx, publisher, t.Owner, t.ID, t.Delivery)
		return err
	}
	d := t.Delivery
	if d.IdempotencyKey == "" {
		d.IdempotencyKey = newKey()
		d.Timestamp = s.now().UTC().Truncate(time.Second)
	}
	body, err := encode(Payload{
		IdempotencyKey: d.IdempotencyKey, OperationID: t.Webhook.OperationID,
		NotificationID: t.ID + ".terminal", TaskID: t.ID, TaskType: t.Type, Protocol: "media-buy",
		Status: t.Status, Timestamp: d.Timestamp.Format(time.RFC3339), Token: t.Webhook.Token, Result: t.Result,
	})
	if err != nil {
		return err
	}
	wait := s.Backoff
	for d.Attempts < s.Attempts {
		d.Attempts++
		err = s.post(ctx, publisher, t.Webhook, body)
		if err == nil {
			now := s.now().UTC()
			d.DeliveredAt, d.LastError = &now, ""
			return s.Store.RecordDelivery(ctx, publisher, t.Owner, t.ID, d)
		}
		d.LastError = err.Error()
		if rerr := s.Store.RecordDelivery(ctx, publisher, t.Owner, t.ID, d); rerr != nil {
			s.Log.Warn("recording a webhook attempt failed", "task", t.ID, "err", rerr)
		}
		var perm permanent
		if errors.As(err, &perm) {
			return err
		}
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return ctx.Err()
		}
		wait *= 2
	}
	return fmt.Errorf("gave up after %d attempts: %w", d.Attempts, err)
}

// encode writes the payload with its result appended verbatim: json.Marshal
// would re-encode the result (escaping &, < and > among others), and the
// buyer must receive it exactly as the task finished with it.
func encode(p Payload) ([]byte, error) {
	result := p.Result
	p.Result = nil
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(p); err != nil {
		return nil, err
	}
	out := bytes.TrimRight(b.Bytes(), "\n")
	if len(result) == 0 {
		return out, nil
	}
	if !json.Valid(result) {
		return nil, errors.New("the task result is not JSON")
	}
	out = append(out[:len(out)-1], `,"result":`...)
	out = append(out, result...)
	return append(out, '}'), nil
}

type permanent struct{ error }

// post sends one attempt. 2xx is delivered; 5xx, 429 and network errors
// are retried; other statuses mean the receiver refuses the notification
// and are not. Each attempt is signed afresh: a new nonce and creation
// time, so a retry is not a replay.
func (s *Sender) post(ctx context.Context, publisher string, w *store.Webhook, body []byte) error {
	ctx, cancel := context.WithTimeout(ctx, s.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.URL, bytes.NewReader(body))
	if err != nil {
		return permanent{err}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "storefront-webhook/1")
	switch w.Scheme {
	case "Bearer":
		req.Header.Set("Authorization", "Bearer "+w.Credentials)
	case "HMAC-SHA256":
		ts := strconv.FormatInt(s.now().Unix(), 10)
		mac := hmac.New(sha256.New, []byte(w.Credentials))
		mac.Write([]byte(ts + "."))
		mac.Write(body)
		req.Header.Set("X-ADCP-Timestamp", ts)
		req.Header.Set("X-ADCP-Signature", "sha256="+hex.EncodeToString(mac.Sum(nil)))
	default:
		// No legacy authentication: the profile's baseline, a signature.
		// Only one mode is ever used for a delivery.
		if s.Signer != nil {
			if err := s.Signer.Sign(ctx, publisher, req, body); err != nil {
				return err
			}
		}
	}
	resp, err := s.Client.Do(req)
	if errors.Is(err, ErrRefusedAddress) {
		// The name resolves where the storefront does not connect.
		return permanent{err}
	}
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		return nil
	case resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusRequestTimeout:
		return fmt.Errorf("receiver answered %d", resp.StatusCode)
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		return permanent{fmt.Errorf("receiver redirected with %d; webhooks follow no redirect", resp.StatusCode)}
	}
	return permanent{fmt.Errorf("receiver refused the notification with %d", resp.StatusCode)}
}

func newKey() string {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return "whk_" + hex.EncodeToString(b)
}
