package app_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/storefront/storefront/app"
	"github.com/storefront/storefront/bench"
	"github.com/storefront/storefront/transport/a2aserver"
)

// BenchmarkServe answers the bench mix, one request per op, through the
// whole HTTP handler of the program `bench serve` runs (every middleware,
// the MCP or A2A door, the pipeline, the ledger), on the default fixture
// and the 100-product one, without the network: what one get_products
// costs the storefront in CPU and allocation, steadier on a shared machine
// than the load runs, which also time the kernel and the load generator.
func BenchmarkServe(b *testing.B) {
	for _, fixture := range []string{bench.DefaultFixture().String(), "products=100,rules=1000,deny=10000"} {
		m := startBench(b, fixture)
		for _, transport := range []string{"mcp", "a2a"} {
			b.Run(fmt.Sprintf("%s/%s", fixture, transport), func(b *testing.B) {
				mix := bench.Mix("3.2-beta.5")
				send := func(i int) *httptest.ResponseRecorder {
					r := mix[i%len(mix)]
					body, path := r.Body, "/mcp"
					if transport == "a2a" {
						body, path = r.A2ABody, "/a2a"
					}
					req := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body))
					req.Header.Set("Content-Type", "application/json")
					req.Header.Set("Accept", "application/json, text/event-stream")
					if transport == "a2a" {
						req.Header.Set("A2A-Extensions", a2aserver.ProfileURI)
					}
					rec := httptest.NewRecorder()
					m.Server.Echo.ServeHTTP(rec, req)
					return rec
				}
				for i := range mix {
					rec := send(i)
					if got := bench.Arm(rec.Body.Bytes()); rec.Code != http.StatusOK || got != mix[i].Arm {
						b.Fatalf("%s over %s: HTTP %d, arm %q, want %q: %.300s", mix[i].Name, transport, rec.Code, got, mix[i].Arm, rec.Body.Bytes())
					}
				}
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; b.Loop(); i++ {
					if rec := send(i); rec.Code != http.StatusOK {
						b.Fatalf("HTTP %d", rec.Code)
					}
				}
			})
		}
	}
}

// startBench runs `storefront bench serve` in the test's process on
// fixture, and stops it when the benchmark ends.
func startBench(b *testing.B, fixture string) *app.Main {
	b.Helper()
	m := app.NewMain()
	m.Stdout, m.Stderr = io.Discard, io.Discard
	if err := m.ParseFlags([]string{"bench", "serve", "--fixture", fixture, "--addr", "127.0.0.1:0", "--log-level", "warn"}); err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	b.Cleanup(func() { cancel(); <-done })
	select {
	case <-m.Ready:
	case err := <-done:
		b.Fatalf("bench serve exited before serving: %v", err)
	case <-time.After(2 * time.Minute):
		b.Fatal("bench serve did not start")
	}
	return m
}
