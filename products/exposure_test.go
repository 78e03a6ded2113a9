package products_test

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/storefront/storefront/demo"
	"github.com/storefront/storefront/merch"
	"github.com/storefront/storefront/products"
	"github.com/storefront/storefront/sanitize"
	"github.com/storefront/storefront/store"
	"github.com/storefront/storefront/vocab"
)

// secretRulebook is the demo rulebook with one more rule whose name is a
// codename and whose notes name a person and a deal.
func secretRulebook() *merch.Rulebook {
	rb := demo.Rulebook()
	rb.Rules = append(rb.Rules, merch.Rule{
		ID: "ZQX-7731-FLOOR", Name: "Project Guvovrokl", Notes: "Agreed with Ada Okonkwo.",
		ConfidentialTerms: []string{"Brimek Partners"},
		When:              merch.Condition{Keywords: []string{"payday"}},
		Decline:           merch.Action{Slug: vocab.CommerciallyDeclined, Disclosure: vocab.Category},
	})
	return &rb
}

// TestParamsAndIdentifiersAreScreened: a product whose format params or
// pricing option id names a confidential term has no neutral fallback (a
// buyer books by it), so it is withheld: never served, never bought. The
// rest of the catalogue is served as before.
func TestParamsAndIdentifiersAreScreened(t *testing.T) {
	for name, plant := range map[string]func(p *products.Product){
		"params value": func(p *products.Product) {
			p.FormatOptions[0].Params = json.RawMessage(`{"width":300,"height":250,"note":"Brimek Partners only"}`)
		},
		"params member name": func(p *products.Product) {
			p.FormatOptions[0].Params = json.RawMessage(`{"width":300,"height":250,"project_guvovrokl_slot":true}`)
		},
		"pricing option id": func(p *products.Product) { p.PricingOptions[0].PricingOptionID = "cpm_zqx-7731-floor" },
		"format option id":  func(p *products.Product) { p.FormatOptions[0].FormatOptionID = "project-guvovrokl-mrec" },
		"property tag":      func(p *products.Product) { p.PublisherProperties[0].PropertyTags = []string{"brimek-partners"} },
	} {
		t.Run(name, func(t *testing.T) {
			catalogue := demo.Products()
			planted := catalogue[0].ProductID
			plant(&catalogue[0])
			e := newEnv(t)
			e.publisher(t, "p", catalogue, secretRulebook())
			r, m := e.get(t, "p", anonymous, `{"adcp_version":"3.2-beta.5","buying_mode":"wholesale"}`)
			if m["status"] != "completed" {
				t.Fatalf("status = %v: %s", m["status"], r.Payload)
			}
			got := ids(productsOf(t, m))
			if slices.Contains(got, planted) {
				t.Errorf("product %s, whose %s names a confidential term, was served", planted, name)
			}
			if len(got) != len(catalogue)-1 {
				t.Errorf("served %d products, want the %d others", len(got), len(catalogue)-1)
			}
			for _, s := range []string{"brimek", "guvovrokl", "7731"} {
				if i := bytes.Index(bytes.ToLower(r.Payload), []byte(s)); i >= 0 {
					t.Errorf("answer carries %q: …%s…", s, r.Payload[max(0, i-100):min(len(r.Payload), i+100)])
				}
			}
		})
	}
}

// TestKeywordsOfSecretsDoNotRank: a catalogue keyword that is a word or a
// fragment of a confidential name gives a buyer who types it nothing a
// random word of the same shape would not; a keyword that touches nothing
// confidential still ranks and shows in brief_relevance.
func TestKeywordsOfSecretsDoNotRank(t *testing.T) {
	catalogue := demo.Products()
	for i := range catalogue {
		catalogue[i].Keywords = append(catalogue[i].Keywords, "guvovrokl", "okonkwo", "vovrok", "sneakerheads")
	}
	e := newEnv(t)
	e.publisher(t, "p", catalogue, secretRulebook())
	answer := func(word string) []byte {
		r, _ := e.get(t, "p", anonymous, `{"adcp_version":"3.2-beta.5","buying_mode":"brief","brief":"launch for `+word+` fans"}`)
		return r.Payload
	}
	for _, secret := range []string{"guvovrokl", "okonkwo", "vovrok"} {
		twin := strings.Repeat("q", len(secret))
		if a, b := answer(secret), answer(twin); !bytes.Equal(a, bytes.ReplaceAll(b, []byte(twin), []byte(secret))) {
			t.Errorf("brief with %q answered differently from one with %q", secret, twin)
		}
	}
	if a := answer("sneakerheads"); !bytes.Contains(a, []byte("Matches brief terms: sneakerheads")) {
		t.Errorf("a public keyword no longer ranks: %.300s", a)
	}
}

// TestSeededProductsAreTheBuyersOwnWords: a sandbox buyer's seeded product
// is screened for markup and vendor names only; a guessed secret in its
// name comes back as the buyer wrote it, exactly as a random word does.
func TestSeededProductsAreTheBuyersOwnWords(t *testing.T) {
	rb := secretRulebook()
	base := products.NewSnapshot(demo.Publisher(), demo.Products(), 1, rb, 1)
	served := func(word string) string {
		p := demo.Products()[0]
		p.Name = "Seeded " + word + " video"
		seeded := products.NewSeededSnapshot(base, []products.Product{p}, 1)
		r := (&products.Service{}).Preview(t.Context(), products.Call{Publisher: "p",
			Args: []byte(`{"adcp_version":"3.2-beta.5","buying_mode":"wholesale"}`)}, seeded)
		return string(r.Payload)
	}
	if got := served("Guvovrokl"); !strings.Contains(got, "Seeded Guvovrokl video") {
		t.Errorf("the seeded name was screened with the publisher's deny-list: %s", got)
	}
	if got := served("Magnite"); strings.Contains(got, "Magnite") {
		t.Errorf("a vendor name in a seeded product was served: %s", got)
	}
	if base.Screen.Names("Project Guvovrokl") == false {
		t.Fatal("the fixture's codename is not on the deny-list: the test checks nothing")
	}
	_ = sanitize.Declined
}

// TestForcedTextIsNoOracle: a forced decline's text is the compliance
// caller's own, so a guessed secret in it comes back exactly as a random
// id of the same shape does, in the rejected arm and in the legacy error.
func TestForcedTextIsNoOracle(t *testing.T) {
	for _, version := range []string{"3.2-beta.5", "3.1"} {
		answer := func(word string) string {
			e := demoEnv(t)
			acct, err := e.store.EnsureAccount(t.Context(), nw, store.Account{Operator: "agency.example", BrandDomain: "acme.example", Sandbox: true, Disclosure: vocab.Exact})
			if err != nil {
				t.Fatal(err)
			}
			d := products.Directive{Arm: "rejected", Reason: "Held by " + word + ". Ask " + word + " first.", Suggestions: []string{"Call " + word + "."}}
			if err := e.store.SetDirective(t.Context(), nw, acct.ID, agency.ID, d); err != nil {
				t.Fatal(err)
			}
			r, _ := e.get(t, nw, agency, `{"adcp_version":"`+version+`","brief":"video","account":{"brand":{"domain":"acme.example"},"operator":"agency.example","sandbox":true}}`)
			return string(receiptless(r.Payload))
		}
		secret, random := answer("MR-2291-CTV-FLOOR"), answer("MQ-5517-RTX-SHELF")
		if secret != strings.ReplaceAll(random, "MQ-5517-RTX-SHELF", "MR-2291-CTV-FLOOR") {
			t.Errorf("%s: a demo rule id and a random id of its shape are answered differently:\n%s\n%s", version, secret, random)
		}
	}
}

// receiptless drops the ledger receipt, which differs between any two
// answers (sequence and hash), from a payload.
func receiptless(payload []byte) []byte {
	var m map[string]any
	if json.Unmarshal(payload, &m) != nil {
		return payload
	}
	if ext, ok := m["ext"].(map[string]any); ok {
		if ns, ok := ext["io.github.storefront"].(map[string]any); ok {
			delete(ns, "receipt")
		}
	}
	b, _ := json.Marshal(m)
	return b
}
