package products_test

// Indistinguishability and the decline golden files. For every slug and
// every disclosure level, two rulebooks whose firing rules differ in all
// that is confidential (id, name, notes, confidential terms, position, the
// rules around them and, where the level hides it, the threshold itself)
// must give the same brief byte-identical rejected payloads, once the
// echoed context and the ledger receipt are set aside. The payload of the
// first rulebook is kept as a golden file per slug and level, so any change
// to what a buyer reads shows up in review.
//
// Regenerate the golden files with: go test ./products -run Golden -update

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/storefront/storefront/adcp"
	"github.com/storefront/storefront/demo"
	"github.com/storefront/storefront/internal/golden"
	"github.com/storefront/storefront/internal/spectest"
	"github.com/storefront/storefront/merch"
	"github.com/storefront/storefront/products"
	"github.com/storefront/storefront/vocab"
)

// twin is the second rule for a slug: a rule that declines the same brief
// for the same public reason but is configured differently inside. hidden
// says which levels it stays indistinguishable at when its threshold
// differs from the first rule's; at the other levels the twin keeps the
// first rule's condition and differs only in confidential parts.
var twins = map[vocab.Slug]struct {
	when   merch.Condition
	hidden vocab.Level // the finest level that still hides the difference
}{
	// 1500 and 2200 both round up to the 2,500 bucket.
	vocab.BudgetBelowMinimum: {merch.Condition{BudgetBelow: &merch.BudgetFloor{Currency: "USD", Minimum: 2200}}, vocab.Range},
	// Five and seven days are both "about a week" and both land early in December.
	vocab.LeadTimeTooShort: {merch.Condition{LeadTimeDays: ptr(7)}, vocab.Range},
	// A different sold-out window that still covers the flight: the next
	// open flight moves from 1 to 6 January, which range words as "early
	// January 2027" both times; only exact gives the dates.
	vocab.FlightUnavailable: {merch.Condition{SoldOut: []merch.Window{{Start: adcp.MustDate("2026-12-15"), End: adcp.MustDate("2027-01-05")}}}, vocab.Range},
	// A different list still without the asked-for value: the list itself
	// is public from category up, so only none hides it.
	vocab.ChannelNotOffered:    {merch.Condition{ChannelsOffered: []string{"display"}}, vocab.None},
	vocab.GeoNotServed:         {merch.Condition{CountriesServed: []string{"US"}}, vocab.None},
	vocab.FormatNotOffered:     {merch.Condition{FormatKindsOffered: []string{"image"}}, vocab.None},
	vocab.CategoryNotAccepted:  {merch.Condition{Industries: []string{"gambling_betting", "tobacco"}}, vocab.Exact},
	vocab.CommerciallyDeclined: {merch.Condition{Keywords: []string{"payday", "short-term loan"}}, vocab.Exact},
}

var levels = []vocab.Level{vocab.None, vocab.Category, vocab.Range, vocab.Exact}

// declineFor runs one request against a rulebook holding rules and returns
// the encoded answer.
func declineFor(t *testing.T, rules []merch.Rule, request string) []byte {
	t.Helper()
	rb := merch.Rulebook{Format: merch.Format, Voice: vocab.Voice{SellerName: "Lakeside Media", Tone: vocab.Warm}, Rules: rules}
	if err := rb.Validate(); err != nil {
		t.Fatalf("rulebook: %v", err)
	}
	snap := products.NewSnapshot(products.Publisher{ID: "lakeside", Name: "Lakeside Media", Domain: "lakeside.example", AnonymousDiscovery: true},
		demo.Products(), 1, &rb, 1)
	svc := &products.Service{Now: func() time.Time { return time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC) }}
	res := svc.Preview(context.Background(), products.Call{Publisher: "lakeside", Args: []byte(request)}, snap)
	if got := res.Outcome.Arm().String(); got != "rejected" {
		t.Fatalf("want a rejection, got %s: %s", got, res.Payload)
	}
	return res.Payload
}

func requestFor(brief, run string) string {
	fields := `"adcp_version":"3.2-beta.5","buying_mode":"brief","context":{"run":"` + run + `"}`
	if brief[:8] == `"brief":` {
		return "{" + fields + "," + brief + "}"
	}
	return "{" + fields + `,"brief":"Video and display for a coffee launch",` + brief + "}"
}

// public strips what may differ between two indistinguishable declines:
// the echoed context and the ledger receipt.
func public(t *testing.T, payload []byte) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(payload, &m); err != nil {
		t.Fatalf("payload: %v", err)
	}
	delete(m, "context")
	if ext, ok := m["ext"].(map[string]any); ok {
		if ns, ok := ext["io.github.storefront"].(map[string]any); ok {
			delete(ns, "receipt")
		}
	}
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// firstRule and secondRule are two internally unrelated rules for one slug.
func firstRule(when merch.Condition, slug vocab.Slug, level vocab.Level, suggest []vocab.SuggestionKind) merch.Rule {
	return merch.Rule{
		ID: "FLR-2291-QXV", Name: "Northwind agency floor", Notes: "Agreed with Dana Whitlock in ticket OPS-88213.",
		ConfidentialTerms: []string{"Northwind"}, When: when,
		Decline: merch.Action{Slug: slug, Disclosure: level, Suggest: suggest},
	}
}

func secondRules(when merch.Condition, slug vocab.Slug, level vocab.Level, suggest []vocab.SuggestionKind) []merch.Rule {
	return []merch.Rule{
		// A rule that never fires for these briefs sits in front.
		{ID: "KW-7", Name: "Tobacco keyword", Notes: "Legal asked for this.", When: merch.Condition{Keywords: []string{"cigarillo"}},
			Decline: merch.Action{Slug: vocab.CategoryNotAccepted, Disclosure: vocab.Category}},
		{
			ID: "zz_legacy_rule_0042", Name: "Blue Harbor holdback 2027", Notes: "Per Marcus Oyelaran, renewal pending (JIRA MERCH-5521). Do not share.",
			ConfidentialTerms: []string{"Blue Harbor", "MERCH-5521"}, When: when,
			Decline: merch.Action{Slug: slug, Disclosure: level, Suggest: suggest},
		},
	}
}

func TestDeclinesIndistinguishableAcrossRules(t *testing.T) {
	for _, sc := range slugConditions {
		tw, ok := twins[sc.slug]
		if !ok {
			t.Fatalf("no twin for %s: every slug needs one", sc.slug)
		}
		for _, level := range levels {
			t.Run(fmt.Sprintf("%s/%s", sc.slug, level), func(t *testing.T) {
				a := declineFor(t, []merch.Rule{firstRule(sc.when, sc.slug, level, sc.suggest)}, requestFor(sc.brief, "a"))
				// Same condition, different internals.
				b := declineFor(t, secondRules(sc.when, sc.slug, level, sc.suggest), requestFor(sc.brief, "b"))
				if !bytes.Equal(public(t, a), public(t, b)) {
					t.Errorf("rules differing only inside give different declines:\n%s\n%s", a, b)
				}
				if bytes.Equal(a, b) {
					t.Error("the contexts differ, so the raw payloads must too: the comparison is not looking at the payload")
				}
				// A different threshold, at the levels that hide it.
				if level <= tw.hidden {
					c := declineFor(t, secondRules(tw.when, sc.slug, level, sc.suggest), requestFor(sc.brief, "c"))
					if !bytes.Equal(public(t, a), public(t, c)) {
						t.Errorf("at level %s a different threshold shows through:\n%s\n%s", level, a, c)
					}
				}
			})
		}
	}
}

// TestDeclinesDistinguishableAboveTheirLevel is the control: where a level
// does show a threshold, the twin with the other threshold must differ, or
// the test above would pass on a composer that ignores its facts.
func TestDeclinesDistinguishableAboveTheirLevel(t *testing.T) {
	checked := 0
	for _, sc := range slugConditions {
		tw := twins[sc.slug]
		for _, level := range levels {
			if level <= tw.hidden {
				continue
			}
			a := declineFor(t, []merch.Rule{firstRule(sc.when, sc.slug, level, sc.suggest)}, requestFor(sc.brief, "a"))
			c := declineFor(t, secondRules(tw.when, sc.slug, level, sc.suggest), requestFor(sc.brief, "a"))
			if bytes.Equal(public(t, a), public(t, c)) {
				t.Errorf("%s at %s: a different threshold should show at this level, but the declines are identical:\n%s", sc.slug, level, a)
			}
			checked++
		}
	}
	if checked == 0 {
		t.Fatal("no level shows any threshold")
	}
}

func TestDeclineGoldenFiles(t *testing.T) {
	for _, sc := range slugConditions {
		for _, level := range levels {
			name := filepath.Join("testdata", "golden", "declines", string(sc.slug), level.String()+".json")
			rule := firstRule(sc.when, sc.slug, level, sc.suggest)
			got := declineFor(t, []merch.Rule{rule}, requestFor(sc.brief, "golden"))
			if arm := spectest.GetProducts(t, got); arm != "rejected" {
				t.Fatalf("%s: validated as %s", name, arm)
			}
			golden.JSON(t, name, got, golden.Options{Confidential: confidentialOf(rule), Hint: "go test ./products -run Golden -update"})
		}
	}
}

// confidentialOf lists what the golden decline of a rulebook holding rule
// must never show.
func confidentialOf(rule merch.Rule) []string {
	return golden.Confidential(&merch.Rulebook{Rules: []merch.Rule{rule}}, demo.Products())
}
