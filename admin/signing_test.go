package admin_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/storefront/storefront/internal/testenv"
	"github.com/storefront/storefront/products"
)

// jwksKids reads a JWKS and returns its kids, checking each key carries
// what AdCP verifiers require.
func jwksKids(t *testing.T, c client, path string) []string {
	t.Helper()
	r := c.do("GET", path, "")
	if r.Status != http.StatusOK || r.Header.Get("Content-Type") != "application/jwk-set+json" {
		t.Fatalf("GET %s = %d %s (%s)", path, r.Status, r.Header.Get("Content-Type"), r.Body)
	}
	var set struct {
		Keys []struct {
			Kty, Crv, X, Kid, Alg, Use string
			KeyOps                     []string `json:"key_ops"`
			AdcpUse                    string   `json:"adcp_use"`
			D                          string   `json:"d"`
		} `json:"keys"`
	}
	if err := json.Unmarshal(r.Body, &set); err != nil {
		t.Fatal(err)
	}
	var kids []string
	for _, k := range set.Keys {
		if k.Kty != "OKP" || k.Crv != "Ed25519" || k.Alg != "EdDSA" || k.Use != "sig" || len(k.KeyOps) != 1 || k.KeyOps[0] != "verify" || k.AdcpUse != "webhook-signing" || k.X == "" || k.D != "" {
			t.Errorf("GET %s: key %+v lacks what AdCP verifiers require", path, k)
		}
		kids = append(kids, k.Kid)
	}
	return kids
}

// TestSigningKeys: each publisher's JWKS is served at its prefix (the
// default publisher's also at the origin), with a key made on first use;
// the admin API lists and rotates a publisher's keys, the rotated-out key
// staying published; and no token reaches another publisher's keys.
func TestSigningKeys(t *testing.T) {
	env := testenv.Start(t)
	if err := env.Main.Store.PutPublisher(context.Background(), products.Publisher{ID: "lakeside", Name: "Lakeside Media", Domain: "lakeside.example"}); err != nil {
		t.Fatal(err)
	}
	anon := client{t, env.BaseURL, ""}
	c := client{t, env.BaseURL, env.AdminToken}

	first := jwksKids(t, anon, "/.well-known/jwks.json")
	if len(first) != 1 {
		t.Fatalf("the origin JWKS has keys %v, want the default publisher's one key", first)
	}
	if again := jwksKids(t, anon, "/p/northwind/.well-known/jwks.json"); len(again) != 1 || again[0] != first[0] {
		t.Errorf("the default publisher's JWKS under its prefix = %v, want %v", again, first)
	}
	lakeside := jwksKids(t, anon, "/p/lakeside/.well-known/jwks.json")
	if len(lakeside) != 1 || lakeside[0] == first[0] {
		t.Errorf("another publisher's JWKS = %v, want a key of its own", lakeside)
	}
	if r := anon.do("GET", "/p/nobody/.well-known/jwks.json", ""); r.Status != http.StatusNotFound {
		t.Errorf("an unknown publisher's JWKS = %d, want 404", r.Status)
	}

	list := c.do("GET", pub+"/signing-keys", "")
	keys := list.json(t)["keys"].([]any)
	if list.Status != 200 || len(keys) != 1 {
		t.Fatalf("signing-keys = %d %s", list.Status, list.Body)
	}
	if k := keys[0].(map[string]any); k["active"] != true || k["published"] != true || k["jwk"].(map[string]any)["kid"] != first[0] {
		t.Errorf("listed key = %v, want %s active and published", k, first[0])
	}

	rot := c.do("POST", pub+"/signing-keys/rotate", "")
	if rot.Status != http.StatusCreated {
		t.Fatalf("rotate = %d %s", rot.Status, rot.Body)
	}
	newKid := rot.json(t)["active"].(map[string]any)["jwk"].(map[string]any)["kid"].(string)
	if got := jwksKids(t, anon, "/.well-known/jwks.json"); len(got) != 2 || got[0] != newKid || got[1] != first[0] {
		t.Errorf("JWKS after rotation = %v, want the new key %s and the retired %s", got, newKid, first[0])
	}
	for _, k := range rot.json(t)["keys"].([]any) {
		k := k.(map[string]any)
		kid := k["jwk"].(map[string]any)["kid"]
		if retired := k["retired_at"] != nil; retired != (kid == first[0]) || k["active"] == retired || k["published"] != true {
			t.Errorf("after rotation key %v = %v", kid, k)
		}
		if _, ok := k["jwk"].(map[string]any)["d"]; ok {
			t.Error("the admin API shows a private key")
		}
	}
	if got := jwksKids(t, anon, "/p/lakeside/.well-known/jwks.json"); len(got) != 1 || got[0] != lakeside[0] {
		t.Errorf("rotating one publisher's key changed another's JWKS: %v", got)
	}

	wantProblem(t, c.do("POST", "/admin/v1/publishers/lakeside/signing-keys/rotate", ""), http.StatusNotFound, "")
	wantProblem(t, c.do("GET", "/admin/v1/publishers/lakeside/signing-keys", ""), http.StatusNotFound, "")
	wantProblem(t, anon.do("POST", pub+"/signing-keys/rotate", ""), http.StatusUnauthorized, "")
}
