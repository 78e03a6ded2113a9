package sanitize

import (
	"strings"
	"testing"
)

func TestFold(t *testing.T) {
	for _, test := range []struct {
		name string
		in   string
		want string
	}{
		{"case", "MR-2291 Floor", "mr-2291 floor"},
		{"full-width", "ＭＲ－２２９１", "mr-2291"},
		{"sharp s folds to ss", "Straße", "strasse"},
		{"final sigma", "ΟΣ", "οσ"},
		{"zero-width removed", "m\u200br\u200d2\u2060291", "mr2291"},
		{"bidi removed", "\u202eabc\u202c", "abc"},
		{"ligature", "ﬁnal", "final"},
		{"mathematical letters", "𝐌𝐑", "mr"},
		{"circled digits", "①②", "12"},
		{"keeps separators", "a - b", "a - b"},
	} {
		t.Run(test.name, func(t *testing.T) {
			if got := Fold(test.in); got != test.want {
				t.Errorf("Fold(%q) = %q, want %q", test.in, got, test.want)
			}
		})
	}
}

func TestSkeleton(t *testing.T) {
	for _, test := range []struct {
		name string
		in   string
		want string
	}{
		{"ascii id", "MR-2291", "mr229l"},
		{"separators squashed", "M R - 2 2 9 1", "mr229l"},
		{"dots and underscores", "m.r_2/2:9#1", "mr229l"},
		{"full-width", "ｍｒ２２９１", "mr229l"},
		{"zero-width joiners", "M\u200dR\u200d-\u200d2291", "mr229l"},
		{"en dash", "MR–2291", "mr229l"},
		{"Cyrillic look-alikes", "Асmе", "acme"}, // А, с, е are Cyrillic
		{"Greek look-alikes", "Αcmε", "acme"},    // Α, ε are Greek
		{"Cyrillic o in word", "Grоup", "group"}, // о is Cyrillic
		{"combining marks stripped", "Ácmé", "acme"},
		{"decomposed marks stripped", "A\u0301cme\u0301", "acme"},
		{"digits read as letters", "N0rthw1nd", "northwlnd"},
		{"small capitals", "ᴀᴄᴍᴇ", "acme"},
		{"only punctuation", "-- . --", ""},
		{"empty", "", ""},
	} {
		t.Run(test.name, func(t *testing.T) {
			if got := Skeleton(test.in); got != test.want {
				t.Errorf("Skeleton(%q) = %q, want %q", test.in, got, test.want)
			}
		})
	}
	// Everything a reader would take for the same id has one skeleton.
	want := Skeleton("Acme Retail Group")
	for _, v := range []string{"ACME RETAIL GROUP", "acme-retail-group", "Ａｃｍｅ Ｒｅｔａｉｌ Ｇｒｏｕｐ", "A.c.m.e R.e.t.a.i.l G.r.o.u.p", "Acme\u200bRetail\u200bGroup", "Асmе Rеtаіl Grоuр"} {
		if got := Skeleton(v); got != want {
			t.Errorf("Skeleton(%q) = %q, want %q (the skeleton of Acme Retail Group)", v, got, want)
		}
	}
}

func TestDenyListNames(t *testing.T) {
	d := NewDenyList([]Term{
		{Value: "MR-2291-CTV-FLOOR", Kind: KindRuleID},
		{Value: "Premium floor after Q4 upfront", Kind: KindRuleName},
		{Value: "Acme Retail Group", Kind: KindNoteTerm},
		{Value: "GAM-LI-88213", Kind: KindCatalogID},
		{Value: "North", Kind: KindNoteTerm, Whole: true},
		{Value: "GAM", Kind: KindNoteTerm},
		{Value: "Whitfield", Kind: KindCustom},
		{Value: "SP-12", Kind: KindNoteTerm},
		{Value: "FW-DEAL-CTV-1182", Kind: KindCatalogID},
	}, nil)
	s := New(d)
	for _, test := range []struct {
		name string
		text string
		want bool
	}{
		{"exact id", "rule MR-2291-CTV-FLOOR fired", true},
		{"lower case id", "rule mr-2291-ctv-floor fired", true},
		{"mixed case id", "rule Mr-2291-cTv-FlOoR fired", true},
		{"id without separators", "mr2291ctvfloor", true},
		{"id spaced out", "M R - 2 2 9 1 - C T V - F L O O R", true},
		{"id with dots", "m.r.2.2.9.1.c.t.v.f.l.o.o.r", true},
		{"full-width id", "ＭＲ－２２９１－ＣＴＶ－ＦＬＯＯＲ", true},
		{"zero-width id", "MR\u200b-2291\u200d-CTV\u2060-FLOOR", true},
		{"Cyrillic look-alike id", "МR-2291-СТV-FLООR", true}, // М, С, Т, О are Cyrillic
		{"id glued into a word", "xxMR2291CTVFLOORxx", true},
		{"name", "the Premium floor after Q4 upfront applies", true},
		{"name as one word", "premiumfloorafterq4upfront", true},
		{"name with Greek letters", "Premium flοοr after Q4 upfrοnt", true},
		{"multi-word note term with separators", "acme_retail_group", true},
		{"multi-word note term split by line breaks", "Acme\nRetail\nGroup", true},
		{"catalogue id", "line item GAM-LI-88213", true},
		{"catalogue id with a combining mark", "GA\u0301M-LI-88213", true},
		{"custom term", "ask WHITFIELD", true},
		{"whole-word term alone", "North", true},
		{"whole-word term in a sentence", "Sold in the north.", true},
		{"whole-word term full-width", "Ｎｏｒｔｈ", true},
		{"whole-word term inside a longer word", "Northwind Media", false},
		{"whole-word term as a prefix", "northbound", false},
		{"short term as a word", "trafficked in GAM;", true},
		{"short term inside a word", "a game plan", false},
		{"short term in a compound", "gambling", false},
		{"short id with a separator", "under policy SP-12.", true},
		{"short id run together", "under policy sp12.", true},
		{"short id full-width", "under policy ＳＰ－１２.", true},
		{"short id spaced out", "under policy S P - 1 2.", true},
		{"short id inside a longer id", "under policy SP-123.", true},
		{"clean text", "Budgets from the low thousands fit this inventory.", false},
		{"distinctive fragment of a long id", "MR-2291", true},
		{"other distinctive fragment", "ctv 1182 was sold", true},
		{"fragment without digits", "the CTV FLOOR", false},
		{"empty", "", false},
	} {
		t.Run(test.name, func(t *testing.T) {
			if got := s.Names(test.text); got != test.want {
				t.Errorf("Names(%q) = %v, want %v", test.text, got, test.want)
			}
		})
	}
}

func TestDenyListLexicon(t *testing.T) {
	lexicon := []string{
		"The requested budget is below the minimum for this inventory.",
		"connected TV",
	}
	d := NewDenyList([]Term{
		{Value: "budget", Kind: KindNoteTerm, Whole: true},
		{Value: "minimum for this", Kind: KindRuleName},
		{Value: "Connected TV", Kind: KindRuleName},
		{Value: "budget minimum", Kind: KindRuleName}, // not a phrase of the lexicon
		{Value: "North Star", Kind: KindNoteTerm, Whole: true},
		{Value: "MR-1", Kind: KindRuleID},
		{Value: " -- ", Kind: KindRuleID}, // empty skeleton
		{Value: "mr_1", Kind: KindRuleID}, // same skeleton as MR-1
	}, lexicon)
	var ignored []string
	for _, t := range d.Ignored() {
		ignored = append(ignored, t.Value)
	}
	if got, want := strings.Join(ignored, "|"), "budget|minimum for this|Connected TV"; got != want {
		t.Errorf("Ignored() = %q, want %q", got, want)
	}
	if got, want := d.Len(), 3; got != want {
		t.Errorf("Len() = %d, want %d (budget minimum, MR-1, North Star)", got, want)
	}
	s := New(d)
	for _, test := range []struct {
		text string
		want bool
	}{
		{lexicon[0], false},
		{"Connected TV inventory would fit this brief.", false},
		{"a budget minimum applies", true},
		{"rule MR-1 fired", true},
		{"rule MR-12 fired", true}, // an id inside a longer id still gives it away
		{"rule mr1 fired", true},
		{"sold to North Star.", true},
		{"sold to northstar.", true},
		{"sold to North Starling.", false},
		{"a mr-1x", true},
		{"a mr-x", false},
	} {
		if got := s.Names(test.text); got != test.want {
			t.Errorf("Names(%q) = %v, want %v", test.text, got, test.want)
		}
	}
}

func TestVendorTerms(t *testing.T) {
	terms := VendorTerms()
	if len(terms) != len(Vendors) {
		t.Fatalf("VendorTerms() has %d terms, want %d", len(terms), len(Vendors))
	}
	for i, term := range terms {
		if term.Value != Vendors[i] || term.Kind != KindVendor || term.Whole {
			t.Errorf("VendorTerms()[%d] = %+v, want {%q vendor false}", i, term, Vendors[i])
		}
	}
	s := New(NewDenyList(terms, nil))
	for _, text := range []string{"served by FreeWheel", "via free-wheel", "ＰｕｂＭａｔｉｃ deal", "The Trade Desk", "the\u200btrade\u200bdesk"} {
		if !s.Names(text) {
			t.Errorf("Names(%q) = false, want true: it names a vendor", text)
		}
	}
}

func TestNoteTerms(t *testing.T) {
	for _, test := range []struct {
		name string
		note string
		want []Term
	}{
		{
			"ids, names and acronyms",
			"Set by yield ops after the Q4 upfront to protect the FreeWheel guaranteed deals. Review with Dana Whitfield before lowering. Ticket YLD-4471.",
			[]Term{
				{"FreeWheel", KindNoteTerm, true},
				{"Dana Whitfield", KindNoteTerm, false},
				{"YLD-4471", KindNoteTerm, false},
			},
		},
		{
			"capitalised runs and acronyms",
			"Linear, DOOH and podcast deals were exited in the Project Lighthouse restructuring; Orbital Outdoor holds the DOOH panels now.",
			[]Term{
				{"DOOH", KindNoteTerm, true},
				{"Project Lighthouse", KindNoteTerm, false},
				{"Orbital Outdoor", KindNoteTerm, false},
			},
		},
		{
			"id with digits and punctuation",
			"Ad ops needs three days to traffic in GAM; see runbook OPS-77.",
			[]Term{{"GAM", KindNoteTerm, true}, {"OPS-77", KindNoteTerm, false}},
		},
		{
			"joined letters are an id",
			"see the yield_floor_rule doc",
			[]Term{{"yield_floor_rule", KindNoteTerm, false}},
		},
		{
			"common words are not terms even when capitalised",
			"The Floor Budget rule protects Premium Video. Please note the Minimum.",
			nil,
		},
		{
			"quarters and halves are common, not ids",
			"Revisit in Q1 and again in H2 of FY.",
			nil,
		},
		{
			"sentence-initial capital word alone is not a term",
			"Lighthouse is done.",
			nil,
		},
		{
			"the words of a name are not terms alone",
			"Launch partner for North America is Acme Retail Group; times follow America/New_York.",
			[]Term{{"North America", KindNoteTerm, false}, {"Acme Retail Group", KindNoteTerm, false}, {"America/New_York", KindNoteTerm, false}},
		},
		{
			"a lone name past the sentence start is a term",
			"Agreed with Whitfield in March.",
			[]Term{{"Whitfield", KindNoteTerm, true}},
		},
		{"empty", "", nil},
		{"lower case prose", "just a plain note about pacing and floors.", nil},
	} {
		t.Run(test.name, func(t *testing.T) {
			got := NoteTerms(test.note, KindNoteTerm)
			if len(got) != len(test.want) {
				t.Fatalf("NoteTerms(%q) = %+v, want %+v", test.note, got, test.want)
			}
			for i := range got {
				if got[i] != test.want[i] {
					t.Errorf("NoteTerms(%q)[%d] = %+v, want %+v", test.note, i, got[i], test.want[i])
				}
			}
		})
	}
}
