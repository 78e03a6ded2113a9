package sanitize

import (
	"sort"
	"strings"

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
// words.
const minSubstring = 5

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
	for _, p := range public {
		lexicon = append(lexicon, " "+joinWords(p)+" ")
	}
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
		if t.Whole || runeLen(sk) < minSubstring {
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
	folded := Fold(text)
	var hits []Hit
	found := map[int]bool{}
	if d.ac != nil {
		sk := []byte(skeletonOfFolded(folded))
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
		ws := words(folded)
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
