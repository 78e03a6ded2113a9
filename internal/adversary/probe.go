package adversary

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/storefront/storefront/adcp"
	"github.com/storefront/storefront/sanitize"
	"github.com/storefront/storefront/vocab"
)

// Tally counts what a run found.
type Tally struct {
	Worlds, Cases int
	// Leaks by class (kind of secret, field it was planted in or
	// "confidential field", disguise); Oracles by probe.
	Leaks, Oracles map[string]int
	Examples       []string
	ByTransport    map[Transport]int
	ByVersion      map[string]int
	// Declines are the answers to the decline triggers; Figures and
	// Suggested those whose reason names a figure and that carry a
	// (verified) suggestion.
	Declines, Figures, Suggested int
	Failures                     int // transport failures: a probe that got no answer
	// Leaked counts the distinct leaked marks (one per world, secret,
	// field and disguise), by kind, by field and by disguise.
	Leaked                            int
	LeakedKind, LeakedField, LeakedBy map[string]int
	seen                              map[string]bool
}

// NewTally returns an empty tally.
func NewTally() *Tally {
	return &Tally{Leaks: map[string]int{}, Oracles: map[string]int{}, ByTransport: map[Transport]int{}, ByVersion: map[string]int{},
		LeakedKind: map[string]int{}, LeakedField: map[string]int{}, LeakedBy: map[string]int{}, seen: map[string]bool{}}
}

// LeakCount is the number of leaks found.
func (t *Tally) LeakCount() int { return sum(t.Leaks) }

// OracleCount is the number of twin probes answered differently.
func (t *Tally) OracleCount() int { return sum(t.Oracles) }

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// Add merges o into t.
func (t *Tally) Add(o *Tally) {
	t.Worlds += o.Worlds
	t.Cases += o.Cases
	for k, v := range o.Leaks {
		t.Leaks[k] += v
	}
	for k, v := range o.Oracles {
		t.Oracles[k] += v
	}
	for k, v := range o.ByTransport {
		t.ByTransport[k] += v
	}
	for k, v := range o.ByVersion {
		t.ByVersion[k] += v
	}
	t.Declines += o.Declines
	t.Figures += o.Figures
	t.Suggested += o.Suggested
	t.Failures += o.Failures
	t.Leaked += o.Leaked
	for _, m := range [][2]map[string]int{{t.LeakedKind, o.LeakedKind}, {t.LeakedField, o.LeakedField}, {t.LeakedBy, o.LeakedBy}} {
		for k, v := range m[1] {
			m[0][k] += v
		}
	}
	if len(t.Examples) < 40 {
		t.Examples = append(t.Examples, o.Examples[:min(len(o.Examples), 40-len(t.Examples))]...)
	}
}

// String is the tally as a report.
func (t *Tally) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d worlds, %d cases, %d leaks (%d distinct), %d oracle differences, %d transport failures\n", t.Worlds, t.Cases, t.LeakCount(), t.Leaked, t.OracleCount(), t.Failures)
	fmt.Fprintf(&b, "declines %d: naming a figure %.1f%%, with a verified suggestion %.1f%%\n", t.Declines, pct(t.Figures, t.Declines), pct(t.Suggested, t.Declines))
	fmt.Fprintf(&b, "by transport %v, by version %v\n", t.ByTransport, t.ByVersion)
	for _, m := range []struct {
		name string
		m    map[string]int
	}{{"distinct leaks by kind", t.LeakedKind}, {"distinct leaks by field", t.LeakedField}, {"distinct leaks by disguise", t.LeakedBy}, {"leaks", t.Leaks}, {"oracles", t.Oracles}} {
		keys := make([]string, 0, len(m.m))
		for k := range m.m {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool {
			return m.m[keys[i]] > m.m[keys[j]] || m.m[keys[i]] == m.m[keys[j]] && keys[i] < keys[j]
		})
		for i, k := range keys {
			if i == 25 {
				fmt.Fprintf(&b, "  %s: %d classes more\n", m.name, len(keys)-i)
				break
			}
			fmt.Fprintf(&b, "  %s %6d  %s\n", m.name, m.m[k], k)
		}
	}
	for _, e := range t.Examples {
		fmt.Fprintf(&b, "  e.g. %s\n", e)
	}
	return b.String()
}

func pct(n, d int) float64 {
	if d == 0 {
		return 0
	}
	return 100 * float64(n) / float64(d)
}

// versions is every label the suite probes at: 3.0, 3.1 and each 3.2
// pre-release the storefront serves.
var versions = func() []string {
	var v32 []string
	for _, v := range adcp.Supported() {
		if v.AtLeast(3, 2) {
			v32 = append(v32, v.String())
		}
	}
	return v32
}()

// prober runs one world's probes.
type prober struct {
	ctx  context.Context
	h    *Harness
	w    *World
	r    *rand.Rand
	t    *Tally
	n    int // probes sent, for the transport round robin
	kits int
	// asked is the buyer's own text of the probe sequence under way: a
	// word a buyer typed comes back to it, as a twin checks, and is no
	// leak.
	asked string
	// public are the words of the world's product text: a guess or twin
	// holding one would be answered differently for that word, which is
	// public, not for the secret.
	public map[string]bool
	// wire sends the world's probes over the real MCP and A2A handlers as
	// well as the dispatch, and runs the curated brief.
	wire bool
}

// Probe runs the buyer probes of world w against h and tallies them: over
// the dispatch and the real MCP and A2A handlers in turn when wire is set,
// over the dispatch alone otherwise.
func Probe(ctx context.Context, h *Harness, w *World, wire bool) *Tally {
	p := &prober{ctx: ctx, h: h, w: w, r: rand.New(rand.NewPCG(w.Seed, 0xb0b)), t: NewTally(), public: map[string]bool{}, wire: wire}
	for _, prod := range w.Catalogue {
		for _, text := range append([]string{prod.Name, prod.Description}, prod.Keywords...) {
			for _, word := range letterRuns(text) {
				p.public[word] = true
			}
		}
	}
	p.t.Worlds = 1
	p.run()
	h.Forget(w.Publisher.ID)
	return p.t
}

func (p *prober) transport() Transport {
	if !p.wire {
		return Dispatch
	}
	p.n++
	return Transports[p.n%len(Transports)]
}

// kit is a fresh compliance test-kit key: a sandbox principal of its own.
func (p *prober) kit() string {
	p.kits++
	return fmt.Sprintf("demo-w%d-k%d-v1", p.w.Seed, p.kits)
}

func (p *prober) version() string {
	switch p.r.IntN(4) {
	case 0:
		return "3.0"
	case 1:
		return "3.1"
	}
	return versions[p.r.IntN(len(versions))]
}

// send makes one probe and checks its answer for leaks.
func (p *prober) send(name string, tr Transport, token, tool, args string) (Answer, bool) {
	a, err := p.h.Call(p.ctx, tr, p.w.Publisher.ID, token, tool, args)
	p.t.Cases++
	p.t.ByTransport[tr]++
	if m := pinRE.FindStringSubmatch(args); m != nil {
		p.t.ByVersion[m[1]]++
	}
	if err != nil {
		p.t.Failures++
		p.example("failure %s over %s: %v", name, tr, err)
		return a, false
	}
	p.leaks(name, tr, a.Visible, args+" "+p.asked)
	if p.asked != "" {
		// A twin's later probes may be answered with what its earlier
		// ones sent (a seeded product's name): the buyer's own words.
		p.asked += " " + args
	}
	return a, true
}

func (p *prober) leaks(name string, tr Transport, visible []byte, args string) {
	// The program's and the webhook receiver's addresses are the buyer's
	// own knowledge: a mark of digits that a port number happens to hold
	// ("http://127.0.0.1:38998/w5" holds 8998) is no leak.
	args += " " + p.h.Base + " " + p.h.Hook("")
	for _, l := range p.w.Leaks(visible, args) {
		field := string(l.Field)
		if field == "" {
			field = "confidential field"
		}
		class := fmt.Sprintf("%s in %s (%s)", l.Kind, field, l.Disguise)
		p.t.Leaks[class]++
		if key := class + "\x00" + l.Mark; !p.t.seen[key] {
			p.t.seen[key] = true
			p.t.Leaked++
			p.t.LeakedKind[string(l.Kind)]++
			p.t.LeakedField[field]++
			p.t.LeakedBy[l.Disguise]++
		}
		// STOREFRONT_ADVERSARY_EXAMPLES picks the classes whose examples
		// are kept (a substring); by default, leaks from no plant.
		if f := os.Getenv("STOREFRONT_ADVERSARY_EXAMPLES"); f != "" && strings.Contains(class, f) || f == "" && l.Field == "" {
			p.example("leak world %d %s over %s: %s %q at %s = %.160q", p.w.Seed, name, tr, l.Kind, l.Mark, l.Path, l.Value)
		}
	}
}

func (p *prober) example(format string, args ...any) {
	if len(p.t.Examples) < 40 {
		p.t.Examples = append(p.t.Examples, fmt.Sprintf(format, args...))
	}
}

// twin sends the same probe with a secret's mark and with a random token
// of its shape; the answers must be the same once the token reads as the
// mark and the volatile members are gone.
//
// A token holding a word of the world's public text, a common word
// ("Recipe", near the catalogue's "recipes") or a vendor's name is drawn
// again: it would be answered differently for that word or vendor, not
// for the secret.
func (p *prober) twin(name string, tr Transport, mark string, do func(tr Transport, word string) []byte) {
	token := Twin(p.r, mark)
	for i := 0; i < 20 && p.knownWord(token); i++ {
		token = Twin(p.r, mark)
	}
	if p.knownWord(token) {
		return
	}
	p.asked = mark
	a := do(tr, mark)
	p.asked = token
	b := do(tr, token)
	p.asked = ""
	if a == nil || b == nil {
		return
	}
	if Normal(a, mark, mark) != Normal(b, token, mark) {
		p.t.Oracles[name]++
		p.example("oracle world %d %s over %s: %q vs %q:\n      %.300s\n      %.300s", p.w.Seed, name, tr, mark, token, Normal(a, mark, mark), Normal(b, token, mark))
	}
}

// guess is a mark a probing buyer might type: the identifying part of a
// non-vendor secret (vendor names are public, and screening them in a
// buyer's words is no oracle).
func (p *prober) guess() string {
	for {
		s := p.w.Secrets[p.r.IntN(len(p.w.Secrets))]
		if m := s.Marks[p.r.IntN(len(s.Marks))]; s.Kind != Vendor && !p.holdsPublic(m) {
			return m
		}
	}
}

// holdsPublic reports whether a token holds a word of the world's public
// product text, which ranking may rightly answer.
func (p *prober) holdsPublic(token string) bool {
	for _, w := range letterRuns(token) {
		if p.public[w] {
			return true
		}
	}
	return false
}

// knownWord reports whether a token holds a word a buyer is answered for
// whoever types it: public, common or a vendor's.
func (p *prober) knownWord(token string) bool {
	if p.holdsPublic(token) || holdsVendor(token) {
		return true
	}
	for _, w := range letterRuns(token) {
		if sanitize.Common(w) || publicWords[canon(w)] {
			return true
		}
	}
	return false
}

// letterRuns are the lower-case runs of three letters or more of s.
func letterRuns(s string) []string {
	var out []string
	for _, f := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return r < 'a' || r > 'z' }) {
		if len(f) >= 3 {
			out = append(out, f)
		}
	}
	return out
}

var (
	digit = regexp.MustCompile(`[0-9]`)
	pinRE = regexp.MustCompile(`"adcp_version":"([^"]+)"`)
)

// decline tallies a decline trigger's answer: the rejected arm, or the
// typed error that carries a decline before 3.2.
func (p *prober) decline(payload []byte) {
	var m struct {
		Status      string   `json:"status"`
		Reason      string   `json:"reason"`
		Suggestions []string `json:"suggestions"`
		Errors      []struct {
			Message    string `json:"message"`
			Suggestion string `json:"suggestion"`
			Details    struct {
				Decline *struct {
					Slug vocab.Slug `json:"slug"`
				} `json:"decline"`
			} `json:"details"`
		} `json:"errors"`
	}
	if json.Unmarshal(payload, &m) != nil {
		return
	}
	reason, suggested := "", false
	switch {
	case m.Status == "rejected":
		reason, suggested = m.Reason, len(m.Suggestions) > 0
	case m.Status == "failed" && len(m.Errors) > 0 && m.Errors[0].Details.Decline != nil:
		reason, suggested = m.Errors[0].Message, m.Errors[0].Suggestion != ""
	default:
		return
	}
	p.t.Declines++
	if digit.MatchString(reason) {
		p.t.Figures++
	}
	if suggested {
		p.t.Suggested++
	}
}

func (p *prober) run() {
	const brief = "Video for a coffee launch"
	anon := ""
	for _, v := range []string{"3.0", "3.1", versions[p.r.IntN(len(versions))]} {
		pin := `"adcp_version":"` + v + `","context":{"probe":"` + v + `"}`
		p.send("capabilities", p.transport(), anon, "get_adcp_capabilities", `{`+pin+`}`)
		p.send("brief", p.transport(), anon, "get_products", `{`+pin+`,"buying_mode":"brief","brief":"`+brief+`"}`)
		p.send("wholesale", p.transport(), anon, "get_products", `{`+pin+`,"buying_mode":"wholesale"}`)
		for _, tr := range p.w.Triggers {
			args := `{` + pin + `,"buying_mode":"brief",` + tr.Fields
			if !strings.HasPrefix(tr.Fields, `"brief"`) {
				args += `,"brief":"` + brief + `"`
			}
			a, ok := p.send("decline "+string(tr.Slug), p.transport(), anon, "get_products", args+`}`)
			if ok {
				p.decline(a.Payload)
			}
		}
		// A buyer types a guessed secret into its brief.
		for i := 0; i < 2; i++ {
			p.twin("brief naming a guess", p.transport(), p.guess(), func(tr Transport, word string) []byte {
				a, _ := p.send("twin brief", tr, anon, "get_products", `{`+pin+`,"buying_mode":"brief","brief":"Video for `+word+` fans"}`)
				return a.Payload
			})
		}
		p.twin("refine asking for a guess", p.transport(), p.guess(), func(tr Transport, word string) []byte {
			a, _ := p.send("twin refine", tr, anon, "get_products", `{`+pin+`,"buying_mode":"refine","refine":[{"scope":"request","ask":"more `+word+` inventory"}]}`)
			return a.Payload
		})
	}
	p.sandbox()
}

// sandbox runs the compliance and buying probes, as test-kit principals,
// at a 3.2 label (the rejected arm exists only there).
func (p *prober) sandbox() {
	v := versions[p.r.IntN(len(versions))]
	pin := `"adcp_version":"` + v + `","context":{"probe":"sandbox"}`
	acct := `"account":{"sandbox":true}`
	// force_get_products_arm echoes the caller's reason: a guess in it
	// must come back as a random word does, in the echo and the decline.
	p.twin("force_get_products_arm reason", p.transport(), p.guess(), func(tr Transport, word string) []byte {
		kit := p.kit()
		c, _ := p.send("force arm", tr, kit, "comply_test_controller", `{`+pin+`,`+acct+`,"scenario":"force_get_products_arm","params":{"arm":"rejected","reason":"Held for `+word+`.","suggestions":["Ask `+word+`."]}}`)
		g, _ := p.send("forced decline", tr, kit, "get_products", `{`+pin+`,"buying_mode":"brief","brief":"coffee"}`)
		return []byte(`[` + orNull(c.Payload) + `,` + orNull(g.Payload) + `]`)
	})
	// seed_product: the buyer's own product text comes back as written.
	p.twin("seed_product name", p.transport(), p.guess(), func(tr Transport, word string) []byte {
		kit := p.kit()
		s, _ := p.send("seed product", tr, kit, "comply_test_controller", `{`+pin+`,`+acct+`,"scenario":"seed_product","params":{"product_id":"seeded_one","fixture":{"name":"Seeded `+word+` video","description":"Fixture for `+word+`.","channels":["olv"],"pricing_options":[{"pricing_option_id":"cpm_seed","pricing_model":"cpm","currency":"USD","fixed_price":10}]}}}`)
		g, _ := p.send("seeded products", tr, kit, "get_products", `{`+pin+`,"buying_mode":"wholesale"}`)
		return []byte(`[` + orNull(s.Payload) + `,` + orNull(g.Payload) + `]`)
	})
	// create_media_buy quoting a guessed product id in its refusal.
	p.twin("create_media_buy product id", p.transport(), p.guess(), func(tr Transport, word string) []byte {
		a, _ := p.send("buy unknown product", tr, p.kit(), "create_media_buy", `{`+pin+`,`+acct+`,"idempotency_key":"adv-`+fmt.Sprint(p.w.Seed)+`-`+word+`-00000000","brand":{"domain":"acme.example"},`+
			`"start_time":"asap","end_time":"2027-03-01T00:00:00Z","packages":[{"product_id":"`+word+`","pricing_option_id":"cpm_x","budget":5000}]}`)
		return a.Payload
	})
	// A real buy of a product of the world, and its read back.
	kit := p.kit()
	prod := p.w.Catalogue[p.r.IntN(len(p.w.Catalogue))]
	po := prod.PricingOptions[0]
	p.send("create_media_buy", p.transport(), kit, "create_media_buy", `{`+pin+`,`+acct+`,"idempotency_key":"adv-buy-`+fmt.Sprint(p.w.Seed)+`-000000000","brand":{"domain":"acme.example"},`+
		`"start_time":"asap","end_time":"2027-03-01T00:00:00Z","packages":[{"product_id":`+quote(prod.ProductID)+`,"pricing_option_id":`+quote(po.PricingOptionID)+`,"budget":50000}]}`)
	p.send("get_media_buys", p.transport(), kit, "get_media_buys", `{`+pin+`,`+acct+`}`)
	// A curated brief: submitted now, its answer delivered to a webhook
	// and readable with get_task_status.
	if !p.wire {
		return
	}
	hook := fmt.Sprintf("w%d", p.w.Seed)
	// The program curates (the dispatch agent is not wired to), so this
	// probe goes over one of its transports.
	tr := MCP
	if p.r.IntN(2) == 0 {
		tr = A2A
	}
	a, ok := p.send("curated brief", tr, kit, "get_products", `{`+pin+`,"buying_mode":"brief","brief":"Video for a coffee launch",`+
		`"push_notification_config":{"url":`+quote(p.h.Hook(hook))+`,"operation_id":"op-1"}}`)
	if !ok {
		return
	}
	var sub struct {
		Status string `json:"status"`
		TaskID string `json:"task_id"`
	}
	_ = json.Unmarshal(a.Payload, &sub)
	if sub.Status != "submitted" {
		p.t.Failures++
		p.example("curated brief over %s answered %.200s", tr, a.Payload)
		return
	}
	bodies := p.h.Bodies(hook, 5*time.Second)
	if len(bodies) == 0 {
		p.t.Failures++
		p.example("curated brief over %s: no webhook arrived", tr)
	}
	for _, body := range bodies {
		p.t.ByTransport["webhook"]++
		p.t.Cases++
		p.leaks("webhook body", "webhook", body, "")
	}
	if sub.TaskID != "" {
		p.send("get_task_status", p.transport(), kit, "get_task_status", `{`+pin+`,"task_id":`+quote(sub.TaskID)+`}`)
	}
}

func orNull(b []byte) string {
	if len(b) == 0 {
		return "null"
	}
	return string(b)
}
