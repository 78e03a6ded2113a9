package mediabuy

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/storefront/storefront/adcp"
)

var (
	t0    = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	start = time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	end   = time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)
)

func buy(assigned ...bool) *Buy {
	b := &Buy{ID: "mb", Currency: "USD", Start: start, End: end, Revision: 1, UpdatedAt: t0}
	for i, a := range assigned {
		p := Package{ID: string(rune('a' + i)), Budget: 1000 * float64(i+1)}
		if a {
			p.Assignments = []Assignment{{CreativeID: "cr"}}
		}
		b.Packages = append(b.Packages, p)
	}
	return b
}

func TestStatusDerivesFromFactsAndClock(t *testing.T) {
	for _, c := range []struct {
		name string
		b    func() *Buy
		at   time.Time
		want Status
	}{
		{"before the start, creatives assigned", func() *Buy { return buy(true) }, t0, PendingStart},
		{"a package without creatives", func() *Buy { return buy(true, false) }, start.Add(time.Hour), PendingCreatives},
		{"a canceled package needs none", func() *Buy {
			b := buy(true, false)
			b.Packages[1].Canceled = &Cancellation{At: t0, By: "buyer"}
			return b
		}, start.Add(time.Hour), Active},
		{"in flight", func() *Buy { return buy(true) }, start, Active},
		{"held in flight", func() *Buy { b := buy(true); b.Held = true; return b }, start.Add(time.Hour), Paused},
		{"held before the start shows what blocks it", func() *Buy { b := buy(true); b.Held = true; return b }, t0, PendingStart},
		{"the flight has ended", func() *Buy { b := buy(true); b.Held = true; return b }, end, Completed},
		{"canceled", func() *Buy { b := buy(true); b.Canceled = &Cancellation{At: t0}; return b }, end.Add(time.Hour), Canceled},
	} {
		if got := c.b().Status(c.at); got != c.want {
			t.Errorf("%s: Status = %s, want %s", c.name, got, c.want)
		}
	}
}

func TestTransitions(t *testing.T) {
	b := buy(true)
	in := start.Add(time.Hour)
	if r := b.Pause(in); r != nil || b.Status(in) != Paused {
		t.Fatalf("Pause = %v, status %s", r, b.Status(in))
	}
	if got := b.ValidActions(in); got[0] != "resume" {
		t.Errorf("a held buy's valid actions = %v, want resume first", got)
	}
	if r := b.Resume(in); r != nil || b.Status(in) != Active {
		t.Fatalf("Resume = %v, status %s", r, b.Status(in))
	}
	if r := b.Cancel(in, "buyer", "done"); r != nil || b.Status(in) != Canceled {
		t.Fatalf("Cancel = %v, status %s", r, b.Status(in))
	}
	if got := b.ValidActions(in); len(got) != 0 {
		t.Errorf("a canceled buy's valid actions = %v, want none", got)
	}
	for name, r := range map[string]*Refusal{"pause": b.Pause(in), "resume": b.Resume(in)} {
		if r == nil || r.Code != adcp.InvalidState {
			t.Errorf("%s a canceled buy = %v, want INVALID_STATE", name, r)
		}
	}
	if r := b.Cancel(in, "buyer", ""); r == nil || r.Code != adcp.NotCancellable {
		t.Errorf("cancel a canceled buy = %v, want NOT_CANCELLABLE", r)
	}
	done := buy(true)
	if r := done.Cancel(end, "buyer", ""); r == nil || r.Code != adcp.NotCancellable {
		t.Errorf("cancel a completed buy = %v, want NOT_CANCELLABLE", r)
	}
}

func update(t *testing.T, args string) *UpdateRequest {
	t.Helper()
	u, err := DecodeUpdate([]byte(args), t0)
	if err != nil {
		t.Fatalf("DecodeUpdate(%s) = %v", args, err)
	}
	return u
}

func TestApply(t *testing.T) {
	const base = `"idempotency_key":"0123456789abcdef","account":{"account_id":"a1"},"media_buy_id":"mb"`
	in := start.Add(time.Hour)
	t.Run("total budget rescales", func(t *testing.T) {
		b := buy(true, true) // 1000 and 2000
		b.Packages[0].Budget, b.Packages[1].Budget = 60000, 40000
		ch, r := Apply(b, update(t, `{`+base+`,"revision":1,"total_budget":{"amount":50000,"currency":"USD"}}`), in, "buyer")
		if r != nil || b.Packages[0].Budget != 30000 || b.Packages[1].Budget != 20000 || len(ch.Affected) != 2 || len(ch.Rejudge) != 2 {
			t.Fatalf("Apply = %+v, %v; budgets %v %v", ch, r, b.Packages[0].Budget, b.Packages[1].Budget)
		}
	})
	t.Run("rescaling keeps the total to the cent", func(t *testing.T) {
		b := buy(true, true, true)
		_, r := Apply(b, update(t, `{`+base+`,"total_budget":{"amount":1000,"currency":"USD"}}`), in, "buyer")
		if r != nil || b.TotalBudget() != 1000 {
			t.Fatalf("Apply = %v, total %v, want exactly 1000", r, b.TotalBudget())
		}
	})
	for _, c := range []struct {
		name, args string
		b          func() *Buy
		code       adcp.Code
	}{
		{"stale revision", `{` + base + `,"revision":2,"paused":true}`, func() *Buy { return buy(true) }, adcp.Conflict},
		{"unknown package", `{` + base + `,"packages":[{"package_id":"zz","budget":5}]}`, func() *Buy { return buy(true) }, adcp.PackageNotFound},
		{"update a canceled buy", `{` + base + `,"paused":true}`, func() *Buy { b := buy(true); b.Canceled = &Cancellation{}; return b }, adcp.InvalidState},
		{"cancel a canceled buy", `{` + base + `,"canceled":true}`, func() *Buy { b := buy(true); b.Canceled = &Cancellation{}; return b }, adcp.NotCancellable},
		{"total and packages disagree", `{` + base + `,"total_budget":{"amount":6000,"currency":"USD"},"packages":[{"package_id":"a","budget":99999}]}`, func() *Buy { return buy(true, true) }, adcp.ValidationError},
		{"another currency", `{` + base + `,"total_budget":{"amount":6000,"currency":"EUR"}}`, func() *Buy { return buy(true) }, adcp.ValidationError},
		{"move a started flight's start", `{` + base + `,"start_time":"2026-12-20T00:00:00Z"}`, func() *Buy { return buy(true) }, adcp.ValidationError},
	} {
		b := c.b()
		before := *b
		_, r := Apply(b, update(t, c.args), in, "buyer")
		if r == nil || r.Code != c.code {
			t.Errorf("%s: Apply = %v, want %s", c.name, r, c.code)
		}
		if b.Revision != before.Revision || b.Held != before.Held || b.TotalBudget() != before.TotalBudget() {
			t.Errorf("%s: a refused update changed the buy", c.name)
		}
	}
	t.Run("nothing to change", func(t *testing.T) {
		b := buy(true)
		ch, r := Apply(b, update(t, `{`+base+`,"paused":false}`), in, "buyer")
		if r != nil || len(ch.Events) != 0 {
			t.Errorf("resuming a running buy = %+v, %v; want no change", ch, r)
		}
	})
}

func TestDecodeRefusesWhatIsNotHonoured(t *testing.T) {
	for _, c := range []struct {
		name, args, field string
		code              adcp.Code
	}{
		{"no idempotency key", `{"account":{"account_id":"a"},"brand":{"domain":"b.example"},"start_time":"asap","end_time":"2027-01-01T00:00:00Z","packages":[{"product_id":"p","pricing_option_id":"o","budget":1}]}`, "idempotency_key", adcp.InvalidRequest},
		{"a start in the past", `{"idempotency_key":"0123456789abcdef","account":{"account_id":"a"},"brand":{"domain":"b.example"},"start_time":"2020-01-01T00:00:00Z","end_time":"2027-01-01T00:00:00Z","packages":[{"product_id":"p","pricing_option_id":"o","budget":1}]}`, "start_time", adcp.InvalidRequest},
		{"measurement terms", `{"idempotency_key":"0123456789abcdef","account":{"account_id":"a"},"brand":{"domain":"b.example"},"start_time":"asap","end_time":"2027-01-01T00:00:00Z","packages":[{"product_id":"p","pricing_option_id":"o","budget":1,"measurement_terms":{}}]}`, "packages[0].measurement_terms", adcp.TermsRejected},
		{"other targeting", `{"idempotency_key":"0123456789abcdef","account":{"account_id":"a"},"brand":{"domain":"b.example"},"start_time":"asap","end_time":"2027-01-01T00:00:00Z","packages":[{"product_id":"p","pricing_option_id":"o","budget":1,"targeting_overlay":{"geo_metros":[{"system":"nielsen_dma","values":["501"]}]}}]}`, "packages[0].targeting_overlay.geo_metros", adcp.UnsupportedFeature},
		{"a proposal", `{"idempotency_key":"0123456789abcdef","account":{"account_id":"a"},"brand":{"domain":"b.example"},"start_time":"asap","end_time":"2027-01-01T00:00:00Z","proposal_id":"p1","total_budget":{"amount":1,"currency":"USD"}}`, "proposal_id", adcp.ProposalNotFound},
	} {
		_, err := DecodeCreate([]byte(c.args), t0)
		var re *RequestError
		if !errors.As(err, &re) {
			t.Errorf("%s: DecodeCreate = %v, want a request error", c.name, err)
			continue
		}
		found := false
		for _, p := range re.Problems {
			if p.Path == c.field && p.Code == c.code {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: problems = %+v, want %s at %s", c.name, re.Problems, c.code, c.field)
		}
	}
	if _, err := DecodeDelivery([]byte(`{"start_date":"2026-04-15","end_date":"2026-04-15"}`)); err == nil {
		t.Error("an empty half-open range was accepted")
	}
}

func TestAllocateKeepsTheTotals(t *testing.T) {
	b := buy(true, true, true) // budgets 1000, 2000, 3000
	vs := 4.3
	m := Metrics{Impressions: 10001, Clicks: 7, Spend: 100.01, Viewability: &Viewability{Measurable: 9000, Viewable: 7001, ViewedSeconds: &vs, Standard: "mrc"}}
	parts := Allocate(b, m)
	var sum Metrics
	for _, p := range b.Packages {
		sum.Add(parts[p.ID])
	}
	if sum.Impressions != m.Impressions || sum.Clicks != m.Clicks || sum.Spend != m.Spend ||
		sum.Viewability.Measurable != 9000 || sum.Viewability.Viewable != 7001 || sum.Viewability.Standard != "mrc" {
		t.Errorf("the allocated parts sum to %+v (viewability %+v), want the simulated figures %+v", sum, sum.Viewability, m)
	}
	if got := *sum.Viewability.ViewedSeconds; got < 4.299 || got > 4.301 {
		t.Errorf("viewed seconds after allocation = %v, want 4.3", got)
	}
	if parts["c"].Impressions < parts["b"].Impressions {
		t.Errorf("allocation ignores the budgets: %+v", parts)
	}
}

func TestSumIsHalfOpen(t *testing.T) {
	b := buy(true)
	day := func(s string, imps int64) Row {
		return Row{MediaBuyID: "mb", PackageID: "a", Date: adcp.MustDate(s), Metrics: Metrics{Impressions: imps, Spend: float64(imps) / 10}}
	}
	rows := []Row{day("2026-04-01", 100), day("2026-04-15", 200), day("2026-04-16", 400), {MediaBuyID: "other", PackageID: "a", Date: adcp.MustDate("2026-04-15"), Metrics: Metrics{Impressions: 9}}}
	d := Sum(b, rows, Period{From: adcp.MustDate("2026-04-15"), To: adcp.MustDate("2026-04-16")})
	if d.Totals.Impressions != 200 || d.Totals.Spend != 20 || len(d.Packages) != 1 || len(d.Packages[0].Days) != 1 {
		t.Errorf("Sum over [04-15, 04-16) = %+v, want the 15th only", d)
	}
	if all := Sum(b, rows, Period{}); all.Totals.Impressions != 700 {
		t.Errorf("Sum over everything = %d impressions, want 700", all.Totals.Impressions)
	}
}

// TestForce: the compliance controller moves a buy forward along the
// lifecycle and between active and paused, never out of a terminal status;
// a forced status holds until the flight ends, and the buyer's pause and
// resume move it between active and paused.
func TestForce(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	fresh := func() Buy {
		// No creatives: its facts make it pending_creatives.
		return Buy{Start: now.AddDate(0, 0, 1), End: now.AddDate(0, 1, 0), Packages: []Package{{ID: "p1", Budget: 100}}}
	}
	b := fresh()
	if s := b.Status(now); s != PendingCreatives {
		t.Fatalf("fresh buy is %s", s)
	}
	if from, ok := b.Force(now, Active); !ok || from != PendingCreatives || b.Status(now) != Active {
		t.Fatalf("Force(active) = %s, %v; status %s", from, ok, b.Status(now))
	}
	if r := b.Pause(now); r != nil || b.Status(now) != Paused || !b.Held {
		t.Errorf("pausing a forced-active buy: %v, status %s", r, b.Status(now))
	}
	if r := b.Resume(now); r != nil || b.Status(now) != Active {
		t.Errorf("resuming it: %v, status %s", r, b.Status(now))
	}
	if _, ok := b.Force(now, PendingStart); ok {
		t.Error("an active buy was forced back to pending_start")
	}
	if from, ok := b.Force(now, Completed); !ok || from != Active || b.Status(now) != Completed || b.Start.After(b.End) {
		t.Fatalf("Force(completed) = %s, %v; status %s, flight %v..%v", from, ok, b.Status(now), b.Start, b.End)
	}
	for _, to := range []Status{Active, Paused, Canceled} {
		if from, ok := b.Force(now, to); ok || from != Completed {
			t.Errorf("Force(%s) from completed = %s, %v; want refused", to, from, ok)
		}
	}
	if from, ok := b.Force(now, Completed); !ok || from != Completed {
		t.Errorf("forcing the current status = %s, %v; want a no-op", from, ok)
	}
	c := fresh()
	if _, ok := c.Force(now, Canceled); !ok || c.Status(now) != Canceled || c.Canceled.By != "seller" {
		t.Errorf("Force(canceled): status %s, %+v", c.Status(now), c.Canceled)
	}
	r := fresh()
	if _, ok := r.Force(now, Rejected); !ok || !r.Status(now).Terminal() {
		t.Errorf("Force(rejected): status %s", r.Status(now))
	}
	// A forced status yields to the flight's end.
	a := fresh()
	a.Force(now, Active)
	if s := a.Status(a.End); s != Completed {
		t.Errorf("a forced-active buy after its flight is %s, want completed", s)
	}
}

// TestDecodeNamesEveryTypeFault: a request with values of the wrong type
// is refused with a fault at each, its place indexed, before any other
// check, on every media-buy task; members spelled in another case are not
// read as the members they resemble.
func TestDecodeNamesEveryTypeFault(t *testing.T) {
	const head = `"idempotency_key":"0123456789abcdef","account":{"account_id":"a"},"brand":{"domain":"b.example"},"start_time":"asap","end_time":"2027-01-01T00:00:00Z"`
	for _, c := range []struct {
		name   string
		decode func([]byte) error
		args   string
		want   []string
	}{
		{"create", func(b []byte) error { _, err := DecodeCreate(b, t0); return err },
			`{` + head + `,"paused":"yes","packages":[{"product_id":"p","pricing_option_id":"o","budget":1},{"product_id":7,"pricing_option_id":"o","budget":"lots","creative_assignments":[{"creative_id":"c","weight":"heavy"}]}]}`,
			[]string{
				"packages[1].budget: packages[1].budget must be a number",
				"packages[1].creative_assignments[0].weight: packages[1].creative_assignments[0].weight must be a number",
				"packages[1].product_id: packages[1].product_id must be a string",
				"paused: paused must be true or false",
			}},
		{"create, a number past float64", func(b []byte) error { _, err := DecodeCreate(b, t0); return err },
			`{` + head + `,"packages":[{"product_id":"p","pricing_option_id":"o","budget":1e400}]}`,
			[]string{"packages[0].budget: packages[0].budget must be a number"}},
		{"update", func(b []byte) error { _, err := DecodeUpdate(b, t0); return err },
			`{"idempotency_key":"0123456789abcdef","media_buy_id":["mb"],"revision":1.5,"packages":[{"package_id":"a","paused":1}]}`,
			[]string{
				"media_buy_id: media_buy_id must be a string",
				"packages[0].paused: packages[0].paused must be true or false",
				"revision: revision must be an integer",
			}},
		{"get_media_buys", func(b []byte) error { _, err := DecodeGet(b); return err },
			`{"media_buy_ids":["a",2,{"id":"c"}]}`,
			[]string{"media_buy_ids[1]: media_buy_ids[1] must be a string", "media_buy_ids[2]: media_buy_ids[2] must be a string"}},
	} {
		err := c.decode([]byte(c.args))
		var re *RequestError
		if !errors.As(err, &re) {
			t.Errorf("%s: err = %v, want a request error", c.name, err)
			continue
		}
		var got []string
		for _, p := range re.Problems {
			if p.Code != adcp.InvalidRequest {
				t.Errorf("%s: %s at %s, want INVALID_REQUEST", c.name, p.Code, p.Path)
			}
			got = append(got, p.Path+": "+p.Detail)
		}
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("%s: faults (-want +got):\n%s", c.name, diff)
		}
	}

	// "PACKAGES" is not packages: encoding/json would have filled the
	// packages from it, and refused its number.
	r, err := DecodeCreate([]byte(`{`+head+`,"PACKAGES":5,"Paused":true,"packages":[{"product_id":"p","pricing_option_id":"o","budget":1}]}`), t0)
	if err != nil || len(r.Packages) != 1 || r.Paused {
		t.Errorf("case-folded members: %+v, %v; want them ignored", r, err)
	}
	// A null member is absent, as it was when encoding/json read it.
	r, err = DecodeCreate([]byte(`{`+head+`,"packages":[{"product_id":"p","pricing_option_id":"o","budget":1,"targeting_overlay":{"geo_countries":null}}]}`), t0)
	if err != nil || len(r.Packages) != 1 || len(r.Packages[0].Countries) != 0 {
		t.Errorf("a null geo_countries: %+v, %v; want it read as none", r, err)
	}
	// Members read after the strict pass are read as strictly: "MODE"
	// is not the allocation's mode.
	_, err = DecodeCreate([]byte(`{`+head+`,"budget_allocation":{"MODE":"fixed"},"packages":[{"product_id":"p","pricing_option_id":"o","budget":1}]}`), t0)
	var re *RequestError
	if !errors.As(err, &re) || len(re.Problems) != 1 || re.Problems[0].Path != "budget_allocation" || re.Problems[0].Code != adcp.UnsupportedFeature {
		t.Errorf("budget_allocation with a case-folded mode: %v, want it refused as unsupported", err)
	}
}
