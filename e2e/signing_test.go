package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// receiver runs e2e/webhook-receiver.mjs: a buyer's webhook endpoint that
// verifies each delivery with the @adcp/sdk 6.11.0 verifier against jwks.
// The verifier judges signature windows on the clock this test and the
// binary read: under scripts/test-clock-shift.sh theirs is moved and
// Node's is not, so the receiver is told the difference (zero otherwise).
type receiver struct {
	URL   string
	lines chan string
}

func startReceiver(t *testing.T, jwks string) *receiver {
	t.Helper()
	adcpCLI(t) // skips (or fails under CI) without Node and the SDK
	ctx, cancel := context.WithCancel(context.Background())
	var kernel syscall.Timeval
	if err := syscall.Gettimeofday(&kernel); err != nil {
		t.Fatal(err)
	}
	offset := time.Since(time.Unix(kernel.Unix())).Milliseconds()
	cmd := exec.CommandContext(ctx, "node", filepath.Join(".", "webhook-receiver.mjs"), "--jwks", jwks, "--clock-offset-ms", strconv.FormatInt(offset, 10))
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
		if t.Failed() && stderr.String() != "" {
			t.Logf("receiver stderr:\n%s", stderr.String())
		}
	})
	r := &receiver{lines: make(chan string, 16)}
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	if !sc.Scan() || !strings.HasPrefix(sc.Text(), "listening ") {
		t.Fatalf("the receiver did not start: %q\n%s", sc.Text(), stderr.String())
	}
	r.URL = strings.TrimPrefix(sc.Text(), "listening ")
	go func() {
		for sc.Scan() {
			r.lines <- sc.Text()
		}
		close(r.lines)
	}()
	return r
}

// delivery is what the receiver printed for one webhook.
type delivery struct {
	Path   string `json:"path"`
	Body   string `json:"body"`
	Result *struct {
		Status string `json:"status"`
		KeyID  string `json:"keyid"`
	} `json:"result"`
	Error *struct {
		Code string `json:"code"`
		Msg  string `json:"message"`
	} `json:"error"`
	Replay struct {
		Result any `json:"result"`
		Error  *struct {
			Code string `json:"code"`
		} `json:"error"`
	} `json:"replay"`
}

func (r *receiver) next(t *testing.T) delivery {
	t.Helper()
	select {
	case line, ok := <-r.lines:
		if !ok {
			t.Fatal("the receiver exited")
		}
		var d delivery
		if err := json.Unmarshal([]byte(line), &d); err != nil {
			t.Fatalf("receiver printed %q: %v", line, err)
		}
		return d
	case <-time.After(60 * time.Second):
		t.Fatal("no webhook arrived")
	}
	return delivery{}
}

// jwksKids is the kids of a JWKS, in order.
func jwksKids(t *testing.T, url string) []string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var set struct {
		Keys []struct {
			Kid string `json:"kid"`
		} `json:"keys"`
	}
	if err := json.Unmarshal(b, &set); err != nil {
		t.Fatalf("GET %s: %v\n%s", url, err, b)
	}
	var kids []string
	for _, k := range set.Keys {
		kids = append(kids, k.Kid)
	}
	return kids
}

// TestSDKVerifiesSignedWebhooks: the real binary signs the terminal
// webhook of an asynchronous get_products, and the @adcp/sdk 6.11.0
// verifier (verifyWebhookSignature) accepts it against the JWKS the binary
// publishes, and refuses the same request replayed. After a key rotation
// through the admin API the next webhook is signed with the new key, which
// the verifier finds by refetching the JWKS.
func TestSDKVerifiesSignedWebhooks(t *testing.T) {
	t.Parallel()
	sf := Start(t, nil, "--sandbox")
	m := regexp.MustCompile(`demo admin token[^:]*: (\S+)`).FindStringSubmatch(sf.Output())
	if m == nil {
		t.Fatalf("no demo admin token in:\n%s", sf.Output())
	}
	adminToken := m[1]
	jwks := sf.BaseURL + "/.well-known/jwks.json"
	rcv := startReceiver(t, jwks)
	const (
		kit     = "demo-acme-outdoor-v1"
		account = `{"brand":{"domain":"acmeoutdoor.example"},"operator":"pinnacle-agency.example","sandbox":true}`
	)
	run := func(tool, args string) CLIResult {
		t.Helper()
		res := ADCP(t, sf.BaseURL+"/mcp", tool, args, "--protocol", "mcp", "--auth", kit)
		if res.Exit != 0 {
			t.Fatalf("adcp %s exited %d:\n%s", tool, res.Exit, res.Raw)
		}
		return res
	}
	webhook := func(taskID, op string) delivery {
		t.Helper()
		run("comply_test_controller", `{"adcp_version":"3.2-rc.7","scenario":"force_get_products_arm","params":{"arm":"submitted","task_id":"`+taskID+`"},"account":`+account+`}`)
		sub := run("get_products", `{"adcp_version":"3.2-rc.7","buying_mode":"brief","brief":"Curate display inventory for a fall trail campaign.","account":`+account+
			`,"push_notification_config":{"url":"`+rcv.URL+`/hooks/`+op+`","operation_id":"`+op+`"}}`)
		if sub.Data["status"] != "submitted" {
			t.Fatalf("get_products = %v, want submitted", sub.Data)
		}
		run("comply_test_controller", `{"adcp_version":"3.2-rc.7","scenario":"force_task_completion","params":{"task_id":"`+taskID+`","result":{"status":"completed","products":[],"cache_scope":"public"}},"account":`+account+`}`)
		return rcv.next(t)
	}

	first := jwksKids(t, jwks)
	d := webhook("task_e2e_signed_1", "op_e2e_signed_1")
	if d.Error != nil || d.Result == nil || d.Result.Status != "verified" {
		t.Fatalf("the SDK verifier refused the webhook: %+v %+v\nbody %s", d.Error, d.Result, d.Body)
	}
	if len(first) != 1 || d.Result.KeyID != first[0] {
		t.Errorf("signed with key %s; the JWKS publishes %v", d.Result.KeyID, first)
	}
	if d.Replay.Error == nil || d.Replay.Error.Code != "webhook_signature_replayed" {
		t.Errorf("the same signed request presented again = %+v, want webhook_signature_replayed", d.Replay)
	}
	if !strings.Contains(d.Body, `"operation_id":"op_e2e_signed_1"`) || d.Path != "/hooks/op_e2e_signed_1" {
		t.Errorf("delivery %s: %s", d.Path, d.Body)
	}

	req, _ := http.NewRequest(http.MethodPost, sf.BaseURL+"/admin/v1/publishers/northwind/signing-keys/rotate", nil)
	req.Header.Set("Authorization", "Bearer "+adminToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("rotate: %v %v", err, resp)
	}
	resp.Body.Close()
	rotated := jwksKids(t, jwks)
	if len(rotated) != 2 || rotated[1] != first[0] {
		t.Fatalf("JWKS after rotation = %v, want a new key before %s", rotated, first[0])
	}
	d = webhook("task_e2e_signed_2", "op_e2e_signed_2")
	if d.Error != nil || d.Result == nil || d.Result.KeyID != rotated[0] {
		t.Errorf("after rotation the SDK verifier said %+v %+v, want verified with the new key %s", d.Error, d.Result, rotated[0])
	}
}
