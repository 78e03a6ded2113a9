package adversary

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/storefront/storefront/access"
	"github.com/storefront/storefront/agent"
	"github.com/storefront/storefront/app"
	"github.com/storefront/storefront/buying"
	"github.com/storefront/storefront/compliance"
	"github.com/storefront/storefront/internal/clock"
	"github.com/storefront/storefront/products"
	"github.com/storefront/storefront/store"
)

// Clock is the time the suite runs the storefront at: the triggers' dates
// are written against it.
var Clock = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

// Transport is how a probe reaches the storefront.
type Transport string

// The transports: the agent's own dispatch, and the real MCP and A2A
// handlers of the running program, over HTTP on loopback.
const (
	Dispatch Transport = "dispatch"
	MCP      Transport = "mcp"
	A2A      Transport = "a2a"
)

// Transports lists them.
var Transports = []Transport{Dispatch, MCP, A2A}

// Harness is the real storefront program running in-process in sandbox
// mode with asynchronous discovery, its memory store, an agent over the
// same store for dispatch, and a webhook receiver.
type Harness struct {
	Main   *app.Main
	Base   string
	Agent  *agent.Agent
	cancel context.CancelFunc
	done   chan error
	hooks  *httptest.Server

	mu       sync.Mutex
	sessions map[string]*mcp.ClientSession
	bodies   map[string][][]byte // webhook bodies by path
	client   *http.Client
}

// Start runs the program.
func Start() (*Harness, error) {
	m := app.NewMain()
	m.Stdout, m.Stderr = io.Discard, io.Discard
	m.Now = func() time.Time { return Clock }
	if err := m.ParseFlags([]string{"serve", "--addr", "127.0.0.1:0", "--log-level", "error", "--sandbox", "--async-discovery"}); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	h := &Harness{Main: m, cancel: cancel, done: make(chan error, 1), sessions: map[string]*mcp.ClientSession{},
		bodies: map[string][][]byte{}, client: &http.Client{Timeout: 30 * time.Second}}
	go func() { h.done <- m.Run(ctx) }()
	select {
	case <-m.Ready:
	case err := <-h.done:
		cancel()
		return nil, fmt.Errorf("the storefront exited before serving: %v", err)
	case <-time.After(30 * time.Second):
		cancel()
		return nil, fmt.Errorf("the storefront did not start")
	}
	h.Base = m.Server.BaseURL()
	h.hooks = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		h.mu.Lock()
		h.bodies[r.URL.Path] = append(h.bodies[r.URL.Path], b)
		h.mu.Unlock()
		w.WriteHeader(http.StatusOK)
	}))
	h.Agent = dispatchAgent(m.Store)
	return h, nil
}

// dispatchAgent is an agent over s wired as the program wires its own,
// for calls through agent.Dispatch.
func dispatchAgent(s store.Store) *agent.Agent {
	log := slog.New(slog.DiscardHandler)
	now := func() time.Time { return Clock }
	snaps := store.NewSnapshots(s)
	svc := &products.Service{Snapshots: snaps, Ledger: store.Ledger{Store: s}, Accounts: access.Accounts{Store: s},
		Directives: store.Directives{Store: s}, Tasks: store.Tasks{Store: s}, Seeds: snaps, Now: now, Log: log}
	controller := &compliance.Controller{Store: s, Snaps: snaps, Log: log, Now: now}
	a := agent.New(s, svc, snaps, controller, log)
	a.EnableBuying(&buying.Service{Store: s, Snapshots: snaps, Accounts: access.Accounts{Store: s}, Ledger: store.Ledger{Store: s},
		Seeds: snaps, Directives: store.Directives{Store: s}, Now: now, Log: log})
	return a
}

// Close stops the program and the receiver.
func (h *Harness) Close() error {
	h.mu.Lock()
	for _, s := range h.sessions {
		_ = s.Close()
	}
	h.mu.Unlock()
	h.hooks.Close()
	h.cancel()
	select {
	case <-h.done:
	case <-time.After(15 * time.Second):
		return fmt.Errorf("the storefront did not stop")
	}
	return h.Main.Close()
}

// Load stores w's publisher, catalogue and rulebook directly, as data
// saved before a lint existed would be: the admin API would refuse most of
// the plants (see LintAgrees).
func (h *Harness) Load(ctx context.Context, w *World) error {
	s := h.Main.Store
	if err := s.PutPublisher(ctx, w.Publisher); err != nil {
		return err
	}
	for _, p := range w.Catalogue {
		if _, err := s.PutProduct(ctx, w.Publisher.ID, p, 0); err != nil {
			return err
		}
	}
	_, err := s.SaveRulebook(ctx, w.Publisher.ID, w.Rulebook, 0, "adversary", "generated world")
	return err
}

// Hook is a webhook URL on the receiver.
func (h *Harness) Hook(name string) string { return h.hooks.URL + "/" + name }

// Bodies waits up to wait for at least one body at the hook and returns
// those received.
func (h *Harness) Bodies(name string, wait time.Duration) [][]byte {
	waited := clock.Start()
	for {
		h.mu.Lock()
		b := h.bodies["/"+name]
		h.mu.Unlock()
		if len(b) > 0 || waited.Elapsed() >= wait {
			return b
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Answer is what one probe got back.
type Answer struct {
	// Payload is the AdCP object.
	Payload []byte
	// Visible is every byte the transport delivered to the buyer: the
	// MCP result with its text and _meta, the A2A JSON-RPC response with
	// its parts, the dispatch reply with its meta and summary.
	Visible []byte
}

// Call sends one tool call over tr to publisher as the holder of token
// ("" for anonymous).
func (h *Harness) Call(ctx context.Context, tr Transport, publisher, token, tool, args string) (Answer, error) {
	switch tr {
	case Dispatch:
		auth := ""
		if token != "" {
			auth = "Bearer " + token
		}
		r, err := h.Agent.Dispatch(ctx, tool, agent.Call{Publisher: publisher, Authorization: auth, Args: []byte(args), Transport: "dispatch"})
		if err != nil {
			return Answer{}, err
		}
		vis, _ := json.Marshal(map[string]any{"payload": json.RawMessage(r.Payload), "meta": agent.MetaOf(r), "summary": r.Summary})
		return Answer{r.Payload, vis}, nil
	case MCP:
		cs, err := h.session(ctx, publisher, token)
		if err != nil {
			return Answer{}, err
		}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: json.RawMessage(args)})
		if err != nil {
			return Answer{}, err
		}
		vis, _ := json.Marshal(res)
		var payload []byte
		if len(res.Content) > 0 {
			if t, ok := res.Content[0].(*mcp.TextContent); ok {
				payload = []byte(t.Text)
			}
		}
		return Answer{payload, vis}, nil
	case A2A:
		body := `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"messageId":"m1","role":"user","kind":"message","parts":[{"kind":"data","data":{"skill":` +
			quote(tool) + `,"parameters":` + args + `}}]}}}`
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, h.Base+"/p/"+publisher+"/a2a", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := h.client.Do(req)
		if err != nil {
			return Answer{}, err
		}
		defer resp.Body.Close()
		vis, _ := io.ReadAll(resp.Body)
		return Answer{a2aPayload(vis), vis}, nil
	}
	return Answer{}, fmt.Errorf("unknown transport %q", tr)
}

// a2aPayload is the AdCP object of an A2A answer: the first artifact's
// data part (or, for a refusal, the error's data).
func a2aPayload(b []byte) []byte {
	var m struct {
		Result struct {
			Artifacts []struct {
				Parts []struct {
					Data json.RawMessage `json:"data"`
				} `json:"parts"`
			} `json:"artifacts"`
		} `json:"result"`
		Error struct {
			Data json.RawMessage `json:"data"`
		} `json:"error"`
	}
	if json.Unmarshal(b, &m) != nil {
		return nil
	}
	for _, a := range m.Result.Artifacts {
		for _, p := range a.Parts {
			if len(p.Data) > 0 {
				return p.Data
			}
		}
	}
	return m.Error.Data
}

func (h *Harness) session(ctx context.Context, publisher, token string) (*mcp.ClientSession, error) {
	key := publisher + "\x00" + token
	h.mu.Lock()
	cs := h.sessions[key]
	h.mu.Unlock()
	if cs != nil {
		return cs, nil
	}
	tr := &mcp.StreamableClientTransport{Endpoint: h.Base + "/p/" + publisher + "/mcp", DisableStandaloneSSE: true, MaxRetries: -1}
	if token != "" {
		tr.HTTPClient = &http.Client{Transport: bearer{token}, Timeout: 30 * time.Second}
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "adversary", Version: "0"}, nil).Connect(ctx, tr, nil)
	if err != nil {
		return nil, err
	}
	h.mu.Lock()
	h.sessions[key] = cs
	h.mu.Unlock()
	return cs, nil
}

// Forget closes the MCP sessions opened for publisher.
func (h *Harness) Forget(publisher string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for k, s := range h.sessions {
		if strings.HasPrefix(k, publisher+"\x00") {
			_ = s.Close()
			delete(h.sessions, k)
		}
	}
}

type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
