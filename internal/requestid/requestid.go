// Package requestid names each HTTP request the storefront serves, so that
// what the logs say about a request (a recovered panic above all) can be
// found from what its caller saw: the id is echoed in the response's
// X-Request-Id header. It carries no data of the request.
package requestid

import (
	"context"
	"crypto/rand"
	"encoding/hex"
)

// Header is the request and response header that carries the id.
const Header = "X-Request-Id"

// maxLen bounds an id taken from a request.
const maxLen = 64

type key struct{}

// With returns ctx carrying id.
func With(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, key{}, id)
}

// From is the id ctx carries, or "".
func From(ctx context.Context) string {
	id, _ := ctx.Value(key{}).(string)
	return id
}

// New is a fresh random id.
func New() string {
	var b [12]byte
	_, _ = rand.Read(b[:]) // crypto/rand does not fail on supported platforms
	return hex.EncodeToString(b[:])
}

// Of is the id for a request that sent header value h: h itself when it is
// an id a proxy in front could have set (1 to 64 letters, digits, '.', '_'
// or '-'), so both logs name the request alike; a fresh one otherwise, so
// that nothing a caller sends reaches the logs unchecked.
func Of(h string) string {
	if len(h) == 0 || len(h) > maxLen {
		return New()
	}
	for i := 0; i < len(h); i++ {
		c := h[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return New()
		}
	}
	return h
}
