// Package recovery is the storefront's one recover boundary. Every entry
// point (the buyer transports, the admin API, the console, the other HTTP
// routes, webhook deliveries and every background goroutine) runs its work
// under Run or Go, so that a panic is logged with its stack and the
// request's id, counted by metrics.RecoveredPanic, and answered by the
// caller with its surface's typed internal error while the process stays
// up.
//
// It must never hand the panic value or the stack to a caller: they go to
// the log only. A recovered panic is a bug to fix, not a way to answer.
package recovery

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strings"

	"github.com/storefront/storefront/internal/requestid"
	"github.com/storefront/storefront/metrics"
)

// Run calls fn and reports whether it panicked. A panic is recovered,
// logged as what (the work fn was doing) with its stack and ctx's request
// id, and counted on surface (one of metrics' surfaces: mcp, a2a, admin,
// console, http, webhook, background); the caller then answers with its
// surface's internal error. log may be nil (slog's default).
//
// http.ErrAbortHandler is net/http's way to abort a response, not a
// fault: it is raised again for net/http, which expects it.
func Run(ctx context.Context, log *slog.Logger, surface, what string, fn func()) (panicked bool) {
	defer func() {
		panicked = Recovered(ctx, log, surface, func() string { return what }, recover())
	}()
	fn()
	return false
}

// Recovered is Run's handling of v, what recover returned, for a caller
// that defers its own recover: in a hot path that spares Run's closure
// and a name spelled for a panic that rarely comes. It reports whether v
// is a panic, which it has logged as what() (called only then) and
// counted as Run does; it raises http.ErrAbortHandler again.
func Recovered(ctx context.Context, log *slog.Logger, surface string, what func() string, v any) bool {
	if v == nil {
		return false
	}
	if v == http.ErrAbortHandler {
		panic(v)
	}
	report(ctx, log, surface, what(), v, debug.Stack())
	return true
}

// Go runs fn on a new goroutine under Run, for work whose end nobody
// answers for: a panic ends fn and nothing else. ctx is read only for its
// request id.
func Go(ctx context.Context, log *slog.Logger, surface, what string, fn func()) {
	go Run(ctx, log, surface, what, fn)
}

// Report logs and counts v, a panic that a library recovered and handed
// over (the A2A SDK's transport does), as Run does. Call it from the
// library's handler, where the stack is still the panic's.
func Report(ctx context.Context, log *slog.Logger, surface, what string, v any) {
	report(ctx, log, surface, what, v, debug.Stack())
}

func report(ctx context.Context, log *slog.Logger, surface, what string, v any, stack []byte) {
	metrics.RecoveredPanic(surface)
	if log == nil {
		log = slog.Default()
	}
	// what is copied into the line, so that the line keeps none of it: a
	// caller's what, spelled anew on each call, then stays on its stack.
	attrs := []any{"surface", surface, "while", strings.Clone(what), "panic", fmt.Sprint(v), "stack", string(stack)}
	if id := requestid.From(ctx); id != "" {
		attrs = append(attrs, "request_id", id)
	}
	log.ErrorContext(ctx, "recovered a panic: answered as an internal error", attrs...)
}
