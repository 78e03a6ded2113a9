package webhook

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"syscall"
	"time"
)

// The guard: every connection the storefront opens to an address a buyer
// chose (a task's webhook, an order-desk notification, a governance agent)
// is made by a dialer whose Control hook holds the address actually
// dialled to the policy. It runs after the name is resolved, for each
// address tried, and again for every new connection, so a public name
// that resolves (or later re-resolves) to a private, loopback or
// metadata address is refused before a packet leaves. The URL check at
// registration (CheckURL) only says early and clearly what the guard
// would refuse anyway.

// nonPublic are the blocks of the IANA special-purpose address registries
// that are not the public internet: private, shared (CGNAT), loopback,
// link-local, unspecified, documentation, benchmarking, reserved,
// discard, unique-local, site-local and multicast space. IPv4-mapped IPv6
// addresses are judged as the IPv4 address they map, and NAT64 and 6to4
// addresses by the IPv4 address they carry (see public).
var nonPublic = prefixes(
	"0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12",
	"192.0.0.0/24", "192.0.2.0/24", "192.88.99.0/24", "192.168.0.0/16", "198.18.0.0/15",
	"198.51.100.0/24", "203.0.113.0/24", "224.0.0.0/4", "240.0.0.0/4",
	"::/8", "64:ff9b:1::/48", "100::/64", "2001::/23", "2001:db8::/32", "3fff::/20", "5f00::/16",
	"fc00::/7", "fe80::/10", "fec0::/10", "ff00::/8",
)

// Prefixes whose addresses carry an IPv4 address: NAT64's well-known
// prefix (RFC 6052) in the last 32 bits, 6to4 (RFC 3056) in bits 16-47.
var (
	nat64     = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour = netip.MustParsePrefix("2002::/16")
)

func prefixes(ps ...string) []netip.Prefix {
	out := make([]netip.Prefix, len(ps))
	for i, p := range ps {
		out[i] = netip.MustParsePrefix(p)
	}
	return out
}

// Public reports whether ip is an address on the public internet: none of
// the special-purpose blocks above, in any of its spellings.
func Public(ip net.IP) bool {
	a, ok := netip.AddrFromSlice(ip)
	return ok && public(a)
}

func public(a netip.Addr) bool {
	a = a.Unmap().WithZone("")
	switch {
	case !a.IsValid():
		return false
	case nat64.Contains(a):
		b := a.As16()
		return public(netip.AddrFrom4([4]byte(b[12:16])))
	case sixToFour.Contains(a):
		b := a.As16()
		return public(netip.AddrFrom4([4]byte(b[2:6])))
	}
	for _, p := range nonPublic {
		if p.Contains(a) {
			return false
		}
	}
	return true
}

// loopback reports an IPv4 or IPv6 loopback address, however spelt.
func loopback(a netip.Addr) bool { return a.Unmap().WithZone("").IsLoopback() }

// ErrRefusedAddress is wrapped by every connection the guard refuses.
var ErrRefusedAddress = errors.New("the storefront does not connect to this address")

// Control is the guard: the net.Dialer Control hook that refuses a
// connection to any address but a public one, or a loopback one when the
// policy allows loopback. address is the resolved ip:port being dialled.
func (p Policy) Control(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	switch {
	case err != nil:
		return fmt.Errorf("dialling %s: %w: not an address", address, ErrRefusedAddress)
	case network != "tcp4" && network != "tcp6":
		return fmt.Errorf("dialling %s over %s: %w", address, network, ErrRefusedAddress)
	case loopback(ap.Addr()) && p.AllowLoopback:
		return nil
	case !public(ap.Addr()):
		return fmt.Errorf("dialling %s: %w: it is not a public address", address, ErrRefusedAddress)
	}
	return nil
}

// Dialer returns a dialer whose every connection the guard vets, and
// which resolves names with the policy's Resolver.
func (p Policy) Dialer() *net.Dialer {
	return &net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second, Control: p.Control, Resolver: p.Resolver}
}

// Transport returns base (or, when nil, a transport like Go's default)
// dialling through the guard. It uses no proxy, since a proxy would dial
// on the storefront's behalf where the guard cannot see, and no custom
// TLS dialer, which would bypass it.
func (p Policy) Transport(base *http.Transport) *http.Transport {
	if base == nil {
		base = http.DefaultTransport.(*http.Transport)
	}
	t := base.Clone()
	t.Proxy = nil
	t.DialContext = p.Dialer().DialContext
	// Cleared, deprecated ones too, so that no dial bypasses the guard.
	t.DialTLSContext, t.DialTLS, t.Dial = nil, nil, nil
	return t
}

// Client returns an HTTP client over Transport(nil) that follows no
// redirect: a redirect could hand the call, and the credentials on it, to
// another host, so the redirect response is returned as the answer.
func (p Policy) Client(timeout time.Duration) *http.Client {
	return &http.Client{Transport: p.Transport(nil), Timeout: timeout, CheckRedirect: NoRedirects}
}

// NoRedirects is an http.Client CheckRedirect that follows none.
func NoRedirects(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
