package app_test

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/storefront/storefront/internal/kittest"
	"github.com/storefront/storefront/internal/spectest"
	"github.com/storefront/storefront/internal/testenv"
)

type brandDoc struct {
	Agents []struct {
		Type    string `json:"type"`
		URL     string `json:"url"`
		ID      string `json:"id"`
		JWKSURI string `json:"jwks_uri"`
	} `json:"agents"`
}

// TestBrandJSON: each publisher publishes brand.json at its well-known
// path, naming its MCP and A2A endpoints as sales agents and, for each, the
// JWKS at the publisher's own well-known path. URLs come from the origin
// the agent card uses.
func TestBrandJSON(t *testing.T) {
	env := testenv.Start(t)
	for _, test := range []struct{ path, base string }{
		{"/.well-known/brand.json", env.BaseURL},
		{"/p/northwind/.well-known/brand.json", env.BaseURL + "/p/northwind"},
	} {
		status, b := kittest.Get(t, env.BaseURL+test.path)
		if status != http.StatusOK {
			t.Fatalf("GET %s: %d %s", test.path, status, b)
		}
		var doc brandDoc
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatalf("GET %s: %v\n%s", test.path, err, b)
		}
		if len(doc.Agents) != 2 {
			t.Fatalf("agents = %s, want the MCP and A2A endpoints", b)
		}
		seen := map[string]bool{}
		for i, a := range doc.Agents {
			want := test.base + []string{"/mcp", "/a2a"}[i]
			if a.Type != "sales" || a.URL != want || a.JWKSURI != test.base+"/.well-known/jwks.json" {
				t.Errorf("%s agents[%d] = %+v, want a sales agent at %s with the publisher's JWKS", test.path, i, a, want)
			}
			if !regexp.MustCompile(`^[a-z0-9_]+$`).MatchString(a.ID) || seen[a.ID] {
				t.Errorf("%s agents[%d].id = %q: not a distinct brand.json id", test.path, i, a.ID)
			}
			seen[a.ID] = true
		}
		// The card advertises the same A2A endpoint.
		_, card := kittest.Get(t, strings.TrimSuffix(env.BaseURL+test.path, "brand.json")+"agent-card.json")
		if !strings.Contains(string(card), `"url": "`+test.base+`/a2a"`) {
			t.Errorf("the agent card does not name %s/a2a: %s", test.base, card)
		}
	}
	if status, _ := kittest.Get(t, env.BaseURL+"/p/nobody/.well-known/brand.json"); status != http.StatusNotFound {
		t.Errorf("unknown publisher's brand.json: %d, want 404", status)
	}
	// Over plain http the capabilities name no brand.json: the schema
	// admits only https.
	p := kittest.ProbeMCP(t, env.BaseURL+"/mcp", "", "get_adcp_capabilities", `{}`)
	if strings.Contains(kittest.JSONOf(t, p.Body), "brand_json_url") {
		t.Errorf("capabilities over http name a brand.json: %v", p.Body)
	}
}

// TestBrandJSONSigningKeys: behind its public https URL the storefront's
// capabilities name the publisher's brand.json as the trust root
// (identity.brand_json_url), brand.json is valid against the official
// schema, and its jwks_uri is where a verifier finds the webhook-signing
// keys: a storefront that declares webhook signing
// (get_adcp_capabilities.webhook_signing.supported) must serve there a
// JWKS with a webhook-valid key. One that declares none has no keys to
// find, and only the path is checked.
func TestBrandJSONSigningKeys(t *testing.T) {
	const public = "https://seller.example"
	env := testenv.Start(t, "--public-url", public)
	local := func(u string) string { return strings.Replace(u, public, env.BaseURL, 1) }
	for _, prefix := range []string{"", "/p/northwind"} {
		p := kittest.ProbeMCP(t, env.BaseURL+prefix+"/mcp", "", "get_adcp_capabilities", `{"adcp_version":"3.2-beta.5"}`)
		res, _ := p.Body["result"].(map[string]any)
		caps, _ := res["structuredContent"].(map[string]any)
		raw, _ := json.Marshal(caps)
		spectest.Validate(t, "protocol/get-adcp-capabilities-response.json", raw)
		identity, _ := caps["identity"].(map[string]any)
		brandURL, _ := identity["brand_json_url"].(string)
		if brandURL != public+prefix+"/.well-known/brand.json" {
			t.Fatalf("identity.brand_json_url = %q, want the publisher's brand.json", brandURL)
		}
		status, b := kittest.Get(t, local(brandURL))
		if status != http.StatusOK {
			t.Fatalf("GET brand.json: %d %s", status, b)
		}
		spectest.Validate(t, "brand.json", b)
		var doc brandDoc
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatal(err)
		}
		signing, _ := caps["webhook_signing"].(map[string]any)
		signs := signing["supported"] == true
		for _, a := range doc.Agents {
			if a.JWKSURI != public+prefix+"/.well-known/jwks.json" {
				t.Errorf("jwks_uri = %q", a.JWKSURI)
			}
			status, jwks := kittest.Get(t, local(a.JWKSURI))
			if !signs {
				t.Logf("%s: %d; this build declares no webhook signing, so there are no keys to find", a.JWKSURI, status)
				continue
			}
			var set struct {
				Keys []struct {
					AdcpUse string `json:"adcp_use"`
					Revoked bool   `json:"revoked"`
				} `json:"keys"`
			}
			if status != http.StatusOK || json.Unmarshal(jwks, &set) != nil {
				t.Fatalf("GET %s: %d %s, want the publisher's JWKS", a.JWKSURI, status, jwks)
			}
			found := false
			for _, k := range set.Keys {
				found = found || (k.AdcpUse == "request-signing" || k.AdcpUse == "webhook-signing") && !k.Revoked
			}
			if !found {
				t.Errorf("%s has no webhook-valid signing key: %s", a.JWKSURI, jwks)
			}
		}
	}
}
