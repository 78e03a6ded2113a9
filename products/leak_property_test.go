package products_test

// The property-based leak test. rapid generates publishers: rulebooks and
// catalogues whose rule ids, names, notes, confidential terms and product
// references are random, then plants those secrets, disguised, in the
// places the storefront does show (voice templates, product names and
// descriptions, buyers' briefs) and runs a request through the real
// pipeline. No buyer-visible string of any answer may carry any secret in
// any view (case, width, look-alikes, invisible characters, separators).
//
// The default run checks a few hundred publishers. Set
// STOREFRONT_LEAK_CASES (e.g. 100000) for the long run.

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/storefront/storefront/adcp"
	"github.com/storefront/storefront/decline"
	"github.com/storefront/storefront/demo"
	"github.com/storefront/storefront/merch"
	"github.com/storefront/storefront/products"
	"github.com/storefront/storefront/sanitize"
)

const gibberish = "bcdfghjklmnpqrstvwxz"

// word draws a capitalised nonsense word that no public text contains.
func word(t *rapid.T, label string) string {
	n := rapid.IntRange(6, 9).Draw(t, label+"_len")
	b := make([]byte, n)
	vowels := "aeiouy"
	for i := range b {
		if i%2 == 1 {
			b[i] = vowels[rapid.IntRange(0, len(vowels)-1).Draw(t, fmt.Sprintf("%s_v%d", label, i))]
		} else {
			b[i] = gibberish[rapid.IntRange(0, len(gibberish)-1).Draw(t, fmt.Sprintf("%s_c%d", label, i))]
		}
	}
	b[0] = b[0] - 'a' + 'A'
	return string(b)
}

func ident(t *rapid.T, label string) string {
	letters := strings.ToUpper(word(t, label+"_a"))[:rapid.IntRange(2, 4).Draw(t, label+"_n")]
	return fmt.Sprintf("%s-%d-%s", letters, rapid.IntRange(1000, 99999).Draw(t, label+"_d"), strings.ToUpper(word(t, label+"_b")))
}

// disguises are ways a secret gets written so that a naive filter misses it.
var disguises = []func(string) string{
	func(s string) string { return s },
	strings.ToLower,
	strings.ToUpper,
	func(s string) string { // full width
		return strings.Map(func(r rune) rune {
			if r >= '!' && r <= '~' {
				return r + 0xFEE0
			}
			return r
		}, s)
	},
	func(s string) string { return join(s, "\u200b") },
	func(s string) string { return join(s, " ") },
	func(s string) string { return join(s, ".") },
	func(s string) string { return strings.NewReplacer(" ", "_", "-", "_").Replace(s) },
	func(s string) string { // Cyrillic and Greek look-alikes
		return strings.NewReplacer("a", "а", "e", "е", "o", "о", "p", "р", "c", "с", "x", "х", "y", "у", "A", "Α", "O", "Ο", "E", "Ε", "T", "Τ").Replace(s)
	},
	func(s string) string { return join(s, "\u0301") }, // combining acute accents
	func(s string) string { return join(s, "\u00ad") }, // soft hyphens
	func(s string) string { return "<b>" + s + "</b>" },
}

func join(s, sep string) string {
	return strings.Join(strings.Split(s, ""), sep)
}

func disguise(t *rapid.T, s, label string) string {
	return disguises[rapid.IntRange(0, len(disguises)-1).Draw(t, label)](s)
}

// generated is one random publisher and the secrets it must keep.
type generated struct {
	snap    *products.Snapshot
	secrets []string
	request string
}

var slugConditions = []struct {
	slug    decline.Slug
	when    merch.Condition
	suggest []decline.SuggestionKind
	brief   string
}{
	{decline.BudgetBelowMinimum, merch.Condition{BudgetBelow: &merch.BudgetFloor{Currency: "USD", Minimum: 1500}}, []decline.SuggestionKind{decline.RaiseBudget, decline.SwitchChannel},
		`"filters":{"budget_range":{"max":90,"currency":"USD"}}`},
	{decline.ChannelNotOffered, merch.Condition{ChannelsOffered: []string{"display", "olv"}}, []decline.SuggestionKind{decline.SwitchChannel},
		`"filters":{"channels":["dooh"]}`},
	{decline.GeoNotServed, merch.Condition{CountriesServed: []string{"US", "GB"}}, []decline.SuggestionKind{decline.TargetMarket},
		`"targeting_overlay":{"geo_countries":["FR"]}`},
	{decline.FormatNotOffered, merch.Condition{FormatKindsOffered: []string{"image", "video_vast"}}, []decline.SuggestionKind{decline.ChangeFormat},
		`"filters":{"format_kinds":["html5"]}`},
	{decline.CategoryNotAccepted, merch.Condition{Industries: []string{"gambling_betting"}}, nil,
		`"brand":{"domain":"bet.example","industries":["gambling_betting.casino"]}`},
	{decline.CommerciallyDeclined, merch.Condition{Keywords: []string{"payday"}}, nil,
		`"brief":"payday offers"`},
	{decline.LeadTimeTooShort, merch.Condition{LeadTimeDays: ptr(5)}, []decline.SuggestionKind{decline.LaterStart},
		`"filters":{"start_date":"2026-11-30","end_date":"2026-12-20"}`},
	{decline.FlightUnavailable, merch.Condition{SoldOut: []merch.Window{{Start: adcp.MustDate("2026-12-20"), End: adcp.MustDate("2026-12-31")}}}, []decline.SuggestionKind{decline.MoveFlight},
		`"filters":{"start_date":"2026-12-22","end_date":"2026-12-28"}`},
}

func ptr[T any](v T) *T { return &v }

func generate(t *rapid.T) generated {
	var g generated
	rb := merch.Rulebook{Format: merch.Format, Voice: decline.Voice{SellerName: "Lakeside Media", Tone: decline.Warm, Templates: map[decline.Slug]string{}}}
	placeholders := []string{"{{seller}}", "{{minimum}}", "{{channels}}", "{{markets}}", "{{formats}}", "{{open_flight}}", "{{lead_time}}"}
	for i, sc := range slugConditions {
		if !rapid.Bool().Draw(t, fmt.Sprintf("rule%d", i)) && i > 0 {
			continue
		}
		id := ident(t, fmt.Sprintf("id%d", i))
		name := word(t, fmt.Sprintf("name%da", i)) + " " + word(t, fmt.Sprintf("name%db", i)) + " floor"
		person := word(t, fmt.Sprintf("first%d", i)) + " " + word(t, fmt.Sprintf("last%d", i))
		ticket := ident(t, fmt.Sprintf("ticket%d", i))
		term := word(t, fmt.Sprintf("term%d", i)) + " " + word(t, fmt.Sprintf("term%db", i))
		g.secrets = append(g.secrets, id, name, person, ticket, term)
		level := decline.Level(rapid.IntRange(0, 3).Draw(t, fmt.Sprintf("level%d", i)))
		rb.Rules = append(rb.Rules, merch.Rule{
			ID: id, Name: name, Notes: "Agreed with " + person + " in ticket " + ticket + ".",
			ConfidentialTerms: []string{term}, When: sc.when,
			Decline: merch.Action{Slug: sc.slug, Disclosure: level, Suggest: sc.suggest},
		})
		// The publisher pastes a secret into the slug's template.
		secret := g.secrets[len(g.secrets)-1-rapid.IntRange(0, 4).Draw(t, fmt.Sprintf("tplsecret%d", i))]
		ph := placeholders[rapid.IntRange(0, len(placeholders)-1).Draw(t, fmt.Sprintf("ph%d", i))]
		rb.Voice.Templates[sc.slug] = "Per " + disguise(t, secret, fmt.Sprintf("tpl%d", i)) + " the answer is " + ph + ". We hope to work together."
	}
	catalogue := demo.Products()
	n := rapid.IntRange(2, 6).Draw(t, "products")
	catalogue = catalogue[:n]
	for i := range catalogue {
		ref := ident(t, fmt.Sprintf("ref%d", i))
		g.secrets = append(g.secrets, ref)
		catalogue[i].InternalRef = ref
		if rapid.Bool().Draw(t, fmt.Sprintf("plantname%d", i)) {
			s := g.secrets[rapid.IntRange(0, len(g.secrets)-1).Draw(t, fmt.Sprintf("namesecret%d", i))]
			catalogue[i].Name = catalogue[i].Name + " " + disguise(t, s, fmt.Sprintf("pname%d", i))
			catalogue[i].Description = "Booked via " + disguise(t, s, fmt.Sprintf("pdesc%d", i)) + ". " + catalogue[i].Description
		}
	}
	g.snap = products.NewSnapshot(products.Publisher{ID: "lakeside", Name: "Lakeside Media", Domain: "lakeside.example", AnonymousDiscovery: true},
		catalogue, 1, &rb, 1)

	sc := slugConditions[rapid.IntRange(0, len(slugConditions)-1).Draw(t, "trigger")]
	probe := g.secrets[rapid.IntRange(0, len(g.secrets)-1).Draw(t, "briefsecret")]
	briefText := "Video for a coffee launch, ask " + disguise(t, probe, "brief") + " about it"
	version := []string{"3.2-beta.5", "3.2-beta.4", "3.1", "3.0"}[rapid.IntRange(0, 3).Draw(t, "version")]
	fields := []string{`"adcp_version":"` + version + `"`, `"buying_mode":"brief"`, `"context":{"probe":"x"}`}
	if strings.HasPrefix(sc.brief, `"brief"`) {
		fields = append(fields, sc.brief)
	} else {
		b, _ := json.Marshal(briefText)
		fields = append(fields, `"brief":`+string(b), sc.brief)
	}
	g.request = "{" + strings.Join(fields, ",") + "}"
	return g
}

// visible collects every string in an answer except the echoed context.
func visible(v any, out *[]string) {
	switch x := v.(type) {
	case string:
		*out = append(*out, x)
	case []any:
		for _, e := range x {
			visible(e, out)
		}
	case map[string]any:
		for k, e := range x {
			if k != "context" {
				visible(e, out)
			}
		}
	}
}

func TestLeakProperty(t *testing.T) {
	if n := os.Getenv("STOREFRONT_LEAK_CASES"); n != "" {
		if err := flag.Set("rapid.checks", n); err != nil {
			t.Fatal(err)
		}
	} else if f := flag.Lookup("rapid.checks"); f != nil && f.Value.String() == f.DefValue {
		_ = flag.Set("rapid.checks", "300")
	}
	svc := &products.Service{Now: func() time.Time { return time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC) }}
	rapid.Check(t, func(t *rapid.T) {
		g := generate(t)
		res := svc.Preview(context.Background(), products.Call{PublisherID: "lakeside", Args: []byte(g.request)}, g.snap)
		var payload any
		if err := json.Unmarshal(res.Payload, &payload); err != nil {
			t.Fatalf("answer is not JSON: %v", err)
		}
		var strs []string
		visible(payload, &strs)
		for _, s := range strs {
			sk := sanitize.Skeleton(s)
			for _, secret := range g.secrets {
				if strings.Contains(sk, sanitize.Skeleton(secret)) {
					t.Fatalf("secret %q leaked in %q\nrequest %s\nanswer %s", secret, s, g.request, res.Payload)
				}
			}
		}
		if res.Outcome.Arm().String() == "" {
			t.Fatal("no arm")
		}
	})
}

// TestLeakPropertyCanFail runs the same generator with the screen replaced
// by one that knows no secrets: the checker must then find leaks, or the
// property above proves nothing.
func TestLeakPropertyCanFail(t *testing.T) {
	svc := &products.Service{Now: func() time.Time { return time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC) }}
	leaks := 0
	rapid.Check(t, func(t *rapid.T) {
		g := generate(t)
		g.snap.Screen = sanitize.New(nil)
		res := svc.Preview(context.Background(), products.Call{PublisherID: "lakeside", Args: []byte(g.request)}, g.snap)
		var payload any
		_ = json.Unmarshal(res.Payload, &payload)
		var strs []string
		visible(payload, &strs)
		for _, s := range strs {
			for _, secret := range g.secrets {
				if strings.Contains(sanitize.Skeleton(s), sanitize.Skeleton(secret)) {
					leaks++
					return
				}
			}
		}
	})
	if leaks == 0 {
		t.Error("with an empty screen no secret leaked: the property checks nothing")
	}
}
