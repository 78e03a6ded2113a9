package decline

import (
	"github.com/storefront/storefront/vocab"
	"strings"

	"github.com/storefront/storefront/sanitize"
)

// MaxChecks bounds how many candidate suggestions one decline may verify.
// Each check re-runs the rulebook and the catalogue, so the bound is what
// keeps a decline's cost fixed however many rules fire.
const MaxChecks = 8

// maxOffered is the most suggestions one decline carries.
const maxOffered = 4

// Input is everything the composer works from.
type Input struct {
	// Grounds are the fired rules' public grounds, in rulebook order.
	Grounds []vocab.Grounds
	Voice   vocab.Voice
	// Cap is the most the account's trust tier lets any rule disclose.
	Cap vocab.Level
	// Verify applies a change to the brief and reports whether the changed
	// brief would be served: no rule declines it and the catalogue has
	// something for it. A nil Verify means no suggestion can be verified,
	// so none is offered.
	Verify func(Change) bool
	// VerifyFigure applies the change a figure of the reason stands for
	// and reports whether the changed brief is served as far as the rule
	// with slug goes: that rule no longer declines it and the catalogue
	// has something for it. Nil falls back to Verify.
	VerifyFigure func(Change, vocab.Slug) bool
	// Forced, when set, replaces the composed reason and suggestions: a
	// compliance directive. The text still passes the screen.
	Forced *Forced
}

// Forced is a reason and suggestions supplied by a compliance directive.
type Forced struct {
	Reason      string
	Suggestions []string
}

// Composed is a decline ready for the buyer.
type Composed struct {
	// Slug is the public category. It is commercially_declined when no
	// fired rule lets the buyer learn more.
	Slug vocab.Slug
	// Level is the disclosure level the reason was written at.
	Level       vocab.Level
	Reason      sanitize.Text
	Suggestions []sanitize.Text
	// Offered are the verified changes behind the suggestions, in order.
	Offered []Change
	// Checks is how many candidate changes were verified.
	Checks int
}

// Final reports whether the decline carries no suggestion.
func (c Composed) Final() bool { return len(c.Suggestions) == 0 }

// Compose writes the decline. It never returns an empty reason: when every
// candidate is screened out the reason is the slug's canned line, and past
// that the screen's fixed line.
func Compose(in Input, screen *sanitize.Screen) Composed {
	visible := make([]vocab.Grounds, 0, len(in.Grounds))
	for _, g := range in.Grounds {
		g.Level = g.Level.Cap(in.Cap)
		if g.Level > vocab.None {
			visible = append(visible, g)
		}
	}
	if in.Forced != nil {
		return composeForced(in, visible, screen)
	}
	if len(visible) == 0 {
		e, _ := vocab.Lookup(vocab.CommerciallyDeclined)
		return Composed{
			Slug:   vocab.CommerciallyDeclined,
			Level:  vocab.None,
			Reason: screen.Prose(e.Reason, sanitize.MaxReason, sanitize.Declined),
		}
	}
	primary := visible[0]
	out := Composed{Slug: primary.Slug, Level: primary.Level}

	known := map[string]bool{}
	verify := in.Verify
	if verify != nil {
		verify = func(c Change) bool {
			ok := in.Verify(c)
			known[c.Text()] = ok
			return ok
		}
	}
	offered, checks := verified(visible, in.Voice, verify)
	stated, checks := verifiedFigures(visible, in.Voice, in, known, checks)
	out.Checks = checks
	out.Level = stated[0].Level
	// Screen each change's text as Lines would, keeping Offered aligned
	// with Suggestions one to one: a change whose text was screened out,
	// or reads the same as one already kept (two rules can both suggest
	// display), is not offered.
	for _, ch := range offered {
		if len(out.Suggestions) == sanitize.MaxSuggestions {
			break
		}
		text, figs := ch.textWithFigures()
		t, ok := screen.LineWith(text, figs, sanitize.MaxSuggestion)
		if !ok || containsText(out.Suggestions, t) {
			continue
		}
		out.Suggestions = append(out.Suggestions, t)
		out.Offered = append(out.Offered, ch)
	}

	entry, _ := vocab.Lookup(primary.Slug)
	reason, figs := reasonText(stated, in.Voice, len(out.Suggestions) > 0, screen)
	out.Reason = screen.ProseWith(reason, figs, sanitize.MaxReason, sanitize.Declined, entry.Reason)
	return out
}

// withFigures replaces each occurrence of a figure in text with a
// sanitize.Slot and returns the figures in the order they occur, so that
// the screen judges the text around the figures and not the figures
// themselves: a disclosed threshold is shown even when a confidential id
// contains its digits ("FLR-5120-USD-CTV" and "5,120 USD"). Figures are
// the composer's own formatting of typed values; a value sanitize does
// not accept as a figure stays text. A slot character already in text
// makes the screen refuse it.
func withFigures(text string, values []string) (string, []sanitize.Figure) {
	var figs []sanitize.Figure
	var vals []string
	for _, v := range values {
		if f, ok := sanitize.NewFigure(v); ok {
			figs = append(figs, f)
			vals = append(vals, v)
		}
	}
	if len(vals) == 0 {
		return text, nil
	}
	var b strings.Builder
	var out []sanitize.Figure
	for {
		at, which := -1, -1
		for i, v := range vals {
			if j := strings.Index(text, v); j >= 0 && (at < 0 || j < at || (j == at && len(v) > len(vals[which]))) {
				at, which = j, i
			}
		}
		if at < 0 {
			b.WriteString(text)
			return b.String(), out
		}
		b.WriteString(text[:at])
		b.WriteString(sanitize.Slot)
		out = append(out, figs[which])
		text = text[at+len(vals[which]):]
	}
}

func containsText(list []sanitize.Text, t sanitize.Text) bool {
	for _, x := range list {
		if x == t {
			return true
		}
	}
	return false
}

func composeForced(in Input, visible []vocab.Grounds, screen *sanitize.Screen) Composed {
	slug, level := vocab.CommerciallyDeclined, vocab.Category
	if len(visible) > 0 {
		slug, level = visible[0].Slug, visible[0].Level
	}
	e, _ := vocab.Lookup(slug)
	return Composed{
		Slug:        slug,
		Level:       level,
		Reason:      screen.Prose(in.Forced.Reason, sanitize.MaxReason, sanitize.Declined, e.Reason),
		Suggestions: screen.Lines(in.Forced.Suggestions, sanitize.MaxSuggestion, sanitize.MaxSuggestions),
	}
}

// reasonText writes the reason: the tone's opener, a line for each distinct
// slug in order (the publisher's template where it renders, the canned line
// otherwise, each with the sentence its level allows), and the tone's closer
// when the decline can be fixed. Each part is screened on its own, so that
// a screened-out template falls back to its slug's canned line rather than
// leaving a reason with no why in it; the caller screens the whole again,
// with the figures marked as they were in each part.
func reasonText(visible []vocab.Grounds, v vocab.Voice, fixable bool, screen *sanitize.Screen) (string, []sanitize.Figure) {
	var parts []string
	var figs []string
	keep := func(s string) {
		if t, ok := screen.Line(s, sanitize.MaxReason); ok {
			parts = append(parts, t.String())
		}
	}
	if o := opener(v); o != "" {
		keep(o)
	}
	seen := map[vocab.Slug]bool{}
	for _, g := range visible {
		if seen[g.Slug] || len(seen) == 3 {
			continue
		}
		seen[g.Slug] = true
		e, _ := vocab.Lookup(g.Slug)
		d := disclose(g, v)
		// The template, else the canned line with the level's sentence
		// (a screened-out template must not take the figure with it),
		// else the canned line alone.
		t := sanitize.Text{}
		for _, candidate := range []string{line(g, v), cannedLine(g, d)} {
			text, f := withFigures(candidate, d.figures())
			if t = screen.ProseWith(text, f, sanitize.MaxReason, sanitize.Text{}); !t.IsZero() {
				break
			}
		}
		if t.IsZero() {
			t = screen.Prose(e.Reason, sanitize.MaxReason, sanitize.Declined)
		}
		parts = append(parts, t.String())
		figs = append(figs, d.figures()...)
	}
	if c := closer(v, fixable); c != "" {
		keep(c)
	}
	return withFigures(strings.Join(parts, " "), figs)
}

// line renders one grounds from its disclosure: the template if the
// publisher wrote one and its placeholders all have values at this level,
// else the canned line plus the sentence the level allows.
func line(g vocab.Grounds, v vocab.Voice) string {
	d := disclose(g, v)
	if t, ok := v.Templates[g.Slug]; ok {
		if s, ok := vocab.FillTemplate(t, d.values()); ok {
			return s
		}
	}
	return cannedLine(g, d)
}

// cannedLine is the slug's canned line plus the sentence d allows.
func cannedLine(g vocab.Grounds, d disclosure) string {
	e, _ := vocab.Lookup(g.Slug)
	if s := d.sentence(g.Slug); s != "" {
		return e.Reason + " " + s
	}
	return e.Reason
}

func opener(v vocab.Voice) string {
	switch v.Tone {
	case vocab.Warm:
		if v.SellerName != "" {
			return "Thank you for considering " + v.SellerName + "."
		}
		return "Thank you for the brief."
	case vocab.Formal:
		if v.SellerName != "" {
			return v.SellerName + " is unable to accept this brief as submitted."
		}
		return "We are unable to accept this brief as submitted."
	}
	return ""
}

func closer(v vocab.Voice, fixable bool) string {
	if !fixable {
		return ""
	}
	switch v.Tone {
	case vocab.Warm:
		return "We would be glad to look at a revised brief."
	case vocab.Formal:
		return "A revised brief would be welcome."
	}
	return ""
}
