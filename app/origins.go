package app

import (
	"fmt"
	"net"
	"regexp"
	"strings"
)

// hostPattern is a Host header value: a lower-case DNS name or IPv4
// address, or a bracketed IPv6 address, with an optional port.
var hostPattern = regexp.MustCompile(`^(\[[0-9a-f:.]+\]|[a-z0-9]([a-z0-9.-]*[a-z0-9])?)(:[0-9]{1,5})?$`)

// setAllowedHosts reads --allowed-hosts: a comma-separated list that
// replaces any earlier one (the flag after the environment).
func (m *Main) setAllowedHosts(v string) error {
	var hosts []string
	for _, h := range strings.Split(v, ",") {
		h = strings.ToLower(strings.TrimSpace(h))
		if h == "" {
			continue
		}
		if !hostPattern.MatchString(h) {
			return fmt.Errorf("%q is not a host name or address with an optional port, such as seller.example:8080", h)
		}
		hosts = append(hosts, h)
	}
	m.AllowedHosts = hosts
	return nil
}

// warnCardOrigin says, at start, when agent cards will advertise the
// listening address to clients that probably cannot use it: the
// storefront listens beyond loopback and neither --public-url nor
// --allowed-hosts says what its clients call it.
func (m *Main) warnCardOrigin(listen, origin string) {
	if m.PublicURL != "" || len(m.AllowedHosts) > 0 {
		return
	}
	host, _, err := net.SplitHostPort(listen)
	if err != nil {
		return
	}
	if ip := net.ParseIP(host); host == "localhost" || (ip != nil && ip.IsLoopback()) {
		return
	}
	m.log.Warn("agent cards advertise the listening address, never a request's Host header: set --public-url (or --allowed-hosts) to the address buyers use",
		"card_origin", origin)
}
