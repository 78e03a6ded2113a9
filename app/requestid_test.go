package app_test

import (
	"net/http"
	"regexp"
	"testing"

	"github.com/storefront/storefront/internal/testenv"
)

// TestRequestID: every response names its request in X-Request-Id: the
// id a proxy sent, when it is one, a fresh one otherwise.
func TestRequestID(t *testing.T) {
	env := testenv.Start(t)
	fresh := regexp.MustCompile(`^[0-9a-f]{24}$`)
	for _, test := range []struct {
		path, sent string
		kept       bool
	}{
		{"/healthz", "", false},
		{"/healthz", "edge-7f3a.01_x", true},
		{"/healthz", "two words", false},
		{"/nowhere", "", false},
		{"/admin/v1/whoami", "", false},
	} {
		req, _ := http.NewRequest(http.MethodGet, env.BaseURL+test.path, nil)
		if test.sent != "" {
			req.Header.Set("X-Request-Id", test.sent)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		got := resp.Header.Get("X-Request-Id")
		if test.kept && got != test.sent || !test.kept && !fresh.MatchString(got) {
			t.Errorf("GET %s sending %q: X-Request-Id = %q", test.path, test.sent, got)
		}
	}
	a, b := get(t, env.BaseURL+"/healthz"), get(t, env.BaseURL+"/healthz")
	if a == b {
		t.Errorf("two requests share the id %s", a)
	}
}

func get(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.Header.Get("X-Request-Id")
}
