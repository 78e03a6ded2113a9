package a2aserver_test

import (
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/storefront/storefront/internal/testenv"
)

// cardFor fetches the card at path from base, sending host as the Host
// header, and returns the URL it advertises and the response headers.
func cardFor(t *testing.T, base, path, host string) (string, http.Header) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, base+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = host
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s with Host %s: %d %s", path, host, resp.StatusCode, b)
	}
	var card struct {
		URL                 string `json:"url"`
		SupportedInterfaces []struct {
			URL string `json:"url"`
		} `json:"supportedInterfaces"`
	}
	if err := json.Unmarshal(b, &card); err != nil {
		t.Fatal(err)
	}
	for _, i := range card.SupportedInterfaces {
		if i.URL != card.URL {
			t.Errorf("GET %s with Host %s: an interface advertises %s beside %s", path, host, i.URL, card.URL)
		}
	}
	return card.URL, resp.Header
}

var cardPaths = []struct{ path, a2a string }{
	{"/.well-known/agent-card.json", "/a2a"},
	{"/a2a/.well-known/agent-card.json", "/a2a"},
	{"/p/northwind/.well-known/agent-card.json", "/p/northwind/a2a"},
}

// TestCardOriginIgnoresHost: without --public-url, a request with Host:
// evil.example gets a card that advertises the listening address, so a
// forged Host cannot send buyers (or poison a shared cache) elsewhere.
func TestCardOriginIgnoresHost(t *testing.T) {
	env := testenv.Start(t)
	for _, p := range cardPaths {
		for _, host := range []string{"evil.example", "evil.example:8080", env.BaseURL[len("http://"):]} {
			got, h := cardFor(t, env.BaseURL, p.path, host)
			if want := env.BaseURL + p.a2a; got != want {
				t.Errorf("GET %s with Host %s: card url = %q, want %q", p.path, host, got, want)
			}
			if h.Get("Access-Control-Allow-Origin") != "*" || h.Get("Vary") != "" {
				t.Errorf("GET %s: Access-Control-Allow-Origin %q, Vary %q; want * and none (the card does not vary by Host)",
					p.path, h.Get("Access-Control-Allow-Origin"), h.Get("Vary"))
			}
		}
	}
}

// TestCardOriginAllowList: a host on --allowed-hosts is advertised to
// requests that name it; any other Host still gets the listening address,
// and the card says it varies by Host.
func TestCardOriginAllowList(t *testing.T) {
	env := testenv.Start(t, "--allowed-hosts", "Seller.Example, 10.0.0.5:8080")
	for _, p := range cardPaths {
		for host, want := range map[string]string{
			"seller.example":      "http://seller.example" + p.a2a,
			"SELLER.example":      "http://seller.example" + p.a2a,
			"10.0.0.5:8080":       "http://10.0.0.5:8080" + p.a2a,
			"seller.example:8080": env.BaseURL + p.a2a,
			"evil.example":        env.BaseURL + p.a2a,
			"seller.example.evil": env.BaseURL + p.a2a,
		} {
			got, h := cardFor(t, env.BaseURL, p.path, host)
			if got != want {
				t.Errorf("GET %s with Host %s: card url = %q, want %q", p.path, host, got, want)
			}
			if h.Get("Vary") != "Host" {
				t.Errorf("GET %s with Host %s: Vary = %q, want Host", p.path, host, h.Get("Vary"))
			}
		}
	}
}

// TestCardOriginPublicURL: --public-url wins over any Host.
func TestCardOriginPublicURL(t *testing.T) {
	env := testenv.Start(t, "--public-url", "https://seller.example", "--allowed-hosts", "other.example")
	for _, p := range cardPaths {
		for _, host := range []string{"evil.example", "other.example"} {
			if got, want := mustCard(t, env.BaseURL, p.path, host), "https://seller.example"+p.a2a; got != want {
				t.Errorf("GET %s with Host %s: card url = %q, want %q", p.path, host, got, want)
			}
		}
	}
}

func mustCard(t *testing.T, base, path, host string) string {
	t.Helper()
	u, _ := cardFor(t, base, path, host)
	return u
}
