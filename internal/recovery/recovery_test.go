package recovery_test

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/storefront/storefront/internal/recovery"
	"github.com/storefront/storefront/internal/requestid"
	"github.com/storefront/storefront/metrics"
)

func boom() { var m map[string]int; m["x"]++ }

func TestRunRecoversLogsAndCounts(t *testing.T) {
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	before := metrics.RecoveredPanics("background")
	ctx := requestid.With(context.Background(), "req-42")
	if !recovery.Run(ctx, log, "background", "testing", boom) {
		t.Fatal("Run = false for a function that panicked")
	}
	if got := metrics.RecoveredPanics("background") - before; got != 1 {
		t.Errorf("recovered panics moved by %v, want 1", got)
	}
	out := logs.String()
	for _, want := range []string{"recovered a panic", "surface=background", "while=testing", "request_id=req-42", "assignment to entry in nil map", "recovery_test.boom"} {
		if !strings.Contains(out, want) {
			t.Errorf("the log lacks %q:\n%s", want, out)
		}
	}
	if recovery.Run(ctx, log, "background", "testing", func() {}) {
		t.Error("Run = true for a function that returned")
	}
}

func TestRunPanicNil(t *testing.T) {
	log := slog.New(slog.NewTextHandler(&bytes.Buffer{}, nil))
	if !recovery.Run(context.Background(), log, "background", "testing", func() { panic(nil) }) {
		t.Error("panic(nil) was not recovered")
	}
}

// An aborted response is net/http's business, not a fault to count.
func TestRunRaisesAbortAgain(t *testing.T) {
	before := metrics.RecoveredPanics("http")
	defer func() {
		if v := recover(); v != http.ErrAbortHandler {
			t.Errorf("recovered %v, want http.ErrAbortHandler raised again", v)
		}
		if metrics.RecoveredPanics("http") != before {
			t.Error("an abort was counted as a panic")
		}
	}()
	recovery.Run(context.Background(), nil, "http", "testing", func() { panic(http.ErrAbortHandler) })
}

// A panic on a goroutine Go started ends that goroutine alone.
func TestGo(t *testing.T) {
	lines := make(chan string, 1)
	log := slog.New(slog.NewTextHandler(lineWriter(lines), nil))
	recovery.Go(context.Background(), log, "webhook", "delivering", boom)
	if line := <-lines; !strings.Contains(line, "surface=webhook") || !strings.Contains(line, "while=delivering") {
		t.Errorf("log = %s", line)
	}
}

// lineWriter sends each log record written to it.
type lineWriter chan string

func (w lineWriter) Write(p []byte) (int, error) { w <- string(p); return len(p), nil }
