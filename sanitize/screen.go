package sanitize

import (
	"html"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/microcosm-cc/bluemonday"
	"golang.org/x/text/unicode/norm"
)

// AdCP limits on buyer-visible decline text, in characters.
const (
	MaxReason         = 2000
	MaxSuggestion     = 1000
	MaxSuggestions    = 20
	MaxMessage        = 2000
	maxMarkupPasses   = 4
	ellipsis          = "…"
	sentenceTerminals = ".!?"
)

// Screen turns candidate strings into buyer-visible [Text]. A Screen is
// immutable and safe for concurrent use; build a new one when its deny-list
// changes.
type Screen struct {
	deny   *DenyList
	policy *bluemonday.Policy
}

// New returns a screen over deny. A nil deny-list screens markup and
// characters only.
func New(deny *DenyList) *Screen {
	return &Screen{deny: deny, policy: bluemonday.StrictPolicy()}
}

// DenyList returns the screen's deny-list.
func (s *Screen) DenyList() *DenyList { return s.deny }

// Clean strips markup and unsafe characters from raw and returns plain text:
// not HTML-escaped, no control, zero-width or bidi characters, whitespace
// collapsed, NFC. It does not consult the deny-list.
func (s *Screen) Clean(raw string) string {
	if plainASCII(raw) {
		// No markup, entity, control or invisible character can be in
		// it: only whitespace to collapse.
		return strings.Join(strings.Fields(raw), " ")
	}
	// Invisible and control characters are removed before and after each
	// markup pass: removed only at the end, "<\u200bscript>" is text to
	// the markup parser and a tag once the zero-width space is gone.
	t := stripHidden(raw)
	for i := 0; i < maxMarkupPasses; i++ {
		next := stripHidden(html.UnescapeString(s.policy.Sanitize(t)))
		if next == t {
			break
		}
		t = next
	}
	// A string that still changes after the passes keeps nesting escaped
	// markup; drop anything that could still be read as a tag.
	if stripHidden(html.UnescapeString(s.policy.Sanitize(t))) != t {
		t = strings.Map(func(r rune) rune {
			if r == '<' || r == '>' {
				return -1
			}
			return r
		}, t)
	}
	t = strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) {
			return ' '
		}
		return r
	}, t)
	t = norm.NFC.String(t)
	return strings.Join(strings.Fields(t), " ")
}

// plainASCII reports printable ASCII text with no markup or entity
// characters.
func plainASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x7f || (c < 0x20 && c != ' ' && c != '\t' && c != '\n' && c != '\r') || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}

// stripHidden removes control characters other than whitespace, invisible
// characters and invalid UTF-8.
func stripHidden(t string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\n' || r == '\r' || r == '\t' || r == '\v' || r == '\f':
			return r
		case unicode.IsControl(r), invisible(r), r == utf8.RuneError:
			return -1
		}
		return r
	}, t)
}

// Hits reports the deny-list terms raw names. It is for publisher-facing
// previews and lint; buyer-facing code uses Line and Prose.
func (s *Screen) Hits(raw string) []Hit {
	_, hits := s.deny.match(s.Clean(raw), true)
	return hits
}

// Names reports whether raw names any deny-listed term.
func (s *Screen) Names(raw string) bool {
	hit, _ := s.deny.match(raw, false)
	return hit
}

// Line screens a single string, such as a suggestion or a product name. It
// reports false when the cleaned string is empty or names a deny-listed
// term; the string is then not to be shown at all.
func (s *Screen) Line(raw string, max int) (Text, bool) {
	return s.line(filled{text: s.Clean(raw)}, max)
}

// LineWith is Line for a text with figures: raw holds one Slot for each of
// figs, in order. The figures are put in after the text is cleaned, and a
// match that lies inside a figure does not count, so a confidential id
// that happens to contain a disclosed threshold cannot hide it; a match
// that runs from the text into a figure does count. A raw whose slots do
// not match figs is refused.
func (s *Screen) LineWith(raw string, figs []Figure, max int) (Text, bool) {
	f, ok := s.fill(raw, figs)
	if !ok {
		return Text{}, false
	}
	return s.line(f, max)
}

func (s *Screen) line(f filled, max int) (Text, bool) {
	if f.text == "" {
		return Text{}, false
	}
	if s.names(f) {
		withheld.lines.Add(1)
		return Text{}, false
	}
	cut := f.truncate(max)
	// Truncation cannot create a term, but re-check what it cut: the
	// screen promises what leaves, not what was likely.
	if cut.text != f.text && s.names(cut) {
		withheld.lines.Add(1)
		return Text{}, false
	}
	return Text{cut.text}, true
}

// Prose screens free text sentence by sentence. A sentence that names a
// deny-listed term is dropped. If nothing survives, or the surviving
// sentences together name a term, each fallback is tried as a Line in turn;
// past the last fallback the result is last.
func (s *Screen) Prose(raw string, max int, last Text, fallbacks ...string) Text {
	return s.proseOrFallback(filled{text: s.Clean(raw)}, true, max, last, fallbacks)
}

// ProseWith is Prose for a text with figures, as LineWith is for Line.
func (s *Screen) ProseWith(raw string, figs []Figure, max int, last Text, fallbacks ...string) Text {
	f, ok := s.fill(raw, figs)
	return s.proseOrFallback(f, ok, max, last, fallbacks)
}

func (s *Screen) proseOrFallback(f filled, ok bool, max int, last Text, fallbacks []string) Text {
	if ok {
		if t, ok := s.prose(f, max); ok {
			return t
		}
	}
	if f.text != "" || !ok {
		withheld.texts.Add(1)
	}
	for _, fb := range fallbacks {
		if t, ok := s.Line(fb, max); ok {
			return t
		}
	}
	return last
}

func (s *Screen) prose(f filled, max int) (Text, bool) {
	if f.text == "" {
		return Text{}, false
	}
	if !s.names(f) {
		t := f.truncate(max)
		return Text{t.text}, t.text == f.text || !s.names(t)
	}
	var kept []filled
	for _, sentence := range f.sentences() {
		if s.names(sentence) {
			withheld.sentences.Add(1)
		} else {
			kept = append(kept, sentence)
		}
	}
	if len(kept) == 0 {
		return Text{}, false
	}
	joined := join(kept).truncate(max)
	if s.names(joined) {
		return Text{}, false
	}
	return Text{joined.text}, true
}

// Lines screens each candidate as a Line, keeps those that pass, drops
// duplicates and stops at max items.
func (s *Screen) Lines(raws []string, maxLen, maxItems int) []Text {
	var out []Text
	seen := map[string]bool{}
	for _, r := range raws {
		if len(out) == maxItems {
			break
		}
		t, ok := s.Line(r, maxLen)
		if !ok || seen[t.s] {
			continue
		}
		seen[t.s] = true
		out = append(out, t)
	}
	return out
}

// Message screens an error message that may quote what the buyer sent, in
// double quotes (Go's %q). A quoted value that names a deny-listed term is
// described instead of quoted ("the value given"), so the message keeps
// its meaning; the rest of the message is screened as prose, falling back
// to last.
func (s *Screen) Message(raw string, max int, last Text) Text {
	clean := s.Clean(raw)
	if !s.Names(clean) {
		return s.Prose(raw, max, last)
	}
	return s.Prose(quotedRE.ReplaceAllStringFunc(clean, func(q string) string {
		if s.Names(q) {
			return "the value given"
		}
		return q
	}), max, last)
}

var quotedRE = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)

// names reports whether f names a term, figures exempted.
func (s *Screen) names(f filled) bool {
	if len(f.figs) == 0 {
		return s.Names(f.text)
	}
	hit, _ := s.deny.matchView(f.view(), false)
	return hit
}
