package app_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/storefront/storefront/app"
	"github.com/storefront/storefront/internal/testenv"
)

func TestAddressFlags(t *testing.T) {
	for _, bad := range []string{"seller.example", "ftp://seller.example", "https://", "https://seller.example/a2a", "https://seller.example?x=1", "https://user@seller.example"} {
		m := app.NewMain()
		m.Stderr = &strings.Builder{}
		if err := m.ParseFlags([]string{"serve", "--public-url", bad}); err == nil || !strings.Contains(err.Error(), "--public-url") {
			t.Errorf("--public-url %q: %v", bad, err)
		}
	}
	for _, bad := range []string{":6060", "0.0.0.0:6060", "10.0.0.5:6060", "example.com:6060", "6060"} {
		m := app.NewMain()
		m.Stderr = &strings.Builder{}
		if err := m.ParseFlags([]string{"serve", "--debug-addr", bad}); err == nil || !strings.Contains(err.Error(), "--debug-addr") {
			t.Errorf("--debug-addr %q: %v", bad, err)
		}
	}
	for _, good := range []string{"127.0.0.1:6060", "[::1]:6060", "localhost:0"} {
		if err := app.NewMain().ParseFlags([]string{"serve", "--debug-addr", good}); err != nil {
			t.Errorf("--debug-addr %q: %v", good, err)
		}
	}
	env := testenv.Start(t, "--public-url", "https://seller.example:8443/")
	for _, path := range []string{"/.well-known/agent-card.json", "/p/northwind/.well-known/agent-card.json"} {
		resp, err := http.Get(env.BaseURL + path)
		if err != nil {
			t.Fatal(err)
		}
		var card map[string]any
		err = json.NewDecoder(resp.Body).Decode(&card)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(card)
		if !strings.Contains(string(b), `"https://seller.example:8443/`) || strings.Contains(string(b), "127.0.0.1") {
			t.Errorf("%s does not advertise the public URL: %s", path, b)
		}
	}
}

func TestAllowedHostsFlag(t *testing.T) {
	for _, bad := range []string{"http://seller.example", "seller.example/a2a", "seller example", "*.example", "seller.example:port"} {
		m := app.NewMain()
		m.Stderr = &strings.Builder{}
		if err := m.ParseFlags([]string{"serve", "--allowed-hosts", bad}); err == nil || !strings.Contains(err.Error(), "allowed-hosts") {
			t.Errorf("--allowed-hosts %q: %v, want it refused", bad, err)
		}
	}
	m := app.NewMain()
	if err := m.ParseFlags([]string{"serve", "--allowed-hosts", " Seller.Example:8080,,[::1]:8080 , 10.0.0.5"}); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(m.AllowedHosts, " "); got != "seller.example:8080 [::1]:8080 10.0.0.5" {
		t.Errorf("--allowed-hosts read as %q", got)
	}
	t.Setenv("STOREFRONT_ALLOWED_HOSTS", "env.example")
	m = app.NewMain()
	if err := m.ParseFlags([]string{"serve"}); err != nil || strings.Join(m.AllowedHosts, " ") != "env.example" {
		t.Errorf("STOREFRONT_ALLOWED_HOSTS read as %v, %v", m.AllowedHosts, err)
	}
	m = app.NewMain()
	if err := m.ParseFlags([]string{"serve", "--allowed-hosts", "flag.example"}); err != nil || strings.Join(m.AllowedHosts, " ") != "flag.example" {
		t.Errorf("--allowed-hosts after STOREFRONT_ALLOWED_HOSTS read as %v, %v; the flag wins", m.AllowedHosts, err)
	}
}
