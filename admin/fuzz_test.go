package admin_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/storefront/storefront/internal/kittest"
	"github.com/storefront/storefront/internal/schemagen"
	"github.com/storefront/storefront/internal/testenv"
)

// adminRoute is one admin API write (or query) the fuzz target sends:
// a valid body to break, and how its path parameter is chosen.
type adminRoute struct {
	method, path string // path may hold one {id}
	base         func(ft *adminFuzz) any
	// ids are the path parameters worth trying besides hostile ones.
	ids      func(ft *adminFuzz) []string
	versions bool // the route takes If-Match
	jsonl    bool // the body is JSON Lines
}

type adminFuzz struct {
	env                *testenv.Env
	rulebook, voice    any
	publisher, product any
	productID, tokenID string
	brief              map[string]any
	mu                 sync.Mutex
	logged             int
}

var (
	adminFuzzOnce sync.Once
	adminFuzzEnv  *adminFuzz
)

func (ft *adminFuzz) get(t testing.TB, path string) (any, http.Header) {
	rec := ft.send(http.MethodGet, path, "", "", "")
	if rec.Code != http.StatusOK {
		t.Fatalf("GET %s = %d %s", path, rec.Code, rec.Body.Bytes())
	}
	var v any
	if err := json.Unmarshal(rec.Body.Bytes(), &v); err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	return v, rec.Header()
}

func (ft *adminFuzz) send(method, path, contentType, body, ifMatch string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+ft.env.AdminToken)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if ifMatch != "" {
		req.Header.Set("If-Match", ifMatch)
	}
	rec := httptest.NewRecorder()
	ft.env.Main.Server.Echo.ServeHTTP(rec, req)
	return rec
}

func newAdminFuzz(f *testing.F) *adminFuzz {
	adminFuzzOnce.Do(func() {
		ft := &adminFuzz{env: testenv.Start(f, append([]string{"--sandbox"}, kittest.FuzzStoreArgs(f)...)...)}
		ft.rulebook, _ = ft.get(f, pub+"/rulebook")
		ft.voice, _ = ft.get(f, pub+"/voice")
		ft.publisher, _ = ft.get(f, pub)
		list, _ := ft.get(f, pub+"/products")
		if m, ok := list.(map[string]any); ok {
			if ps, ok := m["products"].([]any); ok && len(ps) > 0 {
				ft.productID, _ = ps[0].(map[string]any)["product_id"].(string)
			}
		}
		if ft.productID == "" {
			f.Fatalf("the demo catalogue lists no product: %v", list)
		}
		ft.product, _ = ft.get(f, pub+"/products/"+url.PathEscape(ft.productID))
		// A token of its own to revoke and rotate, so the fuzzer never
		// revokes the token it works with.
		rec := ft.send(http.MethodPost, pub+"/tokens", "application/json", `{"kind":"admin","name":"fuzz target"}`, "")
		var made struct {
			Record struct {
				ID string `json:"id"`
			} `json:"record"`
		}
		if json.Unmarshal(rec.Body.Bytes(), &made); made.Record.ID == "" {
			f.Fatalf("POST tokens = %d %s", rec.Code, rec.Body.Bytes())
		}
		ft.tokenID = made.Record.ID
		_ = json.Unmarshal([]byte(kittest.Brief), &ft.brief)
		adminFuzzEnv = ft
	})
	if adminFuzzEnv == nil {
		f.Fatal("the admin fuzz target could not start")
	}
	return adminFuzzEnv
}

var adminRoutes = []adminRoute{
	{method: "PUT", path: "", base: func(ft *adminFuzz) any { return ft.publisher }},
	{method: "PUT", path: "/products/{id}", base: func(ft *adminFuzz) any { return ft.product }, ids: func(ft *adminFuzz) []string { return []string{ft.productID, "fuzz_new_product"} }},
	{method: "DELETE", path: "/products/{id}", ids: func(ft *adminFuzz) []string { return []string{"fuzz_new_product", "no_such_product"} }},
	{method: "POST", path: "/catalogue/rollback", base: func(*adminFuzz) any { return map[string]any{"version": 1} }},
	{method: "PUT", path: "/rulebook", base: func(ft *adminFuzz) any { return ft.rulebook }, versions: true},
	{method: "POST", path: "/rulebook/validate", base: func(ft *adminFuzz) any { return ft.rulebook }},
	{method: "POST", path: "/rulebook/preview", base: func(ft *adminFuzz) any { return map[string]any{"rulebook": ft.rulebook, "request": ft.brief} }},
	{method: "POST", path: "/rulebook/rollback", base: func(*adminFuzz) any { return map[string]any{"version": 1} }, versions: true},
	{method: "PUT", path: "/voice", base: func(ft *adminFuzz) any { return ft.voice }, versions: true},
	{method: "POST", path: "/preview", base: func(ft *adminFuzz) any { return ft.brief }},
	{method: "POST", path: "/backtest", base: func(*adminFuzz) any { return map[string]any{"days": 30, "limit": 50} }},
	{method: "PUT", path: "/accounts/{id}", base: func(*adminFuzz) any {
		return map[string]any{"operator": "agency.example", "brand_domain": "brand.example", "sandbox": false, "disclosure_cap": "exact"}
	}, ids: func(*adminFuzz) []string { return []string{"acct_fuzz", "acct_demo"} }},
	{method: "POST", path: "/buyer-tokens", base: func(*adminFuzz) any { return map[string]any{"id": "fuzz-buyer", "operator": "agency.example"} }},
	{method: "POST", path: "/tokens", base: func(*adminFuzz) any {
		return map[string]any{"kind": "buyer", "name": "fuzz", "expires_in": "24h", "buyer": map[string]any{"id": "fuzz-buyer", "operator": "agency.example"}}
	}},
	{method: "POST", path: "/tokens/{id}/revoke", base: func(*adminFuzz) any { return map[string]any{} }, ids: func(ft *adminFuzz) []string { return []string{ft.tokenID} }},
	{method: "POST", path: "/tokens/{id}/rotate", base: func(*adminFuzz) any { return map[string]any{"overlap": "1m"} }, ids: func(ft *adminFuzz) []string { return []string{ft.tokenID} }},
	{method: "POST", path: "/orders/{id}/approve", base: func(*adminFuzz) any { return map[string]any{} }, ids: func(*adminFuzz) []string { return []string{"ord_1", "mb_1"} }},
	{method: "POST", path: "/orders/{id}/decline", base: func(*adminFuzz) any { return map[string]any{"slug": "budget_below_minimum", "reason": "too small"} }, ids: func(*adminFuzz) []string { return []string{"ord_1"} }},
	{method: "POST", path: "/delivery", base: func(*adminFuzz) any {
		return map[string]any{"rows": []any{map[string]any{"media_buy_id": "mb_1", "package_id": "pkg_1", "date": "2026-11-28", "impressions": 1000, "spend": 12.5}}}
	}},
	{method: "POST", path: "/signing-keys/rotate", base: func(*adminFuzz) any { return map[string]any{} }},
	{method: "POST", path: "/catalogue/import", base: func(ft *adminFuzz) any { return []any{ft.product} }, jsonl: true},
	{method: "GET", path: "/decisions?account={id}", ids: func(*adminFuzz) []string { return []string{"acct_demo"} }},
	{method: "GET", path: "/catalogue/diff?from={id}&to=1", ids: func(*adminFuzz) []string { return []string{"1"} }},
	{method: "GET", path: "/rulebook/versions/{id}", ids: func(*adminFuzz) []string { return []string{"1"} }},
}

// FuzzAdminWrites sends every admin API write, and the queries that take
// caller-chosen values, with valid bodies broken as the fuzzer chooses
// (or raw bytes), hostile path and query values and wrong If-Match
// versions. Whatever arrives, the answer is a success or a problem+json
// 4xx, never a 5xx, and after a write is accepted the publisher still
// reads back and still serves buyers a defined arm: nothing invalid is
// stored.
func FuzzAdminWrites(f *testing.F) {
	ft := newAdminFuzz(f)
	for i := range adminRoutes {
		f.Add(uint8(i), uint8(0), []byte{})
		f.Add(uint8(i), uint8(2), []byte("\x07\x03\x06\x01\x05\x02\x04"))
		f.Add(uint8(i), uint8(1), []byte(`{"name":"nul\u0000","domain":"not a domain <script>"}`))
	}
	f.Add(uint8(8), uint8(1), []byte(`null`))
	f.Fuzz(func(t *testing.T, route, mode uint8, data []byte) {
		r := adminRoutes[int(route)%len(adminRoutes)]
		done := make(chan struct{})
		var err error
		go func() { defer close(done); err = ft.run(r, mode, data) }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			buf := make([]byte, 1<<20)
			n := runtime.Stack(buf, true)
			t.Fatalf("%s %s (mode %d, data %q) has not answered in 20 s:\n%s", r.method, r.path, mode, data, buf[:n])
		}
		if err != nil {
			t.Fatal(err)
		}
	})
}

func (ft *adminFuzz) run(r adminRoute, mode uint8, data []byte) error {
	src := schemagen.NewSource(data)
	id := ""
	if r.ids != nil {
		ids := r.ids(ft)
		switch n := src.Intn(len(ids) + 3); {
		case n < len(ids):
			id = ids[n]
		case n == len(ids):
			id = "caf\xc3\x28" + string(rune(0x202e))
		case n == len(ids)+1:
			id = strings.Repeat("x", 5000)
		default:
			id = "a\x00b"
		}
	}
	path := pub + strings.ReplaceAll(r.path, "{id}", url.QueryEscape(id))
	var body string
	switch {
	case mode&1 == 1:
		body = string(data)
	case r.base != nil:
		doc := roundTrip(r.base(ft))
		doc = schemagen.Mutate(doc, src, 1+int(mode>>1)%4)
		if r.jsonl {
			var lines []string
			if list, ok := doc.([]any); ok {
				for _, l := range list {
					lines = append(lines, string(schemagen.Encode(l)))
				}
			} else {
				lines = append(lines, string(schemagen.Encode(doc)))
			}
			body = strings.Join(lines, "\n") + "\n"
		} else {
			body = string(schemagen.Encode(doc))
		}
	}
	ct := "application/json"
	if r.jsonl {
		ct = "application/x-ndjson"
	}
	ifMatch := ""
	if r.versions {
		ifMatch = []string{ft.currentVersion(r.path), `"0"`, `"999999"`, "not-a-version", ""}[src.Intn(5)]
	}
	rec := ft.send(r.method, path, ct, body, ifMatch)
	if err := ft.checkLog(r, body); err != nil {
		return err
	}
	if rec.Code >= 500 {
		return fmt.Errorf("%s %s with %q: HTTP %d\n%s", r.method, path, body, rec.Code, rec.Body.Bytes())
	}
	if rec.Code >= 400 {
		if ct := rec.Header().Get("Content-Type"); ct != "application/problem+json" {
			return fmt.Errorf("%s %s with %q: HTTP %d with Content-Type %q, want application/problem+json\n%s", r.method, path, body, rec.Code, ct, rec.Body.Bytes())
		}
		var p struct {
			Status int `json:"status"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil || p.Status != rec.Code {
			return fmt.Errorf("%s %s: problem %s does not carry its status %d", r.method, path, rec.Body.Bytes(), rec.Code)
		}
		return nil
	}
	if r.method == http.MethodGet {
		return nil
	}
	// Accepted: what was stored must still read back and serve.
	for _, read := range []string{pub, pub + "/rulebook", pub + "/voice", pub + "/products"} {
		if rec := ft.send(http.MethodGet, read, "", "", ""); rec.Code >= 500 || (rec.Code != http.StatusOK && read != pub+"/rulebook") {
			return fmt.Errorf("after %s %s with %q was accepted, GET %s = %d %s", r.method, path, body, read, rec.Code, rec.Body.Bytes())
		}
	}
	mcp := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_products","arguments":`+kittest.Brief+`}}`))
	mcp.Header.Set("Content-Type", "application/json")
	mcp.Header.Set("Accept", "application/json, text/event-stream")
	mcp.Header.Set("Authorization", "Bearer "+ft.env.BuyerToken)
	out := httptest.NewRecorder()
	ft.env.Main.Server.Echo.ServeHTTP(out, mcp)
	if out.Code != http.StatusOK || strings.Contains(out.Body.String(), `\"code\":\"INTERNAL`) {
		return fmt.Errorf("after %s %s with %q was accepted, get_products = %d %s", r.method, path, body, out.Code, out.Body.Bytes())
	}
	return ft.checkLog(r, body)
}

// currentVersion is the If-Match of the resource a versioned route writes.
func (ft *adminFuzz) currentVersion(path string) string {
	read := pub + "/rulebook"
	if path == "/voice" {
		read = pub + "/voice"
	}
	rec := ft.send(http.MethodGet, read, "", "", "")
	return rec.Header().Get("ETag")
}

func (ft *adminFuzz) checkLog(r adminRoute, body string) error {
	ft.mu.Lock()
	out := ft.env.Output()
	fresh := out[min(ft.logged, len(out)):]
	ft.logged = len(out)
	ft.mu.Unlock()
	if strings.Contains(fresh, "panic") {
		return fmt.Errorf("%s %s with %q: a panic reached a recover boundary:\n%s", r.method, r.path, body, fresh)
	}
	return nil
}

// roundTrip copies a decoded document, so mutations never reach the
// shared base.
func roundTrip(v any) any {
	b, _ := json.Marshal(v)
	var out any
	_ = json.Unmarshal(b, &out)
	return out
}
