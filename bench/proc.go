package bench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// proc is a child process the comparison runs: a storefront, the ceiling
// or the peer.
type proc struct {
	name string
	cmd  *exec.Cmd
	out  *tail
	done chan struct{}
	err  error
}

// tail keeps the last lines a child wrote, for error messages, and
// watches for the line that says it is listening.
type tail struct {
	mu    sync.Mutex
	lines []string
	ready chan string
	mark  string
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, l := range strings.Split(strings.TrimRight(string(p), "\n"), "\n") {
		t.lines = append(t.lines, l)
		if len(t.lines) > 40 {
			t.lines = t.lines[1:]
		}
		if t.mark != "" && strings.Contains(l, t.mark) && t.ready != nil {
			f := strings.Fields(l)
			t.ready <- f[len(f)-1]
			t.ready = nil
		}
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.Join(t.lines, "\n")
}

// start runs a child. When mark is set, it waits for a line containing
// it and returns that line's last word (the child's URL).
func start(ctx context.Context, name, mark string, env []string, bin string, args ...string) (*proc, string, error) {
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	ready := make(chan string, 1)
	t := &tail{mark: mark, ready: ready}
	cmd.Stdout, cmd.Stderr = t, t
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, "", fmt.Errorf("starting %s: %w", name, err)
	}
	p := &proc{name: name, cmd: cmd, out: t, done: make(chan struct{})}
	go func() { p.err = cmd.Wait(); close(p.done) }()
	if mark == "" {
		return p, "", nil
	}
	select {
	case url := <-ready:
		return p, url, nil
	case <-p.done:
		return nil, "", fmt.Errorf("%s exited before it was ready (%v):\n%s", name, p.err, t)
	case <-time.After(10 * time.Minute):
		p.stop()
		return nil, "", fmt.Errorf("%s was not ready after 10 minutes:\n%s", name, t)
	case <-ctx.Done():
		p.stop()
		return nil, "", ctx.Err()
	}
}

// stop interrupts the child and its process group, then kills it if it
// lingers.
func (p *proc) stop() {
	if p == nil {
		return
	}
	select {
	case <-p.done:
		return
	default:
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGINT)
	select {
	case <-p.done:
	case <-time.After(15 * time.Second):
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
	}
}

// freeAddr finds a free loopback port.
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// waitHealthy polls a storefront's /healthz until it answers 200.
func waitHealthy(ctx context.Context, p *proc, base string) error {
	deadline := time.Now().Add(10 * time.Minute)
	for time.Now().Before(deadline) {
		select {
		case <-p.done:
			return fmt.Errorf("%s exited (%v):\n%s", p.name, p.err, p.out)
		case <-ctx.Done():
			return ctx.Err()
		default:
		}
		hc := http.Client{Timeout: 2 * time.Second}
		resp, err := hc.Get(base + "/healthz")
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("%s was not healthy after 10 minutes:\n%s", p.name, p.out)
}

// post sends a body to url and returns the answer.
func post(ctx context.Context, url string, body []byte) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		return nil, fmt.Errorf("HTTP %d: %s", resp.StatusCode, truncate(b, 300))
	}
	return b, nil
}
