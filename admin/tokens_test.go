package admin_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/labstack/echo/v4"

	"github.com/storefront/storefront/admin"
	"github.com/storefront/storefront/internal/testenv"
	"github.com/storefront/storefront/products"
	"github.com/storefront/storefront/store"
	"github.com/storefront/storefront/store/memstore"
	minting "github.com/storefront/storefront/tokens"
)

type tokenView struct {
	ID         string         `json:"id"`
	Kind       string         `json:"kind"`
	Name       string         `json:"name"`
	Prefix     string         `json:"prefix"`
	Buyer      map[string]any `json:"buyer"`
	CreatedAt  time.Time      `json:"created_at"`
	CreatedBy  string         `json:"created_by"`
	LastUsedAt *time.Time     `json:"last_used_at"`
	ExpiresAt  *time.Time     `json:"expires_at"`
	RevokedAt  *time.Time     `json:"revoked_at"`
	Replaces   string         `json:"replaces"`
	ReplacedBy string         `json:"replaced_by"`
	Status     string         `json:"status"`
}

type minted struct {
	Token    string    `json:"token"`
	Record   tokenView `json:"record"`
	Replaced tokenView `json:"replaced"`
}

func decode[T any](t *testing.T, r response) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(r.Body, &v); err != nil {
		t.Fatalf("decoding %s: %v", r.Body, err)
	}
	return v
}

func mint(t *testing.T, c client, path, body string) minted {
	t.Helper()
	r := c.do("POST", pub+path, body)
	if r.Status != http.StatusCreated {
		t.Fatalf("POST %s %s = %d %s", path, body, r.Status, r.Body)
	}
	return decode[minted](t, r)
}

func tokens(t *testing.T, c client, query string) map[string]tokenView {
	t.Helper()
	r := c.do("GET", pub+"/tokens"+query, "")
	if r.Status != 200 {
		t.Fatalf("GET /tokens%s = %d %s", query, r.Status, r.Body)
	}
	out := map[string]tokenView{}
	for _, v := range decode[struct{ Tokens []tokenView }](t, r).Tokens {
		out[v.ID] = v
	}
	return out
}

type auditEntry struct {
	Sequence int64             `json:"sequence"`
	Time     time.Time         `json:"time"`
	Actor    string            `json:"actor"`
	TokenID  string            `json:"token_id"`
	Action   string            `json:"action"`
	Target   string            `json:"target"`
	Detail   map[string]string `json:"detail"`
	Address  string            `json:"address"`
}

func trail(t *testing.T, c client, query string) []auditEntry {
	t.Helper()
	r := c.do("GET", pub+"/audit"+query, "")
	if r.Status != 200 {
		t.Fatalf("GET /audit%s = %d %s", query, r.Status, r.Body)
	}
	return decode[struct{ Entries []auditEntry }](t, r).Entries
}

func whoami(t *testing.T, c client) map[string]any {
	t.Helper()
	r := c.do("GET", "/admin/v1/whoami", "")
	if r.Status != 200 {
		t.Fatalf("whoami = %d %s", r.Status, r.Body)
	}
	return r.json(t)
}

// buyerCall makes a get_products call over MCP with a buyer token and
// reports whether the token was accepted.
func buyerCall(t *testing.T, base, token string) bool {
	t.Helper()
	m, failed := testenv.CallTool(t, base, token, "get_products",
		`{"buying_mode":"brief","brief":"coffee","account":{"brand":{"domain":"brand.example"},"operator":"agency.example"}}`)
	if failed {
		if e, _ := m["adcp_error"].(map[string]any); e["code"] == "AUTH_INVALID" {
			return false
		}
	}
	if m["status"] != "completed" {
		t.Fatalf("get_products with a buyer token: %v", m)
	}
	return true
}

// TestTokenLifecycle creates, lists, uses, rotates and revokes tokens
// through the admin API, and finds each step in the audit trail.
func TestTokenLifecycle(t *testing.T) {
	env := testenv.Start(t)
	c := client{t, env.BaseURL, env.AdminToken}
	demoID := whoami(t, c)["token_id"].(string)
	if !strings.HasPrefix(demoID, "tok_") {
		t.Fatalf("whoami token_id = %q", demoID)
	}

	ops := mint(t, c, "/tokens", `{"kind":"admin","name":"ops desk","expires_in":"720h"}`)
	if !strings.HasPrefix(ops.Token, "sf_admin_") || ops.Record.Prefix != ops.Token[:17] || ops.Record.Status != "active" ||
		ops.Record.CreatedBy != demoID || ops.Record.Kind != "admin" || ops.Record.Buyer != nil {
		t.Errorf("created admin token = %+v (secret %s)", ops.Record, ops.Token)
	}
	if ops.Record.ExpiresAt == nil || !ops.Record.ExpiresAt.Equal(testenv.Clock.Add(720*time.Hour)) || !ops.Record.CreatedAt.Equal(testenv.Clock) {
		t.Errorf("created at %v, expires at %v; want the storefront's clock %v and 720h after it", ops.Record.CreatedAt, ops.Record.ExpiresAt, testenv.Clock)
	}
	agency := mint(t, c, "/tokens", `{"kind":"buyer","name":"agency one","buyer":{"id":"agency-1","operator":"agency.example","accounts":["acct_a"]}}`)
	if !strings.HasPrefix(agency.Token, "sf_buyer_") || agency.Record.Buyer["id"] != "agency-1" || agency.Record.ExpiresAt != nil {
		t.Errorf("created buyer token = %+v", agency.Record)
	}

	for _, bad := range []struct{ body, pointer string }{
		{`{"kind":"root","name":"x"}`, "/kind"},
		{`{"kind":"admin","name":""}`, "/name"},
		{`{"kind":"admin","name":"x","expires_in":"-1h"}`, "/expires_in"},
		{`{"kind":"admin","name":"x","expires_in":"forever"}`, "/expires_in"},
		{`{"kind":"admin","name":"x","expires_in":"100000h"}`, "/expires_in"},
		{`{"kind":"buyer","name":"x"}`, "/buyer"},
		{`{"kind":"buyer","name":"x","buyer":{"id":"b","operator":"Not A Domain"}}`, "/buyer/operator"},
		{`{"kind":"admin","name":"x","buyer":{"id":"b","operator":"agency.example"}}`, "/buyer"},
	} {
		wantProblem(t, c.do("POST", pub+"/tokens", bad.body), http.StatusUnprocessableEntity, bad.pointer)
	}

	// The new admin token works at once and its use is recorded.
	opsClient := client{t, env.BaseURL, ops.Token}
	if got := whoami(t, opsClient); got["token_id"] != ops.Record.ID || got["token_name"] != "ops desk" {
		t.Errorf("whoami with the new token = %v", got)
	}
	if r := opsClient.do("PUT", pub+"/voice", `{"seller_name":"Northwind Media","tone":"formal"}`, "If-Match", `"1"`); r.Status != 200 {
		t.Fatalf("PUT /voice with the new token: %d %s", r.Status, r.Body)
	}
	if !buyerCall(t, env.BaseURL, agency.Token) {
		t.Fatal("the new buyer token was refused")
	}

	// The list: every token's record and state, never a secret.
	r := c.do("GET", pub+"/tokens", "")
	for _, secret := range []string{env.AdminToken, env.BuyerToken, ops.Token, agency.Token} {
		if strings.Contains(string(r.Body), secret) || strings.Contains(string(r.Body), store.TokenDigest(secret)) {
			t.Errorf("the token list shows a secret or its digest: %s", r.Body)
		}
	}
	list := tokens(t, c, "")
	if len(list) != 4 {
		t.Errorf("GET /tokens lists %d tokens, want the 2 demo tokens and the 2 new ones", len(list))
	}
	if v := list[ops.Record.ID]; v.LastUsedAt == nil || !v.LastUsedAt.Equal(testenv.Clock) {
		t.Errorf("the ops token's last use = %v, want %v", v.LastUsedAt, testenv.Clock)
	}
	if v := list[agency.Record.ID]; v.LastUsedAt == nil {
		t.Error("the buyer token's use was not recorded")
	}
	for id, v := range tokens(t, c, "?kind=buyer") {
		if v.Kind != "buyer" {
			t.Errorf("?kind=buyer listed %s, a %s token", id, v.Kind)
		}
	}
	wantProblem(t, c.do("GET", pub+"/tokens?kind=root", ""), http.StatusBadRequest, "/kind")
	if r := c.do("GET", pub+"/tokens/"+ops.Record.ID, ""); r.Status != 200 || decode[tokenView](t, r).Name != "ops desk" {
		t.Errorf("GET /tokens/{id} = %d %s", r.Status, r.Body)
	}
	wantProblem(t, c.do("GET", pub+"/tokens/tok_nonesuch", ""), http.StatusNotFound, "")
	wantProblem(t, c.do("POST", pub+"/tokens/tok_nonesuch/revoke", ""), http.StatusNotFound, "")

	// Rotation: the successor works, and so does the old token during
	// the overlap (the storefront's clock stands still in this test).
	rot := mint(t, c, "/tokens/"+agency.Record.ID+"/rotate", `{"overlap":"1h"}`)
	if rot.Record.Replaces != agency.Record.ID || rot.Replaced.ReplacedBy != rot.Record.ID || rot.Replaced.Status != "rotated" ||
		rot.Record.Buyer["id"] != "agency-1" || rot.Token == agency.Token {
		t.Errorf("rotation = %+v replacing %+v", rot.Record, rot.Replaced)
	}
	if rot.Replaced.ExpiresAt == nil || !rot.Replaced.ExpiresAt.Equal(testenv.Clock.Add(time.Hour)) {
		t.Errorf("the rotated token works until %v, want an hour after %v", rot.Replaced.ExpiresAt, testenv.Clock)
	}
	if !buyerCall(t, env.BaseURL, rot.Token) || !buyerCall(t, env.BaseURL, agency.Token) {
		t.Error("during the overlap both the new and the old buyer token must work")
	}
	wantProblem(t, c.do("POST", pub+"/tokens/"+agency.Record.ID+"/rotate", `{"overlap":"1h"}`), http.StatusConflict, "")
	wantProblem(t, c.do("POST", pub+"/tokens/"+rot.Record.ID+"/rotate", `{"overlap":"45d"}`), http.StatusUnprocessableEntity, "/overlap")
	// Without an overlap the old token is refused at once.
	now := mint(t, c, "/tokens/"+rot.Record.ID+"/rotate", `{}`)
	if now.Replaced.Status != "revoked" || buyerCall(t, env.BaseURL, rot.Token) || !buyerCall(t, env.BaseURL, now.Token) {
		t.Errorf("a rotation without overlap left the old token %s", now.Replaced.Status)
	}

	// Revocation: refused from the very next request.
	rev := c.do("POST", pub+"/tokens/"+ops.Record.ID+"/revoke", "")
	if rev.Status != 200 || decode[tokenView](t, rev).Status != "revoked" {
		t.Fatalf("revoke = %d %s", rev.Status, rev.Body)
	}
	wantProblem(t, opsClient.do("GET", "/admin/v1/whoami", ""), http.StatusUnauthorized, "")
	wantProblem(t, opsClient.do("PUT", pub+"/voice", `{"seller_name":"Northwind Media","tone":"warm"}`, "If-Match", `"2"`), http.StatusUnauthorized, "")
	if r := c.do("POST", pub+"/tokens/"+ops.Record.ID+"/revoke", ""); r.Status != 200 {
		t.Errorf("revoking again = %d %s, want 200 and no change", r.Status, r.Body)
	}

	// The trail: who did what with which token, from where, newest first.
	all := trail(t, c, "")
	want := []struct{ action, target, token string }{
		{"token.revoke", ops.Record.ID, demoID},
		{"token.rotate", rot.Record.ID, demoID},
		{"token.rotate", agency.Record.ID, demoID},
		{"voice.save", "rulebook", ops.Record.ID},
		{"token.create", agency.Record.ID, demoID},
		{"token.create", ops.Record.ID, demoID},
	}
	if len(all) < len(want) {
		t.Fatalf("the audit trail has %d entries, want at least %d: %+v", len(all), len(want), all)
	}
	for i, w := range want {
		e := all[i]
		if e.Action != w.action || e.Target != w.target || e.TokenID != w.token || e.Address != "127.0.0.1" || !e.Time.Equal(testenv.Clock) {
			t.Errorf("audit entry %d = %+v, want %s of %s by %s from 127.0.0.1 at %v", i, e, w.action, w.target, w.token, testenv.Clock)
		}
	}
	if all[0].Actor != "demo" || all[3].Actor != "ops desk" || all[0].Detail["prefix"] != ops.Record.Prefix {
		t.Errorf("audit actors %q and %q, revocation detail %v", all[0].Actor, all[3].Actor, all[0].Detail)
	}
	// A token's entries: what it did and what was done to it.
	mine := trail(t, c, "?token="+ops.Record.ID)
	var got []string
	for _, e := range mine {
		got = append(got, e.Action)
	}
	if strings.Join(got, " ") != "token.revoke voice.save token.create" {
		t.Errorf("the ops token's trail = %v, want its revocation, its voice save and its creation", got)
	}
	if got := trail(t, c, "?action=token.rotate&limit=1"); len(got) != 1 || got[0].Target != rot.Record.ID {
		t.Errorf("?action=token.rotate&limit=1 = %+v", got)
	}
	wantProblem(t, c.do("GET", pub+"/audit?action=token.steal", ""), http.StatusBadRequest, "/action")
	if r := c.do("GET", pub+"/audit/verify", ""); r.Status != 200 || r.json(t)["ok"] != true {
		t.Errorf("GET /audit/verify = %d %s", r.Status, r.Body)
	}
}

// TestAuditRecordsEveryAdminWrite: each admin route that changes
// something leaves exactly one audit entry naming what it changed; a
// refused write leaves none.
func TestAuditRecordsEveryAdminWrite(t *testing.T) {
	env := testenv.Start(t)
	c := client{t, env.BaseURL, env.AdminToken}
	rb := c.do("GET", pub+"/rulebook", "").json(t)["rulebook"]
	doc, _ := json.Marshal(rb)
	product := c.do("GET", pub+"/products", "").json(t)["products"].([]any)[0].(map[string]any)
	product["product_id"] = "audit-probe"
	pdoc, _ := json.Marshal(product)
	// A buy made at once, for a delivery report, and two orders waiting
	// for the desk.
	bought := buyTool(t, env, "create_media_buy", buyArgs("audit-buy-0000000001", "5000"))
	buyID, _ := bought["media_buy_id"].(string)
	pkgs, _ := bought["packages"].([]any)
	if buyID == "" || len(pkgs) != 1 {
		t.Fatalf("create_media_buy = %v, want a buy with one package", bought)
	}
	pkgID := pkgs[0].(map[string]any)["package_id"].(string)
	var orders []string
	for i, budget := range []string{"120000", "130000"} {
		o := buyTool(t, env, "create_media_buy", buyArgs(fmt.Sprintf("audit-order-000000000%d", i), budget))
		id, _ := o["task_id"].(string)
		if o["status"] != "submitted" || id == "" {
			t.Fatalf("create_media_buy over the review threshold = %v, want an order for the desk", o)
		}
		orders = append(orders, id)
	}
	row := func(date string, impressions int) string {
		return fmt.Sprintf(`{"media_buy_id":%q,"package_id":%q,"date":%q,"impressions":%d,"spend":12.5}`, buyID, pkgID, date, impressions)
	}
	for _, step := range []struct {
		method, path, body string
		headers            []string
		action, target     string
		detail             map[string]string
	}{
		{"PUT", "/rulebook", string(doc), []string{"If-Match", `"1"`, "X-Change-Note", "same rules"}, "rulebook.save", "rulebook",
			map[string]string{"version": "2", "previous_version": "1", "note": "same rules"}},
		{"POST", "/rulebook/rollback", `{"version":1}`, []string{"If-Match", `"2"`}, "rulebook.rollback", "rulebook",
			map[string]string{"version": "3", "previous_version": "2", "note": "rollback to version 1"}},
		{"PUT", "/voice", `{"seller_name":"Northwind Media","tone":"formal"}`, []string{"If-Match", `"3"`}, "voice.save", "rulebook",
			map[string]string{"version": "4", "previous_version": "3", "note": "voice"}},
		{"PUT", "/products/audit-probe", string(pdoc), nil, "product.put", "audit-probe",
			map[string]string{"products_put": "1", "products_deleted": "0"}},
		{"DELETE", "/products/audit-probe", "", nil, "product.delete", "audit-probe",
			map[string]string{"products_put": "0", "products_deleted": "1"}},
		{"POST", "/catalogue/import?format=jsonl", string(pdoc) + "\n", []string{"X-Change-Note", "feed"}, "catalogue.import", "catalogue",
			map[string]string{"products_put": "1", "products_deleted": "0", "mode": "merge", "lines": "1", "note": "feed"}},
		// Back to the catalogue before the import: the probe goes again.
		{"POST", "/catalogue/rollback", "", nil, "catalogue.rollback", "catalogue",
			map[string]string{"products_put": "0", "products_deleted": "1"}},
		{"PUT", "", `{"name":"Northwind Media","domain":"northwind.example","anonymous_discovery":true}`, nil, "publisher.update", "northwind",
			map[string]string{"name": "Northwind Media", "domain": "northwind.example", "anonymous_discovery": "true"}},
		{"PUT", "/accounts/acct_audit", `{"operator":"agency.example","brand_domain":"brand.example","disclosure_cap":"range"}`, nil, "account.put", "acct_audit",
			map[string]string{"operator": "agency.example", "brand_domain": "brand.example", "brand_id": "", "sandbox": "false", "disclosure_cap": "range"}},
		{"POST", "/buyer-tokens", `{"id":"agency-2","operator":"agency.example","expires_in":"24h"}`, nil, "token.create", "", nil},
		{"POST", "/signing-keys/rotate", "", nil, "signing_key.rotate", "", nil},
		{"POST", "/orders/" + orders[0] + "/approve", "{}", nil, "order.approve", orders[0],
			map[string]string{"total_budget": "120000", "currency": "USD"}},
		{"POST", "/orders/" + orders[1] + "/decline", `{"slug":"commercially_declined","reason":"Not this quarter."}`, nil, "order.decline", orders[1],
			map[string]string{"slug": "commercially_declined", "own_words": "true"}},
		{"POST", "/delivery", `{"rows":[` + row(testenv.Day(-2), 1000) + "," + row(testenv.Day(-1), 2000) + `]}`, nil, "delivery.report", "delivery",
			map[string]string{"rows": "2", "media_buys": "1", "first_day": testenv.Day(-2), "last_day": testenv.Day(-1)}},
	} {
		headers, body := step.headers, step.body
		if strings.HasPrefix(step.action, "product.") || strings.HasPrefix(step.action, "catalogue.") {
			etag := c.do("GET", pub+"/products", "").Header.Get("ETag")
			headers = append([]string{"If-Match", etag}, headers...)
			if step.action == "catalogue.rollback" {
				v, _ := strconv.ParseInt(strings.Trim(etag, `"`), 10, 64)
				body = fmt.Sprintf(`{"version":%d}`, v-1)
				step.detail["catalogue_version"] = strconv.FormatInt(v+1, 10)
				step.detail["note"] = fmt.Sprintf("rollback to version %d", v-1)
			}
		}
		before := len(trail(t, c, "?limit=1000"))
		if r := c.do(step.method, pub+step.path, body, headers...); r.Status != 200 && r.Status != 201 {
			t.Fatalf("%s %s = %d %s", step.method, step.path, r.Status, r.Body)
		}
		after := trail(t, c, "?limit=1000")
		if len(after) != before+1 {
			t.Fatalf("%s %s added %d audit entries, want 1", step.method, step.path, len(after)-before)
		}
		e := after[0]
		if e.Action != step.action || (step.target != "" && e.Target != step.target) || e.Address != "127.0.0.1" || e.Actor != "demo" {
			t.Errorf("%s %s recorded %+v, want %s of %s", step.method, step.path, e, step.action, step.target)
		}
		for k, v := range step.detail {
			if e.Detail[k] != v {
				t.Errorf("%s %s recorded detail %s = %q, want %q", step.method, step.path, k, e.Detail[k], v)
			}
		}
	}
	// Refused writes record nothing.
	before := len(trail(t, c, "?limit=1000"))
	wantProblem(t, c.do("PUT", pub+"/rulebook", string(doc), "If-Match", `"1"`), http.StatusPreconditionFailed, "")
	wantProblem(t, c.do("PUT", pub+"/accounts/acct_bad", `{"operator":"Bad","brand_domain":"brand.example"}`), http.StatusUnprocessableEntity, "/operator")
	wantProblem(t, c.do("POST", pub+"/tokens", `{"kind":"admin"}`), http.StatusUnprocessableEntity, "/name")
	etag := c.do("GET", pub+"/products", "").Header.Get("ETag")
	wantProblem(t, c.do("POST", pub+"/catalogue/import?format=jsonl", `{"product_id":"half-a-product"}`+"\n", "If-Match", etag), http.StatusUnprocessableEntity, "")
	wantProblem(t, c.do("POST", pub+"/catalogue/rollback", `{"version":99999}`, "If-Match", etag), http.StatusUnprocessableEntity, "/version")
	wantProblem(t, c.do("POST", pub+"/orders/"+orders[0]+"/approve", "{}"), http.StatusConflict, "")
	wantProblem(t, c.do("POST", pub+"/orders/"+orders[0]+"/decline", `{"slug":"commercially_declined"}`), http.StatusConflict, "")
	wantProblem(t, c.do("POST", pub+"/orders/nope/approve", "{}"), http.StatusNotFound, "")
	wantProblem(t, c.do("POST", pub+"/delivery", `{"rows":[`+row(testenv.Day(-1), 5)+`,{"media_buy_id":"mb_nope","package_id":"p","date":"`+testenv.Day(-1)+`","impressions":1,"spend":1}]}`),
		http.StatusUnprocessableEntity, "/rows/1/media_buy_id")
	if got := len(trail(t, c, "?limit=1000")); got != before {
		t.Errorf("refused writes added %d audit entries", got-before)
	}
}

// TestAccountPutAnswersStored: PUT /accounts/{id} answers with the account
// as stored, with its creation time, which a replacement keeps.
func TestAccountPutAnswersStored(t *testing.T) {
	env := testenv.Start(t)
	c := client{t, env.BaseURL, env.AdminToken}
	type account struct {
		ID         string    `json:"account_id"`
		Disclosure string    `json:"disclosure_cap"`
		CreatedAt  time.Time `json:"created_at"`
	}
	put := func(body string) account {
		r := c.do("PUT", pub+"/accounts/acct_stored", body)
		if r.Status != 200 {
			t.Fatalf("PUT account = %d %s", r.Status, r.Body)
		}
		return decode[account](t, r)
	}
	listed := func() account {
		for _, a := range decode[struct{ Accounts []account }](t, c.do("GET", pub+"/accounts", "")).Accounts {
			if a.ID == "acct_stored" {
				return a
			}
		}
		t.Fatal("the account is not listed")
		return account{}
	}
	first := put(`{"operator":"agency.example","brand_domain":"brand.example"}`)
	if first.CreatedAt.IsZero() || first != listed() {
		t.Errorf("PUT answered %+v; GET lists %+v", first, listed())
	}
	second := put(`{"operator":"agency.example","brand_domain":"brand.example","disclosure_cap":"none"}`)
	if second.Disclosure != "none" || !second.CreatedAt.Equal(first.CreatedAt) || second != listed() {
		t.Errorf("the replacing PUT answered %+v; first %+v; GET lists %+v", second, first, listed())
	}
}

// failingStore fails every catalogue read with err.
type failingStore struct {
	*memstore.Store
	err error
}

func (f failingStore) Catalogue(ctx context.Context, publisher string) ([]products.Product, int64, error) {
	return nil, 0, f.err
}

// TestUnavailableIsTyped: the admin API answers 503 when the store says
// it is unavailable, by type, and 500 for any other failure, whatever
// words its message holds.
func TestUnavailableIsTyped(t *testing.T) {
	for _, test := range []struct {
		name string
		err  error
		want int
	}{
		{"unavailable", fmt.Errorf("pgstore.Catalogue: %w: %w", store.ErrUnavailable, &pgconn.PgError{Code: "53300", Message: "sorry, too many clients already"}), 503},
		{"a constraint whose name mentions connecting", fmt.Errorf("pgstore.Catalogue: %w", &pgconn.PgError{Code: "23514", Message: `violates check constraint "connect_window"`}), 500},
		{"a message about a closed pool of candidates", errors.New("closed pool of candidates"), 500},
	} {
		t.Run(test.name, func(t *testing.T) {
			mem := memstore.New()
			ctx := t.Context()
			if err := mem.PutPublisher(ctx, products.Publisher{ID: "northwind", Name: "Northwind", Domain: "northwind.example"}); err != nil {
				t.Fatal(err)
			}
			secret, _, err := minting.Mint(ctx, mem, store.Token{Kind: store.AdminToken, Publisher: "northwind", Name: "ops", CreatedAt: testenv.Clock})
			if err != nil {
				t.Fatal(err)
			}
			s := failingStore{mem, test.err}
			e := echo.New()
			(&admin.Handler{Store: s, Log: slog.New(slog.DiscardHandler)}).Mount(e)
			ts := httptest.NewServer(e)
			defer ts.Close()
			r := client{t, ts.URL, secret}.do("GET", pub+"/products", "")
			wantProblem(t, r, test.want, "")
		})
	}
}
