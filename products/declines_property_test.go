package products_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"

	"github.com/storefront/storefront/products"
)

// TestKeptDeclinesAreComposedAfresh sends generated requests, many of them
// declined and many repeated, to one demo snapshot that keeps its declines
// and to the same snapshot keeping none: the answers and their traces are
// the same, whether a decline was composed for the request, kept from an
// equal one or kept from one that differs somewhere.
func TestKeptDeclinesAreComposedAfresh(t *testing.T) {
	e := demoEnv(t)
	ctx := context.Background()
	snap, err := e.snaps.Snapshot(ctx, nw)
	if err != nil {
		t.Fatal(err)
	}
	fresh := products.Uncached(snap)
	declined := 0
	rapid.Check(t, func(t *rapid.T) {
		for range 8 {
			args := genDeclinable(t)
			c := products.Call{Publisher: nw, Args: []byte(args)}
			got := e.svc.Preview(ctx, c, snap)
			want := e.svc.Preview(ctx, c, fresh)
			if string(got.Payload) != string(want.Payload) {
				t.Fatalf("%s\nkept:  %s\nfresh: %s", args, got.Payload, want.Payload)
			}
			if d := cmp.Diff(want.Trace, got.Trace); d != "" {
				t.Fatalf("%s: trace (-fresh +kept):\n%s", args, d)
			}
			if got.Outcome.Arm().String() == "rejected" {
				declined++
			}
		}
	})
	if declined < 100 {
		t.Errorf("only %d requests declined: the generator should reach the demo's rules", declined)
	}
}

// genDeclinable is a get_products request from a small space, so that
// requests repeat and differ in one field at a time, around what the demo
// rules decline: small budgets, unoffered channels, formats and markets,
// flights in the holiday sell-out or too soon, and gambling brands.
func genDeclinable(t *rapid.T) string {
	var f []string
	if rapid.Bool().Draw(t, "has_channels") {
		f = append(f, fmt.Sprintf(`"channels":[%q]`, rapid.SampledFrom([]string{"ctv", "olv", "display", "podcast", "dooh", "streaming_audio"}).Draw(t, "channel")))
	}
	if rapid.Bool().Draw(t, "has_budget") {
		f = append(f, fmt.Sprintf(`"budget_range":{"max":%d,"currency":%q}`,
			rapid.SampledFrom([]int{500, 5000, 10000, 24999, 100000}).Draw(t, "max"),
			rapid.SampledFrom([]string{"USD", "USD", "EUR"}).Draw(t, "currency")))
	}
	if rapid.IntRange(0, 3).Draw(t, "has_flight") == 0 {
		start := rapid.SampledFrom([]string{"2026-11-29", "2026-12-03", "2026-12-20", "2027-01-12"}).Draw(t, "start")
		f = append(f, fmt.Sprintf(`"start_date":%q,"end_date":"2027-01-31"`, start))
	}
	if rapid.IntRange(0, 3).Draw(t, "has_kinds") == 0 {
		f = append(f, fmt.Sprintf(`"format_kinds":[%q]`, rapid.SampledFrom([]string{"html5", "video_vast", "image"}).Draw(t, "kind")))
	}
	args := fmt.Sprintf(`{"adcp_version":%q,"buying_mode":"brief","brief":%q,"filters":{%s}`,
		rapid.SampledFrom([]string{"3.2-beta.5", "3.1"}).Draw(t, "version"),
		rapid.SampledFrom([]string{"CTV", "holiday CTV", "podcast listeners", "launch our new casino app", "news video"}).Draw(t, "brief"),
		strings.Join(f, ","))
	if rapid.IntRange(0, 3).Draw(t, "has_geo") == 0 {
		args += fmt.Sprintf(`,"targeting_overlay":{"geo_countries":[%q]}`, rapid.SampledFrom([]string{"US", "DE", "GB"}).Draw(t, "geo"))
	}
	if rapid.IntRange(0, 5).Draw(t, "has_brand") == 0 {
		args += `,"brand":{"domain":"bet.example","industries":["gambling_betting.casino"]}`
	}
	return args + "}"
}
