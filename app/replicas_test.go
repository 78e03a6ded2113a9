package app_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/storefront/storefront/internal/testenv"
	"github.com/storefront/storefront/store/pgstore/pgtest"
)

// getProducts calls get_products over MCP and returns the AdCP object.
func getProducts(t *testing.T, base, args string) map[string]any {
	t.Helper()
	return getProductsAuth(t, base, "", args)
}

// getProductsAuth calls get_products over MCP with a buyer token ("" for
// none) and returns the AdCP object.
func getProductsAuth(t *testing.T, base, token, args string) map[string]any {
	t.Helper()
	m, isError := testenv.CallTool(t, base, token, "get_products", args)
	if isError != (m["status"] == "failed") {
		t.Errorf("isError %v does not match status %v", isError, m["status"])
	}
	return m
}

func adminDo(t *testing.T, base, token, method, path, body string, headers ...string) (int, http.Header, []byte) {
	t.Helper()
	req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, b
}

// run runs a storefront subcommand and returns its output and error.
func run(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	return runIn(t, "", args...)
}

const display3000 = `{"adcp_version":"3.2-beta.5","buying_mode":"brief","brief":"coffee","filters":{"channels":["display"],"budget_range":{"max":3000,"currency":"USD"}}}`

// TestReplicasShareEdits runs two storefronts on one database: an edit made
// through the first is in force on the second within a second.
func TestReplicasShareEdits(t *testing.T) {
	db := pgtest.NewDatabase(t)
	r1 := testenv.Start(t, "--database-url", db, "--seed-demo")
	r2 := testenv.Start(t, "--database-url", db)
	if r1.AdminToken == "" {
		t.Fatal("the seeding replica printed no admin token")
	}
	if got := getProducts(t, r2.BaseURL, display3000)["status"]; got != "completed" {
		t.Fatalf("before the edit replica 2 answered %v", got)
	}

	status, _, body := adminDo(t, r1.BaseURL, r1.AdminToken, "GET", "/admin/v1/publishers/northwind/rulebook", "")
	if status != 200 {
		t.Fatalf("get rulebook: %d %s", status, body)
	}
	var v struct {
		Rulebook map[string]any `json:"rulebook"`
	}
	_ = json.Unmarshal(body, &v)
	floor := v.Rulebook["rules"].([]any)[0].(map[string]any)["when"].(map[string]any)["budget_below"].(map[string]any)
	floor["minimum"] = 5000.0
	floor["per_channel"].(map[string]any)["display"] = 5000.0
	doc, _ := json.Marshal(v.Rulebook)
	if status, _, body := adminDo(t, r1.BaseURL, r1.AdminToken, "PUT", "/admin/v1/publishers/northwind/rulebook", string(doc), "If-Match", `"1"`); status != 200 {
		t.Fatalf("save through replica 1: %d %s", status, body)
	}
	saved := time.Now()
	for {
		if getProducts(t, r2.BaseURL, display3000)["status"] == "rejected" {
			break
		}
		if time.Since(saved) > time.Second {
			t.Fatal("replica 2 still serves the old rulebook a second after the edit")
		}
		time.Sleep(20 * time.Millisecond)
	}
	// The admin API of replica 2 sees the same version.
	if _, h, _ := adminDo(t, r2.BaseURL, r1.AdminToken, "GET", "/admin/v1/publishers/northwind/rulebook", ""); h.Get("ETag") != `"2"` {
		t.Errorf("replica 2 rulebook ETag = %s, want \"2\"", h.Get("ETag"))
	}
}

// TestConcurrentWritersKeepOneChain has 8 writers on two replicas append
// decisions at once; the chain stays unbroken and complete.
func TestConcurrentWritersKeepOneChain(t *testing.T) {
	db := pgtest.NewDatabase(t)
	r1 := testenv.Start(t, "--database-url", db, "--seed-demo")
	r2 := testenv.Start(t, "--database-url", db)
	const writers, each = 8, 15
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			base := r1.BaseURL
			if w%2 == 1 {
				base = r2.BaseURL
			}
			for i := 0; i < each; i++ {
				args := `{"buying_mode":"brief","brief":"coffee video"}`
				if i%3 == 0 {
					args = `{"adcp_version":"3.2-beta.5","buying_mode":"brief","brief":"coffee","filters":{"channels":["dooh"]}}`
				}
				if s := getProducts(t, base, args)["status"]; s == "failed" {
					t.Errorf("writer %d call %d failed", w, i)
				}
			}
		}(w)
	}
	wg.Wait()
	out, errOut, err := run(t, "ledger", "verify", "--database-url", db)
	if err != nil {
		t.Fatalf("ledger verify: %v\n%s%s", err, out, errOut)
	}
	want := fmt.Sprintf("northwind: ok, %d entries", writers*each)
	if !strings.Contains(out, want) {
		t.Errorf("ledger verify said %q, want %q", out, want)
	}
}

// TestLedgerVerifyNamesTamperedEntry alters one ledger row behind the
// storefront's back: `storefront ledger verify` exits non-zero and names it.
func TestLedgerVerifyNamesTamperedEntry(t *testing.T) {
	db := pgtest.NewDatabase(t)
	r := testenv.Start(t, "--database-url", db, "--seed-demo")
	for i := 0; i < 6; i++ {
		getProducts(t, r.BaseURL, `{"adcp_version":"3.2-beta.5","buying_mode":"brief","brief":"coffee","filters":{"channels":["dooh"]}}`)
	}
	if out, errOut, err := run(t, "ledger", "verify", "--database-url", db); err != nil {
		t.Fatalf("untouched ledger does not verify: %v\n%s%s", err, out, errOut)
	}
	conn, err := pgx.Connect(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	// Someone quietly rewrites decision 4 as an allow.
	tag, err := conn.Exec(context.Background(), `UPDATE ledger_entries SET arm = 'completed', slug = '' WHERE publisher_id = 'northwind' AND sequence = 4`)
	if err != nil || tag.RowsAffected() != 1 {
		t.Fatalf("tampering: %v (%v)", err, tag)
	}
	out, errOut, err := run(t, "ledger", "verify", "--database-url", db)
	var coder interface{ ExitCode() int }
	if !errors.As(err, &coder) || coder.ExitCode() == 0 {
		t.Fatalf("ledger verify after tampering: err = %v, want a non-zero exit\n%s%s", err, out, errOut)
	}
	if !strings.Contains(out, "BROKEN at sequence 4") {
		t.Errorf("ledger verify did not name entry 4: %s", out)
	}
}

// TestDatabaseLostWhileServing cuts the storefront off from PostgreSQL
// mid-service: buyers get only transient errors, never products or an
// unrecorded answer, and service comes back without a restart.
func TestDatabaseLostWhileServing(t *testing.T) {
	db := pgtest.NewDatabase(t)
	// Seed through a direct connection, then serve through the proxy.
	seed := testenv.Start(t, "--database-url", db, "--seed-demo")
	_ = seed
	// The proxy stands between the storefront and whichever server the
	// test database is on.
	p, via := pgtest.NewProxy(t, db)
	r := testenv.Start(t, "--database-url", via)
	if got := getProducts(t, r.BaseURL, `{"buying_mode":"brief","brief":"coffee"}`)["status"]; got != "completed" {
		t.Fatalf("before the outage: %v", got)
	}

	p.Cut()
	for i := 0; i < 5; i++ {
		m := getProducts(t, r.BaseURL, `{"buying_mode":"brief","brief":"coffee"}`)
		if m["status"] != "failed" {
			t.Fatalf("during the outage get_products answered %v: %v", m["status"], m)
		}
		e := m["adcp_error"].(map[string]any)
		if e["code"] != "SERVICE_UNAVAILABLE" || e["recovery"] != "transient" {
			t.Errorf("during the outage: %v, want SERVICE_UNAVAILABLE transient", e)
		}
		if _, ok := m["products"]; ok {
			t.Error("products served during the outage")
		}
	}
	if resp, err := http.Get(r.BaseURL + "/healthz"); err == nil {
		resp.Body.Close()
		if resp.StatusCode != http.StatusServiceUnavailable {
			t.Errorf("/healthz during the outage = %d, want 503", resp.StatusCode)
		}
	}

	p.Restore()
	deadline := time.Now().Add(20 * time.Second)
	for {
		if getProducts(t, r.BaseURL, `{"buying_mode":"brief","brief":"coffee"}`)["status"] == "completed" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the storefront did not recover after the database came back")
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestUnreachableDatabaseAtStartup: a clear message and a non-zero exit.
func TestUnreachableDatabaseAtStartup(t *testing.T) {
	start := time.Now()
	_, _, err := run(t, "serve", "--addr", "127.0.0.1:0", "--database-url", "postgres://postgres:secret@127.0.0.1:1/nowhere?sslmode=disable&connect_timeout=2")
	if err == nil {
		t.Fatal("serve started without its database")
	}
	msg := err.Error()
	if !strings.Contains(msg, "cannot use the PostgreSQL database") || strings.Contains(msg, "secret") {
		t.Errorf("error = %q, want a clear message without the password", msg)
	}
	if time.Since(start) > 30*time.Second {
		t.Errorf("giving up took %s", time.Since(start))
	}
}
