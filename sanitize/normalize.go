package sanitize

//go:generate go run ./internal/skelgen

import (
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// folder is safe for concurrent use: cases.Caser is not, so each call makes
// its own via foldString.
func foldString(s string) string {
	return cases.Fold().String(s)
}

// invisible reports runes that render as nothing or reorder text: format
// characters (zero-width joiners, bidi controls, soft hyphen), variation
// selectors and other default-ignorable code points.
func invisible(r rune) bool {
	switch {
	case unicode.Is(unicode.Cf, r):
		return true
	case r == 0x034F, // combining grapheme joiner
		r >= 0xFE00 && r <= 0xFE0F,                               // variation selectors
		r >= 0xE0100 && r <= 0xE01EF,                             // variation selectors supplement
		r == 0x115F || r == 0x1160 || r == 0x3164 || r == 0xFFA0, // hangul fillers
		r == 0x2800: // braille blank
		return true
	}
	return false
}

// Fold returns the folded view of s: NFKC, invisible characters removed,
// case-folded, and NFKC again (folding can denormalise). It is for
// readers; matching uses the skeleton.
func Fold(s string) string {
	s = norm.NFKC.String(s)
	s = strings.Map(func(r rune) rune {
		if invisible(r) {
			return -1
		}
		return r
	}, s)
	return norm.NFKC.String(foldString(s))
}

// Skeleton returns the separator-squashed, confusable-mapped view of s:
// what is left of its letters and digits once every character is read as
// the character it looks like. Two strings that a reader would take for
// the same identifier have the same skeleton.
//
// The order of the steps is the one UTS #39 gives for skeletons (NFD, map
// each character to its prototype, NFD), with case folding and
// compatibility decomposition inside the mapping: each character is
// mapped to its prototype as written, then folded, then the prototypes of
// what folding produced are taken, to a fixed point. That is what makes a
// Greek capital eta read as the H it looks like, not as the n its small
// letter looks like, and still ignores case. Marks are then dropped, the
// digits that stand for letters (0 1 3 4 5 7 8) read as those letters and
// i reads as l (the table already reads capital I and the digit one as
// l). The table is generated from Unicode's data: see skeleton_table.go.
func Skeleton(s string) string {
	return string(makeView(s, nil).sk)
}

// Character flags from the generated table.
const (
	flagSep    = 1
	flagDigit  = 2
	flagUpper  = 4
	flagAttach = 8
)

type skelEntry struct {
	r     rune
	s     string
	flags uint8
}

// lookup returns a code point's skeleton and flags; identity reports a
// letter or digit that reads as itself (its skeleton is the rune).
func lookup(r rune) (s string, flags uint8, identity bool) {
	if r < utf8.RuneSelf {
		return asciiSkel[r], asciiFlags[r], false
	}
	i := sort.Search(len(skelTable), func(i int) bool { return skelTable[i].r >= r })
	if i < len(skelTable) && skelTable[i].r == r {
		return skelTable[i].s, skelTable[i].flags, false
	}
	switch {
	case unicode.IsDigit(r):
		return "", flagDigit, true
	case unicode.IsLetter(r):
		return "", 0, true
	case unicode.In(r, unicode.Mn, unicode.Me):
		return "", flagAttach, false
	}
	return "", flagSep, false
}

// Per skeleton byte flags of a view.
const (
	atBoundary = 1 // a word starts or ends before this byte
	atDigit    = 2 // the byte comes from a digit
	atChar     = 4 // a character's skeleton starts before this byte
)

// view is a text as the deny-list reads it: its skeleton, where its words
// begin and end, which of its bytes are digits, and which bytes come from
// figures the caller formatted (see Figure).
type view struct {
	sk []byte
	// at has len(sk)+1 entries: at[i] describes the position before
	// sk[i]; at[len(sk)] has the end-of-text boundary.
	at []uint8
	// fig, when not nil, names for each skeleton byte the figure it
	// came from (1-based; 0 for publisher text).
	fig []uint8
}

// segment is one piece of a text; fig is its figure number, 0 if it is
// not a figure.
type segment struct {
	text string
	fig  uint8
}

// viewBuilder accumulates a view over one or more segments.
type viewBuilder struct {
	v         view
	pending   bool // a separator was seen since the last letter or digit
	prevDigit bool
	prevLower bool
	started   bool
	figs      bool
}

// makeView builds the view of s, or of segs when given.
func makeView(s string, segs []segment) view {
	var b viewBuilder
	if segs == nil {
		b.v.sk = make([]byte, 0, len(s)+len(s)/8)
		b.v.at = make([]uint8, 0, len(s)+len(s)/8+1)
		b.add(s, 0)
	} else {
		n := 0
		for _, g := range segs {
			n += len(g.text)
		}
		b.figs = true
		b.v.sk = make([]byte, 0, n+n/8)
		b.v.at = make([]uint8, 0, n+n/8+1)
		b.v.fig = make([]uint8, 0, n+n/8)
		for _, g := range segs {
			// A figure is a word of its own.
			b.pending = true
			b.add(g.text, g.fig)
			b.pending = true
		}
	}
	b.v.at = append(b.v.at, atBoundary|atChar)
	return b.v
}

// reuse builds the view of s in b's own buffers, which it keeps for the
// next call: the view is valid until then.
func (b *viewBuilder) reuse(s string) view {
	sk, at := b.v.sk[:0], b.v.at[:0]
	*b = viewBuilder{}
	b.v.sk, b.v.at = sk, at
	b.add(s, 0)
	b.v.at = append(b.v.at, atBoundary|atChar)
	return b.v
}

func (b *viewBuilder) add(s string, fig uint8) {
	if asciiOnly(s) {
		for i := 0; i < len(s); i++ {
			c := s[i]
			b.put(asciiSkel[c], asciiFlags[c], fig, 0)
		}
		return
	}
	for _, r := range norm.NFD.String(s) {
		out, flags, identity := lookup(r)
		if identity {
			b.put("", flags, fig, r)
			continue
		}
		b.put(out, flags, fig, 0)
	}
}

// put appends one character's skeleton (out, or the rune r itself).
func (b *viewBuilder) put(out string, flags uint8, fig uint8, r rune) {
	if flags&flagAttach != 0 {
		return
	}
	if out == "" && r == 0 {
		b.pending = true
		return
	}
	digit := flags&flagDigit != 0
	upper := flags&flagUpper != 0
	var at uint8
	if !b.started || b.pending || digit != b.prevDigit || (b.prevLower && upper) {
		at = atBoundary
	}
	b.started, b.pending = true, false
	b.prevDigit, b.prevLower = digit, !digit && !upper
	start := len(b.v.sk)
	if r != 0 {
		b.v.sk = utf8.AppendRune(b.v.sk, r)
	} else {
		b.v.sk = append(b.v.sk, out...)
	}
	var d uint8
	if digit {
		d = atDigit
	}
	for i := start; i < len(b.v.sk); i++ {
		b.v.at = append(b.v.at, d)
		if b.figs {
			b.v.fig = append(b.v.fig, fig)
		}
	}
	b.v.at[start] |= at | atChar
}

// asciiOnly reports text with no byte outside ASCII.
func asciiOnly(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// boundaries lists the positions of v's skeleton where a word begins or
// ends, in order.
func (v view) boundaries() []int32 {
	out := make([]int32, 0, len(v.at)/3+2)
	for i, a := range v.at {
		if a&atBoundary != 0 {
			out = append(out, int32(i))
		}
	}
	return out
}

// words returns v's skeleton cut at its boundaries.
func (v view) words() []string {
	b := v.boundaries()
	out := make([]string, 0, len(b))
	for i := 0; i+1 < len(b); i++ {
		out = append(out, string(v.sk[b[i]:b[i+1]]))
	}
	return out
}

func runeLen(s string) int { return utf8.RuneCountInString(s) }
