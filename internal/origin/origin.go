// Package origin says which scheme and host the storefront's public URLs
// name: agent cards, authentication challenges and brand.json all build
// their URLs from it, so they agree with each other.
package origin

import (
	"net/http"
	"strings"
)

// Policy decides the origin from configuration, never from what a client
// writes in its Host header alone: the public URL when one is set; else
// the request's Host when it is on the allow-list; else the address the
// storefront listens on. So a request with a forged Host cannot make a
// card, a challenge or brand.json (or a shared cache in front of them)
// send buyers to another origin.
type Policy struct {
	// PublicURL is the externally visible base URL, when one is set (a
	// storefront behind a TLS-terminating proxy).
	PublicURL string
	// AllowedHosts are Host values (with an optional port) that may name
	// the origin when PublicURL is unset, compared without regard to case.
	AllowedHosts []string
	// Listen returns the listening address's origin; nil means
	// http://localhost.
	Listen func() string
}

// Of is the origin public URLs name for a request.
func (p Policy) Of(r *http.Request) string {
	if p.PublicURL != "" {
		return strings.TrimRight(p.PublicURL, "/")
	}
	if Allowed(p.AllowedHosts, r.Host) {
		scheme := "http"
		if r.TLS != nil {
			scheme = "https"
		}
		return scheme + "://" + strings.ToLower(r.Host)
	}
	if p.Listen != nil {
		return p.Listen()
	}
	return "http://localhost"
}

// VariesByHost reports whether the origin can differ from one Host header
// to another, so a shared cache must key on Host.
func (p Policy) VariesByHost() bool { return p.PublicURL == "" && len(p.AllowedHosts) > 0 }

// Allowed reports whether host (a Host header: a name or address, with an
// optional port) is one of allowed, compared without regard to case. An
// entry without a port matches only a Host without one.
func Allowed(allowed []string, host string) bool {
	for _, a := range allowed {
		if strings.EqualFold(a, host) {
			return true
		}
	}
	return false
}
