package signing_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/storefront/storefront/internal/spectest"
	"github.com/storefront/storefront/products"
	"github.com/storefront/storefront/signing"
	"github.com/storefront/storefront/store/memstore"
)

type vector struct {
	Name    string `json:"name"`
	Request struct {
		Method  string            `json:"method"`
		URL     string            `json:"url"`
		Headers map[string]string `json:"headers"`
		Body    string            `json:"body"`
	} `json:"request"`
	JWKSRef      []string `json:"jwks_ref"`
	ExpectedBase string   `json:"expected_signature_base"`
}

var sigParamsRE = regexp.MustCompile(`^sig1=\(.*?\);created=(\d+);expires=(\d+);nonce="([^"]+)";keyid="([^"]+)";alg="([^"]+)";tag="([^"]+)"`)

// TestConformanceVectors signs each Ed25519 request of AdCP's positive
// webhook-signing vectors with the vector's published test key and
// parameters: Ed25519 is deterministic, so the signature base, the
// Content-Digest and the signature must come out byte for byte as the
// vector has them. (The storefront signs only with Ed25519, so the ES256
// vector is not ours to reproduce.)
func TestConformanceVectors(t *testing.T) {
	dir := filepath.Join(spectest.Dir(t), "compliance", "test-vectors", "webhook-signing")
	var keys struct {
		Keys []struct {
			Kid  string `json:"kid"`
			Crv  string `json:"crv"`
			X    string `json:"x"`
			Priv string `json:"_private_d_for_test_only"`
		} `json:"keys"`
	}
	readJSON(t, filepath.Join(dir, "keys.json"), &keys)
	files, err := filepath.Glob(filepath.Join(dir, "positive", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no positive vectors under %s (%v); they come from the AdCP spec folder", dir, err)
	}
	signed := 0
	for _, f := range files {
		var v vector
		readJSON(t, f, &v)
		t.Run(filepath.Base(f), func(t *testing.T) {
			var priv ed25519.PrivateKey
			for _, k := range keys.Keys {
				if k.Kid == v.JWKSRef[0] && k.Crv == "Ed25519" {
					seed, err := base64.RawURLEncoding.DecodeString(k.Priv)
					if err != nil {
						t.Fatal(err)
					}
					priv = ed25519.NewKeyFromSeed(seed)
					if x, _ := base64.RawURLEncoding.DecodeString(k.X); !bytes.Equal(priv.Public().(ed25519.PublicKey), x) {
						t.Fatalf("keys.json %s: the private key does not match x", k.Kid)
					}
				}
			}
			if priv == nil {
				t.Skipf("%s is signed with %s, not an Ed25519 key", v.Name, v.JWKSRef[0])
			}
			m := sigParamsRE.FindStringSubmatch(v.Request.Headers["Signature-Input"])
			if m == nil || m[5] != signing.Algorithm || m[6] != signing.Tag {
				t.Fatalf("Signature-Input %q is not an ed25519 %s signature", v.Request.Headers["Signature-Input"], signing.Tag)
			}
			created, _ := strconv.ParseInt(m[1], 10, 64)
			expires, _ := strconv.ParseInt(m[2], 10, 64)
			p := signing.Params{Created: time.Unix(created, 0), Expires: time.Unix(expires, 0), Nonce: m[3], KeyID: m[4]}

			req, err := http.NewRequest(v.Request.Method, v.Request.URL, strings.NewReader(v.Request.Body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", v.Request.Headers["Content-Type"])
			if err := signing.SignRequest(req, []byte(v.Request.Body), priv, p); err != nil {
				t.Fatalf("SignRequest = %v", err)
			}
			if got, want := req.Header.Get("Content-Digest"), v.Request.Headers["Content-Digest"]; got != want {
				t.Errorf("Content-Digest = %s, want %s", got, want)
			}
			base, _, err := signing.SignatureBase(req, p)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(v.ExpectedBase, base); diff != "" {
				t.Errorf("signature base (-vector +ours):\n%s", diff)
			}
			wantSig := strings.SplitN(v.Request.Headers["Signature"], ",", 2)[0]
			if got := req.Header.Get("Signature"); got != wantSig {
				t.Errorf("Signature = %s, want %s", got, wantSig)
			}
			if got, want := req.Header.Get("Signature-Input"), strings.SplitN(v.Request.Headers["Signature-Input"], ", relay=", 2)[0]; got != want {
				t.Errorf("Signature-Input = %s, want %s", got, want)
			}
			signed++
		})
	}
	if signed < 6 {
		t.Errorf("reproduced %d vectors, want at least the 6 Ed25519 ones", signed)
	}
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (the webhook-signing vectors come from the AdCP spec folder)", err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func TestCanonicalTarget(t *testing.T) {
	for _, test := range []struct {
		in, target, authority string
		wantErr               bool
	}{
		{"https://Buyer.Example/hooks/adcp", "https://buyer.example/hooks/adcp", "buyer.example", false},
		{"HTTPS://buyer.example:443/hooks", "https://buyer.example/hooks", "buyer.example", false},
		{"http://127.0.0.1:80/hook", "http://127.0.0.1/hook", "127.0.0.1", false},
		{"http://127.0.0.1:9000/step/a/op_1", "http://127.0.0.1:9000/step/a/op_1", "127.0.0.1:9000", false},
		{"https://[::1]:8443/hook", "https://[::1]:8443/hook", "[::1]:8443", false},
		{"https://buyer.example", "https://buyer.example/", "buyer.example", false},
		{"https://buyer.example./hook", "https://buyer.example/hook", "buyer.example", false},
		{"https://buyer.example/a%7eb/%e2%98%83?x=%2a&b=2&a=1", "https://buyer.example/a~b/%E2%98%83?x=%2A&b=2&a=1", "buyer.example", false},
		{"https://buyer.example/hook#frag", "https://buyer.example/hook", "buyer.example", false},
		{"https://user:pw@buyer.example/hook", "", "", true},
		{"ftp://buyer.example/hook", "", "", true},
	} {
		u, err := url.Parse(test.in)
		if err != nil {
			t.Fatal(err)
		}
		target, authority, err := signing.CanonicalTarget(u)
		if (err != nil) != test.wantErr || target != test.target || authority != test.authority {
			t.Errorf("CanonicalTarget(%q) = %q, %q, %v, want %q, %q, error %v", test.in, target, authority, err, test.target, test.authority, test.wantErr)
		}
	}
}

// clock is a settable clock for the key tests.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func newKeys(t *testing.T) (*signing.Keys, *clock) {
	t.Helper()
	s := memstore.New()
	for _, id := range []string{"alpha", "beta"} {
		if err := s.PutPublisher(context.Background(), products.Publisher{ID: id, Name: id, Domain: id + ".example"}); err != nil {
			t.Fatal(err)
		}
	}
	c := &clock{t: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)}
	return &signing.Keys{Store: s, Now: c.now}, c
}

// TestSign signs a webhook with a publisher's key and checks what a
// verifier checks: the profile's parameters, a fresh nonce each time, the
// digest of the body, and an Ed25519 signature over the base that the
// published key verifies.
func TestSign(t *testing.T) {
	ctx := context.Background()
	keys, c := newKeys(t)
	body := []byte(`{"idempotency_key":"whk_0123456789abcdef","status":"completed"}`)
	nonces := map[string]bool{}
	for range 3 {
		req, _ := http.NewRequest(http.MethodPost, "https://buyer.example/hooks/adcp?op=1", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if err := keys.Sign(ctx, "alpha", req, body); err != nil {
			t.Fatalf("Sign = %v", err)
		}
		m := sigParamsRE.FindStringSubmatch(req.Header.Get("Signature-Input"))
		if m == nil || !strings.HasPrefix(req.Header.Get("Signature-Input"), `sig1=("@method" "@target-uri" "@authority" "content-type" "content-digest");`) {
			t.Fatalf("Signature-Input = %q", req.Header.Get("Signature-Input"))
		}
		created, _ := strconv.ParseInt(m[1], 10, 64)
		expires, _ := strconv.ParseInt(m[2], 10, 64)
		if created != c.t.Unix() || expires-created != 300 || m[5] != "ed25519" || m[6] != "adcp/webhook-signing/v1" {
			t.Errorf("params created=%d expires=%d alg=%s tag=%s, want now, now+300, ed25519, adcp/webhook-signing/v1", created, expires, m[5], m[6])
		}
		if n, err := base64.RawURLEncoding.DecodeString(m[3]); err != nil || len(n) < 16 || nonces[m[3]] {
			t.Errorf("nonce %q: %v, %d bytes, seen before %v; want 16 fresh bytes, unpadded base64url", m[3], err, len(n), nonces[m[3]])
		}
		nonces[m[3]] = true
		if req.Header.Get("Content-Digest") != signing.ContentDigest(body) {
			t.Errorf("Content-Digest = %s", req.Header.Get("Content-Digest"))
		}
		set, err := keys.JWKS(ctx, "alpha")
		if err != nil || len(set.Keys) != 1 || set.Keys[0].Kid != m[4] {
			t.Fatalf("JWKS = %+v, %v, want the one key %s", set, err, m[4])
		}
		pub, _ := base64.RawURLEncoding.DecodeString(set.Keys[0].X)
		base, _, _ := signing.SignatureBase(req, signing.Params{Created: time.Unix(created, 0), Expires: time.Unix(expires, 0), Nonce: m[3], KeyID: m[4]})
		sig, err := base64.RawURLEncoding.DecodeString(strings.TrimSuffix(strings.TrimPrefix(req.Header.Get("Signature"), "sig1=:"), ":"))
		if err != nil || !ed25519.Verify(pub, []byte(base), sig) {
			t.Errorf("the signature does not verify with the published key (%v)", err)
		}
		c.t = c.t.Add(time.Second)
	}
}

// TestRotation: the first key is made when first needed and kept; a
// rotation signs with a new key and keeps the old one in the JWKS for the
// grace period, then drops it; publishers never share keys.
func TestRotation(t *testing.T) {
	ctx := context.Background()
	keys, c := newKeys(t)
	first, err := keys.Active(ctx, "alpha")
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := keys.Active(ctx, "alpha"); again.KID != first.KID {
		t.Errorf("Active made a second key %s; want %s kept", again.KID, first.KID)
	}
	other, _ := keys.Active(ctx, "beta")
	if other.KID == first.KID || bytes.Equal(other.Public, first.Public) {
		t.Error("two publishers share a key")
	}

	c.t = c.t.Add(24 * time.Hour)
	second, err := keys.Rotate(ctx, "alpha")
	if err != nil {
		t.Fatal(err)
	}
	if active, _ := keys.Active(ctx, "alpha"); active.KID != second.KID {
		t.Errorf("after rotation Active = %s, want the new %s", active.KID, second.KID)
	}
	kids := func() []string {
		set, err := keys.JWKS(ctx, "alpha")
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, k := range set.Keys {
			out = append(out, k.Kid)
		}
		return out
	}
	if diff := cmp.Diff([]string{second.KID, first.KID}, kids()); diff != "" {
		t.Errorf("JWKS just after rotation (-want +got):\n%s", diff)
	}
	c.t = c.t.Add(signing.RetiredGrace - time.Second)
	if got := kids(); len(got) != 2 {
		t.Errorf("JWKS within the grace period = %v, want both keys", got)
	}
	c.t = c.t.Add(2 * time.Second)
	if diff := cmp.Diff([]string{second.KID}, kids()); diff != "" {
		t.Errorf("JWKS after the grace period (-want +got):\n%s", diff)
	}
}

// TestJWKSShape: every key is published with exactly the members AdCP
// verifiers read, and nothing of the private key.
func TestJWKSShape(t *testing.T) {
	ctx := context.Background()
	keys, _ := newKeys(t)
	k, err := keys.Active(ctx, "alpha")
	if err != nil {
		t.Fatal(err)
	}
	set, _ := keys.JWKS(ctx, "alpha")
	b, _ := json.Marshal(set)
	var got struct {
		Keys []map[string]any `json:"keys"`
	}
	_ = json.Unmarshal(b, &got)
	want := map[string]any{
		"kty": "OKP", "crv": "Ed25519", "x": base64.RawURLEncoding.EncodeToString(k.Public), "kid": k.KID,
		"alg": "EdDSA", "use": "sig", "key_ops": []any{"verify"}, "adcp_use": "webhook-signing",
	}
	if len(got.Keys) != 1 {
		t.Fatalf("JWKS = %s, want one key", b)
	}
	if diff := cmp.Diff(want, got.Keys[0]); diff != "" {
		t.Errorf("published JWK (-want +got):\n%s", diff)
	}
	for _, secret := range [][]byte{k.Private, ed25519.NewKeyFromSeed(k.Private)} {
		for _, enc := range []*base64.Encoding{base64.RawURLEncoding, base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding} {
			if bytes.Contains(b, []byte(enc.EncodeToString(secret))) {
				t.Fatal("the JWKS contains the private key")
			}
		}
	}
}

func TestSignRefuses(t *testing.T) {
	_, priv, _ := ed25519.GenerateKey(nil)
	now := time.Unix(1776520800, 0)
	ok := signing.Params{KeyID: "k1", Nonce: "KXYnfEfJ0PBRZXQyVXfVQA", Created: now, Expires: now.Add(signing.Window)}
	for _, test := range []struct {
		name   string
		url    string
		noType bool
		p      func(signing.Params) signing.Params
	}{
		{"no content type", "https://buyer.example/h", true, nil},
		{"window too long", "https://buyer.example/h", false, func(p signing.Params) signing.Params {
			p.Expires = p.Created.Add(signing.Window + time.Second)
			return p
		}},
		{"empty window", "https://buyer.example/h", false, func(p signing.Params) signing.Params { p.Expires = p.Created; return p }},
		{"short nonce", "https://buyer.example/h", false, func(p signing.Params) signing.Params { p.Nonce = "c2hvcnQ"; return p }},
		{"padded nonce", "https://buyer.example/h", false, func(p signing.Params) signing.Params { p.Nonce = "KXYnfEfJ0PBRZXQyVXfVQA=="; return p }},
		{"quote in key id", "https://buyer.example/h", false, func(p signing.Params) signing.Params { p.KeyID = `k"1`; return p }},
		{"user information", "https://u:p@buyer.example/h", false, nil},
	} {
		req, _ := http.NewRequest(http.MethodPost, test.url, nil)
		if !test.noType {
			req.Header.Set("Content-Type", "application/json")
		}
		p := ok
		if test.p != nil {
			p = test.p(p)
		}
		if err := signing.SignRequest(req, []byte(`{}`), priv, p); err == nil {
			t.Errorf("%s: SignRequest succeeded", test.name)
		}
	}
}
