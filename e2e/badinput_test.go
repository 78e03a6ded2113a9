package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand"
	"mime"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/storefront/storefront/internal/rawhttp"
	"github.com/storefront/storefront/internal/spectest"
	"github.com/storefront/storefront/store/pgstore/pgtest"
)

// The bad-input suite's fixed demo tokens: fixed, so that the storefront
// can be started again on the same database after a crash.
const (
	badBuyerToken = "sf_buyer_badinput00000000000000000000000000000000000000"
	badAdminToken = "sf_admin_badinput00000000000000000000000000000000000000"
)

// batch is how many cases run between two health checks.
const batch = 40

// internalError is JSON-RPC's Internal error.
const internalError = -32603

// TestBadInput sends the real binary, on each store, well over 500
// malformed requests across MCP, A2A and the admin API (see
// badinput_cases_test.go): bodies that are not JSON or not UTF-8, a wrong
// type for every field of every tool's official request schema, numbers
// out of range, 10 MiB bodies, deep nesting, duplicate keys, abused
// headers, wrong methods, malformed admin writes and query parameters.
// After every batch the process must be alive and /healthz answer. It
// fails on any 5xx, crash, request left unanswered, answer of no defined
// arm (on MCP and A2A a JSON-RPC error, or an AdCP object whose status is
// completed, rejected, failed or submitted and that validates against the
// official response schema; on admin a problem+json 4xx), and invalid
// input taken as valid; each failure names its request and answer,
// grouped by cause. STOREFRONT_BADINPUT_ROUNDS=N draws the schema-derived
// cases N times (the README has the figures of a long run).
func TestBadInput(t *testing.T) {
	rounds := 1
	if s := os.Getenv("STOREFRONT_BADINPUT_ROUNDS"); s != "" {
		var err error
		if rounds, err = strconv.Atoi(s); err != nil || rounds < 1 {
			t.Fatalf("STOREFRONT_BADINPUT_ROUNDS=%q: want a number of rounds, 1 or more", s)
		}
	}
	for _, store := range []string{"memory", "postgres"} {
		t.Run(store, func(t *testing.T) {
			var env []string
			// Short read timeouts, so that the cases that send less body
			// than they declare are answered in seconds.
			args := []string{"--demo-buyer-token", badBuyerToken, "--demo-admin-token", badAdminToken, "--log-level", "error",
				"--read-header-timeout", "3s", "--read-timeout", "3s"}
			if store == "postgres" {
				env = []string{"DATABASE_URL=" + pgtest.NewDatabase(t)}
				args = append(args, "--seed-demo")
			}
			r := &badRun{t: t, store: store, env: env, args: args, stats: map[string]*surfaceStats{}, took: map[string]time.Duration{}}
			r.run(rounds)
		})
	}
}

// surfaceStats counts one surface's cases and what went wrong.
type surfaceStats struct {
	cases, fivexx, crashes, unanswered, undefined, accepted int
}

func (s *surfaceStats) add(o *surfaceStats) {
	s.cases, s.fivexx, s.crashes = s.cases+o.cases, s.fivexx+o.fivexx, s.crashes+o.crashes
	s.unanswered, s.undefined, s.accepted = s.unanswered+o.unanswered, s.undefined+o.undefined, s.accepted+o.accepted
}

func (s *surfaceStats) String() string {
	return fmt.Sprintf("%5d cases: %d 5xx, %d crashes, %d unanswered, %d undefined answers, %d invalid input accepted",
		s.cases, s.fivexx, s.crashes, s.unanswered, s.undefined, s.accepted)
}

// finding is one case that failed: what kind of failure, its cause (the
// key failures are grouped by) and the answer.
type finding struct {
	c      badCase
	kind   string
	cause  string
	answer string
}

type badRun struct {
	t         *testing.T
	store     string
	env, args []string
	sf        *Storefront
	addr      string
	stats     map[string]*surfaceStats
	findings  []finding
	starts    int
	// took is the time spent on each group of cases, for the summary.
	took map[string]time.Duration
}

func (r *badRun) start() {
	r.sf = Start(r.t, r.env, r.args...)
	r.sf.Quiet = true
	r.addr = strings.TrimPrefix(r.sf.BaseURL, "http://")
	r.starts++
}

func (r *badRun) run(rounds int) {
	t := r.t
	began := time.Now()
	r.start()
	spec := spectest.Dir(t)
	g := &generator{t: t, spec: spec, buyer: badBuyerToken, admin: badAdminToken, tools: r.tools(), rounds: rounds,
		rnd:   rand.New(rand.NewSource(int64(rounds))),
		check: func(rel string, body []byte) error { return spectest.Check(t, rel, body) },
		tool:  func(name string) spectest.Tool { return spectest.ToolOf(t, name) }}
	r.phase(g.mcpCases())
	r.phase(g.a2aCases())
	r.phase(g.adminCases(r.adminVersions()))
	r.report(time.Since(began))
}

// tools lists the tools the storefront serves, from tools/list.
func (r *badRun) tools() []string {
	r.t.Helper()
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	resp, err := rawhttp.Do(r.addr, rawhttp.Request(r.addr, "POST", "/mcp", []string{"Content-Type: application/json",
		"Accept: application/json, text/event-stream", "Authorization: Bearer " + badBuyerToken}, body), 30*time.Second)
	if err != nil {
		r.t.Fatalf("tools/list: %v", err)
	}
	var list struct {
		Result struct {
			Tools []struct{ Name string } `json:"tools"`
		} `json:"result"`
	}
	if err := json.Unmarshal(resp.Body, &list); err != nil || len(list.Result.Tools) == 0 {
		r.t.Fatalf("tools/list = %d %s", resp.Status, resp.Body)
	}
	var names []string
	for _, tool := range list.Result.Tools {
		names = append(names, tool.Name)
	}
	sort.Strings(names)
	return names
}

// adminVersions reads the ETags the versioned writes need, and the
// product the product cases spoil.
func (r *badRun) adminVersions() adminVersions {
	get := func(path string) ([]byte, string) {
		r.t.Helper()
		req, _ := http.NewRequest("GET", r.sf.BaseURL+"/admin/v1/publishers/northwind"+path, nil)
		req.Header.Set("Authorization", "Bearer "+badAdminToken)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			r.t.Fatalf("GET %s: %v", path, err)
		}
		defer resp.Body.Close()
		var b bytes.Buffer
		_, _ = b.ReadFrom(resp.Body)
		if resp.StatusCode != http.StatusOK {
			r.t.Fatalf("GET %s = %d %s", path, resp.StatusCode, b.Bytes())
		}
		return b.Bytes(), resp.Header.Get("ETag")
	}
	product, _ := get("/products/nw_display_ros_mrec")
	_, catalogue := get("/products?limit=1")
	_, rulebook := get("/rulebook")
	_, voice := get("/voice")
	return adminVersions{catalogue: catalogue, rulebook: rulebook, voice: voice, product: product}
}

// phase runs cases in batches, checking the storefront's health after
// each, and starts it again when a case took it down.
func (r *badRun) phase(cases []badCase) {
	for i := 0; i < len(cases); i += batch {
		for _, c := range cases[i:min(i+batch, len(cases))] {
			r.one(c)
		}
		if dead, why := r.down(); dead {
			r.fail(finding{c: cases[min(i+batch, len(cases))-1], kind: "crash", cause: "the process died during a batch: " + why})
			r.start()
		}
	}
}

// one sends a case and judges its answer.
func (r *badRun) one(c badCase) {
	st := r.stats[c.surface]
	if st == nil {
		st = &surfaceStats{}
		r.stats[c.surface] = st
	}
	st.cases++
	start := time.Now()
	defer func() { r.took[c.surface+"/"+c.group] += time.Since(start) }()
	resp, err := rawhttp.Do(r.addr, c.request(r.addr), 60*time.Second)
	c.body = preview(c.body)
	if err != nil {
		if dead, why := r.down(); dead {
			r.fail(finding{c: c, kind: "crash", cause: "the process died: " + why, answer: err.Error()})
			r.start()
			return
		}
		r.fail(finding{c: c, kind: "unanswered", cause: signature(err.Error()), answer: err.Error()})
		return
	}
	if kind, cause := r.judge(c, resp); kind != "" {
		r.fail(finding{c: c, kind: kind, cause: cause, answer: fmt.Sprintf("HTTP %d %s %s", resp.Status, resp.Header.Get("Content-Type"), preview(resp.Body))})
	}
}

func (r *badRun) fail(f finding) {
	st := r.stats[f.c.surface]
	switch f.kind {
	case "crash":
		st.crashes++
	case "5xx":
		st.fivexx++
	case "unanswered":
		st.unanswered++
	case "undefined":
		st.undefined++
	case "accepted":
		st.accepted++
	}
	r.findings = append(r.findings, f)
}

// down reports whether the storefront is gone (its /healthz refuses
// connections or fails), with the panic it printed, if any.
func (r *badRun) down() (bool, string) {
	client := &http.Client{Timeout: 10 * time.Second}
	resp, err := client.Get(r.sf.BaseURL + "/healthz")
	if err == nil {
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			return false, ""
		}
		return true, fmt.Sprintf("/healthz answers %d", resp.StatusCode)
	}
	if cause := panicCause(r.sf.Output()); cause != "" {
		return true, cause
	}
	return true, "/healthz: " + err.Error()
}

// frame matches a function line of a goroutine's stack.
var frame = regexp.MustCompile(`^([\w./-]+\.(?:\(\*?\w+\)\.)?\w+)\(`)

// panicCause is the panic a process printed and the first three frames
// of its stack, with their files: the same for every crash of one cause.
func panicCause(out string) string {
	i := strings.Index(out, "panic: ")
	if i < 0 {
		return ""
	}
	lines := strings.Split(out[i:], "\n")
	var frames []string
	for _, l := range lines[1:] {
		if len(frames) == 3 {
			break
		}
		if strings.HasPrefix(l, "\t") && len(frames) > 0 {
			if f := strings.Fields(l); len(f) > 0 {
				frames[len(frames)-1] += " (" + filepath.Base(f[0]) + ")"
			}
			continue
		}
		if m := frame.FindStringSubmatch(l); m != nil {
			name := m[1]
			if k := strings.LastIndex(name, "/"); k >= 0 {
				name = name[k+1:]
			}
			frames = append(frames, name)
		}
	}
	return lines[0] + " at " + strings.Join(frames, " < ")
}

var (
	// bareHTTP are net/http's own refusals of a head it cannot read, sent
	// before any handler runs: 400, 431, and the 501 RFC 9112 (section
	// 6.1) asks for a transfer coding the server does not implement.
	bareHTTP = regexp.MustCompile(`^(400 Bad Request(: [a-zA-Z ]+)?|431 Request Header Fields Too Large|Unsupported transfer encoding)$`)
	digits   = regexp.MustCompile(`[0-9]+`)
)

// signature is a cause line with its numbers blanked, so that failures of
// one cause group together.
func signature(s string) string {
	if len(s) > 90 {
		s = s[:90]
	}
	return digits.ReplaceAllString(s, "N")
}

// preview is b cut to a readable length.
func preview(b []byte) []byte {
	if len(b) > 300 {
		return append(append([]byte{}, b[:300]...), fmt.Sprintf("… (%d bytes)", len(b))...)
	}
	return b
}

// judge says what is wrong with an answer ("" for nothing): a 5xx, an
// answer of no defined arm, or invalid input accepted.
func (r *badRun) judge(c badCase, resp *rawhttp.Response) (kind, cause string) {
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch {
	case c.http && (resp.Status == 400 || resp.Status == 431 || resp.Status == 501) && bareHTTP.Match(resp.Body):
		return "", "" // net/http refused the head before any surface saw it
	case resp.Status >= 500:
		return "5xx", fmt.Sprintf("HTTP %d %s %q", resp.Status, ct, signature(string(resp.Body)))
	case c.method == http.MethodOptions && resp.Status == http.StatusNoContent && resp.Header.Get("Allow") != "":
		return "", "" // OPTIONS is answered with the methods the path allows
	case c.method == http.MethodHead && resp.Status >= 400 && resp.Status < 500 && len(resp.Body) == 0:
		return "", "" // a refusal of HEAD has no body to type
	case c.surface == "admin":
		return r.judgeAdmin(c, resp, ct)
	}
	return r.judgeRPC(c, resp, ct)
}

// rpcEnvelope is a JSON-RPC response.
type rpcEnvelope struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result"`
	Error   *struct {
		Code    *int            `json:"code"`
		Message *string         `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
}

func (r *badRun) judgeRPC(c badCase, resp *rawhttp.Response, ct string) (string, string) {
	if c.notification && resp.Status == http.StatusAccepted && len(bytes.TrimSpace(resp.Body)) == 0 {
		return "", ""
	}
	body := bytes.TrimSpace(resp.Body)
	var envs []rpcEnvelope
	if len(body) > 0 && body[0] == '[' {
		if err := json.Unmarshal(body, &envs); err != nil || len(envs) == 0 {
			return "undefined", fmt.Sprintf("not a JSON-RPC batch answer: HTTP %d %s %q", resp.Status, ct, signature(string(body)))
		}
	} else {
		var e rpcEnvelope
		if ct != "application/json" || json.Unmarshal(body, &e) != nil {
			return "undefined", fmt.Sprintf("not a JSON-RPC answer: HTTP %d %s %q", resp.Status, ct, signature(string(body)))
		}
		envs = []rpcEnvelope{e}
	}
	for _, e := range envs {
		if e.JSONRPC != "2.0" || (e.Error == nil) == (e.Result == nil) || e.ID == nil {
			return "undefined", fmt.Sprintf("a malformed JSON-RPC answer: HTTP %d %q", resp.Status, signature(string(body)))
		}
		if e.Error != nil {
			if e.Error.Code == nil || e.Error.Message == nil {
				return "undefined", "a JSON-RPC error without code or message"
			}
			if *e.Error.Code == internalError {
				// The JSON-RPC form of a 500: the server failed, whatever
				// the request.
				return "5xx", fmt.Sprintf("JSON-RPC internal error: HTTP %d %q", resp.Status, signature(*e.Error.Message))
			}
			if why := r.checkErrorData(e.Error.Data); why != "" {
				return "undefined", why
			}
			continue
		}
		if c.tool == "" {
			if c.refuse {
				return "accepted", fmt.Sprintf("%s: a result to a malformed request", c.group)
			}
			continue
		}
		payload, why := r.adcpPayload(c.surface, e.Result)
		if why != "" {
			return "undefined", why
		}
		status, err := spectest.Answer(r.t, c.tool, payload)
		if err != nil {
			return "undefined", fmt.Sprintf("%s %s answer: %s", c.tool, status, signature(spectest.Cause(err)))
		}
		if c.refuse && status != "failed" {
			return "accepted", fmt.Sprintf("%s %s answered %s", c.tool, c.group, status)
		}
	}
	return "", ""
}

// checkErrorData checks the AdCP error a JSON-RPC error carries in data,
// when it carries one, against the official error schema.
func (r *badRun) checkErrorData(data json.RawMessage) string {
	var d struct {
		AdcpError json.RawMessage `json:"adcp_error"`
	}
	if len(data) == 0 || json.Unmarshal(data, &d) != nil || d.AdcpError == nil {
		return ""
	}
	if err := spectest.Check(r.t, "core/error.json", d.AdcpError); err != nil {
		return "the JSON-RPC error's adcp_error: " + signature(spectest.Cause(err))
	}
	return ""
}

// adcpPayload is the AdCP object of a tool's result: MCP's
// structuredContent (the same JSON as content[0].text, isError set only
// for the failed arm), or the last data part of an A2A task's first
// artifact (the task failed only for the failed arm).
func (r *badRun) adcpPayload(surface string, result json.RawMessage) ([]byte, string) {
	if surface == "mcp" {
		var res struct {
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
			Structured json.RawMessage `json:"structuredContent"`
			IsError    bool            `json:"isError"`
		}
		if json.Unmarshal(result, &res) != nil || len(res.Structured) == 0 || len(res.Content) == 0 {
			return nil, fmt.Sprintf("a tool result with no AdCP object: %q", signature(string(result)))
		}
		var a, b any
		if json.Unmarshal(res.Structured, &a) != nil || json.Unmarshal([]byte(res.Content[0].Text), &b) != nil || !jsonEqual(a, b) {
			return nil, "content[0].text is not the structuredContent's JSON"
		}
		var head struct{ Status string }
		_ = json.Unmarshal(res.Structured, &head)
		if res.IsError != (head.Status == "failed") {
			return nil, fmt.Sprintf("isError %v on the %s arm", res.IsError, head.Status)
		}
		return res.Structured, ""
	}
	var res struct {
		Task *struct {
			Status    struct{ State string } `json:"status"`
			Artifacts []struct {
				Parts []struct {
					Data json.RawMessage `json:"data"`
				} `json:"parts"`
			} `json:"artifacts"`
		} `json:"task"`
	}
	if json.Unmarshal(result, &res) != nil || res.Task == nil || len(res.Task.Artifacts) == 0 || len(res.Task.Artifacts[0].Parts) == 0 {
		return nil, fmt.Sprintf("an A2A result with no task artifact: %q", signature(string(result)))
	}
	parts := res.Task.Artifacts[0].Parts
	data := parts[len(parts)-1].Data
	var head struct{ Status string }
	if json.Unmarshal(data, &head) != nil {
		return nil, "the task's last artifact part is not the AdCP object"
	}
	if (res.Task.Status.State == "TASK_STATE_FAILED") != (head.Status == "failed") {
		return nil, fmt.Sprintf("task state %s on the %s arm", res.Task.Status.State, head.Status)
	}
	return data, ""
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

func (r *badRun) judgeAdmin(c badCase, resp *rawhttp.Response, ct string) (string, string) {
	switch {
	case c.preview && resp.Status == http.StatusOK:
		var v struct {
			Buyer struct {
				Status  string          `json:"status"`
				Payload json.RawMessage `json:"payload"`
			} `json:"buyer"`
		}
		if json.Unmarshal(resp.Body, &v) != nil || len(v.Buyer.Payload) == 0 {
			return "undefined", "a preview with no buyer view"
		}
		status, err := spectest.Answer(r.t, "get_products", v.Buyer.Payload)
		if err != nil {
			return "undefined", "the preview's buyer view: " + signature(spectest.Cause(err))
		}
		if c.refuse && status != "failed" {
			return "accepted", fmt.Sprintf("preview %s answered %s", c.group, status)
		}
		return "", ""
	case resp.Status >= 200 && resp.Status < 300:
		if c.refuse {
			return "accepted", fmt.Sprintf("%s: HTTP %d", c.group, resp.Status)
		}
		return "", ""
	case resp.Status >= 400 && resp.Status < 500:
		var p struct {
			Type   string `json:"type"`
			Title  string `json:"title"`
			Status int    `json:"status"`
		}
		if ct != "application/problem+json" || json.Unmarshal(resp.Body, &p) != nil || p.Status != resp.Status || p.Type == "" || p.Title == "" {
			return "undefined", fmt.Sprintf("not problem+json: HTTP %d %s %q", resp.Status, ct, signature(string(resp.Body)))
		}
		return "", ""
	}
	return "undefined", fmt.Sprintf("HTTP %d on admin", resp.Status)
}

// report logs the summary and fails the test with every failure, grouped
// by cause, each group with its first requests and answers.
func (r *badRun) report(took time.Duration) {
	var total surfaceStats
	var lines []string
	for _, s := range []string{"mcp", "a2a", "admin"} {
		st := r.stats[s]
		if st == nil {
			r.t.Fatalf("no %s cases ran", s)
		}
		total.add(st)
		lines = append(lines, fmt.Sprintf("  %-5s %s", s, st))
	}
	r.t.Logf("bad-input suite on the %s store: %d cases in %s (%d start(s) of the binary)\n%s\n  total %s",
		r.store, total.cases, took.Round(time.Millisecond), r.starts, strings.Join(lines, "\n"), &total)
	var slow []string
	for k := range r.took {
		slow = append(slow, k)
	}
	sort.Slice(slow, func(i, j int) bool { return r.took[slow[i]] > r.took[slow[j]] })
	for i, k := range slow[:min(6, len(slow))] {
		slow[i] = fmt.Sprintf("%s %s", k, r.took[k].Round(time.Millisecond))
	}
	r.t.Logf("slowest groups: %s", strings.Join(slow[:min(6, len(slow))], ", "))
	if total.cases < 500 {
		r.t.Errorf("only %d cases ran; the suite promises at least 500", total.cases)
	}
	groups := map[string][]finding{}
	for _, f := range r.findings {
		key := f.kind + " | " + f.c.surface + " | " + f.cause
		groups[key] = append(groups[key], f)
	}
	keys := make([]string, 0, len(groups))
	for k := range groups {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fs := groups[k]
		var b strings.Builder
		fmt.Fprintf(&b, "%s (%d cases)", k, len(fs))
		for _, f := range fs[:min(3, len(fs))] {
			fmt.Fprintf(&b, "\n    case [%s] %s\n      request: %s %s %q\n      answer:  %s", f.c.group, f.c.name, f.c.method, f.c.target, f.c.body, f.answer)
		}
		r.t.Error(b.String())
	}
}
