package sanitize

import (
	"os"
	"strconv"
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
	// Literal skeletons pin how Unicode's data reads ASCII: m looks like
	// r n, the digit one and capital I like l, zero like o.
	for _, test := range []struct{ in, want string }{
		{"MR-2291", "rnr229l"},
		{"Whitfield", "whltfleld"},
		{"N0rthw1nd", "northwlnd"},
		{"-- . --", ""},
		{"", ""},
	} {
		if got := Skeleton(test.in); got != test.want {
			t.Errorf("Skeleton(%q) = %q, want %q", test.in, got, test.want)
		}
	}
	for _, test := range []struct {
		name string
		in   string
		same string
	}{
		{"separators squashed", "M R - 2 2 9 1", "MR2291"},
		{"dots and underscores", "m.r_2/2:9#1", "MR2291"},
		{"full-width", "ｍｒ２２９１", "MR2291"},
		{"full-width hyphen", "ＳＰ－１２", "SP12"},
		{"zero-width joiners", "M\u200dR\u200d-\u200d2291", "MR2291"},
		{"en dash", "MR–2291", "MR2291"},
		{"Cyrillic look-alikes", "Асmе", "acme"}, // А, с, е are Cyrillic
		{"Greek capital alpha", "Αcme", "acme"},
		{"Cyrillic o in word", "Grоup", "group"},
		{"combining marks stripped", "Ácmé", "acme"},
		{"decomposed marks stripped", "A\u0301cme\u0301", "acme"},
		{"small capitals", "ᴀᴄᴍᴇ", "acme"},
		{"Greek capitals read as the Latin capitals they look like", "ΗARTWELL", "hartwell"},
		{"Greek capital nu and alpha", "DΑΝΑ", "dana"},
		{"Greek capital mu and upsilon", "ΜΥ", "my"},
		{"Lisu letters", "ꓐꓳꓚ", "BOC"},
		{"Lisu alphabet", "ꓮꓐꓚꓓꓰꓝꓖꓧꓲꓙꓗꓡꓟꓠꓳꓑꓣꓢꓔꓴꓦꓪꓫꓬꓜ", "ABCDEFGHIJKLMNOPRSTUVWXYZ"},
		{"Cherokee capitals", "ᎠᎡᎢ", "DRT"},
		{"Cherokee small letters fold to capitals", "ꭰꭱꭲ", "DRT"},
		{"letters with strokes", "Whitfiełd", "whitfield"},
		{"leetspeak digits", "H4RTW3LL", "hartwell"},
		{"more leetspeak", "5P1N 7H3 800K", "spin the book"},
		{"capital I and small l and one", "Il1i", "llll"},
		{"mathematical letters", "𝐇𝐚𝐫𝐭", "hart"},
		{"circled digits", "①②", "12"},
		{"long s reads as the f it looks like", "ſ", "f"},
		{"sharp s", "Straße", "strasse"},
	} {
		t.Run(test.name, func(t *testing.T) {
			if got, want := Skeleton(test.in), Skeleton(test.same); got != want || got == "" {
				t.Errorf("Skeleton(%q) = %q, want %q (the skeleton of %q)", test.in, got, want, test.same)
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

// TestSkeletonTable pins the Unicode data the table was generated from
// (regenerate with go generate ./sanitize when it changes) and checks the
// table reads case as case folding does: every capital with a small
// letter in one script reads as that letter when both look alike.
func TestSkeletonTable(t *testing.T) {
	if ConfusablesUnicodeVersion != "15.0" {
		t.Errorf("ConfusablesUnicodeVersion = %q, want 15.0: update this pin with the table", ConfusablesUnicodeVersion)
	}
	if !strings.Contains(ConfusablesSource, "ICU 72.1") || !strings.Contains(CommonWordsSource, "wamerican") {
		t.Errorf("sources = %q, %q", ConfusablesSource, CommonWordsSource)
	}
	for i := 1; i < len(skelTable); i++ {
		if skelTable[i-1].r >= skelTable[i].r {
			t.Fatalf("skelTable is not sorted at %U", skelTable[i].r)
		}
	}
	if len(skelTable) < 5000 {
		t.Errorf("skelTable has %d entries; the confusables table alone maps thousands", len(skelTable))
	}
	for c := 'A'; c <= 'Z'; c++ {
		if Skeleton(string(c)) != Skeleton(string(c+'a'-'A')) {
			t.Errorf("%c and %c read differently: %q, %q", c, c+'a'-'A', Skeleton(string(c)), Skeleton(string(c+'a'-'A')))
		}
	}
	for _, w := range []string{"acme", "outdoor", "floor", "premium", "kestrel"} {
		if !isCommonSkeleton(Skeleton(w)) {
			t.Errorf("isCommonSkeleton(%q) = false", w)
		}
	}
	for _, w := range []string{"okonkwo", "brimek", "guvovrokl", "america", "whitfield"} {
		if isCommonSkeleton(Skeleton(w)) {
			t.Errorf("isCommonSkeleton(%q) = true", w)
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
		{"multi-word note term glued to words on both sides", "xacme retail groupx", true},
		{"multi-word note term glued, disguised, split at digits", "AACme Re7A11Gr0upa0", true},
		{"multi-word note term's letters across other words", "macme retailgr oupx", false},
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
	if len(terms) != len(vendors) {
		t.Fatalf("VendorTerms() has %d terms, want %d", len(terms), len(vendors))
	}
	for i, term := range terms {
		if term.Value != vendors[i] || term.Kind != KindVendor || term.Whole {
			t.Errorf("VendorTerms()[%d] = %+v, want {%q vendor false}", i, term, vendors[i])
		}
	}
	s := New(NewDenyList(terms, nil))
	for _, text := range []string{"served by FreeWheel", "via free-wheel", "ＰｕｂＭａｔｉｃ deal", "The Trade Desk", "the\u200btrade\u200bdesk"} {
		if !s.Names(text) {
			t.Errorf("Names(%q) = false, want true: it names a vendor", text)
		}
	}
}

// TestMatchSpansWords: a term matched anywhere is found however it is
// split or glued, but never in one word's tail and the next word's head,
// nor in part of one character's skeleton: m reads as r n, and a random
// name "Kasov Muzeti" must not read as Sovrn.
func TestMatchSpansWords(t *testing.T) {
	s := New(NewDenyList(append(VendorTerms(), Term{Value: "SP-12", Kind: KindRuleID}), nil))
	for _, text := range []string{"Sovrn", "via Sov-rn", "S o v r n", "Sovm", "SOV rn deal", "PubMatics", "xPubMatic", "thesovrnteam",
		"Pub Matic", "SP 12", "SP12x", "ref xSP-12"} {
		if !s.Names(text) {
			t.Errorf("Names(%q) = false, want true", text)
		}
	}
	for _, text := range []string{"Held for Kasov Muzeti.", "Ask Kasov Muzeti.", "kasov-muzeti", "Xandm"} {
		if s.Names(text) {
			t.Errorf("Names(%q) = true, want false: %v", text, s.Hits(text))
		}
	}
}

// TestTermsDifferingInDigits: two ids whose skeletons agree but whose
// digits sit elsewhere ("2b9c82", "2b9cb2": 8 reads as b) are two terms,
// each found as written.
func TestTermsDifferingInDigits(t *testing.T) {
	s := New(Compile([]Term{{Value: "inv_2b9c82", Kind: KindCatalogID}, {Value: "ask about inv_2b9cb2", Kind: KindNoteTerm, Field: true}}, Public{}))
	for _, text := range []string{"2b9c82_slot", "2b9cb2_slot", "ref 2b9cb2"} {
		if !s.Names(text) {
			t.Errorf("Names(%q) = false, want true", text)
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
				{"FreeWheel", KindNoteTerm, true, false},
				{"Dana Whitfield", KindNoteTerm, false, false},
				{"YLD-4471", KindNoteTerm, false, false},
			},
		},
		{
			"capitalised runs and acronyms",
			"Linear, DOOH and podcast deals were exited in the Project Lighthouse restructuring; Orbital Outdoor holds the DOOH panels now.",
			[]Term{
				{"DOOH", KindNoteTerm, true, false},
				{"Project Lighthouse", KindNoteTerm, false, false},
				{"Orbital Outdoor", KindNoteTerm, false, false},
			},
		},
		{
			"id with digits and punctuation",
			"Ad ops needs three days to traffic in GAM; see runbook OPS-77.",
			[]Term{{"GAM", KindNoteTerm, true, false}, {"OPS-77", KindNoteTerm, false, false}},
		},
		{
			"joined letters are an id",
			"see the yield_floor_rule doc",
			[]Term{{"yield_floor_rule", KindNoteTerm, false, false}},
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
			[]Term{{"North America", KindNoteTerm, false, false}, {"Acme Retail Group", KindNoteTerm, false, false}, {"America/New_York", KindNoteTerm, false, false}},
		},
		{
			"a lone name past the sentence start is a term",
			"Agreed with Whitfield in March.",
			[]Term{{"Whitfield", KindNoteTerm, true, false}},
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

// TestSkeletonReadsEveryLookalike checks the whole table against Unicode's
// raw prototypes (testdata/lookalikes.txt): every character the
// confusables data reads as ASCII letters or digits has the skeleton of
// those letters or digits.
func TestSkeletonReadsEveryLookalike(t *testing.T) {
	data, err := os.ReadFile("testdata/lookalikes.txt")
	if err != nil {
		t.Fatalf("the prototypes come with the table (go generate ./sanitize): %v", err)
	}
	n := 0
	for _, line := range strings.Split(string(data), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		h, to, _ := strings.Cut(line, " ")
		cp, err := strconv.ParseUint(h, 16, 32)
		if err != nil {
			t.Fatalf("bad line %q", line)
		}
		n++
		if got, want := Skeleton(string(rune(cp))), Skeleton(to); got != want {
			t.Errorf("Skeleton(%U %q) = %q, want %q: Unicode reads it as %q", rune(cp), string(rune(cp)), got, want, to)
		}
	}
	if n < 1000 {
		t.Errorf("%d prototypes read", n)
	}
}

// TestDerivedPrototypes pins the prototypes skelgen derives (see
// derivePrototypes in internal/skelgen): the confusables table reads Greek
// kappa, Cyrillic ka and their kin as kra (U+0138), no ASCII letter,
// while it reads their capitals as K, so the skeleton reads kra as k; and
// likewise for the other Latin prototypes outside ASCII that the capitals
// of their small letters agree on.
func TestDerivedPrototypes(t *testing.T) {
	want := map[rune]string{
		0x0138: "k",  // kra: κ ϰ к ќ қ ҟ ⲕ ꮶ
		0x0185: "b",  // tone six: ь ꮟ
		0x01A8: "2",  // tone two: ϩ ꙅ
		0x021D: "3",  // yogh: ʒ ӡ ⳍ ꝫ
		0x025C: "3",  // reversed open e: з ҙ ӟ
		0x0289: "u",  // u bar
		0x028D: "rn", // turned w: м ӎ ꮇ, as m
		0xA75B: "2",  // r rotunda
		0xA76F: "9",  // con
	}
	got := map[rune]string{}
	for _, d := range derivedPrototypes {
		got[d.proto] = d.as
		if Skeleton(string(d.proto)) != Skeleton(d.as) {
			t.Errorf("Skeleton(%U) = %q, want %q, the skeleton of %q", d.proto, Skeleton(string(d.proto)), Skeleton(d.as), d.as)
		}
		for _, c := range d.from {
			if Skeleton(string(c)) != Skeleton(d.as) {
				t.Errorf("Skeleton(%U %c) = %q, want %q", c, c, Skeleton(string(c)), Skeleton(d.as))
			}
		}
	}
	if len(got) != len(want) {
		t.Errorf("skelgen derived %d prototypes, want %d: %v", len(got), len(want), got)
	}
	for r, as := range want {
		if got[r] != as {
			t.Errorf("derived prototype %U reads %q, want %q", r, got[r], as)
		}
	}
	for _, test := range []struct{ in, same string }{
		{"Flαshtαlκιng", "Flashtalking"},
		{"DουbleClιcκ", "DoubleClick"},
		{"Кесіре", "Kecipe"},
		{"Ꮶеνеl", "Kevel"},
		{"Ѕіzмеκ", "Sizmek"},
	} {
		if Skeleton(test.in) != Skeleton(test.same) {
			t.Errorf("Skeleton(%q) = %q, want %q", test.in, Skeleton(test.in), Skeleton(test.same))
		}
	}
}
