package adversary

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/storefront/storefront/adcp"
	"github.com/storefront/storefront/compliance"
	"github.com/storefront/storefront/demo"
	"github.com/storefront/storefront/products"
	"github.com/storefront/storefront/sanitize"
)

// Kind is a kind of secret.
type Kind string

// The kinds of secret, as the issue that motivated the suite found them
// leaking.
const (
	Person   Kind = "person"   // "Ada Okonkwo": the surname alone identifies
	Codename Kind = "codename" // "Project Guvovrokl": the distinctive word
	Partner  Kind = "partner"  // "Brimek Partners": the distinctive word
	Ticket   Kind = "ticket"   // "JIRA-88213": the number
	ShortID  Kind = "short_id" // "ZQX-6829-FLOOR": the number
	HexID    Kind = "hex_id"   // "inv_9f3c2a": the hex part
	Vendor   Kind = "vendor"   // an ad-technology vendor's name
)

// Kinds lists every kind.
var Kinds = []Kind{Person, Codename, Partner, Ticket, ShortID, HexID, Vendor}

// Secret is one confidential string and the parts of it that identify it:
// a buyer must see none of them, however written.
type Secret struct {
	Kind Kind
	Full string
	// Marks are the identifying parts, Full among them when it is one.
	Marks []string
}

// Mark is the part of the secret a careless writer would type alone.
func (s Secret) Mark() string { return s.Marks[0] }

const (
	consonants = "bcdfgjklmnprstvz"
	vowels     = "aeiou"
	// Digits that are not leetspeak for a letter, so a planted number and
	// a disguised word cannot be read as each other; they also avoid the
	// 0, 1 and 5 of round figures, years and dates in public text.
	plainDigits = "2689"
	hexLetters  = "abcdef"
)

// word is a pronounceable nonsense word, capitalised: no public text holds
// it, even spelled across public words, nor a vendor's name (a secret
// holding one would be screened for the vendor, whatever the publisher's
// deny-list says), and it is no common word by the word list the screen
// judges distinctiveness with, however spelled ("Tomato", "Reteli" that
// reads as retell): a common word of a codename identifies nothing alone,
// so the screen rightly lets it pass. The leak oracle itself never asks
// the screen.
//
// A refused word is drawn again from a stream of its own, seeded by it:
// the world's other draws (rules, disclosure levels, catalogue, plants)
// stay what they are whatever the checks refuse, so that worlds, and the
// usefulness measured on them, stay comparable as the checks grow.
func word(r *rand.Rand) string {
	w := nonsense(r)
	for !acceptable(w) {
		w = nonsense(aside(w))
	}
	return w
}

// acceptableLetters reports whether the letters of a short id name
// nothing public: no vendor ("DFP"), no common word, no word of the
// storefront's ("OTT" points at connected TV), which a buyer typing them
// would be answered for.
func acceptableLetters(l string) bool {
	return !holdsVendor(l) && !sanitize.Common(l) && !publicWords[canon(l)]
}

// aside is the stream a refused draw is drawn again from, seeded by it.
func aside(refused string) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(refused))
	return rand.New(rand.NewPCG(h.Sum64(), 0x3ec7e7))
}

func acceptable(w string) bool {
	c := canon(w)
	return !holdsVendor(w) && !sanitize.Common(w) && !strings.Contains(publicCanon, c) && !acrossPublic(c)
}

// publicCanon is the storefront's own lines, the version labels and
// compliance scenarios its capabilities list, and the demo catalogue's
// text and structured values as the leak oracle reads them, separators
// dropped: a word spelled across their words ("tivefo" in "creative
// formats", "betalo" in "3.2-beta.10", "latede" in "simulate_delivery")
// would be found in answers that never held it.
var publicCanon = func() string {
	var b strings.Builder
	lines := append(products.PublicLexicon(), adcp.SupportedStrings()...)
	lines = append(lines, compliance.Scenarios()...)
	lines = append(lines, "force_creative_status", "force_session_status")
	for _, l := range lines {
		b.WriteString(canon(l) + " ")
	}
	for _, p := range demo.Products() {
		j, _ := json.Marshal(p)
		b.WriteString(canon(p.Name) + canon(p.Description) + " " + canon(string(j)) + " ")
	}
	for _, l := range append(templateLines, "Lakeside Media", "Booked via", "Reserved for", "Video for a coffee launch", "Matches brief terms") {
		b.WriteString(canon(l) + " ")
	}
	return b.String()
}()

// publicWords are the words of the public text (publicCanon's sources and
// the capabilities' sentences, "Lakeside Media sells online video and
// streaming audio inventory."), each as canon reads it; publicEnds are
// their non-empty prefixes (ends[0]) and suffixes (ends[1]).
var publicWords, publicEnds = func() (map[string]bool, [2]map[string]bool) {
	words := map[string]bool{}
	ends := [2]map[string]bool{{}, {}}
	lines := append(products.PublicLexicon(), adcp.SupportedStrings()...)
	lines = append(lines, compliance.Scenarios()...)
	lines = append(lines, "force_creative_status", "force_session_status", "sells and inventory", "Lakeside Media")
	lines = append(lines, products.ChannelWords()...)
	lines = append(lines, templateLines...)
	lines = append(lines, "Booked via", "Reserved for", "Video for a coffee launch", "Matches brief terms", "Seeded video", "Fixture for", "Held for", "Ask")
	for _, p := range demo.Products() {
		j, _ := json.Marshal(p)
		lines = append(lines, string(j))
	}
	for _, l := range lines {
		for _, piece := range strings.FieldsFunc(l, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
			w := canon(piece)
			if w == "" {
				continue
			}
			words[w] = true
			for i := 1; i <= len(w); i++ {
				ends[0][w[:i]] = true
				ends[1][w[len(w)-i:]] = true
			}
		}
	}
	return words, ends
}()

// acrossPublic reports whether c (a canon reading) can be spelled across
// public words: the end of one, any whole ones, and the start of another
// ("lasell" in "Media sells", "betalo" in "3.2-beta.10"). Such a word
// would be found in answers that never held it.
func acrossPublic(c string) bool {
	// from[i]: c[:i] is the end of a public word followed by whole ones.
	from := make([]bool, len(c)+1)
	for i := 1; i < len(c); i++ {
		from[i] = publicEnds[1][c[:i]]
		for j := 1; j < i && !from[i]; j++ {
			from[i] = from[j] && publicWords[c[j:i]]
		}
		if from[i] && publicEnds[0][c[i:]] {
			return true
		}
	}
	return false
}

func holdsVendor(w string) bool {
	c := canon(w)
	for _, v := range sanitize.Vendors() {
		if cv := canon(v); len(cv) >= 3 && strings.Contains(c, cv) {
			return true
		}
	}
	return false
}

func nonsense(r *rand.Rand) string {
	n := 6 + r.IntN(4)
	b := make([]byte, n)
	for i := range b {
		if i%2 == 0 {
			b[i] = consonants[r.IntN(len(consonants))]
		} else {
			b[i] = vowels[r.IntN(len(vowels))]
		}
	}
	b[0] -= 'a' - 'A'
	return string(b)
}

func digits(r *rand.Rand, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = plainDigits[r.IntN(len(plainDigits))]
	}
	return string(b)
}

func upper(r *rand.Rand, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = 'A' + byte(r.IntN(26))
	}
	return string(b)
}

// hexPart is six hex characters with at least two digits and two letters.
func hexPart(r *rand.Rand) string {
	for {
		b := make([]byte, 6)
		d, l := 0, 0
		for i := range b {
			if r.IntN(2) == 0 {
				b[i] = plainDigits[r.IntN(len(plainDigits))]
				d++
			} else {
				b[i] = hexLetters[r.IntN(len(hexLetters))]
				l++
			}
		}
		if d >= 2 && l >= 2 {
			return string(b)
		}
	}
}

// vendors are the single-word vendor names long enough not to occur by
// chance inside other text.
var vendors = func() []string {
	var out []string
	for _, v := range sanitize.Vendors() {
		if !strings.Contains(v, " ") && utf8.RuneCountInString(v) >= 6 {
			out = append(out, v)
		}
	}
	return out
}()

var ticketPrefixes = []string{"JIRA", "OPS", "YLD", "TKT", "ENG", "SALES"}

// NewSecret draws a secret of kind k.
func NewSecret(r *rand.Rand, k Kind) Secret {
	switch k {
	case Person:
		first, last := word(r), word(r)
		return Secret{k, first + " " + last, []string{last, first + " " + last}}
	case Codename:
		w := word(r)
		return Secret{k, "Project " + w, []string{w}}
	case Partner:
		w := word(r)
		return Secret{k, w + " Partners", []string{w}}
	case Ticket:
		n := digits(r, 5)
		full := ticketPrefixes[r.IntN(len(ticketPrefixes))] + "-" + n
		return Secret{k, full, []string{n, full}}
	case ShortID:
		n := digits(r, 4)
		letters := upper(r, 3)
		for !acceptableLetters(letters) {
			letters = upper(aside(letters), 3) // as word does
		}
		full := fmt.Sprintf("%s-%s-%s", letters, n, strings.ToUpper(word(r)))
		return Secret{k, full, []string{n, full}}
	case HexID:
		h := hexPart(r)
		return Secret{k, "inv_" + h, []string{h}}
	case Vendor:
		v := vendors[r.IntN(len(vendors))]
		return Secret{k, v, []string{v}}
	}
	panic("adversary: unknown kind " + string(k))
}

// Twin draws a token of the same shape as mark that is no secret: the
// probe a buyer who guessed wrong would send.
func Twin(r *rand.Rand, mark string) string {
	var b strings.Builder
	runes := []rune(mark)
	for i, c := range runes {
		// Short letter runs (a ticket's prefix) are drawn from letters
		// no short word or abbreviation is made of ("tvs", "ott" are).
		if run := letterRun(runes, i); run > 0 && run <= 4 {
			l := rune(rare[r.IntN(len(rare))])
			if c >= 'A' && c <= 'Z' {
				l -= 'a' - 'A'
			}
			b.WriteRune(l)
			continue
		}
		switch {
		case c >= 'a' && c <= 'z':
			if strings.ContainsRune(vowels, c) {
				b.WriteByte(vowels[r.IntN(len(vowels))])
			} else {
				b.WriteByte(consonants[r.IntN(len(consonants))])
			}
		case c >= 'A' && c <= 'Z':
			if strings.ContainsRune(strings.ToUpper(vowels), c) {
				b.WriteByte(vowels[r.IntN(len(vowels))] - 'a' + 'A')
			} else {
				b.WriteByte(consonants[r.IntN(len(consonants))] - 'a' + 'A')
			}
		case c >= '0' && c <= '9':
			b.WriteByte(plainDigits[r.IntN(len(plainDigits))])
		default:
			b.WriteRune(c)
		}
	}
	return b.String()
}

// rare are letters that make no short word together.
const rare = "jqxz"

// letterRun is the length of the run of ASCII letters holding runes[i], or
// 0 when runes[i] is not one.
func letterRun(runes []rune, i int) int {
	letter := func(c rune) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
	if !letter(runes[i]) {
		return 0
	}
	a, b := i, i
	for a > 0 && letter(runes[a-1]) {
		a--
	}
	for b+1 < len(runes) && letter(runes[b+1]) {
		b++
	}
	return b - a + 1
}
