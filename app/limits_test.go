package app_test

import (
	"strings"
	"testing"
	"time"

	"github.com/storefront/storefront/app"
)

// TestLimitFlags: every timeout and size limit has a flag and an
// environment variable, both listed by --help with the default; values
// are read in their units, the flag wins over the variable, and values
// that do not parse or contradict each other are refused at start.
func TestLimitFlags(t *testing.T) {
	help := &strings.Builder{}
	m := app.NewMain()
	m.Stderr = help
	_ = m.ParseFlags([]string{"serve", "--help"})
	for _, want := range []string{"-read-header-timeout", "STOREFRONT_READ_HEADER_TIMEOUT", "(default 10s)", "-read-timeout", "STOREFRONT_READ_TIMEOUT",
		"-write-timeout", "STOREFRONT_WRITE_TIMEOUT", "-idle-timeout", "STOREFRONT_IDLE_TIMEOUT", "-bulk-timeout", "STOREFRONT_BULK_TIMEOUT",
		"-max-header-bytes", "STOREFRONT_MAX_HEADER_BYTES", "(default 32KiB)", "-mcp-max-body", "STOREFRONT_MCP_MAX_BODY", "(default 1MiB)",
		"-a2a-max-body", "STOREFRONT_A2A_MAX_BODY", "-admin-max-body", "STOREFRONT_ADMIN_MAX_BODY", "(default 2MiB)",
		"-import-max-body", "STOREFRONT_IMPORT_MAX_BODY", "(default 2GiB)", "-read-only-max-body", "STOREFRONT_READ_ONLY_MAX_BODY"} {
		if !strings.Contains(help.String(), want) {
			t.Errorf("serve --help does not list %s", want)
		}
	}

	t.Run("environment and flags", func(t *testing.T) {
		t.Setenv("STOREFRONT_READ_TIMEOUT", "45s")
		t.Setenv("STOREFRONT_MCP_MAX_BODY", "512KiB")
		m := app.NewMain()
		if err := m.ParseFlags([]string{"serve", "--mcp-max-body", "2MiB", "--import-max-body", "100 MiB", "--max-header-bytes", "65536"}); err != nil {
			t.Fatal(err)
		}
		want := app.DefaultLimits()
		want.ReadTimeout, want.MCPBody, want.ImportBody, want.MaxHeaderBytes = 45*time.Second, 2<<20, 100<<20, 64<<10
		if m.Limits != want {
			t.Errorf("limits = %+v\nwant %+v", m.Limits, want)
		}
	})

	for _, bad := range []struct {
		env  []string
		args []string
		want string
	}{
		{nil, []string{"--read-timeout", "soon"}, "-read-timeout"},
		{nil, []string{"--mcp-max-body", "1M"}, "-mcp-max-body"},
		{nil, []string{"--admin-max-body", "1MB"}, "-admin-max-body"},
		{nil, []string{"--a2a-max-body", "-5"}, "-a2a-max-body"},
		{nil, []string{"--read-header-timeout", "0s"}, "read-header timeout is 0s"},
		{nil, []string{"--read-timeout", "1m", "--read-header-timeout", "2m", "--write-timeout", "3m"}, "read-header timeout (2m0s)"},
		{nil, []string{"--write-timeout", "10s"}, "write timeout (10s) is shorter than the read timeout (30s)"},
		{nil, []string{"--bulk-timeout", "30s"}, "bulk timeout (30s)"},
		{nil, []string{"--max-header-bytes", "1KiB"}, "header limit is 1 KiB"},
		{nil, []string{"--import-max-body", "100"}, "import body limit is 100 bytes"},
		{[]string{"STOREFRONT_IDLE_TIMEOUT", "forever"}, nil, "STOREFRONT_IDLE_TIMEOUT=forever"},
		{[]string{"STOREFRONT_READ_ONLY_MAX_BODY", "lots"}, nil, "STOREFRONT_READ_ONLY_MAX_BODY=lots"},
	} {
		t.Run(strings.Join(append(bad.env, bad.args...), " "), func(t *testing.T) {
			if bad.env != nil {
				t.Setenv(bad.env[0], bad.env[1])
			}
			m := app.NewMain()
			m.Stderr = &strings.Builder{}
			if err := m.ParseFlags(append([]string{"serve"}, bad.args...)); err == nil || !strings.Contains(err.Error(), bad.want) {
				t.Errorf("ParseFlags = %v, want a refusal naming %q", err, bad.want)
			}
		})
	}
}
