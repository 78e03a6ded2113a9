package products

import (
	"strings"

	"github.com/storefront/storefront/sanitize"
)

// Catalogue keywords are never shown to buyers, so a keyword that is a word
// or a fragment of something confidential would let a probing buyer confirm
// a guess: the guessed word would move a product up the ranking and into
// brief_relevance, a random word of the same shape would not. A keyword word
// therefore ranks only when it shares nothing with the confidential text
// (rule ids, names, notes and terms, internal references), or when buyers
// can read it anyway in the catalogue's served names and descriptions or in
// the storefront's own lines.
type keywordPolicy struct {
	// confidential holds the skeletons of the confidential words, each
	// between NUL bytes, so that one search finds a word or a fragment.
	confidential string
	words        []string // the same skeletons, for the other direction
	public       map[string]bool
	memo         map[string]bool
}

// minFragment is the shortest skeleton that counts as a fragment of a
// confidential word; shorter keyword words must equal one to be held back.
const minFragment = 4

func newKeywordPolicy(confidential []string, shown []Product) *keywordPolicy {
	k := &keywordPolicy{public: map[string]bool{}, memo: map[string]bool{}}
	if len(confidential) == 0 {
		return k
	}
	for _, l := range PublicLexicon() {
		k.addPublic(l)
	}
	for _, p := range shown {
		k.addPublic(p.Name)
		k.addPublic(p.Description)
	}
	var b strings.Builder
	b.WriteByte(0)
	seen := map[string]bool{}
	for _, t := range confidential {
		for _, w := range words(t) {
			sk := sanitize.Skeleton(w)
			if sk == "" || seen[sk] || k.public[sk] {
				continue
			}
			seen[sk] = true
			b.WriteString(sk)
			b.WriteByte(0)
			if len(sk) >= minFragment {
				k.words = append(k.words, sk)
			}
		}
	}
	k.confidential = b.String()
	return k
}

func (k *keywordPolicy) addPublic(text string) {
	for _, w := range words(text) {
		k.public[sanitize.Skeleton(w)] = true
	}
}

// ranks reports whether the keyword word w may steer ranking.
func (k *keywordPolicy) ranks(w string) bool {
	if len(k.confidential) <= 1 {
		return true
	}
	if v, ok := k.memo[w]; ok {
		return v
	}
	sk := sanitize.Skeleton(w)
	ok := k.public[sk] || !k.touches(sk)
	k.memo[w] = ok
	return ok
}

// touches reports whether sk is a confidential word, a fragment of one, or
// holds one.
func (k *keywordPolicy) touches(sk string) bool {
	if sk == "" {
		return false
	}
	if strings.Contains(k.confidential, "\x00"+sk+"\x00") {
		return true
	}
	if len(sk) >= minFragment && strings.Contains(k.confidential, sk) {
		return true
	}
	for _, c := range k.words {
		if strings.Contains(sk, c) {
			return true
		}
	}
	return false
}
