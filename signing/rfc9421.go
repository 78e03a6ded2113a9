package signing

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// components are the covered components the profile requires, in the
// order they are signed.
var components = []string{"@method", "@target-uri", "@authority", "content-type", "content-digest"}

// Params are one signature's parameters.
type Params struct {
	KeyID string
	// Nonce is at least 16 random bytes, base64url without padding.
	Nonce            string
	Created, Expires time.Time
}

// NewNonce returns 16 random bytes, base64url without padding: the
// profile's minimum entropy, fresh for every request, so a verifier's
// (keyid, nonce) replay cache catches a replayed request.
func NewNonce() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// SignRequest sets the Content-Digest, Signature-Input and Signature
// headers of req, whose body is body, under the profile. req must already
// carry its Content-Type.
func SignRequest(req *http.Request, body []byte, key ed25519.PrivateKey, p Params) error {
	if req.Header.Get("Content-Type") == "" {
		return errors.New("signing: the request has no Content-Type to cover")
	}
	if err := p.check(); err != nil {
		return err
	}
	req.Header.Set("Content-Digest", ContentDigest(body))
	base, sigParams, err := SignatureBase(req, p)
	if err != nil {
		return err
	}
	sig := ed25519.Sign(key, []byte(base))
	req.Header.Set("Signature-Input", "sig1="+sigParams)
	// The webhook profile keeps base64url without padding for binary
	// values throughout AdCP 3.x.
	req.Header.Set("Signature", "sig1=:"+base64.RawURLEncoding.EncodeToString(sig)+":")
	return nil
}

func (p Params) check() error {
	switch {
	case !sfString(p.KeyID) || p.KeyID == "":
		return errors.New("signing: the key id is not a structured-field string")
	case !sfString(p.Nonce):
		return errors.New("signing: the nonce is not a structured-field string")
	case !p.Expires.After(p.Created) || p.Expires.Sub(p.Created) > Window:
		return fmt.Errorf("signing: the signature window must be positive and at most %s", Window)
	}
	if n, err := base64.RawURLEncoding.DecodeString(p.Nonce); err != nil || len(n) < 16 {
		return errors.New("signing: the nonce must be at least 16 bytes, base64url without padding")
	}
	return nil
}

// sfString reports whether s can be written as an RFC 8941 string without
// escapes.
func sfString(s string) bool {
	for _, r := range s {
		if r < 0x20 || r > 0x7e || r == '"' || r == '\\' {
			return false
		}
	}
	return true
}

// ContentDigest is the RFC 9530 Content-Digest of body: SHA-256, padded
// base64 in a byte sequence.
func ContentDigest(body []byte) string {
	sum := sha256.Sum256(body)
	return "sha-256=:" + base64.StdEncoding.EncodeToString(sum[:]) + ":"
}

// SignatureBase returns the RFC 9421 signature base of req for p, and the
// signature parameters as Signature-Input carries them. req must carry its
// Content-Type and Content-Digest headers.
func SignatureBase(req *http.Request, p Params) (base, sigParams string, err error) {
	target, authority, err := CanonicalTarget(req.URL)
	if err != nil {
		return "", "", err
	}
	values := map[string]string{
		"@method":        strings.ToUpper(req.Method),
		"@target-uri":    target,
		"@authority":     authority,
		"content-type":   strings.TrimSpace(req.Header.Get("Content-Type")),
		"content-digest": strings.TrimSpace(req.Header.Get("Content-Digest")),
	}
	var b strings.Builder
	quoted := make([]string, len(components))
	for i, c := range components {
		if values[c] == "" {
			return "", "", fmt.Errorf("signing: covered component %s is empty", c)
		}
		quoted[i] = strconv.Quote(c)
		fmt.Fprintf(&b, "%q: %s\n", c, values[c])
	}
	sigParams = fmt.Sprintf(`(%s);created=%d;expires=%d;nonce="%s";keyid="%s";alg="%s";tag="%s"`,
		strings.Join(quoted, " "), p.Created.Unix(), p.Expires.Unix(), p.Nonce, p.KeyID, Algorithm, Tag)
	b.WriteString(`"@signature-params": ` + sigParams)
	return b.String(), sigParams, nil
}

// CanonicalTarget returns the profile's canonical @target-uri and
// @authority of u: scheme and host lowercased, the default port dropped,
// no user information or fragment, percent-encodings of unreserved
// characters decoded and the others' hex digits uppercased, the path and
// query otherwise as sent.
func CanonicalTarget(u *url.URL) (target, authority string, err error) {
	scheme := strings.ToLower(u.Scheme)
	switch {
	case scheme != "https" && scheme != "http":
		return "", "", fmt.Errorf("signing: %q is not an http(s) URL", u.Redacted())
	case u.User != nil:
		return "", "", errors.New("signing: the webhook URL carries user information")
	case u.Host == "":
		return "", "", errors.New("signing: the webhook URL has no host")
	}
	for _, r := range u.Host {
		if r > 0x7e {
			return "", "", errors.New("signing: the webhook URL's host is not ASCII (use its A-label form)")
		}
	}
	host := strings.ToLower(u.Hostname())
	host = strings.TrimSuffix(host, ".")
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port := u.Port(); port != "" && !(scheme == "https" && port == "443") && !(scheme == "http" && port == "80") {
		host += ":" + port
	}
	path := u.EscapedPath()
	if path == "" {
		path = "/"
	}
	target = scheme + "://" + host + path
	if u.RawQuery != "" {
		target += "?" + u.RawQuery
	}
	return normalisePercents(target), host, nil
}

// normalisePercents decodes percent-encoded unreserved characters (RFC
// 3986 section 6.2.2.2) and uppercases the hex digits of the rest.
func normalisePercents(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			v, _ := strconv.ParseUint(s[i+1:i+3], 16, 8)
			if c := byte(v); isUnreserved(c) {
				b.WriteByte(c)
			} else {
				b.WriteString("%" + strings.ToUpper(s[i+1:i+3]))
			}
			i += 2
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func isUnreserved(c byte) bool {
	return 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~'
}
