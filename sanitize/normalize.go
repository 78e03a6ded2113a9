package sanitize

import (
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

// Fold returns the matching view of s: NFKC, invisible characters removed,
// case-folded, and NFKC again (folding can denormalise).
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

// Skeleton returns the separator-squashed, confusable-mapped view of s: the
// folded text decomposed, stripped of combining marks, reduced to letters and
// digits, with look-alike letters mapped to one representative. Two strings
// that a reader would take for the same identifier have the same skeleton.
func Skeleton(s string) string {
	return skeletonOfFolded(Fold(s))
}

func skeletonOfFolded(folded string) string {
	d := norm.NFKD.String(folded)
	var b strings.Builder
	b.Grow(len(d))
	for _, r := range d {
		if unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Me, r) || invisible(r) {
			continue
		}
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			continue
		}
		if m, ok := confusable[r]; ok {
			r = m
		}
		b.WriteRune(r)
	}
	return b.String()
}

// words splits folded text into its letter-and-digit runs, each reduced to
// its skeleton.
func words(folded string) []string {
	var out []string
	start := -1
	for i, r := range folded {
		alnum := unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r)
		if alnum && start < 0 {
			start = i
		}
		if !alnum && start >= 0 {
			out = append(out, skeletonOfFolded(folded[start:i]))
			start = -1
		}
	}
	if start >= 0 {
		out = append(out, skeletonOfFolded(folded[start:]))
	}
	return out
}

func runeLen(s string) int { return utf8.RuneCountInString(s) }

// confusable maps letters that look like Latin letters or digits onto the
// Latin letter. NFKC already folds full-width and mathematical alphanumerics
// onto ASCII, so this table covers what NFKC leaves alone: Cyrillic, Greek,
// Armenian and a few Latin extensions, plus the digits that pass for letters.
var confusable = map[rune]rune{
	// digits read as letters
	'0': 'o', '1': 'l',
	// Latin extensions
	'ı': 'i', 'ȷ': 'j', 'ɡ': 'g', 'ɑ': 'a', 'ɩ': 'i', 'ʟ': 'l', 'ɪ': 'i', 'ʀ': 'r',
	'ꜱ': 's', 'ᴀ': 'a', 'ʙ': 'b', 'ᴄ': 'c', 'ᴅ': 'd', 'ᴇ': 'e', 'ɢ': 'g', 'ʜ': 'h',
	'ᴊ': 'j', 'ᴋ': 'k', 'ᴍ': 'm', 'ɴ': 'n', 'ᴏ': 'o', 'ᴘ': 'p', 'ᴛ': 't', 'ᴜ': 'u',
	'ᴠ': 'v', 'ᴡ': 'w', 'ʏ': 'y', 'ᴢ': 'z', 'ℓ': 'l', 'ſ': 's',
	// Cyrillic (lower case; folding has already lowered capitals)
	'а': 'a', 'б': 'b', 'в': 'b', 'г': 'r', 'д': 'd', 'е': 'e', 'ё': 'e', 'з': '3',
	'и': 'u', 'к': 'k', 'л': 'n', 'м': 'm', 'н': 'h', 'о': 'o', 'п': 'n', 'р': 'p',
	'с': 'c', 'т': 't', 'у': 'y', 'ф': 'f', 'х': 'x', 'ц': 'u', 'ч': 'u', 'ш': 'w',
	'щ': 'w', 'ь': 'b', 'ы': 'b', 'ъ': 'b', 'э': 'e', 'ю': 'o', 'я': 'r',
	'і': 'i', 'ї': 'i', 'ј': 'j', 'ѕ': 's', 'ԁ': 'd', 'ԛ': 'q', 'ԝ': 'w', 'һ': 'h',
	'ӏ': 'l', 'ɜ': '3', 'ҽ': 'e', 'ү': 'y', 'ұ': 'y', 'ғ': 'f', 'қ': 'k', 'ң': 'h',
	'ҳ': 'x', 'ә': 'e', 'ө': 'o', 'ԍ': 'g', 'ԏ': 't', 'ѡ': 'w', 'ѵ': 'v',
	// Greek
	'α': 'a', 'β': 'b', 'γ': 'y', 'δ': 'd', 'ε': 'e', 'ζ': 'z', 'η': 'n', 'θ': 'o',
	'ι': 'i', 'κ': 'k', 'λ': 'a', 'μ': 'u', 'ν': 'v', 'ξ': 'e', 'ο': 'o', 'π': 'n',
	'ρ': 'p', 'σ': 'o', 'ς': 'c', 'τ': 't', 'υ': 'u', 'φ': 'f', 'χ': 'x', 'ψ': 'w',
	'ω': 'w', 'ϲ': 'c', 'ϳ': 'j', 'ϑ': 'o', 'ϱ': 'p', 'ϐ': 'b', 'ϰ': 'k', 'ϕ': 'f',
	// Armenian
	'օ': 'o', 'ս': 'u', 'ց': 'g', 'հ': 'h', 'ո': 'n', 'ռ': 'n', 'ք': 'p', 'զ': 'q',
	'ա': 'w', 'ɯ': 'w',
	// Cherokee and others that fold to lower-case look-alikes
	'ꭰ': 'd', 'ꭱ': 'r', 'ꭲ': 't', 'ꮪ': 's', 'ꮃ': 'w',
}
