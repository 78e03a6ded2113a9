package products

import (
	"fmt"
	"sort"
	"strings"

	"github.com/storefront/storefront/jsonfield"
	"github.com/storefront/storefront/merch"
	"github.com/storefront/storefront/sanitize"
	"github.com/storefront/storefront/vocab"
)

// What the admin API stores is what is served. These lints refuse, naming
// the field, any text that the serving screen would change: a product's
// name, description, format params, identifiers and every other string of
// its wire form; a rulebook's seller name and templates; and, when a
// rulebook adds confidential terms, the products whose buyer-visible text
// the new terms would change. Every check uses the screen a snapshot of
// the saved state serves with (ServingScreen), never a lint-only list.

// LintProduct reports each buyer-visible string of p that one of screens
// would change, with its JSON pointer relative to the product.
func LintProduct(p Product, screens ...*sanitize.Screen) jsonfield.Invalid {
	var v jsonfield.Invalid
	for _, f := range wire(p, nil) {
		if f.name == "format_ids" {
			// Derived from format_options, whose own strings are checked.
			continue
		}
		walkField(f, func(ptr, s string) bool {
			for _, screen := range screens {
				if d := ServedChange(screen, s); d != "" {
					v.Add(ptr, "buyers would not be shown this as saved: %s", d)
					break
				}
			}
			return false
		})
	}
	return v
}

// servedChange says how serving s would change it, or "" when it would
// not.
func ServedChange(screen *sanitize.Screen, s string) string {
	if !screenChanges(screen, s) {
		return ""
	}
	if hits := screen.Hits(s); len(hits) > 0 {
		t := hits[0].Term
		return fmt.Sprintf("it names the confidential %s %q", strings.ReplaceAll(string(t.Kind), "_", " "), t.Value)
	}
	if screen.Names(s) {
		return "it names a confidential term"
	}
	return "it holds markup, control or invisible characters the screen removes"
}

// LintVoice reports a seller name or template of rb that screen would
// change when a decline is served, with pointers into the rulebook.
func LintVoice(rb *merch.Rulebook, screen *sanitize.Screen) jsonfield.Invalid {
	var v jsonfield.Invalid
	if rb == nil {
		return v
	}
	if name := rb.Voice.SellerName; name != "" {
		// The name is served inside the tones' openers as well as alone.
		for _, s := range []string{name, "Thank you for considering " + name + ".", name + " is unable to accept this brief as submitted."} {
			if d := ServedChange(screen, s); d != "" {
				v.Add("/voice/seller_name", "buyers would not be shown the seller name as saved: %s", d)
				break
			}
		}
	}
	slugs := make([]string, 0, len(rb.Voice.Templates))
	for s := range rb.Voice.Templates {
		slugs = append(slugs, string(s))
	}
	sort.Strings(slugs)
	for _, s := range slugs {
		lit := vocab.TemplateLiteral(rb.Voice.Templates[vocab.Slug(s)])
		if d := ServedChange(screen, lit); d != "" {
			v.Add(jsonfield.Pointer("voice", "templates", s), "buyers would not be shown this template as saved: %s", d)
		}
	}
	return v
}

// LintRulebook checks a rulebook about to be saved for pub over catalogue,
// replacing previous (nil for the first): its voice against the screen the
// saved state would serve with, and the catalogue against the confidential
// terms the rulebook adds. A product the new terms would change is
// reported at the rule field that holds the term.
func LintRulebook(pub Publisher, rb, previous *merch.Rulebook, catalogue []Product) jsonfield.Invalid {
	v := LintVoice(rb, ServingScreen(pub, rb, catalogue))
	added, where := addedTerms(rb, previous)
	if len(added) == 0 || len(catalogue) == 0 {
		return v
	}
	screen := sanitize.New(sanitize.Compile(added, ServingPublic(pub, rb, catalogue)))
	reported := map[string]bool{}
	for _, p := range catalogue {
		for _, f := range LintProduct(p, screen) {
			ptr := ""
			for _, t := range added {
				if strings.Contains(f.Detail, fmt.Sprintf("%q", t.Value)) {
					ptr = where[t.Value]
					break
				}
			}
			key := ptr + "\x00" + p.ProductID
			if reported[key] {
				continue
			}
			reported[key] = true
			v.Add(ptr, "product %s shows buyers %s, and this confidential text would change it (%s); reword the product first or keep this term out of the rulebook",
				p.ProductID, f.Pointer, strings.TrimPrefix(f.Detail, "buyers would not be shown this as saved: "))
		}
	}
	return v
}

// addedTerms lists rb's confidential terms that previous does not have,
// each with the pointer of the rule field it comes from.
func addedTerms(rb, previous *merch.Rulebook) ([]sanitize.Term, map[string]string) {
	had := map[string]bool{}
	for _, t := range previous.ConfidentialTerms() {
		had[t.Value] = true
	}
	where := map[string]string{}
	var added []sanitize.Term
	note := func(base string, r merch.Rule) {
		one := &merch.Rulebook{Rules: []merch.Rule{r}}
		for _, t := range one.ConfidentialTerms() {
			if had[t.Value] || where[t.Value] != "" {
				continue
			}
			where[t.Value] = base + termField(t, r)
			added = append(added, t)
		}
	}
	if rb == nil {
		return nil, where
	}
	for i, r := range rb.Rules {
		note(jsonfield.Pointer("rules", i), r)
	}
	if rb.Orders != nil {
		for i, r := range rb.Orders.Review {
			note(jsonfield.Pointer("orders", "review", i), merch.Rule{ID: r.ID, Name: r.Name, Notes: r.Notes, ConfidentialTerms: r.ConfidentialTerms})
		}
	}
	return added, where
}

// termField is the field of r a term of r comes from.
func termField(t sanitize.Term, r merch.Rule) string {
	switch t.Kind {
	case sanitize.KindRuleID:
		return "/id"
	case sanitize.KindRuleName:
		return "/name"
	case sanitize.KindNoteTerm:
		return "/notes"
	}
	for i, c := range r.ConfidentialTerms {
		if c == t.Value {
			return jsonfield.Pointer("confidential_terms", i)
		}
	}
	return ""
}

// ServingLexicon is the public text a serving screen of pub over
// catalogue exempts from its deny-list: the storefront's own lines and the
// publisher's public identity.
func ServingLexicon(pub Publisher, catalogue []Product) []string {
	return append(PublicLexicon(), publicIdentity(pub, catalogue)...)
}

// ServingPublic is what a serving screen of pub over catalogue under rb
// counts as public: the lexicon, and the public text (PublicText) whose
// words are no secret. Lint builds its screens with it too, so that what
// the admin API accepts is exactly what is served.
func ServingPublic(pub Publisher, rb *merch.Rulebook, catalogue []Product) sanitize.Public {
	return sanitize.Public{Lexicon: ServingLexicon(pub, catalogue), Text: PublicText(pub, catalogue, rb)}
}

// RefScreen is a screen over one internal reference alone, as a serving
// screen with public would hold it: what a catalogue write that brings
// the reference adds to the deny-list. It is nil for an empty reference.
func RefScreen(ref string, public sanitize.Public) *sanitize.Screen {
	if ref == "" {
		return nil
	}
	return sanitize.New(sanitize.Compile([]sanitize.Term{{Value: ref, Kind: sanitize.KindCatalogID}}, public))
}
