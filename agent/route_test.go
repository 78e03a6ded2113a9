package agent_test

import (
	"context"
	"testing"

	"github.com/storefront/storefront/agent"
)

// TestRoutes: a route is read back as it was set, whether set as a value
// (WithRoute, WithPublisher, WithBaseURL) or filled into a slot made
// earlier (SetRoute); a context without a slot is not changed by
// SetRoute; and a route set as a value over a slot is the one read.
func TestRoutes(t *testing.T) {
	read := func(ctx context.Context) [2]string { return [2]string{agent.PublisherOf(ctx), agent.BaseURL(ctx)} }
	bare := context.Background()
	if agent.SetRoute(bare, "p", "http://x") || read(bare) != [2]string{} {
		t.Fatalf("SetRoute on a context without a slot = true or left %q", read(bare))
	}
	slot := agent.WithRouteSlot(bare)
	if read(slot) != [2]string{} {
		t.Fatalf("an empty slot reads %q", read(slot))
	}
	if !agent.SetRoute(slot, "harborlane", "http://127.0.0.1:8080/p/harborlane") {
		t.Fatal("SetRoute on a slot = false")
	}
	if got := read(slot); got != [2]string{"harborlane", "http://127.0.0.1:8080/p/harborlane"} {
		t.Fatalf("the slot reads %q", got)
	}
	over := agent.WithPublisher(slot, "other")
	if got := read(over); got != [2]string{"other", "http://127.0.0.1:8080/p/harborlane"} {
		t.Fatalf("WithPublisher over the slot reads %q", got)
	}
	if got := read(agent.WithBaseURL(over, "http://b")); got != [2]string{"other", "http://b"} {
		t.Fatalf("WithBaseURL over it reads %q", got)
	}
	if got := read(agent.WithRoute(bare, "a", "http://a")); got != [2]string{"a", "http://a"} {
		t.Fatalf("WithRoute reads %q", got)
	}
}
