package app_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/storefront/storefront/app"
	"github.com/storefront/storefront/internal/testenv"
	"github.com/storefront/storefront/store/pgstore/pgtest"
)

// runIn runs a storefront command on the end-to-end tests' clock, with
// stdin as its standard input.
func runIn(t *testing.T, stdin string, args ...string) (string, string, error) {
	t.Helper()
	m := app.NewMain()
	var out, errOut bytes.Buffer
	m.Stdout, m.Stderr, m.Stdin = &out, &errOut, strings.NewReader(stdin)
	m.Now = func() time.Time { return testenv.Clock }
	if err := m.ParseFlags(args); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	err := m.Run(ctx)
	_ = m.Close()
	return out.String(), errOut.String(), err
}

// mustRun runs a command that must succeed and returns its standard
// output.
func mustRun(t *testing.T, stdin string, args ...string) string {
	t.Helper()
	out, errOut, err := runIn(t, stdin, args...)
	if err != nil {
		t.Fatalf("storefront %s: %v\n%s%s", strings.Join(args, " "), err, out, errOut)
	}
	return out
}

var tokenIDPattern = regexp.MustCompile(`tok_[0-9a-f]{16}`)

// TestLeakedAdminTokenRevokedOnReplicas is the drill for a leaked admin
// token: two replicas share one database; the leaked token has been used
// on both; the publisher revokes it from the command line, giving the
// leaked secret on standard input; both replicas refuse it within a
// second (at once: nothing caches tokens), and the audit trail shows the
// revocation and the token's last actions.
func TestLeakedAdminTokenRevokedOnReplicas(t *testing.T) {
	db := pgtest.NewDatabase(t)
	r1 := testenv.Start(t, "--database-url", db, "--seed-demo")
	r2 := testenv.Start(t, "--database-url", db)
	leaked := strings.TrimSpace(mustRun(t, "", "admin", "token", "create", "--database-url", db, "--publisher", "northwind", "--name", "agency desk"))
	buyer := strings.TrimSpace(mustRun(t, "", "buyer", "token", "create", "--database-url", db, "--publisher", "northwind",
		"--buyer", "agency-1", "--operator", "agency.example"))

	// The leaked token at work on both replicas.
	const path = "/admin/v1/publishers/northwind"
	if status, _, body := adminDo(t, r1.BaseURL, leaked, "PUT", path+"/voice", `{"seller_name":"Northwind Media","tone":"formal"}`, "If-Match", `"1"`); status != 200 {
		t.Fatalf("PUT /voice with the leaked token on replica 1: %d %s", status, body)
	}
	if status, _, body := adminDo(t, r2.BaseURL, leaked, "PUT", path+"/accounts/acct_leak", `{"operator":"agency.example","brand_domain":"leak.example","disclosure_cap":"exact"}`); status != 200 {
		t.Fatalf("PUT /accounts with the leaked token on replica 2: %d %s", status, body)
	}
	for _, r := range []*testenv.Env{r1, r2} {
		if status, _, body := adminDo(t, r.BaseURL, leaked, "GET", "/admin/v1/whoami", ""); status != 200 {
			t.Fatalf("whoami with the leaked token: %d %s", status, body)
		}
		if getProductsWith(t, r.BaseURL, buyer)["status"] != "completed" {
			t.Fatal("the buyer token was refused before revocation")
		}
	}

	// Revoke both from the command line: the admin token by its leaked
	// secret, the buyer token by the id the list shows.
	out := mustRun(t, leaked+"\n", "admin", "token", "revoke", "--database-url", db, "--publisher", "northwind", "--stdin")
	revoked := time.Now()
	leakedID := tokenIDPattern.FindString(out)
	if leakedID == "" || !strings.Contains(out, "revoked") {
		t.Fatalf("admin token revoke said %q", out)
	}
	// Nothing caches tokens, so the very first request each replica gets
	// after the command returns is refused; the bar is within a second.
	var wg sync.WaitGroup
	for i, r := range []*testenv.Env{r1, r2} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if status, _, _ := adminDo(t, r.BaseURL, leaked, "GET", "/admin/v1/whoami", ""); status != 401 {
				t.Errorf("replica %d's first request after the revocation = %d, want 401", i+1, status)
			}
		}()
	}
	wg.Wait()
	took := time.Since(revoked)
	t.Logf("both replicas refused the revoked admin token %v after the command returned", took)
	if took > time.Second {
		t.Errorf("both replicas refused the admin token only after %v, want within a second", took)
	}
	for _, r := range []*testenv.Env{r1, r2} {
		if status, _, _ := adminDo(t, r.BaseURL, leaked, "PUT", path+"/voice", `{"seller_name":"Evil","tone":"formal"}`, "If-Match", `"2"`); status != 401 {
			t.Errorf("a write with the revoked token = %d, want 401", status)
		}
	}

	list := mustRun(t, "", "buyer", "token", "list", "--database-url", db, "--publisher", "northwind")
	if strings.Contains(list, buyer) {
		t.Fatalf("buyer token list shows a secret:\n%s", list)
	}
	var buyerID string
	for _, line := range strings.Split(list, "\n") {
		if strings.Contains(line, "agency-1") && strings.Contains(line, buyer[:17]) {
			buyerID = tokenIDPattern.FindString(line)
		}
	}
	if buyerID == "" {
		t.Fatalf("buyer token list does not show the token by its prefix %s:\n%s", buyer[:17], list)
	}
	mustRun(t, "", "buyer", "token", "revoke", "--database-url", db, "--publisher", "northwind", "--id", buyerID)
	revoked = time.Now()
	for i, r := range []*testenv.Env{r1, r2} {
		got := getProductsWith(t, r.BaseURL, buyer)
		if e, _ := got["adcp_error"].(map[string]any); got["status"] != "failed" || e["code"] != "AUTH_INVALID" && e["code"] != "AUTH_REQUIRED" {
			t.Errorf("replica %d answered a revoked buyer token with %v", i+1, got)
		}
	}
	if took := time.Since(revoked); took > time.Second {
		t.Errorf("refusing the buyer token on both replicas took %v, want within a second", took)
	}

	// The audit trail, on the command line and through either replica:
	// the revocation first, then what the leaked token did.
	audit := mustRun(t, "", "audit", "list", "--database-url", db, "--publisher", "northwind", "--token", leakedID)
	lines := strings.Split(strings.TrimSpace(audit), "\n")
	var actions []string
	for _, l := range lines[1:] {
		actions = append(actions, strings.Fields(l)[2])
	}
	if got := strings.Join(actions, " "); got != "token.revoke account.put voice.save token.create" {
		t.Errorf("audit list --token %s: actions %q, want the revocation, its two edits and its creation\n%s", leakedID, got, audit)
	}
	if !strings.Contains(lines[1], "command line (") || !strings.Contains(lines[2], "agency desk") || !strings.Contains(lines[2], "127.0.0.1") {
		t.Errorf("audit list does not say who did what from where:\n%s", audit)
	}
	status, _, body := adminDo(t, r2.BaseURL, r1.AdminToken, "GET", path+"/audit?token="+leakedID, "")
	if status != 200 || !strings.Contains(string(body), `"action":"token.revoke"`) || !strings.Contains(string(body), `"action":"account.put"`) {
		t.Errorf("GET /audit?token= on replica 2 = %d %s", status, body)
	}
	if out, errOut, err := runIn(t, "", "audit", "verify", "--database-url", db); err != nil || !strings.Contains(out, "northwind: ok") {
		t.Errorf("audit verify: %v\n%s%s", err, out, errOut)
	}
}

// getProductsWith calls get_products over MCP with a buyer token.
func getProductsWith(t *testing.T, base, token string) map[string]any {
	t.Helper()
	return getProductsAuth(t, base, token, `{"buying_mode":"brief","brief":"coffee","account":{"brand":{"domain":"brand.example"},"operator":"agency.example"}}`)
}

// TestTokenCommands: create with expiry, list (never a secret), rotate
// with and without overlap, revoke twice, and the errors a person meets.
func TestTokenCommands(t *testing.T) {
	db := pgtest.NewDatabase(t)
	r := testenv.Start(t, "--database-url", db, "--seed-demo")
	base := []string{"--database-url", db, "--publisher", "northwind"}
	cmd := func(words ...string) []string { return append(words, base...) }

	secret := strings.TrimSpace(mustRun(t, "", append(cmd("admin", "token", "create"), "--name", "ops", "--expires-in", "720h")...))
	list := mustRun(t, "", cmd("admin", "token", "list")...)
	if strings.Contains(list, secret) || strings.Contains(list, r.AdminToken) {
		t.Fatalf("admin token list shows a secret:\n%s", list)
	}
	var opsLine string
	for _, l := range strings.Split(list, "\n") {
		if strings.Contains(l, secret[:17]) {
			opsLine = l
		}
	}
	for _, want := range []string{"ops", "admin API of northwind", testenv.Clock.Format("2006-01-02 15:04Z"), testenv.Clock.AddDate(0, 0, 30).Format("2006-01-02 15:04Z"), "active", "never"} {
		if !strings.Contains(opsLine, want) {
			t.Errorf("the ops token's line lacks %q: %q", want, opsLine)
		}
	}
	id := tokenIDPattern.FindString(opsLine)

	// Rotate with an overlap: both work (the storefront's clock stands
	// still here); the new secret is printed once.
	next := strings.TrimSpace(mustRun(t, "", append(cmd("admin", "token", "rotate"), "--id", id, "--overlap", "1h")...))
	if !strings.HasPrefix(next, "sf_admin_") || next == secret {
		t.Fatalf("rotate printed %q", next)
	}
	for _, s := range []string{secret, next} {
		if status, _, _ := adminDo(t, r.BaseURL, s, "GET", "/admin/v1/whoami", ""); status != 200 {
			t.Errorf("during the overlap a token was refused: %d", status)
		}
	}
	if _, _, err := runIn(t, "", append(cmd("admin", "token", "rotate"), "--id", id)...); err == nil || !strings.Contains(err.Error(), "already rotated") {
		t.Errorf("rotating a rotated token: %v", err)
	}
	// Rotate without overlap, naming the token by its secret.
	third := strings.TrimSpace(mustRun(t, next+"\n", append(cmd("admin", "token", "rotate"), "--stdin", "--overlap", "0s")...))
	if status, _, _ := adminDo(t, r.BaseURL, next, "GET", "/admin/v1/whoami", ""); status != 401 {
		t.Errorf("the token rotated without overlap = %d, want 401", status)
	}
	if status, _, _ := adminDo(t, r.BaseURL, third, "GET", "/admin/v1/whoami", ""); status != 200 {
		t.Errorf("the newest token = %d, want 200", status)
	}
	list = mustRun(t, "", cmd("admin", "token", "list")...)
	if !strings.Contains(list, "rotated (replaced by") || !strings.Contains(list, "revoked (replaced by") {
		t.Errorf("the list does not show the rotations:\n%s", list)
	}

	// Revoking twice says so the second time; unknown tokens and wrong
	// kinds are refused plainly.
	mustRun(t, third+"\n", append(cmd("admin", "token", "revoke"), "--stdin")...)
	if out := mustRun(t, third+"\n", append(cmd("admin", "token", "revoke"), "--stdin")...); !strings.Contains(out, "already revoked") {
		t.Errorf("revoking again said %q", out)
	}
	for _, bad := range []struct {
		stdin string
		args  []string
		want  string
	}{
		{"", append(cmd("admin", "token", "revoke"), "--id", "tok_0000000000000000"), "no such admin token"},
		{r.BuyerToken + "\n", append(cmd("admin", "token", "revoke"), "--stdin"), "no such admin token"},
		{"", cmd("admin", "token", "revoke"), "--id"},
		{"", append(cmd("admin", "token", "revoke"), "--id", id, "--stdin"), "--id"},
		{"\n", append(cmd("admin", "token", "revoke"), "--stdin"), "no secret"},
		{"", []string{"admin", "token", "list", "--database-url", db, "--publisher", "nobody"}, "no publisher"},
		{"", append(cmd("buyer", "token", "create"), "--buyer", "b", "--operator", "Bad"), "--operator"},
		{"", append(cmd("admin", "token", "create"), "--name", ""), "--name"},
		{"", append(cmd("audit", "list"), "--action", "token.steal"), "not an audit action"},
	} {
		if _, _, err := runIn(t, bad.stdin, bad.args...); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("storefront %s: %v, want an error saying %q", strings.Join(bad.args, " "), err, bad.want)
		}
	}
	if _, _, err := runIn(t, "", "admin", "token", "list", "--publisher", "northwind"); err == nil || !strings.Contains(err.Error(), "DATABASE_URL") {
		t.Errorf("admin token list without a database: %v", err)
	}
}

// TestDemoTokenNeverRescoped: a fixed demo admin token that is already
// another publisher's admin token is refused at start, and that token
// keeps its publisher. Restarting with the demo publisher's own fixed
// token keeps it, and a revoked one stays refused.
func TestDemoTokenNeverRescoped(t *testing.T) {
	db := pgtest.NewDatabase(t)
	fixed := "sf_admin_" + strings.Repeat("5eed", 12)
	r := testenv.Start(t, "--database-url", db, "--seed-demo", "--demo-admin-token", fixed)
	mustRun(t, "", "admin", "publisher", "create", "--database-url", db, "--publisher", "lakeside", "--name", "Lakeside Media", "--domain", "lakeside.example")
	lakeside := strings.TrimSpace(mustRun(t, "", "admin", "token", "create", "--database-url", db, "--publisher", "lakeside"))

	_, _, err := runIn(t, "", "serve", "--addr", "127.0.0.1:0", "--database-url", db, "--demo-admin-token", lakeside)
	if err == nil || !strings.Contains(err.Error(), "never changed") {
		t.Fatalf("serve with another publisher's token as the demo token: %v, want a refusal", err)
	}
	if status, _, body := adminDo(t, r.BaseURL, lakeside, "GET", "/admin/v1/whoami", ""); status != 200 || !strings.Contains(string(body), `"publisher":"lakeside"`) {
		t.Errorf("after the refused start, lakeside's token: %d %s, want it still lakeside's", status, body)
	}
	_, _, err = runIn(t, "", "serve", "--addr", "127.0.0.1:0", "--database-url", db, "--demo-buyer-token", fixed)
	if err == nil || !strings.Contains(err.Error(), "never changed") {
		t.Errorf("serve with the demo admin token as the demo buyer token: %v, want a refusal", err)
	}

	// The same fixed token again is kept; revoked, it stays refused.
	again := testenv.Start(t, "--database-url", db, "--demo-admin-token", fixed)
	if again.AdminToken != fixed {
		t.Errorf("a restart printed the demo admin token %q, want %q", again.AdminToken, fixed)
	}
	mustRun(t, fixed+"\n", "admin", "token", "revoke", "--database-url", db, "--publisher", "northwind", "--stdin")
	revived := testenv.Start(t, "--database-url", db, "--demo-admin-token", fixed)
	if !strings.Contains(revived.Output(), "revoked: it is refused") {
		t.Errorf("a restart with a revoked demo token did not say it is refused:\n%s", revived.Output())
	}
	if status, _, _ := adminDo(t, revived.BaseURL, fixed, "GET", "/admin/v1/whoami", ""); status != 401 {
		t.Errorf("a revoked demo token came back to life on restart: %d", status)
	}
}

// TestAuditVerifyNamesTamperedEntry alters and then truncates the audit
// trail behind the storefront's back: audit verify exits non-zero and
// names the entry.
func TestAuditVerifyNamesTamperedEntry(t *testing.T) {
	db := pgtest.NewDatabase(t)
	r := testenv.Start(t, "--database-url", db, "--seed-demo")
	for i := range 4 {
		if status, _, body := adminDo(t, r.BaseURL, r.AdminToken, "PUT", "/admin/v1/publishers/northwind/voice",
			fmt.Sprintf(`{"seller_name":"Northwind Media %d","tone":"formal"}`, i), "If-Match", fmt.Sprintf(`"%d"`, i+1)); status != 200 {
			t.Fatalf("PUT /voice: %d %s", status, body)
		}
	}
	if out, errOut, err := runIn(t, "", "audit", "verify", "--database-url", db); err != nil || !strings.Contains(out, "northwind: ok, 6 audit entries") {
		t.Fatalf("untouched trail: %v\n%s%s", err, out, errOut)
	}
	conn, err := pgx.Connect(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	for _, step := range []struct{ sql, want string }{
		// Someone rewrites who made edit 4, then puts it back...
		{`UPDATE audit_entries SET actor = 'someone else' WHERE publisher_id = 'northwind' AND sequence = 4`, "BROKEN at sequence 4"},
		{`UPDATE audit_entries SET actor = 'demo' WHERE publisher_id = 'northwind' AND sequence = 4`, ""},
		// ...then deletes the newest entry, the one no later link covers.
		{`DELETE FROM audit_entries WHERE publisher_id = 'northwind' AND sequence = 6`, "BROKEN at sequence 6"},
	} {
		if _, err := conn.Exec(context.Background(), step.sql); err != nil {
			t.Fatal(err)
		}
		out, errOut, err := runIn(t, "", "audit", "verify", "--database-url", db, "--publisher", "northwind")
		var coder interface{ ExitCode() int }
		switch {
		case step.want == "" && err != nil:
			t.Errorf("after %s: %v\n%s%s", step.sql, err, out, errOut)
		case step.want != "" && (!errors.As(err, &coder) || coder.ExitCode() == 0 || !strings.Contains(out, step.want)):
			t.Errorf("after %s: err %v, output %q, want a non-zero exit naming %q", step.sql, err, out, step.want)
		}
	}
}
