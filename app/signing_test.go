package app_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/storefront/storefront/internal/testenv"
	"github.com/storefront/storefront/store/pgstore/pgtest"
)

func jwksKids(t *testing.T, base string) []string {
	t.Helper()
	resp, err := http.Get(base + "/.well-known/jwks.json")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var set struct {
		Keys []struct {
			Kid string `json:"kid"`
		} `json:"keys"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&set); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s/.well-known/jwks.json = %d, %v", base, resp.StatusCode, err)
	}
	var kids []string
	for _, k := range set.Keys {
		kids = append(kids, k.Kid)
	}
	return kids
}

// TestSigningKeyRotationAcrossReplicas: two replicas on one database
// publish the same key, made once however many ask for it first; `storefront
// admin signing-key rotate` gives the publisher a new key that both then
// publish first, the old one beside it while it may still verify.
func TestSigningKeyRotationAcrossReplicas(t *testing.T) {
	db := pgtest.NewDatabase(t)
	// The replicas share the key that seals the signing keys.
	keys := pgtest.KeysFile(t)
	r1 := testenv.Start(t, "--database-url", db, "--seed-demo", "--secret-keys-file", keys)
	r2 := testenv.Start(t, "--database-url", db, "--secret-keys-file", keys)
	first := jwksKids(t, r2.BaseURL)
	if got := jwksKids(t, r1.BaseURL); len(first) != 1 || strings.Join(got, ",") != first[0] {
		t.Fatalf("replicas publish %v and %v, want one shared key", got, first)
	}

	if _, _, err := run(t, "admin", "signing-key", "rotate", "--database-url", db); err == nil || !strings.Contains(err.Error(), "--publisher") {
		t.Errorf("rotate without --publisher = %v, want an error naming --publisher", err)
	}
	out, errOut, err := run(t, "admin", "signing-key", "rotate", "--publisher", "northwind", "--database-url", db, "--secret-keys-file", keys)
	if err != nil {
		t.Fatalf("rotate: %v\n%s", err, errOut)
	}
	var listed struct {
		Keys []struct {
			Kid       string  `json:"kid"`
			AdcpUse   string  `json:"adcp_use"`
			D         *string `json:"d"`
			RetiredAt *string `json:"retired_at"`
			Published bool    `json:"published"`
		} `json:"keys"`
	}
	if err := json.Unmarshal([]byte(out), &listed); err != nil {
		t.Fatalf("rotate printed %q: %v", out, err)
	}
	if len(listed.Keys) != 2 || listed.Keys[0].RetiredAt != nil || listed.Keys[1].Kid != first[0] || listed.Keys[1].RetiredAt == nil ||
		!listed.Keys[0].Published || !listed.Keys[1].Published || listed.Keys[0].AdcpUse != "webhook-signing" || listed.Keys[0].D != nil {
		t.Fatalf("rotate listed %s, want a new active key and %s retired, both published, no private key", out, first[0])
	}
	for _, r := range []*testenv.Env{r1, r2} {
		if got := jwksKids(t, r.BaseURL); len(got) != 2 || got[0] != listed.Keys[0].Kid || got[1] != first[0] {
			t.Errorf("after rotation %s publishes %v, want [%s %s]", r.BaseURL, got, listed.Keys[0].Kid, first[0])
		}
	}
	if out, _, err := run(t, "admin", "signing-key", "list", "--publisher", "northwind", "--database-url", db, "--secret-keys-file", keys); err != nil || !strings.Contains(out, listed.Keys[0].Kid) {
		t.Errorf("list = %v\n%s", err, out)
	}

	// The rotation, and only the rotation (listing changes nothing), is
	// on the audit trail as the command line's, seen from either replica.
	trail := mustRun(t, "", "audit", "list", "--database-url", db, "--publisher", "northwind", "--action", "signing_key.rotate")
	lines := strings.Split(strings.TrimSpace(trail), "\n")
	if len(lines) != 2 || !strings.Contains(lines[1], "signing_key.rotate") || !strings.Contains(lines[1], listed.Keys[0].Kid) ||
		!strings.Contains(lines[1], "command line (") || !strings.Contains(lines[1], "local") {
		t.Errorf("audit list --action signing_key.rotate, want the one rotation to %s by the command line:\n%s", listed.Keys[0].Kid, trail)
	}
	status, _, body := adminDo(t, r2.BaseURL, r1.AdminToken, "GET", "/admin/v1/publishers/northwind/audit?action=signing_key.rotate", "")
	if status != http.StatusOK || !strings.Contains(string(body), `"target":"`+listed.Keys[0].Kid+`"`) {
		t.Errorf("GET /audit?action=signing_key.rotate on replica 2 = %d %s", status, body)
	}
}
