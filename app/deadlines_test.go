package app

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/storefront/storefront/internal/rawhttp"
)

// TestDeadlines serves routes slower than the read timeout on a real
// listener with the server's own deadlines: work within the write timeout
// is answered, whether or not it read a body; work past the write timeout
// is cancelled and gets no answer; a bulk route outlives both.
func TestDeadlines(t *testing.T) {
	l := DefaultLimits()
	l.ReadHeaderTimeout, l.ReadTimeout, l.WriteTimeout = time.Second, time.Second, 3*time.Second
	s := &Server{cfg: ServerConfig{Addr: "127.0.0.1:0", Log: slog.New(slog.NewTextHandler(io.Discard, nil))}, Echo: echo.New(), limits: l}
	s.Echo.Use(s.edge)
	// work waits for d or for its request to be cancelled, and says which.
	work := func(d time.Duration) echo.HandlerFunc {
		return func(c echo.Context) error {
			if _, err := io.ReadAll(c.Request().Body); err != nil {
				return err
			}
			select {
			case <-time.After(d):
				return c.String(http.StatusOK, "done")
			case <-c.Request().Context().Done():
				return c.String(http.StatusOK, "cancelled")
			}
		}
	}
	s.Echo.GET("/within", work(2*time.Second))
	s.Echo.POST("/within", work(2*time.Second))
	s.Echo.GET("/past", work(10*time.Second))
	s.Echo.POST("/admin/v1/publishers/:publisher/backtest", work(4*time.Second))
	if err := s.Listen(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	addr := s.Addr()
	for _, test := range []struct {
		method, path, body string
		want               string // the answer's body, or "" for none
	}{
		{"GET", "/within", "", "done"},
		{"POST", "/within", `{"a":1}`, "done"},
		{"GET", "/past", "", ""},
		{"POST", "/admin/v1/publishers/northwind/backtest", `{}`, "done"},
	} {
		r, err := rawhttp.Do(addr, rawhttp.Request(addr, test.method, test.path, nil, []byte(test.body)), 15*time.Second)
		switch {
		case test.want == "" && err == nil:
			t.Errorf("%s %s past the write timeout = %d %q after %s, want no answer", test.method, test.path, r.Status, r.Body, r.Took)
		case test.want == "" && (r.Took < 2500*time.Millisecond || r.Took > 6*time.Second):
			t.Errorf("%s %s past the write timeout was cut after %s, want about 3s", test.method, test.path, r.Took)
		case test.want != "" && (err != nil || r.Status != http.StatusOK || strings.TrimSpace(string(r.Body)) != test.want):
			t.Errorf("%s %s = %v %v, want 200 %q", test.method, test.path, r, err, test.want)
		}
	}
}
