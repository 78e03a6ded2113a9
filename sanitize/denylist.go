package sanitize

import (
	"sort"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"

	"github.com/coregx/ahocorasick"
)

// Kind says where a deny-list term came from. It is reported to publishers
// (in previews and logs), never to buyers.
type Kind string

const (
	KindRuleID    Kind = "rule_id"
	KindRuleName  Kind = "rule_name"
	KindNoteTerm  Kind = "note_term"
	KindCatalogID Kind = "catalog_id"
	KindVendor    Kind = "vendor"
	KindCustom    Kind = "custom"
)

// Term is one confidential string the buyer must never see.
type Term struct {
	Value string
	Kind  Kind
	// Whole matches the term only as a whole word. Ids and names match
	// anywhere, however they are split or disguised; a single ordinary
	// word picked from notes matches only on its own, so "North" does not
	// hide "Northwind".
	Whole bool
}

// minSubstring is the shortest skeleton matched anywhere in a text. Shorter
// terms would match inside ordinary words, so they are matched only as whole
// words, except identifiers (a mix of letters and digits), which ordinary
// words do not contain: those match anywhere from minIDSubstring on.
const (
	minSubstring   = 5
	minIDSubstring = 3
)

// Fragment windows: an identifier at least windowMinID characters long is
// also found by any window of windowLen characters of it that holds at
// least windowDigits digits, so that a fragment ("CTV-1182" of
// "FW-DEAL-CTV-1182") gives it away too. Windows without digits are common
// words and are not used.
const (
	windowMinID  = 10
	windowLen    = 6
	windowDigits = 2
	maxWindows   = 12
)

// DenyList is an immutable, compiled set of terms. Build a new one when the
// rulebook or catalogue changes and swap it in whole.
type DenyList struct {
	terms    []Term // as given, in pattern order for the automaton
	ac       *ahocorasick.Automaton
	patterns []int          // automaton pattern id -> index into terms
	words    map[string]int // skeleton -> index into terms, for short terms
	// phrases holds word-path terms written as several words ("SP-12",
	// "North Star") as " w1 w2 ": matched against the text's word
	// sequence, since no single word of the text has their skeleton.
	phrases map[string]int
	ignored []Term // terms dropped because they are public words
}

// NewDenyList compiles terms. Terms whose skeleton is empty, or that occur in
// the public lexicon (the storefront's own canned lines), are ignored: they
// carry no confidential signal and blocking them would silence every decline.
// Ignored reports them so a publisher can be told.
func NewDenyList(terms []Term, public []string) *DenyList {
	d := &DenyList{words: map[string]int{}, phrases: map[string]int{}}
	lexicon := make([]string, 0, len(public))
	var squashedLexicon strings.Builder
	for _, p := range public {
		lexicon = append(lexicon, " "+joinWords(p)+" ")
		squashedLexicon.WriteString(Skeleton(p))
		squashedLexicon.WriteByte(' ')
	}
	publicSkeleton := squashedLexicon.String()
	seen := map[string]bool{}
	var pats []string
	for _, t := range terms {
		sk := Skeleton(t.Value)
		if sk == "" || seen[sk] {
			continue
		}
		if inLexicon(t.Value, lexicon) {
			d.ignored = append(d.ignored, t)
			continue
		}
		seen[sk] = true
		idx := len(d.terms)
		d.terms = append(d.terms, t)
		id := identifier(t.Value)
		if !t.Whole && id && runeLen(sk) >= windowMinID {
			for _, w := range windows(t.Value) {
				if !strings.Contains(publicSkeleton, w) {
					d.patterns = append(d.patterns, idx)
					pats = append(pats, w)
				}
			}
		}
		if t.Whole || (runeLen(sk) < minSubstring && !(id && runeLen(sk) >= minIDSubstring)) {
			d.words[sk] = idx
			if ws := words(Fold(t.Value)); len(ws) > 1 {
				d.phrases[" "+strings.Join(ws, " ")+" "] = idx
			}
			continue
		}
		d.patterns = append(d.patterns, idx)
		pats = append(pats, sk)
	}
	if len(pats) > 0 {
		ac, err := ahocorasick.NewBuilder().
			SetMatchKind(ahocorasick.LeftmostLongest).
			AddStrings(pats).
			Build()
		if err != nil {
			// The builder only fails on empty patterns, which were skipped
			// above; keep every term on the word path rather than none.
			for i, idx := range d.patterns {
				d.words[pats[i]] = idx
			}
			d.patterns = nil
		} else {
			d.ac = ac
		}
	}
	return d
}

func asciiText(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 0x80 || (c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f {
			return false
		}
	}
	return true
}

// asciiViews computes the skeleton and the word skeletons of lower-case
// ASCII text in one pass, exactly as skeletonOfFolded and words would.
func asciiViews(lower string) (string, []string) {
	sk := make([]byte, 0, len(lower))
	var ws []string
	start := -1
	for i := 0; i <= len(lower); i++ {
		alnum := false
		var c byte
		if i < len(lower) {
			c = lower[i]
			alnum = c >= 'a' && c <= 'z' || c >= '0' && c <= '9'
		}
		if alnum {
			switch c {
			case '0':
				c = 'o'
			case '1':
				c = 'l'
			}
			sk = append(sk, c)
			if start < 0 {
				start = len(sk) - 1
			}
			continue
		}
		if start >= 0 {
			ws = append(ws, string(sk[start:]))
			start = -1
		}
	}
	return string(sk), ws
}

// identifier reports strings that mix letters and digits.
func identifier(s string) bool {
	letter, digit := false, false
	for _, r := range s {
		switch {
		case unicode.IsDigit(r):
			digit = true
		case unicode.IsLetter(r):
			letter = true
		}
	}
	return letter && digit
}

// windows returns the distinctive fragments of an identifier, as
// skeletons.
func windows(id string) []string {
	var alnum []rune
	for _, r := range norm.NFKD.String(Fold(id)) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			alnum = append(alnum, r)
		}
	}
	var out []string
	seen := map[string]bool{}
	for i := 0; i+windowLen <= len(alnum) && len(out) < maxWindows; i++ {
		w := alnum[i : i+windowLen]
		digits := 0
		for _, r := range w {
			if unicode.IsDigit(r) {
				digits++
			}
		}
		if digits < windowDigits || digits == windowLen {
			continue
		}
		sk := skeletonOfFolded(string(w))
		if !seen[sk] {
			seen[sk] = true
			out = append(out, sk)
		}
	}
	return out
}

// joinWords renders p as its space-separated word skeletons.
func joinWords(p string) string {
	return strings.Join(words(Fold(p)), " ")
}

func inLexicon(term string, lexicon []string) bool {
	phrase := " " + joinWords(term) + " "
	if phrase == "  " {
		return false
	}
	for _, l := range lexicon {
		if strings.Contains(l, phrase) {
			return true
		}
	}
	return false
}

// Len is the number of active terms.
func (d *DenyList) Len() int {
	if d == nil {
		return 0
	}
	return len(d.terms)
}

// Ignored lists the terms that were left out because they are public words.
func (d *DenyList) Ignored() []Term {
	if d == nil {
		return nil
	}
	return append([]Term(nil), d.ignored...)
}

// Hit is one deny-list term found in a text.
type Hit struct {
	Term Term
}

// match reports whether text names any term; when all is set it collects
// every distinct term hit.
func (d *DenyList) match(text string, all bool) (bool, []Hit) {
	if d == nil || len(d.terms) == 0 {
		return false, nil
	}
	var folded, skel string
	var ws []string
	if asciiText(text) {
		// Most text is ASCII, where the normalisation and look-alike
		// tables reduce to lower-casing and two digit mappings.
		folded = strings.ToLower(text)
		skel, ws = asciiViews(folded)
	} else {
		folded = Fold(text)
		skel = skeletonOfFolded(folded)
		ws = words(folded)
	}
	var hits []Hit
	var found map[int]bool
	if all {
		found = map[int]bool{}
	}
	if d.ac != nil {
		sk := []byte(skel)
		if !all {
			if d.ac.IsMatch(sk) {
				return true, nil
			}
		} else {
			for _, m := range d.ac.FindAllOverlapping(sk) {
				idx := d.patterns[m.PatternID]
				if !found[idx] {
					found[idx] = true
					hits = append(hits, Hit{Term: d.terms[idx]})
				}
			}
		}
	}
	if len(d.words) > 0 {
		for _, w := range ws {
			if idx, ok := d.words[w]; ok {
				if !all {
					return true, nil
				}
				if !found[idx] {
					found[idx] = true
					hits = append(hits, Hit{Term: d.terms[idx]})
				}
			}
		}
		if len(d.phrases) > 0 {
			joined := " " + strings.Join(ws, " ") + " "
			for p, idx := range d.phrases {
				if !strings.Contains(joined, p) {
					continue
				}
				if !all {
					return true, nil
				}
				if !found[idx] {
					found[idx] = true
					hits = append(hits, Hit{Term: d.terms[idx]})
				}
			}
		}
	}
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].Term.Value < hits[j].Term.Value })
	return len(hits) > 0, hits
}
