package admin_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/storefront/storefront/admin"
	"github.com/storefront/storefront/backtest"
	"github.com/storefront/storefront/demo"
	"github.com/storefront/storefront/internal/traffic"
	"github.com/storefront/storefront/merch"
	"github.com/storefront/storefront/products"
	"github.com/storefront/storefront/store"
	"github.com/storefront/storefront/store/memstore"
	minting "github.com/storefront/storefront/tokens"
)

// serve runs the admin API over s, which it seeds with the demo
// publisher, on clock, and returns a client holding an admin token.
func serve(t testing.TB, s store.Store, clock *traffic.Clock) (client, *admin.Handler) {
	t.Helper()
	ctx := context.Background()
	if c, ok := s.(interface{ SetClock(func() time.Time) }); ok {
		c.SetClock(clock.Now)
	}
	if err := demo.Seed(ctx, s, demo.Written); err != nil {
		t.Fatal(err)
	}
	snaps := store.NewSnapshots(s)
	token, _, err := minting.Mint(ctx, s, store.Token{Kind: store.AdminToken, Publisher: demo.PublisherID, Name: "tester", CreatedAt: clock.Now()})
	if err != nil {
		t.Fatal(err)
	}
	h := &admin.Handler{
		Store: s, Snaps: snaps, Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Now: clock.Now,
		Preview: &products.Service{Snapshots: snaps, Accounts: admin.PreviewAccounts{Store: s}, Now: clock.Now},
	}
	e := echo.New()
	h.Mount(e)
	srv := httptest.NewServer(e)
	t.Cleanup(srv.Close)
	return client{t, srv.URL, token}, h
}

// recorded serves the admin API over a store holding 30 days of recorded
// traffic, every time from one clock that starts on a fixed date.
func recorded(t *testing.T) (client, *admin.Handler, *traffic.Clock) {
	t.Helper()
	clock := &traffic.Clock{T: time.Date(2031, 3, 2, 0, 0, 0, 0, time.UTC)}
	s := memstore.New()
	c, h := serve(t, s, clock)
	if _, err := traffic.Record(context.Background(), traffic.Service(s, h.Snaps, clock), clock, 2, 30, 40); err != nil {
		t.Fatal(err)
	}
	return c, h, clock
}

// floorDraft is the demo rulebook with the display floor at 5,000 USD.
func floorDraft(t *testing.T) string {
	t.Helper()
	rb := demo.Rulebook()
	rb.Rules[0].When.BudgetBelow.PerChannel["display"] = 5000
	b, err := json.Marshal(rb)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestBacktestAPI streams a backtest of a draft rulebook over 30 days: it
// reports progress, then a report whose counts are the backtest's own over
// the same decisions, with the accounts described.
func TestBacktestAPI(t *testing.T) {
	c, h, clock := recorded(t)
	body := `{"rulebook":` + floorDraft(t) + `,"days":30}`

	req, _ := http.NewRequest("POST", c.base+pub+"/backtest", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Accept", "application/x-ndjson")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/x-ndjson" {
		t.Fatalf("POST /backtest (streamed) = %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	var (
		progress int
		report   *admin.BacktestReport
	)
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 8<<20)
	for sc.Scan() {
		var ev struct {
			Event    string                `json:"event"`
			Progress *backtest.Progress    `json:"progress"`
			Report   *admin.BacktestReport `json:"report"`
		}
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("a line of the stream is not JSON: %v\n%s", err, sc.Bytes())
		}
		switch ev.Event {
		case "progress":
			progress++
		case "report":
			report = ev.Report
		default:
			t.Fatalf("unexpected event: %s", sc.Bytes())
		}
	}
	if progress == 0 || report == nil {
		t.Fatalf("the stream had %d progress lines and report %v", progress, report)
	}

	// The same backtest, run directly over the same store.
	var draft merch.Rulebook
	if err := json.Unmarshal([]byte(floorDraft(t)), &draft); err != nil {
		t.Fatal(err)
	}
	cur, err := h.Snaps.Snapshot(context.Background(), demo.PublisherID)
	if err != nil {
		t.Fatal(err)
	}
	run := &backtest.Run{Publisher: demo.PublisherID, Preview: h.Preview, Current: cur, Source: h.Store.(store.Recordings),
		Draft:   products.NewSnapshot(cur.Publisher, cur.Catalogue.Products(), cur.CatalogueVersion, &draft, 0),
		Options: backtest.Options{Since: clock.T.AddDate(0, 0, -30)}}
	want, err := run.Execute(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if report.Decisions != 30*40 || report.Replayed != want.Replayed || report.Flips != want.Flips || report.Unchanged != want.Unchanged {
		t.Errorf("API report: %d decisions, %d replayed, flips %+v; direct: %d replayed, flips %+v",
			report.Decisions, report.Replayed, report.Flips, want.Replayed, want.Flips)
	}
	if report.Flips.NewlyDeclined == 0 {
		t.Error("raising the display floor declined nothing that was answered before")
	}
	if report.Draft.Rulebook != "draft" || report.Draft.Catalogue != "current" {
		t.Errorf("draft = %+v", report.Draft)
	}
	for _, g := range report.ByAccount {
		if report.Accounts[g.Key] == "" {
			t.Errorf("account %q of by_account is not described", g.Key)
		}
	}

	// Without streaming: one JSON report, the same counts.
	r := c.do("POST", pub+"/backtest", body)
	var plain admin.BacktestReport
	if r.Status != 200 || json.Unmarshal(r.Body, &plain) != nil || plain.Flips != want.Flips {
		t.Errorf("POST /backtest (plain) = %d %s", r.Status, r.Body)
	}

	// A draft catalogue without the demo's display products, against the
	// catalogue in force: display briefs that were answered with products
	// now get none (and a few declines change with what is carried).
	var display []string
	for _, p := range demo.Products() {
		if slices.Equal(p.Channels, []string{"display"}) {
			display = append(display, `"`+p.ProductID+`"`)
		}
	}
	r = c.do("POST", pub+"/backtest", `{"baseline":"current","catalogue":{"delete":[`+strings.Join(display, ",")+`]}}`)
	var cat admin.BacktestReport
	if r.Status != 200 || json.Unmarshal(r.Body, &cat) != nil {
		t.Fatalf("POST /backtest (draft catalogue) = %d %s", r.Status, r.Body)
	}
	if cat.Flips.NowEmpty == 0 || cat.Draft.Catalogue != "draft" || cat.Draft.ProductsChanged != len(display) {
		t.Errorf("a catalogue without display products: flips %+v, draft %+v", cat.Flips, cat.Draft)
	}

	r = c.do("POST", pub+"/backtest", `{"catalogue":{"delete":["no-such-product"]}}`)
	wantProblem(t, r, http.StatusUnprocessableEntity, "/catalogue/delete/0")
	r = c.do("POST", pub+"/backtest", `{"days":0,"baseline":"tomorrow","limit":-1}`)
	wantProblem(t, r, http.StatusUnprocessableEntity, "/baseline")
	r = c.do("POST", pub+"/backtest", `{"rulebook":{"format":"storefront.rulebook/v1","rules":[{"id":""}]}}`)
	wantProblem(t, r, http.StatusUnprocessableEntity, "/rulebook/rules/0/id")
}

// TestBacktestAPICancels: a caller that goes away ends its backtest, and
// the next one runs.
func TestBacktestAPICancels(t *testing.T) {
	c, _, _ := recorded(t)
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "POST", c.base+pub+"/backtest", strings.NewReader(`{"rulebook":`+floorDraft(t)+`}`))
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Accept", "application/x-ndjson")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	if err != nil || !strings.Contains(line, `"progress"`) {
		t.Fatalf("first line = %q, %v", line, err)
	}
	cancel()
	resp.Body.Close()
	// The slot frees once the canceled run has stopped.
	deadline := time.Now().Add(20 * time.Second)
	for {
		r := c.do("POST", pub+"/backtest", `{"days":1}`)
		if r.Status == 200 {
			break
		}
		if r.Status != http.StatusTooManyRequests || time.Now().After(deadline) {
			t.Fatalf("after canceling, POST /backtest = %d %s", r.Status, r.Body)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
