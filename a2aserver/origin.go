package a2aserver

import (
	"net/http"
	"strings"
)

// origin is the scheme and host the card advertises, decided by
// configuration and never by what a client writes in its Host header
// alone: the public URL when one is set; else the request's Host when it
// is on the allow-list; else the address the storefront listens on. So a
// request with a forged Host cannot make the card (or a shared cache in
// front of it) send buyers to another origin.
func (s *Server) origin(r *http.Request) string {
	if s.cfg.PublicURL != "" {
		return strings.TrimRight(s.cfg.PublicURL, "/")
	}
	if allowedHost(s.cfg.AllowedHosts, r.Host) {
		scheme := "http"
		if r.TLS != nil {
			scheme = "https"
		}
		return scheme + "://" + strings.ToLower(r.Host)
	}
	if s.cfg.ListenOrigin != nil {
		return s.cfg.ListenOrigin()
	}
	return "http://localhost"
}

// allowedHost reports whether host (a Host header: a name or address,
// with an optional port) is one of allowed, compared without regard to
// case. An entry without a port matches only a Host without one.
func allowedHost(allowed []string, host string) bool {
	for _, a := range allowed {
		if strings.EqualFold(a, host) {
			return true
		}
	}
	return false
}

// cardHeaders sets the card's response headers.
//
// The card is public: it holds nothing per caller, is served without
// credentials, and exists to be discovered, by browser-based agents too.
// So any origin may read it (Access-Control-Allow-Origin: *, under which
// browsers never send credentials). What kept that from being safe was the
// card taking its origin from the Host header; it no longer does. When the
// allow-list lets the card differ by Host, Vary: Host keeps a shared cache
// from serving one host's card for another.
func cardHeaders(h http.Header, cfg Config) {
	h.Set("Access-Control-Allow-Origin", "*")
	if cfg.PublicURL == "" && len(cfg.AllowedHosts) > 0 {
		h.Add("Vary", "Host")
	}
}
