package app

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/storefront/storefront/bulk"
	"github.com/storefront/storefront/internal/recovery"
)

// The catalogue and ledger file commands talk to a running storefront's
// admin API, as a publisher's scripts would, so they work the same against
// the in-memory store and PostgreSQL, and against a remote storefront.

// adminClient calls one storefront's admin API with one token.
type adminClient struct {
	base, token, publisher string
	http                   *http.Client
}

func (m *Main) adminClient(ctx context.Context) (*adminClient, error) {
	if m.AdminToken == "" {
		return nil, errors.New("--token (or STOREFRONT_ADMIN_TOKEN) is required: an admin token of the publisher, as printed by `storefront admin token create`")
	}
	u, err := url.Parse(m.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("--url %q: want the storefront's http:// or https:// address", m.URL)
	}
	c := &adminClient{base: strings.TrimSuffix(m.URL, "/"), token: m.AdminToken, publisher: m.Publisher, http: &http.Client{}}
	if c.publisher == "" {
		var who struct {
			Publisher string `json:"publisher"`
		}
		if err := c.getJSON(ctx, "/admin/v1/whoami", &who); err != nil {
			return nil, err
		}
		c.publisher = who.Publisher
	}
	return c, nil
}

func (c *adminClient) path(p string) string {
	return c.base + "/admin/v1/publishers/" + url.PathEscape(c.publisher) + p
}

func (c *adminClient) request(ctx context.Context, method, u string, body io.Reader) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	return req, nil
}

// do sends req and turns a problem+json answer into an error.
func (c *adminClient) do(req *http.Request) (*http.Response, error) {
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("cannot reach the storefront at %s: %w", c.base, err)
	}
	if resp.StatusCode >= 400 {
		defer resp.Body.Close()
		return nil, problemError(resp)
	}
	return resp, nil
}

func problemError(resp *http.Response) error {
	var p struct {
		Title  string `json:"title"`
		Detail string `json:"detail"`
		Errors []struct {
			Pointer string `json:"pointer"`
			Detail  string `json:"detail"`
		} `json:"errors"`
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if json.Unmarshal(b, &p) != nil || p.Title == "" {
		return fmt.Errorf("the storefront answered %s", resp.Status)
	}
	msg := p.Title
	if p.Detail != "" {
		msg += ": " + p.Detail
	}
	for _, e := range p.Errors {
		msg += fmt.Sprintf("; %s: %s", e.Pointer, e.Detail)
	}
	return fmt.Errorf("%s (%s)", msg, resp.Status)
}

// get GETs a URL.
func (c *adminClient) get(ctx context.Context, u string) (*http.Response, error) {
	req, err := c.request(ctx, "GET", u, nil)
	if err != nil {
		return nil, err
	}
	return c.do(req)
}

func (c *adminClient) getJSON(ctx context.Context, path string, v any) error {
	resp, err := c.get(ctx, c.base+path)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	return json.NewDecoder(resp.Body).Decode(v)
}

// catalogueVersion reads the version an edit must name in If-Match.
func (c *adminClient) catalogueVersion(ctx context.Context) (string, error) {
	resp, err := c.get(ctx, c.path("/products?limit=1"))
	if err != nil {
		return "", err
	}
	resp.Body.Close()
	return resp.Header.Get("ETag"), nil
}

// counter counts the bytes read through it.
type counter struct {
	r io.Reader
	n atomic.Int64
}

func (c *counter) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// importReport is the end of a streamed import, as the admin API sends it.
type importReport struct {
	Saved   bool `json:"saved"`
	Version *struct {
		Version int64 `json:"version"`
		Put     int64 `json:"products_put"`
		Deleted int64 `json:"products_deleted"`
	} `json:"version"`
	Lines    int64 `json:"lines"`
	Products int64 `json:"products"`
	BadLines int64 `json:"bad_lines"`
}

// maxShownBadLines is how many bad lines the import prints; --report
// writes them all.
const maxShownBadLines = 50

// catalogueImport uploads a catalogue file, showing progress as it goes
// and every bad line the storefront finds.
func (m *Main) catalogueImport(ctx context.Context) error {
	if m.File == "" {
		return errors.New("name the file to import: storefront catalogue import [flags] FILE (- reads standard input)")
	}
	c, err := m.adminClient(ctx)
	if err != nil {
		return err
	}
	var (
		in   io.Reader = os.Stdin
		size int64     = -1
		name           = "standard input"
	)
	if m.File != "-" {
		f, err := os.Open(m.File)
		if err != nil {
			return err
		}
		defer f.Close()
		if st, err := f.Stat(); err == nil {
			size = st.Size()
		}
		in, name = f, m.File
	}
	format := bulk.FormatOf("", m.File)
	if m.Format != "" {
		if format, err = bulk.ParseFormat(m.Format); err != nil {
			return fmt.Errorf("--format: %w", err)
		}
	}
	ifMatch := m.IfMatch
	if ifMatch == "" {
		if ifMatch, err = c.catalogueVersion(ctx); err != nil {
			return err
		}
	} else {
		ifMatch = `"` + strings.Trim(ifMatch, `"`) + `"`
	}
	var report *csv.Writer
	if m.ReportFile != "" {
		f, err := os.Create(m.ReportFile)
		if err != nil {
			return err
		}
		defer f.Close()
		report = csv.NewWriter(f)
		defer report.Flush()
		_ = report.Write([]string{"line", "pointer", "detail"})
	}

	q := url.Values{"format": {string(format)}}
	if m.Replace {
		q.Set("mode", "replace")
	}
	if m.SkipBadLines {
		q.Set("skip_bad_lines", "true")
	}
	sent := &counter{r: in}
	req, err := c.request(ctx, "POST", c.path("/catalogue/import?"+q.Encode()), sent)
	if err != nil {
		return err
	}
	req.ContentLength = size
	req.Header.Set("Content-Type", format.ContentType())
	req.Header.Set("Accept", "application/x-ndjson")
	req.Header.Set("If-Match", ifMatch)
	if m.Note != "" {
		req.Header.Set("X-Change-Note", m.Note)
	}

	prog := m.progress(name, size, sent)
	defer prog.stop()
	resp, err := c.do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	var (
		shown   int
		final   *importReport
		problem error
	)
	for sc.Scan() {
		var ev struct {
			Event    string          `json:"event"`
			Lines    int64           `json:"lines"`
			BadLines int64           `json:"bad_lines"`
			Line     *bulk.LineError `json:"line"`
			Report   *importReport   `json:"report"`
			Problem  *struct {
				Title  string `json:"title"`
				Detail string `json:"detail"`
				Status int    `json:"status"`
			} `json:"problem"`
		}
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			return fmt.Errorf("the storefront's answer is not an import stream: %w", err)
		}
		switch ev.Event {
		case "progress":
			prog.lines(ev.Lines, ev.BadLines)
		case "bad_line":
			prog.bad()
			for _, f := range ev.Line.Errors {
				if report != nil {
					_ = report.Write([]string{strconv.FormatInt(ev.Line.Line, 10), f.Pointer, f.Detail})
				}
				if shown < maxShownBadLines {
					prog.printf("line %d: %s: %s\n", ev.Line.Line, pointerOrLine(f.Pointer), f.Detail)
				}
				shown++
			}
		case "done":
			final = ev.Report
		case "failed":
			final = ev.Report
			if ev.Problem != nil {
				problem = fmt.Errorf("%s: %s (%d)", ev.Problem.Title, ev.Problem.Detail, ev.Problem.Status)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("the storefront's answer was cut short: %w", err)
	}
	if final != nil {
		prog.lines(final.Lines, final.BadLines)
	}
	prog.stop()
	if shown > maxShownBadLines {
		fmt.Fprintf(m.Stderr, "… and %d more problems", shown-maxShownBadLines)
		if m.ReportFile != "" {
			fmt.Fprintf(m.Stderr, " (all of them are in %s)", m.ReportFile)
		}
		fmt.Fprintln(m.Stderr)
	}
	switch {
	case final != nil && final.Saved:
		v := final.Version
		fmt.Fprintf(m.Stdout, "saved as catalogue version %d: %d lines read, %d products, %d created or changed, %d deleted", v.Version, final.Lines, final.Products, v.Put, v.Deleted)
		if final.BadLines > 0 {
			fmt.Fprintf(m.Stdout, ", %d bad lines left out", final.BadLines)
		}
		fmt.Fprintln(m.Stdout)
		return nil
	case problem != nil:
		return &exitError{1, "nothing was saved: " + problem.Error()}
	}
	return &exitError{1, "nothing was saved: the storefront did not say how the import ended"}
}

func pointerOrLine(p string) string {
	if p == "" {
		return "(the line)"
	}
	return p
}

// progressLine shows an import's progress on stderr: rewritten in place
// on a terminal, a line every ten per cent otherwise.
type progressLine struct {
	m     *Main
	name  string
	size  int64
	sent  *counter
	tty   bool
	mu    sync.Mutex
	read  int64
	nbad  int64
	shown int64
	done  chan struct{}
	once  sync.Once
}

func (m *Main) progress(name string, size int64, sent *counter) *progressLine {
	p := &progressLine{m: m, name: name, size: size, sent: sent, done: make(chan struct{})}
	if f, ok := m.Stderr.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			p.tty = true
		}
	}
	recovery.Go(context.Background(), m.log, "background", "showing progress", func() {
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-p.done:
				return
			case <-t.C:
				p.show(false)
			}
		}
	})
	return p
}

func (p *progressLine) lines(n, bad int64) {
	p.mu.Lock()
	p.read, p.nbad = max(p.read, n), max(p.nbad, bad)
	p.mu.Unlock()
}

func (p *progressLine) bad() {
	p.mu.Lock()
	p.nbad++
	p.mu.Unlock()
}

// printf prints a message above the progress line.
func (p *progressLine) printf(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tty {
		fmt.Fprint(p.m.Stderr, "\r\033[K")
	}
	fmt.Fprintf(p.m.Stderr, format, args...)
}

func (p *progressLine) show(final bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	sent := p.sent.n.Load()
	pct := int64(-1)
	if p.size > 0 {
		pct = sent * 100 / p.size
	}
	if !p.tty && !final && (pct < 0 || pct/10 == p.shown/10) {
		return
	}
	line := fmt.Sprintf("importing %s: %s sent", p.name, mib(sent))
	if pct >= 0 {
		line = fmt.Sprintf("importing %s: %d%% of %s sent", p.name, pct, mib(p.size))
	}
	line += fmt.Sprintf(", %d lines checked, %d bad", p.read, p.nbad)
	if p.tty {
		fmt.Fprint(p.m.Stderr, "\r\033[K"+line)
		if final {
			fmt.Fprintln(p.m.Stderr)
		}
		return
	}
	p.shown = pct
	fmt.Fprintln(p.m.Stderr, line)
}

func (p *progressLine) stop() {
	p.once.Do(func() {
		close(p.done)
		p.show(true)
	})
}

func mib(n int64) string {
	if n < 1<<20 {
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}

// export downloads path into --out (or stdout).
func (m *Main) export(ctx context.Context, path string) error {
	c, err := m.adminClient(ctx)
	if err != nil {
		return err
	}
	format := bulk.JSONLines
	if m.Format != "" {
		if format, err = bulk.ParseFormat(m.Format); err != nil {
			return fmt.Errorf("--format: %w", err)
		}
	}
	q := url.Values{"format": {string(format)}}
	for k, v := range m.Filters {
		if v != "" {
			q.Set(k, v)
		}
	}
	resp, err := c.get(ctx, c.path(path+"?"+q.Encode()))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	out := m.Stdout
	if m.Out != "" && m.Out != "-" {
		f, err := os.Create(m.Out)
		if err != nil {
			return err
		}
		defer f.Close()
		out = f
	}
	n, err := io.Copy(out, resp.Body)
	if err != nil {
		return fmt.Errorf("the export was cut short after %s: %w", mib(n), err)
	}
	if m.Out != "" && m.Out != "-" {
		fmt.Fprintf(m.Stderr, "wrote %s (%s)\n", m.Out, mib(n))
	}
	return nil
}
