package sanitize

import (
	"math/bits"
	"slices"
	"sort"
	"strings"
	"unicode"
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
	// Whole matches the term only as whole words. Ids and names match
	// anywhere, however they are split or disguised; a single ordinary
	// word picked from notes matches only on its own, so "North" does not
	// hide "Northwind".
	Whole bool
	// Field marks a whole free-text field, such as a rule's notes: the
	// field itself is no term, but each of its distinctive words is.
	Field bool
}

// Public is what the buyer may see anyway, which no term can take away.
type Public struct {
	// Lexicon is the storefront's own buyer-facing wording. A term that
	// is one of its phrases is ignored: blocking it would silence the
	// canned lines themselves.
	Lexicon []string
	// Text is what the publisher already shows buyers (its name, domain
	// and seller name, the public facts of its products) and the figures
	// its rules disclose. Their words and numbers are not distinctive: a
	// word of a confidential field that is also one of them is not a term
	// on its own (the field's whole phrases still are).
	Text []string
}

// minSubstring is the shortest skeleton matched anywhere in a text. Shorter
// terms would match inside ordinary words, so they are matched only as whole
// words, except identifiers (a mix of letters and digits), which ordinary
// words do not contain: those match anywhere from minIDSubstring on, where
// the text has digits where the identifier has.
const (
	minSubstring   = 5
	minIDSubstring = 3
)

// Distinctive tokens: a word of a confidential field is a term on its own
// when it has at least minTokenLetters letters (minAcronym for a word in
// capitals), or at least minTokenDigits characters when it has digits, and
// is neither common English nor public.
const (
	minTokenLetters = 4
	minAcronym      = 3
	minTokenDigits  = 4
)

// maxAligned bounds the skeleton length of a term matched on word
// boundaries; longer terms go to the automaton.
const maxAligned = 63

// DenyList is an immutable, compiled set of terms. Build a new one when the
// rulebook or catalogue changes and swap it in whole.
type DenyList struct {
	terms []Term // active terms, tokens included
	// free matches its patterns anywhere in a text's skeleton.
	free     *automaton
	freeTerm []int32
	// freeBounds has, for each free pattern, bit k set where the words
	// of a term with that skeleton meet: a text that writes the term in
	// its own words is the term even glued to words on both sides.
	freeBounds []uint64
	// checked matches anywhere too, but where the term has a digit the
	// text must have one: short ids ("SP-12"), which read as letters
	// once the digits stand for letters.
	checked     *automaton
	checkedTerm []alignedTerm
	// aligned holds the terms matched on word boundaries: a match must
	// begin and end where a word of the text begins or ends, whatever
	// separators split it inside ("H.a.r.t.w.e.l.l", "Okon kwo").
	// aligned maps a skeleton to the first of its terms in
	// alignedTerms; the rest follow by next.
	aligned      skIndex
	alignedTerms []alignedTerm
	alignedLen   uint64 // bit n: some aligned term has n skeleton bytes
	// filter has a bit set for the hash of each aligned skeleton, so that
	// most spans of a text are ruled out without a map lookup; the hash
	// is extended byte by byte as a span grows.
	filter     []uint64
	filterBits uint
	ignored    []Term // terms dropped because they are public words
}

// alignedTerm is a term matched on word boundaries or with a digit mask.
type alignedTerm struct {
	term int32
	// next is the next aligned term with the same skeleton, or -1.
	next int32
	// digits has bit k set when byte k of the term's skeleton is a digit:
	// the text must have a digit there too, so a ticket number is found
	// only as a number, not as the word its digits spell ("7001" reads
	// "tool").
	digits uint64
	// bounds has bit k set where the term's own words meet.
	bounds uint64
	// short terms may not be assembled from common words of a text ("do
	// oh" is not DOOH); spelled letter by letter, or split otherwise,
	// they may.
	short bool
}

// NewDenyList compiles terms against the storefront's own wording; it is
// Compile with no publisher text.
func NewDenyList(terms []Term, lexicon []string) *DenyList {
	return Compile(terms, Public{Lexicon: lexicon})
}

// Compile compiles terms. A term whose skeleton is empty, or that is a
// phrase of the public lexicon, is ignored: it carries no confidential
// signal and blocking it would silence every decline; Ignored reports
// them so a publisher can be told. Every term other than a vendor name
// also contributes its distinctive words (see Public), as terms of the
// same kind matched on word boundaries.
func Compile(terms []Term, pub Public) *DenyList {
	c := newCompiler(terms, pub)
	for _, t := range terms {
		if !t.Field {
			v := c.view(t.Value)
			if len(v.sk) == 0 {
				continue
			}
			if c.inLexicon(t.Value, v) {
				c.d.ignored = append(c.d.ignored, t)
				continue
			}
			c.add(t, v)
		}
		if t.Kind == KindVendor {
			continue
		}
		c.distinctive(t.Value, func(tok string, v view) {
			c.add(Term{Value: tok, Kind: t.Kind, Whole: true}, v)
		})
	}
	d := c.d
	d.terms = trim(d.terms)
	d.alignedTerms = trim(d.alignedTerms)
	d.aligned.keys, d.aligned.vals = trim(d.aligned.keys), trim(d.aligned.vals)
	d.buildFilter()
	d.free = newAutomaton(c.freePats)
	d.checked = newAutomaton(c.checkedPats)
	return d
}

// compiler is the state of one Compile. A 100,000-term list is compiled
// on every rulebook or catalogue edit, so it keeps one scratch view for
// every term and token it reads, and each kind of term is told apart from
// the ones already kept by one lookup where it is kept: the aligned map
// for terms matched on word boundaries, freeSeen and checkedSeen for the
// automata's patterns.
type compiler struct {
	d *DenyList
	// lexicon holds the public lexicon's phrases, each as " word word ",
	// and lexWords their words: a term with a word outside lexWords is in
	// no phrase.
	lexicon  []string
	lexWords map[string]bool
	public   map[string]bool
	// Terms are the same when their skeletons, ways of matching and
	// digit positions are: "2b9c82" and "2b9cb2" share a skeleton (8
	// reads as b) but each is found only with digits where it has them.
	// A free pattern is matched anywhere, digits or not.
	freeSeen    skIndex
	checkedSeen map[checkedKey]struct{}
	freePats    []string
	checkedPats []string
	scratch     viewBuilder
}

type checkedKey struct {
	sk     string
	digits uint64
}

func newCompiler(terms []Term, pub Public) *compiler {
	// Sized for every term and every word of each, which is as many as
	// it can keep, so that large lists are not regrown as they are
	// built; Compile trims what is left over.
	most := 0
	for _, t := range terms {
		most += 1 + countPieces(t.Value)
	}
	c := &compiler{
		d:           &DenyList{terms: make([]Term, 0, most), alignedTerms: make([]alignedTerm, 0, most)},
		lexicon:     make([]string, 0, len(pub.Lexicon)),
		lexWords:    map[string]bool{},
		public:      map[string]bool{},
		checkedSeen: map[checkedKey]struct{}{},
	}
	c.d.aligned.reserve(most)
	c.freeSeen.reserve(len(terms))
	for _, p := range pub.Lexicon {
		words := makeView(p, nil).words()
		for _, w := range words {
			c.lexWords[w] = true
		}
		c.lexicon = append(c.lexicon, " "+strings.Join(words, " ")+" ")
		addPublicWords(c.public, p)
	}
	for _, p := range pub.Text {
		addPublicWords(c.public, p)
	}
	return c
}

// view is the view of s in the compiler's scratch space: valid until the
// next call.
func (c *compiler) view(s string) view {
	return c.scratch.reuse(s)
}

// inLexicon reports whether term, whose view is v, is a phrase of the
// public lexicon: its words, in order, are words of one of its phrases.
func (c *compiler) inLexicon(term string, v view) bool {
	from := -1
	for i, a := range v.at {
		if a&atBoundary == 0 {
			continue
		}
		if from >= 0 && !c.lexWords[string(v.sk[from:i])] {
			return false
		}
		from = i
	}
	return inLexicon(term, c.lexicon)
}

// add keeps term t, whose view is v, unless an equal term is kept.
func (c *compiler) add(t Term, v view) {
	d := c.d
	n := len(v.sk)
	mode := uint8(0)
	switch {
	case !t.Whole && n >= minSubstring:
		mode = 1
	case !t.Whole && n >= minIDSubstring && identifier(t.Value):
		mode = 2
	case n > maxAligned:
		mode = 1
	}
	idx := int32(len(d.terms))
	digits := v.digitMask()
	switch mode {
	case 1:
		h := spanHash(v.sk)
		if at, ok := c.freeSeen.get(h, v.sk); ok {
			d.freeBounds[at] |= v.boundMask()
			return
		}
		sk := string(v.sk)
		c.freeSeen.put(h, sk, int32(len(c.freePats)))
		d.freeTerm = append(d.freeTerm, idx)
		d.freeBounds = append(d.freeBounds, v.boundMask())
		c.freePats = append(c.freePats, sk)
	case 2:
		k := checkedKey{string(v.sk), digits}
		if _, ok := c.checkedSeen[k]; ok {
			return
		}
		c.checkedSeen[k] = struct{}{}
		d.checkedTerm = append(d.checkedTerm, alignedTerm{term: idx, digits: digits})
		c.checkedPats = append(c.checkedPats, k.sk)
	default:
		if !d.keepAligned(v.sk, alignedTerm{term: idx, digits: digits, bounds: v.boundMask(), short: n < minSubstring}) {
			return
		}
	}
	d.terms = append(d.terms, t)
}

// spanHash hashing: FNV-1a, 64 bits.
const (
	hashStart = 14695981039346656037
	hashPrime = 1099511628211
)

func (d *DenyList) buildFilter() {
	bits := uint(6)
	for 1<<bits < 16*d.aligned.len() {
		bits++
	}
	d.filterBits = bits
	d.filter = make([]uint64, 1<<(bits-6))
	for _, sk := range d.aligned.keys {
		d.setFilter(spanHash(sk))
	}
}

func (d *DenyList) setFilter(h uint64) {
	i := h >> (64 - d.filterBits)
	d.filter[i>>6] |= 1 << (i & 63)
}

func (d *DenyList) inFilter(h uint64) bool {
	i := h >> (64 - d.filterBits)
	return d.filter[i>>6]&(1<<(i&63)) != 0
}

// keepAligned keeps a, a term matched on word boundaries whose skeleton is
// sk, unless a term with the same skeleton and digits is kept; it
// reports whether it kept it. Terms with one skeleton are chained in the
// order they came.
func (d *DenyList) keepAligned(sk []byte, a alignedTerm) bool {
	if len(sk) > maxAligned {
		sk = sk[:maxAligned]
	}
	a.next = -1
	h := spanHash(sk)
	at, ok := d.aligned.get(h, sk)
	if !ok {
		d.aligned.put(h, string(sk), int32(len(d.alignedTerms)))
		d.alignedTerms = append(d.alignedTerms, a)
		d.alignedLen |= 1 << len(sk)
		return true
	}
	for {
		if d.alignedTerms[at].digits == a.digits {
			return false
		}
		if d.alignedTerms[at].next < 0 {
			break
		}
		at = d.alignedTerms[at].next
	}
	d.alignedTerms[at].next = int32(len(d.alignedTerms))
	d.alignedTerms = append(d.alignedTerms, a)
	return true
}

// digitMask marks the skeleton bytes of v that come from digits.
func (v view) digitMask() uint64 { return v.mask(atDigit, 0) }

// boundMask marks the positions inside v's skeleton where its words meet.
func (v view) boundMask() uint64 { return v.mask(atBoundary, 1) }

func (v view) mask(flag uint8, from int) uint64 {
	var m uint64
	for i := from; i < len(v.sk) && i < 64; i++ {
		if v.at[i]&flag != 0 {
			m |= 1 << i
		}
	}
	return m
}

// pieces splits s at everything that is not a letter, digit or mark.
func pieces(s string) []string {
	return strings.FieldsFunc(s, notInPiece)
}

func notInPiece(r rune) bool {
	return !unicode.IsLetter(r) && !unicode.IsDigit(r) && !unicode.In(r, unicode.Mn, unicode.Me)
}

// countPieces is len(pieces(s)).
func countPieces(s string) int {
	n, in := 0, false
	for _, r := range s {
		if notInPiece(r) {
			in = false
		} else if !in {
			in = true
			n++
		}
	}
	return n
}

// trim is s without the room it has left over, when that is much.
func trim[T any](s []T) []T {
	if cap(s)-len(s) <= len(s)/8 {
		return s
	}
	return slices.Clone(s)
}

// addPublicWords records the skeletons of p's words, and of its numbers
// with their grouping marks removed ("5,120" is 5120).
func addPublicWords(public map[string]bool, p string) {
	for _, w := range pieces(p) {
		public[Skeleton(w)] = true
	}
	for _, w := range makeView(p, nil).words() {
		public[w] = true
	}
	var digits strings.Builder
	flush := func() {
		if digits.Len() > 0 {
			public[Skeleton(digits.String())] = true
			digits.Reset()
		}
	}
	for i, r := range p {
		switch {
		case r >= '0' && r <= '9':
			digits.WriteRune(r)
		case (r == ',' || r == '.') && digits.Len() > 0 && i+1 < len(p) && p[i+1] >= '0' && p[i+1] <= '9':
		default:
			flush()
		}
	}
	flush()
}

// distinctive calls keep with each word of a confidential field that
// identifies something on its own, and its view: not common English (by
// skeleton, so a disguised common word is common too), not one of the
// storefront's advertising words, not public, and long enough. Numbers
// count from four digits, as do words that mix letters and digits (the
// hex part of an id); a year is not distinctive. The view is valid only
// during the call.
func (c *compiler) distinctive(field string, keep func(tok string, v view)) {
	for _, p := range pieces(field) {
		letters, digits := 0, 0
		for _, r := range p {
			if unicode.IsDigit(r) {
				digits++
			} else if unicode.IsLetter(r) {
				letters++
			}
		}
		v := c.view(p)
		if len(v.sk) == 0 || c.public[string(v.sk)] {
			continue
		}
		switch {
		case digits == 0:
			if letters < minTokenLetters && !(acronym(p) && letters >= minAcronym) {
				continue
			}
			if commonWord(p) || isCommonSkeleton(string(v.sk)) {
				continue
			}
		case letters == 0:
			if digits < minTokenDigits || year(p) {
				continue
			}
		default:
			if letters+digits < minTokenDigits || commonWord(p) {
				continue
			}
		}
		keep(p, v)
	}
}

// acronym reports a word in capitals: it has a capital and nothing
// lower-case.
func acronym(p string) bool {
	if !asciiOnly(p) {
		return strings.ToUpper(p) == p && strings.ToLower(p) != p
	}
	upper := false
	for i := 0; i < len(p); i++ {
		switch c := p[i]; {
		case 'a' <= c && c <= 'z':
			return false
		case 'A' <= c && c <= 'Z':
			upper = true
		}
	}
	return upper
}

// commonWord reports whether p, lower-cased, is one of the common words.
func commonWord(p string) bool {
	var buf [32]byte
	if len(p) > len(buf) || !asciiOnly(p) {
		return common[strings.ToLower(p)]
	}
	b := buf[:len(p)]
	for i := 0; i < len(p); i++ {
		c := p[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		b[i] = c
	}
	return common[string(b)]
}

// year reports a four-digit number from 1900 to 2099.
func year(p string) bool {
	return len(p) == 4 && (p[:2] == "19" || p[:2] == "20")
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

// joinWords renders p as its space-separated word skeletons.
func joinWords(p string) string {
	return strings.Join(makeView(p, nil).words(), " ")
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

// Len is the number of active terms, distinctive words included.
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
	return d.matchView(makeView(text, nil), all)
}

// matchView matches a view. A match that lies wholly inside one figure is
// not a hit: the figure is the caller's own formatting of a value it may
// disclose, and a rule id that happens to contain it must not hide it.
func (d *DenyList) matchView(v view, all bool) (bool, []Hit) {
	if d == nil || len(d.terms) == 0 {
		return false, nil
	}
	var hits []Hit
	var found map[int32]bool
	if all {
		found = map[int32]bool{}
	}
	// hit records term idx; it reports whether matching can stop.
	hit := func(idx int32) bool {
		if !all {
			return true
		}
		if !found[idx] {
			found[idx] = true
			hits = append(hits, Hit{Term: d.terms[idx]})
		}
		return false
	}
	// Most texts match no term anywhere: IsMatch rules them out before
	// the matches are listed and checked.
	if d.free != nil && d.free.IsMatch(v.sk) {
		for _, m := range d.free.FindAllOverlapping(v.sk) {
			if (v.spans(m.Start, m.End) || v.inWords(m.Start, m.End, d.freeBounds[m.PatternID])) &&
				!v.inFigure(m.Start, m.End) && hit(d.freeTerm[m.PatternID]) {
				return true, nil
			}
		}
	}
	if d.checked != nil && d.checked.IsMatch(v.sk) {
		for _, m := range d.checked.FindAllOverlapping(v.sk) {
			a := d.checkedTerm[m.PatternID]
			if v.spans(m.Start, m.End) && v.digitsAt(m.Start, m.End, a.digits) && !v.inFigure(m.Start, m.End) && hit(a.term) {
				return true, nil
			}
		}
	}
	if d.aligned.len() > 0 {
		b := v.boundaries()
		for i := 0; i < len(b); i++ {
			h, at := uint64(hashStart), b[i]
			for j := i + 1; j < len(b); j++ {
				n := b[j] - b[i]
				if n > maxAligned {
					break
				}
				for ; at < b[j]; at++ {
					h = (h ^ uint64(v.sk[at])) * hashPrime
				}
				if d.alignedLen&(1<<n) == 0 || !d.inFilter(h) {
					continue
				}
				at, ok := d.aligned.get(h, v.sk[b[i]:b[j]])
				if !ok {
					continue
				}
				for ; at >= 0; at = d.alignedTerms[at].next {
					a := &d.alignedTerms[at]
					if !v.digitsAt(int(b[i]), int(b[j]), a.digits) || v.inFigure(int(b[i]), int(b[j])) {
						continue
					}
					if a.short && !v.assembled(b, i, j, a.bounds) {
						continue
					}
					if hit(a.term) {
						return true, nil
					}
				}
			}
		}
	}
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].Term.Value < hits[j].Term.Value })
	return len(hits) > 0, hits
}

// spans reports whether skeleton bytes [start, end), where a term matched
// anywhere, are the text's own writing of the term: they begin and end
// where a character's skeleton does (an m reads as r n, but "Xandm" does
// not spell Xandr), and when they run across a word boundary they begin
// or end at one, so the term is spelled in pieces ("Sov-rn", "S o v r
// n") or glued to a word ("PubMatics"), never made of one word's tail and
// the next word's head ("…kasov Muzeti…" reads s o v r n across the
// space, a random name that must not read as Sovrn).
func (v view) spans(start, end int) bool {
	if v.at[start]&atChar == 0 || v.at[end]&atChar == 0 {
		return false
	}
	if v.at[start]&atBoundary != 0 || v.at[end]&atBoundary != 0 {
		return true
	}
	for k := start + 1; k < end; k++ {
		if v.at[k]&atBoundary != 0 {
			return false
		}
	}
	return true
}

// inWords reports whether skeleton bytes [start, end), where a term
// whose words meet at bounds matched anywhere, are the term written in its
// own words: they begin and end where a character's skeleton does, and
// the text's words meet wherever the term's do (the text may split them
// further, at digits or capitals: "Re7A11"). Glued to words on both sides
// ("xAcme Retail Groupx") the term is still spelled out; one word's tail
// and the next word's head are not (spans): a one-word term has no
// boundary of its own for the space between them to fall on.
func (v view) inWords(start, end int, bounds uint64) bool {
	if bounds == 0 || v.at[start]&atChar == 0 || v.at[end]&atChar == 0 {
		return false
	}
	for k := 1; k < 64 && start+k < end; k++ {
		if bounds&(1<<k) != 0 && v.at[start+k]&atBoundary == 0 {
			return false
		}
	}
	return true
}

// inFigure reports whether skeleton bytes [start, end) all come from one
// figure and hold a digit of it: a term that is only a figure's currency
// code (an acronym of three capitals) is still a hit.
func (v view) inFigure(start, end int) bool {
	if v.fig == nil || start >= end || v.fig[start] == 0 {
		return false
	}
	digit := false
	for k := start; k < end; k++ {
		if v.fig[k] != v.fig[start] {
			return false
		}
		digit = digit || v.at[k]&atDigit != 0
	}
	return digit
}

// digitsAt reports whether the text has a digit at every position of
// [start, end) where the term's mask has one.
func (v view) digitsAt(start, end int, mask uint64) bool {
	for mask != 0 {
		k := bits.TrailingZeros64(mask)
		mask &^= 1 << k
		if start+k >= end || v.at[start+k]&atDigit == 0 {
			return false
		}
	}
	return true
}

// assembled reports whether the text's words between boundaries b[i] and
// b[j] spell a short term acceptably: each place where two of them meet is
// a place where the term's own words meet, or touches a single character
// (the term spelled out letter by letter), or joins something that is not
// two common words ("XJ-EC" spells XJEC, "do oh" does not spell DOOH).
func (v view) assembled(b []int32, i, j int, bounds uint64) bool {
	for k := i + 1; k < j; k++ {
		off := b[k] - b[i]
		if off < 64 && bounds&(1<<off) != 0 {
			continue
		}
		if b[k]-b[k-1] == 1 || b[k+1]-b[k] == 1 {
			continue
		}
		if isCommonSkeleton(string(v.sk[b[k-1]:b[k]])) && isCommonSkeleton(string(v.sk[b[k]:b[k+1]])) {
			return false
		}
	}
	return true
}
