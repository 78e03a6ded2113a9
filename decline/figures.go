package decline

import "github.com/storefront/storefront/vocab"

// A figure in a reason is a claim like a suggestion: "budgets of 2,500 USD
// or more fit" says a brief at 2,500 USD would be served. It is checked by
// applying the change it stands for to the brief: the rule that states it
// must no longer decline, and the catalogue must have something for the
// changed brief (Input.VerifyFigure; Verify, which asks that no rule at all
// declines, when it is not set). Other rules that still decline are stated
// in the same reason. A figure that would serve nothing is not written,
// and its grounds fall back to the category line, which names none.

// figureKinds maps a slug to the change its figures stand for.
var figureKinds = map[vocab.Slug]vocab.SuggestionKind{
	vocab.BudgetBelowMinimum: vocab.RaiseBudget,
	vocab.LeadTimeTooShort:   vocab.LaterStart,
	vocab.FlightUnavailable:  vocab.MoveFlight,
}

// figureChange is the change g's disclosed figure stands for, worded as
// the suggestion of that kind would be; false when g's level discloses no
// figure.
func figureChange(g vocab.Grounds, v vocab.Voice) (Change, bool) {
	kind, ok := figureKinds[g.Slug]
	if !ok || g.Level < vocab.Range {
		return Change{}, false
	}
	g.Allowed = []vocab.SuggestionKind{kind}
	c := candidates(g, v)
	if len(c) == 0 {
		return Change{}, false
	}
	return c[0], true
}

// verifiedFigures returns visible with each grounds whose figure does not
// verify lowered to category level, for the reason's text. known holds the
// verdicts Verify already reached for the suggestions, by change text;
// checks is how many verifications were spent, and new ones stop at
// MaxChecks, past which a figure counts as unverified.
func verifiedFigures(visible []vocab.Grounds, v vocab.Voice, in Input, known map[string]bool, checks int) ([]vocab.Grounds, int) {
	out := make([]vocab.Grounds, len(visible))
	copy(out, visible)
	for i, g := range out {
		ch, ok := figureChange(g, v)
		if !ok {
			continue
		}
		// A change that clears every rule clears this one.
		good := known[ch.Text()]
		if !good && checks < MaxChecks {
			switch {
			case in.VerifyFigure != nil:
				checks++
				good = in.VerifyFigure(ch, g.Slug)
			case in.Verify != nil:
				if _, seen := known[ch.Text()]; !seen {
					checks++
					good = in.Verify(ch)
				}
			}
		}
		if !good {
			out[i].Level = vocab.Category
		}
	}
	return out, checks
}
