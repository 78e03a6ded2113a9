package webhook_test

import (
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/storefront/storefront/internal/fakedns"
	"github.com/storefront/storefront/store"
	"github.com/storefront/storefront/webhook"
)

// TestPublic: which addresses are the public internet, in every spelling
// an address can take.
func TestPublic(t *testing.T) {
	for _, test := range []struct {
		addr   string
		public bool
	}{
		{"93.184.215.14", true},
		{"8.8.8.8", true},
		{"2606:2800:21f:cb07:6820:80da:af6b:8b2c", true},
		{"::ffff:93.184.215.14", true},
		{"64:ff9b::5db8:d70e", true}, // NAT64 of 93.184.215.14
		{"2002:5db8:d70e::1", true},  // 6to4 of 93.184.215.14

		{"127.0.0.1", false},
		{"127.255.0.9", false},
		{"::1", false},
		{"::ffff:127.0.0.1", false},
		{"10.0.0.1", false},
		{"172.16.0.1", false},
		{"172.31.255.254", false},
		{"192.168.1.1", false},
		{"169.254.169.254", false},
		{"100.64.0.1", false},      // CGNAT
		{"100.127.255.254", false}, // CGNAT
		{"0.0.0.0", false},
		{"0.1.2.3", false},
		{"::", false},
		{"224.0.0.1", false},
		{"239.255.255.250", false},
		{"255.255.255.255", false},
		{"240.0.0.1", false},
		{"192.0.0.8", false},
		{"192.0.2.1", false},
		{"198.18.0.1", false},
		{"198.51.100.7", false},
		{"203.0.113.9", false},
		{"fe80::1", false},
		{"fe80::1%eth0", false},
		{"fc00::1", false},
		{"fd12:3456::1", false},
		{"fec0::1", false},
		{"ff02::1", false},
		{"2001:db8::1", false},
		{"2001::1", false}, // Teredo
		{"100::1", false},
		{"::ffff:10.0.0.1", false},
		{"::ffff:169.254.169.254", false},
		{"::10.0.0.1", false},        // IPv4-compatible
		{"64:ff9b::a00:1", false},    // NAT64 of 10.0.0.1
		{"64:ff9b::7f00:1", false},   // NAT64 of 127.0.0.1
		{"64:ff9b:1::a00:1", false},  // local-use NAT64
		{"2002:a00:1::1", false},     // 6to4 of 10.0.0.1
		{"2002:a9fe:a9fe::1", false}, // 6to4 of 169.254.169.254
	} {
		ip := net.ParseIP(strings.Split(test.addr, "%")[0])
		if ip == nil {
			t.Fatalf("test address %q does not parse", test.addr)
		}
		if got := webhook.Public(ip); got != test.public {
			t.Errorf("Public(%s) = %v, want %v", test.addr, got, test.public)
		}
		p := webhook.Policy{}
		err := p.Control("tcp6", net.JoinHostPort(test.addr, "443"), nil)
		if (err == nil) != test.public || (err != nil && !errors.Is(err, webhook.ErrRefusedAddress)) {
			t.Errorf("Control(%s) = %v, want allowed %v", test.addr, err, test.public)
		}
	}
	// Sandbox mode admits loopback, however spelt, and nothing else more.
	sandbox := webhook.Policy{AllowLoopback: true}
	for addr, want := range map[string]bool{"127.0.0.1": true, "127.9.9.9": true, "::1": true, "::ffff:127.0.0.1": true,
		"10.0.0.1": false, "169.254.169.254": false, "0.0.0.0": false, "64:ff9b::7f00:1": false} {
		if err := sandbox.Control("tcp4", net.JoinHostPort(addr, "80"), nil); (err == nil) != want {
			t.Errorf("sandbox Control(%s) = %v, want allowed %v", addr, err, want)
		}
	}
	if err := (webhook.Policy{}).Control("udp4", "93.184.215.14:53", nil); err == nil {
		t.Error("Control(udp) = nil, want refused: the storefront calls buyers over TCP only")
	}
}

// TestGuardAtDialTime: a webhook URL with a public name passes the URL
// check, but when its name resolves to a loopback, private, link-local or
// other non-public address the delivery is refused at dial time, before a
// connection is made, and recorded as refused. The resolver is a DNS
// server the test controls; the Go resolver and dialer are the real ones.
func TestGuardAtDialTime(t *testing.T) {
	dns := fakedns.New(t)
	s := newStore(t)
	var reached atomic.Int32
	r := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { reached.Add(1) }))
	t.Cleanup(r.Close)
	// The test receiver's certificate names example.com, a public name
	// the URL check admits; the test's DNS says where it is.
	const name = "example.com"
	hook := "https://" + net.JoinHostPort(name, strconv.Itoa(r.Listener.Addr().(*net.TCPAddr).Port)) + "/adcp"
	production := webhook.Policy{Resolver: dns.Resolver()}
	if err := production.Check(hook); err != nil {
		t.Fatalf("the URL check refuses %s (%v): the test needs a name it admits", hook, err)
	}
	for _, addr := range []string{"127.0.0.1", "10.20.30.40", "169.254.169.254", "::1", "::ffff:127.0.0.1", "100.64.1.1", "fd00::1", "0.0.0.0", "64:ff9b::7f00:1"} {
		t.Run(addr, func(t *testing.T) {
			dns.Set(name, addr)
			d := deliver(t, s, sender(s, production), finished(t, s, &store.Webhook{URL: hook, OperationID: "op-guard"}, "completed", []byte(completedResult)))
			if d.DeliveredAt != nil || d.Attempts != 1 || !strings.Contains(d.LastError, webhook.ErrRefusedAddress.Error()) {
				t.Errorf("delivery to %s resolving to %s = %+v, want one attempt, refused by the guard", name, addr, d)
			}
		})
	}
	if n := reached.Load(); n != 0 {
		t.Fatalf("the receiver behind a refused address was reached %d times", n)
	}

	// The control: in sandbox mode the same name resolving to loopback is
	// delivered, so it is the guard that refused, not the resolver or the
	// receiver; and sandbox mode still refuses a private address.
	sandbox := webhook.Policy{AllowLoopback: true, Resolver: dns.Resolver()}
	w := sender(s, sandbox)
	w.Client = trusting(sandbox, r)
	dns.Set(name, "127.0.0.1")
	if d := deliver(t, s, w, finished(t, s, &store.Webhook{URL: hook, OperationID: "op-guard"}, "completed", []byte(completedResult))); d.DeliveredAt == nil || reached.Load() != 1 {
		t.Errorf("sandbox delivery to %s resolving to 127.0.0.1 = %+v, want delivered", name, d)
	}
	// A kept-alive connection goes on to the address it was dialled to,
	// which the guard admitted; a name that now resolves elsewhere is
	// dialled afresh, and vetted.
	w.Client.CloseIdleConnections()
	dns.Set(name, "10.20.30.40")
	if d := deliver(t, s, w, finished(t, s, &store.Webhook{URL: hook, OperationID: "op-guard"}, "completed", []byte(completedResult))); d.DeliveredAt != nil || !strings.Contains(d.LastError, webhook.ErrRefusedAddress.Error()) {
		t.Errorf("sandbox delivery to %s resolving to 10.20.30.40 = %+v, want refused: sandbox admits loopback only", name, d)
	}
}

// TestNoRedirects: a receiver that redirects is not followed, so a public
// receiver cannot hand the notification (and its credentials) on to
// another address; the redirect is a refusal, not retried.
func TestNoRedirects(t *testing.T) {
	s := newStore(t)
	target := newReceiver(t)
	redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		http.Redirect(w, req, target.URL+"/stolen", http.StatusTemporaryRedirect)
	}))
	t.Cleanup(redirector.Close)
	w := sender(s, webhook.Policy{AllowLoopback: true})
	d := deliver(t, s, w, finished(t, s, &store.Webhook{URL: redirector.URL + "/hook", OperationID: "op-redirect", Scheme: "Bearer", Credentials: "buyer-secret-0123456789abcdef0123"}, "completed", []byte(completedResult)))
	if n := len(target.deliveries()); n != 0 {
		t.Errorf("the redirect target received %d deliveries, want none", n)
	}
	if d.DeliveredAt != nil || d.Attempts != 1 || !strings.Contains(d.LastError, "redirect") {
		t.Errorf("delivery to a redirecting receiver = %+v, want one attempt refused as a redirect", d)
	}
}

// trusting is the policy's guarded client, trusting the TLS test
// receiver's certificate.
func trusting(p webhook.Policy, r *httptest.Server) *http.Client {
	c := p.Client(10 * time.Second)
	c.Transport = p.Transport(r.Client().Transport.(*http.Transport))
	return c
}
