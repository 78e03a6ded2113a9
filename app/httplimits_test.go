package app_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/storefront/storefront/bulk"
	"github.com/storefront/storefront/demo"
	"github.com/storefront/storefront/internal/rawhttp"
	"github.com/storefront/storefront/internal/testenv"
)

// limited starts the storefront with short timeouts and small bodies, so
// that a test can cross each in a second or two.
func limited(t *testing.T) (*testenv.Env, string) {
	t.Helper()
	env := testenv.Start(t, "--read-header-timeout", "1s", "--read-timeout", "2s", "--write-timeout", "3s", "--idle-timeout", "1s",
		"--max-header-bytes", "8KiB", "--mcp-max-body", "64KiB", "--a2a-max-body", "64KiB", "--admin-max-body", "64KiB",
		"--import-max-body", "256KiB")
	return env, strings.TrimPrefix(env.BaseURL, "http://")
}

// healthy fails the test unless /healthz answers 200.
func healthy(t *testing.T, env *testenv.Env) {
	t.Helper()
	resp, err := http.Get(env.BaseURL + "/healthz")
	if err != nil {
		t.Fatalf("/healthz after the attack: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/healthz after the attack = %d", resp.StatusCode)
	}
}

// surface is one way in that reads a body, with the start of a call to it
// and how its refusals look.
type surface struct {
	name, method, path string
	headers            []string
	// prefix starts a valid call; the tests pad it past the limit or
	// dribble the rest.
	prefix string
	// check inspects a refusal with the HTTP status want.
	check func(t *testing.T, r *rawhttp.Response, want int)
}

func surfaces(env *testenv.Env) []surface {
	return []surface{
		{name: "mcp", method: "POST", path: "/mcp", headers: []string{"Content-Type: application/json", "Accept: application/json, text/event-stream"},
			prefix: `{"jsonrpc":"2.0","id":41,"method":"tools/call","params":{"name":"get_products","arguments":{"buying_mode":"brief","brief":"`,
			check:  rpcRefusal("41", func(t *testing.T, data json.RawMessage) { adcpInvalid(t, data) })},
		{name: "a2a", method: "POST", path: "/a2a", headers: []string{"Content-Type: application/json", "A2A-Version: 1.0"},
			prefix: `{"jsonrpc":"2.0","id":"m-7","method":"SendMessage","params":{"message":{"messageId":"m-7","role":"ROLE_USER","parts":[{"data":{"skill":"get_products","input":{"buying_mode":"brief","brief":"`,
			check: rpcRefusal(`"m-7"`, func(t *testing.T, data json.RawMessage) {
				var details []map[string]any
				if err := json.Unmarshal(data, &details); err != nil {
					t.Fatalf("data = %s, want A2A typed details: %v", data, err)
				}
				found := false
				for _, d := range details {
					if e, ok := d["adcp_error"]; ok {
						b, _ := json.Marshal(e)
						adcpInvalid(t, json.RawMessage(`{"adcp_error":`+string(b)+`}`))
						found = true
					}
					if d["@type"] == "type.googleapis.com/google.rpc.ErrorInfo" && d["reason"] != "INVALID_REQUEST" {
						t.Errorf("ErrorInfo = %v, want reason INVALID_REQUEST", d)
					}
				}
				if !found {
					t.Errorf("data = %s: no detail carries the AdCP error", data)
				}
			})},
		{name: "admin", method: "PUT", path: "/admin/v1/publishers/northwind/voice",
			headers: []string{"Content-Type: application/json", "Authorization: Bearer " + env.AdminToken, `If-Match: "1"`},
			prefix:  `{"tone":"`, check: problem},
	}
}

// rpcRefusal checks a JSON-RPC Invalid Request error to id, with data
// checked by data.
func rpcRefusal(id string, data func(*testing.T, json.RawMessage)) func(*testing.T, *rawhttp.Response, int) {
	return func(t *testing.T, r *rawhttp.Response, want int) {
		t.Helper()
		var rpc struct {
			ID    json.RawMessage `json:"id"`
			Error struct {
				Code    int             `json:"code"`
				Message string          `json:"message"`
				Data    json.RawMessage `json:"data"`
			} `json:"error"`
		}
		if r.Status != want || r.Header.Get("Content-Type") != "application/json" || json.Unmarshal(r.Body, &rpc) != nil {
			t.Fatalf("answer = %d %s %s, want %d with a JSON-RPC error", r.Status, r.Header.Get("Content-Type"), r.Body, want)
		}
		if string(rpc.ID) != id || rpc.Error.Code != -32600 || rpc.Error.Message == "" {
			t.Errorf("answer = %s, want an Invalid Request error (-32600) to id %s", r.Body, id)
		}
		data(t, rpc.Error.Data)
	}
}

func adcpInvalid(t *testing.T, data json.RawMessage) {
	t.Helper()
	var d struct {
		AdcpError struct {
			Code, Message, Recovery string
		} `json:"adcp_error"`
	}
	if json.Unmarshal(data, &d) != nil || d.AdcpError.Code != "INVALID_REQUEST" || d.AdcpError.Recovery != "correctable" || d.AdcpError.Message == "" {
		t.Errorf("data = %s, want the AdCP error INVALID_REQUEST, correctable, with a message", data)
	}
}

func problem(t *testing.T, r *rawhttp.Response, want int) {
	t.Helper()
	var p struct {
		Status int    `json:"status"`
		Type   string `json:"type"`
		Detail string `json:"detail"`
	}
	if r.Status != want || r.Header.Get("Content-Type") != "application/problem+json" || json.Unmarshal(r.Body, &p) != nil ||
		p.Status != want || p.Type == "" || p.Detail == "" {
		t.Errorf("answer = %d %s %s, want a problem+json %d", r.Status, r.Header.Get("Content-Type"), r.Body, want)
	}
}

// TestSlowHeadIsCut: a client that dribbles its request's head is cut at
// the read-header timeout on every path: net/http closes the connection,
// with at most a bare 400 (a head cut off mid-line is a malformed one).
func TestSlowHeadIsCut(t *testing.T) {
	env, addr := limited(t)
	for _, path := range []string{"/healthz", "/mcp", "/admin/v1/whoami"} {
		lead := []byte("GET " + path + " HTTP/1.1\r\nHost: " + addr + "\r\n")
		rest := bytes.Repeat([]byte("X-Slow: a\r\n"), 100)
		r, err := rawhttp.Dribble(addr, lead, rest, 4, 100*time.Millisecond, 10*time.Second)
		if err == nil && (r.Status != http.StatusBadRequest || !r.Close) {
			t.Fatalf("%s: a dribbled head was answered %d %s, want the connection cut", path, r.Status, r.Body)
		}
		if r.Took < 900*time.Millisecond || r.Took > 5*time.Second {
			t.Errorf("%s: the dribbled head was cut after %s, want about the 1s read-header timeout", path, r.Took)
		}
	}
	healthy(t, env)
}

// TestSlowBodyIsCut: a client that sends its head and then dribbles the
// body is answered 408 at the read timeout, in its surface's terms (a
// JSON-RPC error naming the call, problem+json on admin), and the
// connection is closed.
func TestSlowBodyIsCut(t *testing.T) {
	env, addr := limited(t)
	for _, s := range surfaces(env) {
		t.Run(s.name, func(t *testing.T) {
			body := s.prefix + strings.Repeat("a", 2000)
			head := string(rawhttp.Request(addr, s.method, s.path, append(s.headers, "Content-Length: "+strconv.Itoa(len(body))), nil))
			lead := head + s.prefix
			r, err := rawhttp.Dribble(addr, []byte(lead), []byte(body[len(s.prefix):]), 1, 200*time.Millisecond, 15*time.Second)
			if err != nil {
				t.Fatalf("a dribbled body got no answer after %s: %v", r.Took, err)
			}
			if r.Took < 1500*time.Millisecond || r.Took > 6*time.Second {
				t.Errorf("the dribbled body was answered after %s, want about the 2s read timeout", r.Took)
			}
			s.check(t, r, http.StatusRequestTimeout)
			if !r.Close {
				t.Errorf("the connection is kept after a cut body: %v", r.Header)
			}
		})
	}
	healthy(t, env)
}

// TestOversizedBody: a body over its surface's limit is refused 413 in
// the surface's terms, whether its length is declared or it comes
// chunked; an import has its own limit, and the read-only surfaces take no
// body at all.
func TestOversizedBody(t *testing.T) {
	env, addr := limited(t)
	pad := strings.Repeat("a", 80<<10)
	for _, s := range surfaces(env) {
		for _, chunked := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/chunked=%v", s.name, chunked), func(t *testing.T) {
				body := []byte(s.prefix + pad + `"}}}`)
				headers := s.headers
				if chunked {
					headers, body = append(headers, "Transfer-Encoding: chunked"), rawhttp.Chunked(body, 8<<10)
				}
				r, err := rawhttp.Do(addr, rawhttp.Request(addr, s.method, s.path, headers, body), 10*time.Second)
				if err != nil {
					t.Fatal(err)
				}
				s.check(t, r, http.StatusRequestEntityTooLarge)
			})
		}
	}
	t.Run("import", func(t *testing.T) {
		var file bytes.Buffer
		base := demo.Products()
		for i := 0; file.Len() < 300<<10; i++ {
			p := base[i%len(base)]
			p.ProductID, p.InternalRef = fmt.Sprintf("big-%04d", i), ""
			file.Write(bulk.EncodeProduct(p))
		}
		for _, body := range [][]byte{file.Bytes(), rawhttp.Chunked(file.Bytes(), 32<<10)} {
			headers := []string{"Content-Type: application/x-ndjson", "Authorization: Bearer " + env.AdminToken, "If-Match: " + catalogueVersion(t, env)}
			if body[0] != '{' {
				headers = append(headers, "Transfer-Encoding: chunked")
			}
			r, err := rawhttp.Do(addr, rawhttp.Request(addr, "POST", "/admin/v1/publishers/northwind/catalogue/import", headers, body), 20*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			problem(t, r, http.StatusRequestEntityTooLarge)
		}
	})
	t.Run("read-only", func(t *testing.T) {
		for _, path := range []string{"/healthz", "/.well-known/agent-card.json", "/.well-known/brand.json", "/console/", "/metrics"} {
			r, err := rawhttp.Do(addr, rawhttp.Request(addr, "GET", path, nil, []byte("a body")), 10*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			if r.Status != http.StatusRequestEntityTooLarge {
				t.Errorf("GET %s with a body = %d %s, want 413", path, r.Status, r.Body)
			}
		}
	})
	healthy(t, env)
}

// TestOversizedHead: a head over --max-header-bytes is refused 431 before
// any surface sees it; one well within it is served.
func TestOversizedHead(t *testing.T) {
	env, addr := limited(t)
	for _, path := range []string{"/healthz", "/mcp", "/a2a", "/admin/v1/whoami"} {
		r, err := rawhttp.Do(addr, rawhttp.Request(addr, "GET", path, []string{"X-Big: " + strings.Repeat("b", 20<<10)}, nil), 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if r.Status != http.StatusRequestHeaderFieldsTooLarge {
			t.Errorf("GET %s with a 20 KiB header = %d, want 431", path, r.Status)
		}
	}
	r, err := rawhttp.Do(addr, rawhttp.Request(addr, "GET", "/healthz", []string{"X-Big: " + strings.Repeat("b", 4<<10)}, nil), 10*time.Second)
	if err != nil || r.Status != http.StatusOK {
		t.Errorf("GET /healthz with a 4 KiB header = %v %v, want 200", r, err)
	}
	healthy(t, env)
}

// TestIdleConnectionIsClosed: a kept-alive connection with no next
// request is closed at the idle timeout.
func TestIdleConnectionIsClosed(t *testing.T) {
	_, addr := limited(t)
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte("GET /healthz HTTP/1.1\r\nHost: " + addr + "\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	if r, err := rawhttp.Read(bufio.NewReader(conn)); err != nil || r.Status != http.StatusOK {
		t.Fatalf("GET /healthz on a kept-alive connection: %v %v", r, err)
	}
	took, closed := rawhttp.Closed(conn, 10*time.Second)
	if !closed || took < 800*time.Millisecond || took > 5*time.Second {
		t.Errorf("the idle connection: closed=%v after %s, want closed after about the 1s idle timeout", closed, took)
	}
}

// catalogueVersion is the demo catalogue's current version, as an import's
// If-Match names it.
func catalogueVersion(t *testing.T, env *testenv.Env) string {
	t.Helper()
	req, _ := http.NewRequest("GET", env.BaseURL+"/admin/v1/publishers/northwind/products?limit=1", nil)
	req.Header.Set("Authorization", "Bearer "+env.AdminToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("ETag") == "" {
		t.Fatalf("GET products = %d, ETag %q", resp.StatusCode, resp.Header.Get("ETag"))
	}
	return resp.Header.Get("ETag")
}

// pacedReader hands out b with a pause before each piece of piece bytes,
// so an upload lasts at least pieces × pause whatever the machine.
type pacedReader struct {
	b      []byte
	piece  int
	pause  time.Duration
	offset int
}

func (p *pacedReader) Read(buf []byte) (int, error) {
	if p.offset >= len(p.b) {
		return 0, io.EOF
	}
	left := p.piece - p.offset%p.piece
	if left == p.piece {
		time.Sleep(p.pause)
	}
	n := copy(buf[:min(len(buf), left)], p.b[p.offset:])
	p.offset += n
	return n, nil
}

// TestImportOutlivesTimeouts: a catalogue import is a bulk route, so an
// upload that lasts longer than the read and write timeouts together still
// saves, streamed or not. STOREFRONT_IMPORT_PRODUCTS sets the file's size
// (default 3,000 products; the README's figure is for 100,000).
func TestImportOutlivesTimeouts(t *testing.T) {
	n := 3000
	if s := os.Getenv("STOREFRONT_IMPORT_PRODUCTS"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil || n < 1 {
			t.Fatalf("STOREFRONT_IMPORT_PRODUCTS=%q: want a number of products", s)
		}
	}
	env := testenv.Start(t, "--read-header-timeout", "1s", "--read-timeout", "1s", "--write-timeout", "1s")
	var file bytes.Buffer
	base := demo.Products()
	for i := range n {
		p := base[i%len(base)]
		p.ProductID, p.InternalRef = fmt.Sprintf("paced-%06d", i), ""
		file.Write(bulk.EncodeProduct(p))
	}
	for _, accept := range []string{"application/json", "application/x-ndjson"} {
		// Forty pieces a tenth of a second apart: four seconds at least.
		body := &pacedReader{b: file.Bytes(), piece: file.Len()/40 + 1, pause: 100 * time.Millisecond}
		req, _ := http.NewRequest("POST", env.BaseURL+"/admin/v1/publishers/northwind/catalogue/import?mode=replace", body)
		req.Header.Set("Authorization", "Bearer "+env.AdminToken)
		req.Header.Set("Content-Type", "application/x-ndjson")
		req.Header.Set("Accept", accept)
		req.Header.Set("If-Match", catalogueVersion(t, env))
		start := time.Now()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("import (%s): %v", accept, err)
		}
		answer, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		took := time.Since(start)
		want := fmt.Sprintf(`"products":%d`, n)
		if err != nil || resp.StatusCode != http.StatusOK || !bytes.Contains(answer, []byte(`"saved":true`)) || !bytes.Contains(answer, []byte(want)) {
			t.Fatalf("import (%s) after %s = %d %v\n%.2000s", accept, took, resp.StatusCode, err, answer)
		}
		if took < 3*time.Second {
			t.Errorf("the paced import took %s: it should outlast the 1s timeouts several times over", took)
		}
		t.Logf("import of %d products (%s) took %s", n, accept, took)
	}
}

// TestRPCPathsAnswerJSONRPC: what the router answers on /mcp and /a2a (a
// method the endpoint does not serve, an unknown publisher) is a JSON-RPC
// error with the HTTP status, as every other answer there is.
func TestRPCPathsAnswerJSONRPC(t *testing.T) {
	env, addr := limited(t)
	for _, test := range []struct {
		method, path string
		status       int
	}{
		{"GET", "/mcp", http.StatusMethodNotAllowed},
		{"DELETE", "/mcp", http.StatusMethodNotAllowed},
		{"PUT", "/a2a", http.StatusMethodNotAllowed},
		{"GET", "/p/northwind/a2a", http.StatusMethodNotAllowed},
		{"POST", "/p/nobody/mcp", http.StatusNotFound},
		{"POST", "/p/nobody/a2a", http.StatusNotFound},
	} {
		r, err := rawhttp.Do(addr, rawhttp.Request(addr, test.method, test.path, []string{"Content-Type: application/json"}, []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)), 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		var rpc struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Error   struct{ Code int }
		}
		if r.Status != test.status || json.Unmarshal(r.Body, &rpc) != nil || rpc.JSONRPC != "2.0" || string(rpc.ID) != "null" || rpc.Error.Code != -32600 {
			t.Errorf("%s %s = %d %s, want %d with a JSON-RPC Invalid Request error", test.method, test.path, r.Status, r.Body, test.status)
		}
	}
	healthy(t, env)
}
