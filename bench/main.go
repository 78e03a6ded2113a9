package bench

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"
)

// Main runs one of the bench commands: "bench" (the full comparison),
// "bench load" (drive a running storefront), or "bench ceiling" and "bench
// mcp-floor" (child processes the comparison starts).
func Main(ctx context.Context, command string, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("storefront "+command, flag.ContinueOnError)
	fs.SetOutput(stderr)
	switch command {
	case "bench load":
		url := fs.String("url", "http://127.0.0.1:8080/mcp", "the storefront's MCP endpoint")
		conc := fs.Int("concurrency", 64, "concurrent callers")
		dur := fs.Duration("duration", 10*time.Second, "how long to measure")
		warm := fs.Duration("warmup", 2*time.Second, "unmeasured load first")
		version := fs.String("adcp-version", "3.2-beta.5", "adcp_version to pin in every request; empty for none (the server's default, under which declines are errors, not the rejected arm)")
		handshake := fs.Bool("handshake", true, "run the MCP initialize exchange on each connection first")
		overA2A := fs.Bool("a2a", false, "send each request over A2A 1.0 (SendMessage, the AdCP profile activated) instead of MCP; --url is then the storefront's A2A endpoint, such as http://127.0.0.1:8080/a2a, and there is no handshake")
		asJSON := fs.Bool("json", false, "print the result as JSON")
		if err := parse(fs, args); err != nil {
			return err
		}
		reqs := Mix(*version)
		fmt.Fprintf(stderr, "driving %s: concurrency %d for %s after %s warm-up, %d%% completed / %d%% rejected briefs\n",
			*url, *conc, *dur, *warm, share(reqs, "completed"), share(reqs, "rejected"))
		s, err := Load(ctx, Target{Name: "storefront", URL: *url, Handshake: *handshake && !*overA2A, CheckArms: *version != "", A2A: *overA2A},
			LoadOptions{Concurrency: *conc, Duration: *dur, Warmup: *warm, Requests: reqs, Progress: stderr})
		if err != nil {
			return err
		}
		if *asJSON {
			return json.NewEncoder(stdout).Encode(s)
		}
		fmt.Fprintln(stdout, s.Line())
		if s.Errors > 0 || s.Wrong > 0 {
			return fmt.Errorf("%d of %d calls failed and %d answered another arm than expected; the first: %s", s.Errors, s.Requests, s.Wrong, s.FirstError)
		}
		return nil
	case "bench ceiling", "bench mcp-floor":
		addr := fs.String("addr", "127.0.0.1:0", "address to listen on")
		answers := fs.String("answers", "", "file of recorded answers (written by bench)")
		if err := parse(fs, args); err != nil {
			return err
		}
		rs, err := ReadRecorded(*answers)
		if err != nil {
			return err
		}
		if command == "bench mcp-floor" {
			return ServeMCPFloor(ctx, *addr, rs, stdout)
		}
		return ServeCeiling(ctx, *addr, rs, stdout)
	case "bench":
		o, err := parseRun(fs, args)
		if err != nil {
			return err
		}
		return Run(ctx, o, stdout, stderr)
	}
	return fmt.Errorf("unknown bench command %q", command)
}

func parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	return nil
}

func share(reqs []Request, arm string) int {
	n := 0
	for _, r := range reqs {
		if r.Arm == arm {
			n++
		}
	}
	return n * 100 / len(reqs)
}

// Line is a one-line summary of s.
func (s Stats) Line() string {
	wrong := ""
	if s.Wrong > 0 {
		wrong = fmt.Sprintf(", %d of the wrong arm", s.Wrong)
	}
	return fmt.Sprintf("%-10s c=%-4d %9.0f req/s  p50 %7.2f ms  p90 %7.2f ms  p99 %7.2f ms  max %8.2f ms  %d calls (%s), %d errors%s",
		s.Target, s.Concurrency, s.RPS, s.P50, s.P90, s.P99, s.Max, s.Requests, armList(s.Arms), s.Errors, wrong)
}

func armList(m map[string]int64) string {
	var parts []string
	for _, k := range []string{"completed", "rejected", "submitted", "failed", "error"} {
		if m[k] > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
		}
	}
	return strings.Join(parts, ", ")
}
