package bench_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/storefront/storefront/bench"
	"github.com/storefront/storefront/internal/testenv"
	"github.com/storefront/storefront/transport/a2aserver"
)

// The mix must answer as it says against a real storefront: the generated
// publisher serves the completed briefs and declines the others.
func TestMixAgainstTheStorefront(t *testing.T) {
	env := testenv.Start(t)
	if err := (bench.Fixture{Products: 200, Rules: 20, Deny: 300}).Seed(t.Context(), env.Main.Store); err != nil {
		t.Fatal(err)
	}
	rec, err := bench.Record(t.Context(), env.BaseURL+"/p/"+bench.PublisherID+"/mcp", bench.Mix("3.2-beta.5"))
	if err != nil {
		t.Fatal(err)
	}
	if len(rec) != 10 {
		t.Fatalf("recorded %d answers", len(rec))
	}
	// Over A2A the storefront answers every request of the mix with the
	// arm the mix says, read from the task as the load generator reads it.
	s, err := bench.Load(t.Context(), bench.Target{Name: "storefront-a2a", URL: env.BaseURL + "/p/" + bench.PublisherID + "/a2a", CheckArms: true, A2A: true},
		bench.LoadOptions{Concurrency: 2, Duration: 300 * time.Millisecond, Requests: bench.Mix("3.2-beta.5")})
	if err != nil {
		t.Fatal(err)
	}
	if s.Errors != 0 || s.Wrong != 0 || s.Arms["completed"] == 0 || s.Arms["rejected"] == 0 {
		t.Fatalf("A2A load: %+v", s)
	}
	// The ceiling answers each body with exactly the recorded bytes.
	srv := httptest.NewServer(bench.NewCeiling(rec))
	defer srv.Close()
	for _, r := range rec {
		resp, err := http.Post(srv.URL, "application/json", strings.NewReader(r.Request))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(b) != r.Body || resp.Header.Get("Content-Type") != r.ContentType {
			t.Fatalf("the ceiling changed an answer")
		}
	}
	resp, err := http.Post(srv.URL, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":99}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("an unrecorded body got %d", resp.StatusCode)
	}
	// The MCP floor answers through the SDK with the same payloads.
	floor, err := bench.NewMCPFloor(rec)
	if err != nil {
		t.Fatal(err)
	}
	fs := httptest.NewServer(floor)
	defer fs.Close()
	s, err = bench.Load(context.Background(), bench.Target{Name: "mcp-floor", URL: fs.URL, Handshake: true},
		bench.LoadOptions{Concurrency: 2, Duration: 300 * time.Millisecond, Requests: bench.Mix("3.2-beta.5")})
	if err != nil {
		t.Fatal(err)
	}
	if s.Errors != 0 || s.Wrong != 0 || s.Arms["completed"] == 0 || s.Arms["rejected"] == 0 {
		t.Fatalf("floor load: %+v", s)
	}
	// An answer of another arm than the mix expects is counted as wrong.
	swapped := bench.Mix("3.2-beta.5")
	for i := range swapped {
		if swapped[i].Arm == "rejected" {
			swapped[i].Arm = "completed"
		}
	}
	s, err = bench.Load(context.Background(), bench.Target{Name: "ceiling", URL: srv.URL, CheckArms: true},
		bench.LoadOptions{Concurrency: 2, Duration: 200 * time.Millisecond, Requests: swapped})
	if err != nil {
		t.Fatal(err)
	}
	if s.Wrong == 0 || s.Wrong != s.Arms["rejected"] {
		t.Fatalf("wrong arms not counted: %+v", s)
	}
	// A cancelled run reports its context's error, not partial figures.
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(100 * time.Millisecond); cancel() }()
	if _, err := bench.Load(ctx, bench.Target{Name: "ceiling", URL: srv.URL},
		bench.LoadOptions{Concurrency: 2, Duration: 10 * time.Second, Requests: bench.Mix("3.2-beta.5")}); err != context.Canceled {
		t.Fatalf("cancelled load = %v, want context.Canceled", err)
	}
}

// TestMixIsTheA2AFastPaths: every A2A body of the mix, at every pin the
// bench sends, is one the A2A fast path answers, so that storefront-a2a
// measures it and not a2a-go's path beside it.
func TestMixIsTheA2AFastPaths(t *testing.T) {
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("A2A-Extensions", a2aserver.ProfileURI)
	for _, version := range []string{"3.2-beta.5", ""} {
		for _, req := range bench.Mix(version) {
			if !a2aserver.Fast(req.A2ABody, h) {
				t.Errorf("the A2A fast path does not read the mix's %s (pin %q): %s", req.Name, version, req.A2ABody)
			}
		}
	}
}
