package pgtest

import (
	"io"
	"net"
	"net/url"
	"sync"
	"testing"
)

// Proxy is a TCP proxy in front of the test server that a test can cut and
// restore: the database is lost in the middle of serving, and comes back,
// while the shared server itself keeps running for everyone else.
type Proxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	up     bool
	conns  []net.Conn
}

// NewProxy starts a proxy to the server databaseURL names and returns it
// with the URL of the same database reached through it. The proxy stops
// when t ends.
func NewProxy(t testing.TB, databaseURL string) (*Proxy, string) {
	t.Helper()
	via, err := url.Parse(databaseURL)
	if err != nil || via.Host == "" {
		t.Fatalf("the database URL %q names no host", databaseURL)
	}
	target := via.Host
	if via.Port() == "" {
		target += ":5432"
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{ln: ln, target: target, up: true}
	t.Cleanup(func() { ln.Close(); p.Cut() })
	go p.serve()
	via.Host = ln.Addr().String()
	return p, via.String()
}

func (p *Proxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		if !p.up {
			p.mu.Unlock()
			c.Close()
			continue
		}
		u, err := net.Dial("tcp", p.target)
		if err != nil {
			p.mu.Unlock()
			c.Close()
			continue
		}
		p.conns = append(p.conns, c, u)
		p.mu.Unlock()
		go func() { _, _ = io.Copy(u, c); u.Close() }()
		go func() { _, _ = io.Copy(c, u); c.Close() }()
	}
}

// Cut closes every connection through the proxy and refuses new ones.
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.up = false
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

// Restore accepts connections again.
func (p *Proxy) Restore() {
	p.mu.Lock()
	p.up = true
	p.mu.Unlock()
}
