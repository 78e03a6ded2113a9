// Package e2e runs the real storefront binary against real buyer clients:
// the @adcp/sdk CLI from npm (pinned in package-lock.json). The tests skip
// when Node or the npm packages are missing, except under CI=true, where
// they fail: scripts/test.sh installs them.
package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"github.com/storefront/storefront/internal/required"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "storefront-e2e")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "storefront")
	build := exec.Command("go", "build", "-o", binary, "./cmd/storefront")
	build.Dir = ".."
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building the storefront binary:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// Storefront is a running storefront binary.
type Storefront struct {
	BaseURL    string
	BuyerToken string
	// Quiet leaves the binary's output out of a failed test's log, for a
	// test that reports what it needs of it itself.
	Quiet bool
	cmd   *exec.Cmd
	out   *lockedBuffer
}

// Start runs the binary with args on a free port and waits until it is
// healthy. It is stopped with SIGINT when the test ends.
func Start(t *testing.T, env []string, args ...string) *Storefront {
	t.Helper()
	addr := freeAddr(t)
	cmd := exec.Command(binary, append([]string{"serve", "--addr", addr}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	out := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &Storefront{BaseURL: "http://" + addr, cmd: cmd, out: out}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
			t.Error("storefront did not shut down on SIGINT")
		}
		if t.Failed() && !s.Quiet {
			t.Logf("storefront output:\n%s", out.String())
		}
	})
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := http.Get(s.BaseURL + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				if m := regexp.MustCompile(`demo buyer token[^:]*: (\S+)`).FindStringSubmatch(out.String()); m != nil {
					s.BuyerToken = m[1]
				}
				return s
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("storefront never became healthy:\n%s", out.String())
	return nil
}

// Output is what the binary has printed.
func (s *Storefront) Output() string { return s.out.String() }

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// node returns the path of the adcp CLI, skipping (or failing under CI)
// when it is not installed.
func adcpCLI(t *testing.T) string {
	t.Helper()
	cli, _ := filepath.Abs(filepath.Join("node_modules", ".bin", "adcp"))
	if _, err := os.Stat(cli); err != nil {
		required.Missing(t, "the @adcp/sdk CLI is not installed (%v); scripts/test.sh runs npm ci in e2e/", err)
	}
	if _, err := exec.LookPath("node"); err != nil {
		required.Missing(t, "node is not on PATH (Node 20 runs the @adcp/sdk client)")
	}
	return cli
}

// CLIResult is the --json output of the adcp CLI. A failed task prints no
// JSON: the CLI exits non-zero and says "Error: CODE: message" on stderr.
type CLIResult struct {
	Data     map[string]any `json:"data"`
	Metadata map[string]any `json:"metadata"`
	Exit     int
	Raw      string
	Stderr   string
}

// ADCP runs the @adcp/sdk CLI with args and --json.
func ADCP(t *testing.T, args ...string) CLIResult {
	t.Helper()
	stdout, stderr, exit := ADCPOutput(t, append(args, "--json")...)
	res := CLIResult{Raw: stdout, Stderr: stderr, Exit: exit}
	if exit != 0 && strings.TrimSpace(stdout) == "" {
		return res
	}
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatalf("adcp %s: output is not JSON (%v)\nstdout: %s\nstderr: %s", strings.Join(args, " "), err, stdout, stderr)
	}
	return res
}

// ADCPOutput runs the @adcp/sdk CLI with args and returns what it printed
// and its exit code. A failed task is printed to stderr, not as JSON.
func ADCPOutput(t *testing.T, args ...string) (stdout, stderr string, exit int) {
	t.Helper()
	cli := adcpCLI(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, cli, args...)
	cmd.Env = append(os.Environ(), "ADCP_SKIP_VERSION_CHECK=1", "NO_COLOR=1")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		exit = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("running adcp: %v\n%s", err, errOut.String())
	}
	return out.String(), errOut.String(), exit
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
