// Package fakedns is a DNS server for tests that answers with the
// addresses a test chooses, and a net.Resolver that asks it: a public
// name can then resolve to a loopback, private or link-local address, as
// an attacker's DNS would make it, without touching the machine's
// resolver. The real Go resolver and dialer do the rest, so what a test
// sees is what production does with such an answer.
package fakedns

import (
	"context"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"

	"golang.org/x/net/dns/dnsmessage"
)

// Server answers A and AAAA questions from its table; any other name is
// NXDOMAIN.
type Server struct {
	conn net.PacketConn
	mu   sync.Mutex
	// names maps a lower-case name, without the final dot, to its
	// addresses.
	names map[string][]netip.Addr
}

// New starts a server on a loopback UDP port, stopped when t ends.
func New(t testing.TB) *Server {
	t.Helper()
	conn, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{conn: conn, names: map[string][]netip.Addr{}}
	t.Cleanup(func() { conn.Close() })
	go s.serve()
	return s
}

// Set makes name resolve to addrs (IPv4 answers A questions, IPv6 AAAA).
func (s *Server) Set(name string, addrs ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := strings.TrimSuffix(strings.ToLower(name), ".")
	s.names[key] = nil
	for _, a := range addrs {
		s.names[key] = append(s.names[key], netip.MustParseAddr(a))
	}
}

// Resolver is a pure-Go resolver that sends every question to s.
func (s *Server) Resolver() *net.Resolver {
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "udp", s.conn.LocalAddr().String())
	}}
}

func (s *Server) serve() {
	buf := make([]byte, 1500)
	for {
		n, from, err := s.conn.ReadFrom(buf)
		if err != nil {
			return
		}
		if out, err := s.answer(buf[:n]); err == nil {
			_, _ = s.conn.WriteTo(out, from)
		}
	}
}

func (s *Server) answer(query []byte) ([]byte, error) {
	var p dnsmessage.Parser
	h, err := p.Start(query)
	if err != nil {
		return nil, err
	}
	q, err := p.Question()
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	addrs, known := s.names[strings.TrimSuffix(strings.ToLower(q.Name.String()), ".")]
	s.mu.Unlock()
	rcode := dnsmessage.RCodeSuccess
	if !known {
		rcode = dnsmessage.RCodeNameError
	}
	b := dnsmessage.NewBuilder(nil, dnsmessage.Header{ID: h.ID, Response: true, Authoritative: true, RecursionDesired: h.RecursionDesired, RCode: rcode})
	b.EnableCompression()
	if err := b.StartQuestions(); err != nil {
		return nil, err
	}
	if err := b.Question(q); err != nil {
		return nil, err
	}
	if err := b.StartAnswers(); err != nil {
		return nil, err
	}
	rh := dnsmessage.ResourceHeader{Name: q.Name, Class: dnsmessage.ClassINET, TTL: 1}
	for _, a := range addrs {
		switch {
		case q.Type == dnsmessage.TypeA && a.Is4():
			rh.Type = dnsmessage.TypeA
			err = b.AResource(rh, dnsmessage.AResource{A: a.As4()})
		case q.Type == dnsmessage.TypeAAAA && !a.Is4():
			rh.Type = dnsmessage.TypeAAAA
			err = b.AAAAResource(rh, dnsmessage.AAAAResource{AAAA: a.As16()})
		}
		if err != nil {
			return nil, err
		}
	}
	return b.Finish()
}
