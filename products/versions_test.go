package products_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/storefront/storefront/adcp"
	"github.com/storefront/storefront/internal/spectest"
	"github.com/storefront/storefront/outcome"
)

// readmeBrief is the README's worked example: 100 USD for a video brief,
// below the demo publisher's floor.
const readmeBrief = `{"buying_mode":"brief","brief":"Video for a coffee brand launch","filters":{"budget_range":{"max":100,"currency":"USD"}}}`

// TestReleaseWire pins what adcp.Releases() says about each served release's
// wire: a release marked as Build's wire gets exactly Build's rejected
// payload but for the adcp_version echo, valid against the official
// schemas; a stable release before 3.2 gets the decline as a typed,
// correctable error. A release whose wire came to differ would need its own
// Wire value, and this test would fail until the service handled it.
func TestReleaseWire(t *testing.T) {
	var build adcp.Version // the served release Build is a build of
	for _, r := range adcp.Releases() {
		if fmt.Sprintf("%d.%d.0-%s", r.Version.Major, r.Version.Minor, r.Version.Pre) == adcp.Build {
			build = r.Version
		}
	}
	if build.IsZero() {
		t.Fatalf("no served release matches Build %s", adcp.Build)
	}
	_, want := demoEnv(t).get(t, nw, anonymous, withVersion(readmeBrief, build.String()))
	dropReceipt(want)

	for _, r := range adcp.Releases() {
		t.Run(r.Version.String(), func(t *testing.T) {
			res, m := demoEnv(t).get(t, nw, anonymous, withVersion(readmeBrief, r.Version.String()))
			status := spectest.GetProducts(t, res.Payload)
			if m["adcp_version"] != r.Version.String() {
				t.Errorf("adcp_version = %v, want %s echoed exactly", m["adcp_version"], r.Version)
			}
			switch r.Wire {
			case adcp.WireAsBuild:
				if status != "rejected" {
					t.Fatalf("status = %q, want rejected: %s", status, res.Payload)
				}
				dropReceipt(m)
				m["adcp_version"] = build.String()
				if diff := cmp.Diff(want, m); diff != "" {
					t.Errorf("payload differs from %s's beyond adcp_version (-%s +%s):\n%s", build, build, r.Version, diff)
				}
			case adcp.WireLegacy:
				if status != "failed" {
					t.Fatalf("status = %q, want failed (no rejected arm before 3.2): %s", status, res.Payload)
				}
				if e := firstError(t, m); e["code"] != "BUDGET_TOO_LOW" || e["recovery"] != "correctable" || e["message"] != want["reason"] {
					t.Errorf("error = %v, want BUDGET_TOO_LOW, correctable, with the rejection's reason", e)
				}
			default:
				t.Fatalf("release %s has wire %q, which this test does not know", r.Version, r.Wire)
			}
		})
	}
}

// TestUnservedPins: a label past the table, or between its entries, is
// refused with VERSION_UNSUPPORTED listing exactly what is served.
func TestUnservedPins(t *testing.T) {
	for _, pin := range []string{"3.2-rc.8", "3.2-beta.12", "3.2-rc.07", "3.2-RC.7", "3.2-alpha.1", "3.3-beta.0", "4.0"} {
		t.Run(pin, func(t *testing.T) {
			res, m := demoEnv(t).get(t, nw, anonymous, withVersion(readmeBrief, pin))
			if status := spectest.GetProducts(t, res.Payload); status != "failed" {
				t.Fatalf("status = %q, want failed: %s", status, res.Payload)
			}
			e := firstError(t, m)
			if e["code"] != "VERSION_UNSUPPORTED" || e["field"] != "adcp_version" {
				t.Errorf("error = %v, want VERSION_UNSUPPORTED on adcp_version", e)
			}
			det, _ := e["details"].(map[string]any)
			var got []string
			for _, v := range det["supported_versions"].([]any) {
				got = append(got, v.(string))
			}
			if !slices.Equal(got, adcp.SupportedStrings()) {
				t.Errorf("supported_versions = %v, want %v", got, adcp.SupportedStrings())
			}
			if m["adcp_version"] != adcp.Default().String() {
				t.Errorf("adcp_version = %v, want the default %s", m["adcp_version"], adcp.Default())
			}
		})
	}
}

func dropReceipt(m map[string]any) {
	if ext, ok := m["ext"].(map[string]any); ok {
		if ns, ok := ext[outcome.Namespace].(map[string]any); ok {
			delete(ns, "receipt")
		}
	}
}
