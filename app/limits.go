package app

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/storefront/storefront/internal/limit"
)

// limitFlag is one of serve's timeouts or size limits (Limits):
// a flag, its environment variable and the field it sets.
type limitFlag struct {
	name, env, help string
	value           flag.Value
}

// limitFlags are serve's timeouts and size limits, bound to l.
func limitFlags(l *Limits) []limitFlag {
	return []limitFlag{
		{"read-header-timeout", "STOREFRONT_READ_HEADER_TIMEOUT", "how long a client may take to send a request's head: a slower one is cut", (*durationValue)(&l.ReadHeaderTimeout)},
		{"read-timeout", "STOREFRONT_READ_TIMEOUT", "how long a client may take to send a request's head and body: a slower one is cut (408)", (*durationValue)(&l.ReadTimeout)},
		{"write-timeout", "STOREFRONT_WRITE_TIMEOUT", "how long a request may take from the end of its head to the end of its answer; its work is cancelled then", (*durationValue)(&l.WriteTimeout)},
		{"idle-timeout", "STOREFRONT_IDLE_TIMEOUT", "how long a kept-alive connection may wait for its next request", (*durationValue)(&l.IdleTimeout)},
		{"bulk-timeout", "STOREFRONT_BULK_TIMEOUT", "the read and write timeout of the admin API's bulk routes: catalogue import and export, ledger export, ledger and audit verification, backtests", (*durationValue)(&l.BulkTimeout)},
		{"max-header-bytes", "STOREFRONT_MAX_HEADER_BYTES", "the largest request head (request line and headers) on every surface; larger is refused with 431", (*sizeValue)(&l.MaxHeaderBytes)},
		{"mcp-max-body", "STOREFRONT_MCP_MAX_BODY", "the largest request body /mcp accepts; larger is a JSON-RPC error with HTTP 413", (*sizeValue)(&l.MCPBody)},
		{"a2a-max-body", "STOREFRONT_A2A_MAX_BODY", "the largest request body /a2a accepts; larger is a JSON-RPC error with HTTP 413", (*sizeValue)(&l.A2ABody)},
		{"admin-max-body", "STOREFRONT_ADMIN_MAX_BODY", "the largest admin API request body, a catalogue import's aside; larger is a problem+json 413", (*sizeValue)(&l.AdminBody)},
		{"import-max-body", "STOREFRONT_IMPORT_MAX_BODY", "the largest catalogue file an import accepts", (*sizeValue)(&l.ImportBody)},
		{"read-only-max-body", "STOREFRONT_READ_ONLY_MAX_BODY", "the largest body a GET to the console, /healthz, /metrics, an agent card, brand.json or a JWKS may declare (default 0: they read none)", (*sizeValue)(&l.ReadOnlyBody)},
	}
}

// defineLimits starts m.Limits at DefaultLimits(), defines each limit
// flag on fs with its environment variable as its default, and returns the
// environment values that do not parse.
func (m *Main) defineLimits(fs *flag.FlagSet) []string {
	m.Limits = DefaultLimits()
	var bad []string
	for _, f := range limitFlags(&m.Limits) {
		if v := os.Getenv(f.env); v != "" {
			if err := f.value.Set(v); err != nil {
				bad = append(bad, fmt.Sprintf("%s=%s: %v", f.env, v, err))
			}
		}
		fs.Var(f.value, f.name, f.help+" ("+f.env+")")
	}
	return bad
}

// durationValue is a flag of Go duration syntax (30s, 2m, 1h).
type durationValue time.Duration

func (d *durationValue) String() string { return time.Duration(*d).String() }

func (d *durationValue) Set(s string) error {
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("want a duration such as 30s, 2m or 1h")
	}
	*d = durationValue(v)
	return nil
}

// sizeValue is a flag of a size in bytes: a whole number with an optional
// unit KiB, MiB or GiB (1MiB, 512KiB, 4096).
type sizeValue int64

func (s *sizeValue) String() string { return strings.ReplaceAll(limit.Size(int64(*s)), " ", "") }

func (s *sizeValue) Set(v string) error {
	n, err := parseSize(v)
	if err != nil {
		return err
	}
	*s = sizeValue(n)
	return nil
}

// parseSize reads a size in bytes: a whole number with an optional unit
// KiB, MiB or GiB. Decimal units (MB) and bare letters (M) are refused, so
// no one gets 1000 where they meant 1024 or the other way round.
func parseSize(v string) (int64, error) {
	s := strings.TrimSpace(v)
	mult := int64(1)
	for _, u := range []struct {
		unit string
		mult int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"bytes", 1}} {
		if len(s) > len(u.unit) && strings.EqualFold(s[len(s)-len(u.unit):], u.unit) {
			s, mult = strings.TrimSpace(s[:len(s)-len(u.unit)]), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 || n > (1<<62)/mult {
		return 0, fmt.Errorf("want a size in bytes such as 4096, 512KiB, 1MiB or 2GiB")
	}
	return n * mult, nil
}
