package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sync"
	"time"
)

// Recorded is the storefront's answer to one request of the mix, byte for
// byte, as the ceiling replays it.
type Recorded struct {
	Request     string `json:"request"`
	ContentType string `json:"content_type"`
	Body        string `json:"body"`
}

// Record sends each request once to the storefront at url, checks the
// answer is the arm the mix expects, and keeps the bytes.
func Record(ctx context.Context, url string, reqs []Request) ([]Recorded, error) {
	hc := &http.Client{Timeout: 30 * time.Second}
	out := make([]Recorded, 0, len(reqs))
	for _, r := range reqs {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(r.Body))
		if err != nil {
			return nil, err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := hc.Do(req)
		if err != nil {
			return nil, fmt.Errorf("recording %q: %w", r.Name, err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("recording %q: %w", r.Name, err)
		}
		if resp.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("recording %q: HTTP %d: %s", r.Name, resp.StatusCode, truncate(body, 300))
		}
		arm, err := Check(body)
		if err != nil {
			return nil, fmt.Errorf("recording %q: %w", r.Name, err)
		}
		if arm != r.Arm {
			return nil, fmt.Errorf("recording %q: the storefront answered %s, the mix expects %s: %s", r.Name, arm, r.Arm, truncate(body, 400))
		}
		out = append(out, Recorded{Request: string(r.Body), ContentType: resp.Header.Get("Content-Type"), Body: string(body)})
	}
	return out, nil
}

// WriteRecorded saves recorded answers for the ceiling process.
func WriteRecorded(path string, rs []Recorded) error {
	b, err := json.Marshal(rs)
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o600)
}

// ReadRecorded loads answers saved by WriteRecorded.
func ReadRecorded(path string) ([]Recorded, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var rs []Recorded
	if err := json.Unmarshal(b, &rs); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(rs) == 0 {
		return nil, fmt.Errorf("%s holds no recorded answers", path)
	}
	return rs, nil
}

// Ceiling is the fastest honest answer: a bare net/http handler that
// reads the request body and writes back the storefront's recorded answer
// for exactly that body. No routing library, no JSON, no MCP.
type Ceiling struct {
	answers map[string]answer
	pool    sync.Pool
}

type answer struct {
	contentType string
	body        []byte
}

// NewCeiling builds the handler from recorded answers.
func NewCeiling(rs []Recorded) *Ceiling {
	c := &Ceiling{answers: make(map[string]answer, len(rs))}
	for _, r := range rs {
		c.answers[r.Request] = answer{contentType: r.ContentType, body: []byte(r.Body)}
	}
	c.pool.New = func() any { return new(bytes.Buffer) }
	return c
}

func (c *Ceiling) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "POST only", http.StatusMethodNotAllowed)
		return
	}
	buf := c.pool.Get().(*bytes.Buffer)
	buf.Reset()
	defer c.pool.Put(buf)
	if _, err := buf.ReadFrom(io.LimitReader(r.Body, 1<<20)); err != nil {
		http.Error(w, "cannot read the body", http.StatusBadRequest)
		return
	}
	a, ok := c.answers[string(buf.Bytes())]
	if !ok {
		http.Error(w, "no recorded answer for this body", http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", a.contentType)
	_, _ = w.Write(a.body)
}

// ServeCeiling serves the ceiling on addr until ctx ends, writing the bound
// URL to ready once it accepts connections.
func ServeCeiling(ctx context.Context, addr string, rs []Recorded, ready io.Writer) error {
	return serveUntil(ctx, addr, NewCeiling(rs), "ceiling", ready)
}

// serveUntil serves h on addr until ctx ends. Once it accepts connections
// it writes "<name> listening on <url>" to ready, the line the comparison
// waits for.
func serveUntil(ctx context.Context, addr string, h http.Handler, name string, ready io.Writer) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(ready, "%s listening on http://%s/mcp\n", name, ln.Addr())
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		err := srv.Shutdown(shut)
		if e := <-errc; !errors.Is(e, http.ErrServerClosed) {
			return e
		}
		return err
	}
}
