package adversary

import (
	"math/rand/v2"
	"strings"
	"unicode"
)

// A Disguise rewrites a mark the way a careless or evasive writer might,
// so that a naive filter misses it. canon undoes every one of them.
type Disguise struct {
	Name string
	// ID marks disguises that keep a mark usable inside an identifier
	// (no spaces, markup or non-ASCII).
	ID    bool
	apply func(r *rand.Rand, s string) string
}

// Apply disguises s.
func (d Disguise) Apply(r *rand.Rand, s string) string { return d.apply(r, s) }

// lookalikes are, per script, letters that read as Latin capitals (from
// Unicode's confusables for Greek, Cyrillic, Cherokee and Lisu), and the
// lower-case Greek and Cyrillic letters that read as Latin small letters.
var lookalikes = map[string]map[rune]rune{
	"greek": {'A': 'Α', 'B': 'Β', 'E': 'Ε', 'H': 'Η', 'I': 'Ι', 'K': 'Κ', 'M': 'Μ', 'N': 'Ν', 'O': 'Ο', 'P': 'Ρ', 'T': 'Τ', 'X': 'Χ', 'Y': 'Υ', 'Z': 'Ζ',
		'a': 'α', 'i': 'ι', 'o': 'ο', 'u': 'υ', 'v': 'ν', 'p': 'ρ', 'k': 'κ'},
	"cyrillic": {'A': 'А', 'B': 'В', 'C': 'С', 'E': 'Е', 'H': 'Н', 'K': 'К', 'M': 'М', 'O': 'О', 'P': 'Р', 'T': 'Т', 'X': 'Х', 'J': 'Ј', 'S': 'Ѕ', 'I': 'І',
		'a': 'а', 'c': 'с', 'e': 'е', 'o': 'о', 'p': 'р', 'x': 'х', 'y': 'у', 'i': 'і', 'j': 'ј', 's': 'ѕ', 'h': 'һ', 'd': 'ԁ', 'q': 'ԛ', 'w': 'ԝ'},
	"cherokee": {'A': 'Ꭺ', 'B': 'Ᏼ', 'C': 'Ꮯ', 'D': 'Ꭰ', 'E': 'Ꭼ', 'G': 'Ꮐ', 'H': 'Ꮋ', 'J': 'Ꭻ', 'K': 'Ꮶ', 'L': 'Ꮮ', 'M': 'Ꮇ', 'P': 'Ꮲ',
		'R': 'Ꭱ', 'S': 'Ꮪ', 'T': 'Ꭲ', 'V': 'Ꮩ', 'W': 'Ꮃ', 'Z': 'Ꮓ'},
	"lisu": {'A': 'ꓮ', 'B': 'ꓐ', 'C': 'ꓚ', 'D': 'ꓓ', 'E': 'ꓰ', 'F': 'ꓝ', 'G': 'ꓖ', 'H': 'ꓧ', 'I': 'ꓲ', 'J': 'ꓙ', 'K': 'ꓗ', 'L': 'ꓡ', 'M': 'ꓟ',
		'N': 'ꓠ', 'O': 'ꓳ', 'P': 'ꓑ', 'R': 'ꓣ', 'S': 'ꓢ', 'T': 'ꓔ', 'U': 'ꓴ', 'V': 'ꓦ', 'W': 'ꓪ', 'X': 'ꓫ', 'Y': 'ꓬ', 'Z': 'ꓜ'},
}

// unlook maps every look-alike, and the lower-case form Unicode gives it,
// back to its Latin letter in lower case.
var unlook = func() map[rune]rune {
	m := map[rune]rune{}
	for script, t := range lookalikes {
		for latin, l := range t {
			m[l] = unicode.ToLower(latin)
			if script == "cherokee" || script == "lisu" {
				// Capitals only: their case forms are not written by a
				// disguise but may come back from one that folds case.
				m[unicode.ToLower(l)] = unicode.ToLower(latin)
			}
		}
	}
	return m
}()

// leet maps letters onto the digits that stand for them, and unleet back.
var (
	leet   = map[rune]rune{'a': '4', 'e': '3', 'o': '0', 'i': '1', 'l': '1', 's': '5', 't': '7'}
	unleet = map[rune]rune{'4': 'a', '3': 'e', '0': 'o', '1': 'l', '5': 's', '7': 't'}
)

func lookalike(script string) func(*rand.Rand, string) string {
	t := lookalikes[script]
	return func(r *rand.Rand, s string) string {
		// Upper-case first where the script has only capitals, so every
		// letter it has is used.
		if _, small := t['a']; !small {
			s = strings.ToUpper(s)
		}
		return strings.Map(func(c rune) rune {
			if l, ok := t[c]; ok {
				return l
			}
			return c
		}, s)
	}
}

func spread(sep string) func(*rand.Rand, string) string {
	return func(_ *rand.Rand, s string) string {
		return strings.Join(strings.Split(s, ""), sep)
	}
}

// Disguises are the rewrites the generator uses.
var Disguises = []Disguise{
	{"plain", true, func(_ *rand.Rand, s string) string { return s }},
	{"lower", true, func(_ *rand.Rand, s string) string { return strings.ToLower(s) }},
	{"upper", true, func(_ *rand.Rand, s string) string { return strings.ToUpper(s) }},
	{"mixed case", true, func(r *rand.Rand, s string) string {
		return strings.Map(func(c rune) rune {
			if r.IntN(2) == 0 {
				return unicode.ToUpper(c)
			}
			return unicode.ToLower(c)
		}, s)
	}},
	{"greek", false, lookalike("greek")},
	{"cyrillic", false, lookalike("cyrillic")},
	{"cherokee", false, lookalike("cherokee")},
	{"lisu", false, lookalike("lisu")},
	{"full width", false, func(_ *rand.Rand, s string) string {
		return strings.Map(func(c rune) rune {
			if c >= '!' && c <= '~' {
				return c + 0xFEE0
			}
			return c
		}, s)
	}},
	{"dots", true, spread(".")},
	{"hyphens", true, spread("-")},
	{"underscores", true, spread("_")},
	{"letter by letter", false, spread(" ")},
	{"middle dots", false, spread("·")},
	{"zero width", false, spread("\u200b")},
	{"soft hyphens", false, spread("\u00ad")},
	{"combining accents", false, spread("\u0301")},
	{"leetspeak", true, func(_ *rand.Rand, s string) string {
		return strings.Map(func(c rune) rune {
			if d, ok := leet[unicode.ToLower(c)]; ok {
				return d
			}
			return c
		}, s)
	}},
	{"markup", false, func(_ *rand.Rand, s string) string { return "<b>" + s + "</b>" }},
}

// canon is the generator's view of a text: its own disguises undone
// (look-alikes, full width, leetspeak, case), combining marks and every
// character that is not a Latin letter or digit dropped. A mark occurs in
// a text, however the generator disguised it, when canon(mark) is a
// substring of canon(text).
func canon(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, c := range s {
		if c >= 0xFF01 && c <= 0xFF5E {
			c -= 0xFEE0
		}
		if l, ok := unlook[c]; ok {
			c = l
		}
		c = unicode.ToLower(c)
		if d, ok := unleet[c]; ok {
			c = d
		}
		if c == 'i' {
			// 1 reads as l or i: both sides read i as l.
			c = 'l'
		}
		if (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') {
			b.WriteRune(c)
		}
	}
	return b.String()
}
