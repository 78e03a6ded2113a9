package a2aserver

import (
	"net/http"

	"github.com/storefront/storefront/internal/origin"
)

// origin is the scheme and host the card and challenges advertise, by the
// shared policy: never from a client's Host header alone.
func (s *Server) origin(r *http.Request) string { return s.policy().Of(r) }

func (s *Server) policy() origin.Policy {
	return origin.Policy{PublicURL: s.cfg.PublicURL, AllowedHosts: s.cfg.AllowedHosts, Listen: s.cfg.ListenOrigin}
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
	if (origin.Policy{PublicURL: cfg.PublicURL, AllowedHosts: cfg.AllowedHosts}).VariesByHost() {
		h.Add("Vary", "Host")
	}
}
