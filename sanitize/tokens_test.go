package sanitize

import (
	"strings"
	"testing"
)

// tokenScreen is a screen over one rule's confidential parts as merch
// gives them: id, name, notes as a field, and a person run from the notes.
func tokenScreen(public ...string) *Screen {
	return New(Compile([]Term{
		{Value: "ZQX-7731-FLOOR", Kind: KindRuleID},
		{Value: "Project Guvovrokl floor", Kind: KindRuleName},
		{Value: "Brimek CTV minimum", Kind: KindRuleName},
		{Value: "Dana Okonkwo", Kind: KindNoteTerm},
		{Value: "agreed with dana okonkwo and hartwell, see JIRA-88213 and inv_9f3c2a; sold to North America via Acme in 2026; GAMU too", Kind: KindNoteTerm, Field: true},
		{Value: "FLR-5120-USD-CTV", Kind: KindRuleID},
		{Value: "TKT-7001", Kind: KindRuleID},
	}, Public{Lexicon: []string{"connected TV", "ctv"}, Text: append([]string{"America/New_York", "Lakeside Media"}, public...)}))
}

func TestDistinctiveWords(t *testing.T) {
	s := tokenScreen()
	for _, test := range []struct {
		text string
		want bool
	}{
		// fragments that identify
		{"ask Okonkwo", true},
		{"ask okonkwo", true},
		{"ask 0k0nkw0", true},
		{"ask OKONKWO's team", true},
		{"the Guvovrokl launch", true},
		{"Brimek pricing", true},
		{"ask hartwell", true},
		{"ticket 88213", true},
		{"ticket 88,213", true},
		{"ticket 8 8 2 1 3", true},
		{"ref 9f3c2a", true},
		{"ref 9F-3C-2A", true},
		{"code 7731", true},
		{"ZQX", true},
		{"GAMU", true},
		{"XYZ-88213-B", true},
		// letter by letter and mixed separators
		{"H.a.r.t.w.e.l.l", true},
		{"H-a-r-t-w-e-l-l", true},
		{"H a r t w e l l", true},
		{"H\u200ba\u200br\u200bt\u200bw\u200be\u200bl\u200bl", true},
		{"Hart-well", true},
		{"O k o n k w o", true},
		{"ΗARTWELL", true}, // Greek capital eta
		{"G.A.M.U", true},
		{"GA-MU", true},
		// ordinary text
		{"Reported in America/New_York time.", false},
		{"Acme Outdoor trail shoes", false},
		{"Outdoor running audiences", false},
		{"Sold across the U.S.A. and the U.K.", false},
		{"initials a b c d e", false},
		{"Lakeside Media thanks you.", false},
		{"Hartwellington", false},
		{"book a forum", false},
		{"the chart well", false},
		{"flights in 2026", false},
		{"a tool for planners", false}, // 7001 of TKT-7001 reads "tool" but is found only as digits
		{"ticket 7001", true},
		{"ga mu", true},
		{"floor minimum project", false},
	} {
		if got := s.Names(test.text); got != test.want {
			t.Errorf("Names(%q) = %v, want %v", test.text, got, test.want)
		}
	}
}

func TestDistinctiveWordsSparePublicText(t *testing.T) {
	if !tokenScreen().Names("Brimek Sports app") {
		t.Fatal("Brimek is a rule name's distinctive word")
	}
	// A word of the publisher's public facts is not distinctive, and
	// neither is a figure the rules disclose.
	s := tokenScreen("Brimek", "5120")
	for _, text := range []string{"Brimek Sports app", "Budgets of 5,120 USD fit."} {
		if s.Names(text) {
			t.Errorf("Names(%q) = true: it is public", text)
		}
	}
	if !s.Names("FLR-5120-USD-CTV") || !s.Names("Okonkwo") {
		t.Error("whole ids and other words stay terms")
	}
}

func TestFigures(t *testing.T) {
	s := tokenScreen()
	fig := func(v string) Figure {
		f, ok := NewFigure(v)
		if !ok {
			t.Fatalf("NewFigure(%q) refused", v)
		}
		return f
	}
	if s.Names("The minimum is 5,120 USD.") == false {
		t.Fatal("without figures, 5,120 names the id's number")
	}
	for _, test := range []struct {
		name string
		raw  string
		figs []Figure
		want string
		ok   bool
	}{
		{"a figure the id spells is shown", "The minimum for this inventory is " + Slot + ".", []Figure{fig("5,120 USD")}, "The minimum for this inventory is 5,120 USD.", true},
		{"two figures", "Flights from " + Slot + " to " + Slot + ".", []Figure{fig("2026-12-04"), fig("2027-01-02")}, "Flights from 2026-12-04 to 2027-01-02.", true},
		{"text around a figure still counts", "Under FLR-" + Slot + "-CTV.", []Figure{fig("5120 USD")}, "", false},
		{"a term in the text is still a term", "Ask Okonkwo about " + Slot + ".", []Figure{fig("5,120 USD")}, "", false},
		{"a slot in the text moves no figure", "A " + Slot + Slot + " B", []Figure{fig("1")}, "", false},
		{"too few slots", "No slot here.", []Figure{fig("1")}, "", false},
	} {
		got, ok := s.LineWith(test.raw, test.figs, MaxSuggestion)
		if got.String() != test.want || ok != test.ok {
			t.Errorf("%s: LineWith(%q) = %q, %v, want %q, %v", test.name, test.raw, got, ok, test.want, test.ok)
		}
	}
	// A currency code is no hiding place: a term that is only the code
	// is still a hit.
	gam := New(Compile([]Term{{Value: "GAM", Kind: KindNoteTerm, Whole: true}}, Public{}))
	if _, ok := gam.LineWith("Budgets of "+Slot+".", []Figure{fig("5,120 GAM")}, MaxSuggestion); ok {
		t.Error("a term spelled by a figure's currency code passed")
	}
	got := s.ProseWith("Thanks. Ask Okonkwo. The minimum is "+Slot+". Bye.", []Figure{fig("5,120 USD")}, MaxReason, Declined)
	if want := "Thanks. The minimum is 5,120 USD. Bye."; got.String() != want {
		t.Errorf("ProseWith = %q, want %q", got, want)
	}
	for _, bad := range []string{"Okonkwo 5", "5 <b>", "", "USD", "about a week", "12 Okonkwo"} {
		if _, ok := NewFigure(bad); ok {
			t.Errorf("NewFigure(%q) accepted", bad)
		}
	}
	for _, good := range []string{"5,120 USD", "2026-12-04", "3 days", "from 2026-12-20 to 2027-01-02", "early December 2026", "1,500.50 EUR"} {
		if _, ok := NewFigure(good); !ok {
			t.Errorf("NewFigure(%q) refused", good)
		}
	}
}

func TestMessageDescribesABadValue(t *testing.T) {
	s := New(NewDenyList(VendorTerms(), nil))
	for _, test := range []struct{ in, want string }{
		{`"FreeWheel" is not a channel`, "the value given is not a channel"},
		{`"display" is fine, "Magnite" is not a format kind`, `"display" is fine, the value given is not a format kind`},
		{`buying_mode must be brief, wholesale or refine, not "magnite"`, "buying_mode must be brief, wholesale or refine, not the value given"},
		{`"ctv" is not a channel`, `"ctv" is not a channel`},
		{"Served via FreeWheel.", Internal.String()},
	} {
		if got := s.Message(test.in, MaxMessage, Internal); got.String() != test.want {
			t.Errorf("Message(%q) = %q, want %q", test.in, got, test.want)
		}
	}
}

func TestCompileTokensReport(t *testing.T) {
	d := tokenScreen().DenyList()
	var got []string
	for _, term := range d.terms {
		if term.Whole {
			got = append(got, term.Value)
		}
	}
	joined := " " + strings.Join(got, " ") + " "
	for _, want := range []string{"Okonkwo", "okonkwo", "Guvovrokl", "Brimek", "hartwell", "88213", "9f3c2a", "7731", "ZQX", "GAMU", "5120"} {
		if !strings.Contains(strings.ToLower(joined), " "+strings.ToLower(want)+" ") {
			t.Errorf("the deny-list's words %q lack %q", got, want)
		}
	}
	for _, not := range []string{"Acme", "America", "North", "Project", "floor", "CTV", "2026", "agreed"} {
		if strings.Contains(joined, " "+not+" ") {
			t.Errorf("the deny-list's words %q hold %q, which is not distinctive", got, not)
		}
	}
}
