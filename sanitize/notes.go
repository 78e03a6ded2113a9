package sanitize

import (
	"strings"
	"unicode"
)

// NoteTerms picks the parts of free-text notes that identify something:
//
//   - ids: a letter-digit mix, or letters joined by - _ / . : # (matched
//     anywhere, like rule ids);
//   - runs of two or more capitalised words, which are usually names of
//     partners, people or projects ("Acme Retail Group"; matched anywhere),
//     kept whole: a word of a name is a term on its own only when Compile
//     finds it distinctive (not common English, not public), so "North
//     America" in a note does not silence "America/New_York" and "Acme
//     Retail Group" does not silence a brand called "Acme Outdoor", while
//     the "Okonkwo" of "Dana Okonkwo" is withheld alone;
//   - a capitalised word of four letters or more standing alone past the
//     start of a sentence, and each all-capitals acronym, that is not
//     common English (matched as a whole word only).
//
// Ordinary words are left alone, so notes can say "floor" without
// silencing every decline.
func NoteTerms(notes string, kind Kind) []Term {
	var out []Term
	seen := map[string]bool{}
	add := func(v string, whole bool) {
		k := strings.ToLower(v)
		if !seen[k] {
			seen[k] = true
			out = append(out, Term{Value: v, Kind: kind, Whole: whole})
		}
	}
	// run is the current run of capitalised words; lone says whether its
	// only word may stand as a term by itself.
	var run []string
	lone := false
	flush := func() {
		switch {
		case len(run) >= 2:
			add(strings.Join(run, " "), false)
		case len(run) == 1 && lone:
			add(run[0], true)
		}
		run = run[:0]
	}
	sentenceStart := true
	for _, raw := range strings.Fields(notes) {
		tok := strings.TrimFunc(raw, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
		startOfThis := sentenceStart
		last := raw[len(raw)-1:]
		sentenceStart = strings.ContainsAny(last, ".!?:;")
		breaks := strings.ContainsAny(last, ".!?:;,()")
		if tok == "" {
			flush()
			continue
		}
		// Check common words first: "Q4" looks like an id but is on the
		// list of words a note may use without naming anything.
		if isIDLike(tok) && !common[strings.ToLower(tok)] {
			flush()
			add(tok, false)
			continue
		}
		r := []rune(tok)
		capital := unicode.IsUpper(r[0])
		isCommon := common[strings.ToLower(tok)]
		acronym := len(r) >= 3 && strings.ToUpper(tok) == tok && hasLetter(tok) && !isCommon
		if acronym {
			add(tok, true)
		}
		if capital && !isCommon {
			if len(run) == 0 {
				lone = len(r) >= 4 && !startOfThis && !acronym
			}
			run = append(run, tok)
		} else {
			flush()
		}
		if breaks {
			flush()
		}
	}
	flush()
	return out
}

func hasLetter(s string) bool {
	for _, r := range s {
		if unicode.IsLetter(r) {
			return true
		}
	}
	return false
}

// isIDLike reports tokens that look like identifiers rather than words.
func isIDLike(t string) bool {
	letters, digits, joins := 0, 0, 0
	for _, r := range t {
		switch {
		case unicode.IsLetter(r):
			letters++
		case unicode.IsDigit(r):
			digits++
		case strings.ContainsRune("-_/.:#", r):
			joins++
		}
	}
	if letters > 0 && digits > 0 {
		return true
	}
	return joins > 0 && letters+digits >= 4
}

// common holds frequent English and advertising words that a note may
// capitalise without naming anything.
var common = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(commonWords) {
		m[w] = true
	}
	return m
}()

const commonWords = `
a about above after again against all also always an and any are as at be because been before being
below between both but by can could did do does doing down during each even every few for from further
had has have having he her here hers him his how i if in into is it its just keep last least less like
make many may me might more most much must my never new no nor not now of off often on once one only or
other our out over own per please same she should since so some still such than that the their them
then there these they this those through to too under until up upon us very was we were what when
where which while who whom why will with within without would yet you your
monday tuesday wednesday thursday friday saturday sunday january february march april may june july
august september october november december q1 q2 q3 q4 h1 h2 fy
ad ads advertiser advertisers agency audience audiences banner brand brands budget budgets buyer buyers
campaign campaigns category channel channels connected cpm creative creatives ctv daily decline declined
delivery deal deals demand digital display exclusive flight flights floor floors format formats fixed
guaranteed holiday holidays impressions inventory lead market markets minimum minimums note notes
offer offered olv online pacing partner partners premium price prices pricing product products
programmatic publisher publishers rate rates review reviewed rule rules sales season seasonal seller
sellers sold spend sponsorship streaming supply team teams television tv video yield audio podcast
radio request requests brief briefs policy policies protect protects protection temporary until per
set block blocks blocked hold held reserve reserved only note internal confidential do not share
usd eur gbp cad aud
`
