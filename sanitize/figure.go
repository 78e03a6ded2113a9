package sanitize

import (
	"strings"
	"unicode/utf8"
)

// Slot marks where a figure goes in a text given to LineWith or ProseWith.
const Slot = "\uFFFC"

// Figure is a value the caller formatted itself from a typed number or
// date: an amount and its currency, a date, a count of days. It can hold
// no publisher text: NewFigure accepts only digits, grouping and decimal
// marks, dashes, slashes, spaces, a currency code and the words of dates
// and durations.
type Figure struct{ s string }

// String returns the figure as formatted.
func (f Figure) String() string { return f.s }

// figureWords are the words a figure may hold besides numbers and a
// currency code.
var figureWords = map[string]bool{
	"january": true, "february": true, "march": true, "april": true, "may": true, "june": true,
	"july": true, "august": true, "september": true, "october": true, "november": true, "december": true,
	"day": true, "days": true, "week": true, "weeks": true, "from": true, "to": true,
	"early": true, "mid": true, "late": true,
}

// NewFigure accepts s as a figure when it has at least one digit and
// nothing but digits, the marks , . - / : and spaces, three-letter
// capital currency codes, and the words of dates and durations.
func NewFigure(s string) (Figure, bool) {
	digit := false
	for _, w := range strings.Fields(s) {
		if len(w) == 3 && w[0] >= 'A' && w[0] <= 'Z' && w[1] >= 'A' && w[1] <= 'Z' && w[2] >= 'A' && w[2] <= 'Z' {
			continue
		}
		if figureWords[strings.ToLower(w)] {
			continue
		}
		for i := 0; i < len(w); i++ {
			switch c := w[i]; {
			case c >= '0' && c <= '9':
				digit = true
			case c == ',' || c == '.' || c == '-' || c == '/' || c == ':':
			default:
				return Figure{}, false
			}
		}
	}
	if !digit || len(s) > 100 {
		return Figure{}, false
	}
	return Figure{s}, true
}

// span is a figure's place in a filled text, in bytes.
type span struct{ start, end int }

// filled is cleaned text with the figures put in, and where they are.
type filled struct {
	text string
	figs []span
}

// fill cleans raw and puts figs in its slots. It fails when the slots and
// figures do not pair up one to one: a slot in publisher text (the
// character is not for writing) must not move a figure.
func (s *Screen) fill(raw string, figs []Figure) (filled, bool) {
	clean := s.Clean(raw)
	if strings.Count(clean, Slot) != len(figs) || strings.Count(raw, Slot) != len(figs) {
		return filled{text: strings.ReplaceAll(clean, Slot, "")}, false
	}
	var f filled
	var b strings.Builder
	parts := strings.Split(clean, Slot)
	for i, p := range parts {
		b.WriteString(p)
		if i < len(figs) {
			start := b.Len()
			b.WriteString(figs[i].s)
			f.figs = append(f.figs, span{start, b.Len()})
		}
	}
	f.text = b.String()
	return f, true
}

// view builds f's view, each figure marked.
func (f filled) view() view {
	segs := make([]segment, 0, 2*len(f.figs)+1)
	at := 0
	for i, sp := range f.figs {
		if sp.start > at {
			segs = append(segs, segment{text: f.text[at:sp.start]})
		}
		segs = append(segs, segment{text: f.text[sp.start:sp.end], fig: uint8(i%250 + 1)})
		at = sp.end
	}
	if at < len(f.text) {
		segs = append(segs, segment{text: f.text[at:]})
	}
	return makeView("", segs)
}

// slice returns f's bytes [start, end), with the figures wholly inside.
func (f filled) slice(start, end int) filled {
	out := filled{text: f.text[start:end]}
	for _, sp := range f.figs {
		if sp.start >= start && sp.end <= end {
			out.figs = append(out.figs, span{sp.start - start, sp.end - start})
		}
	}
	return out
}

// sentences splits f after sentence terminals that are followed by a
// space. The terminal stays with its sentence.
func (f filled) sentences() []filled {
	var out []filled
	t := f.text
	start := 0
	emit := func(a, b int) {
		for a < b && t[a] == ' ' {
			a++
		}
		for b > a && t[b-1] == ' ' {
			b--
		}
		if a < b {
			out = append(out, f.slice(a, b))
		}
	}
	for i := 0; i < len(t); i++ {
		if strings.IndexByte(sentenceTerminals, t[i]) >= 0 && (i+1 == len(t) || t[i+1] == ' ') && !f.insideFigure(i) {
			emit(start, i+1)
			start = i + 1
		}
	}
	emit(start, len(t))
	return out
}

func (f filled) insideFigure(i int) bool {
	for _, sp := range f.figs {
		if i >= sp.start && i < sp.end-1 {
			return true
		}
	}
	return false
}

// join joins parts with single spaces.
func join(parts []filled) filled {
	var out filled
	var b strings.Builder
	for i, p := range parts {
		if i > 0 {
			b.WriteByte(' ')
		}
		base := b.Len()
		b.WriteString(p.text)
		for _, sp := range p.figs {
			out.figs = append(out.figs, span{sp.start + base, sp.end + base})
		}
	}
	out.text = b.String()
	return out
}

// truncate shortens f to at most max characters, preferring to cut at a
// sentence end, then at a space, and marking a mid-sentence cut with an
// ellipsis. A figure the cut goes through is dropped from the figures and
// is screened as plain text.
func (f filled) truncate(max int) filled {
	if max <= 0 || utf8.RuneCountInString(f.text) <= max {
		return f
	}
	t := truncate(f.text, max)
	cut := len(strings.TrimSuffix(t, ellipsis))
	out := filled{text: t}
	for _, sp := range f.figs {
		if sp.end <= cut {
			out.figs = append(out.figs, sp)
		}
	}
	return out
}

// truncate shortens t to at most max characters, preferring to cut at a
// sentence end, then at a space, and marking a mid-sentence cut with an
// ellipsis.
func truncate(t string, max int) string {
	if max <= 0 || utf8.RuneCountInString(t) <= max {
		return t
	}
	runes := []rune(t)
	cut := string(runes[:max])
	if i := strings.LastIndexAny(cut, sentenceTerminals); i > len(cut)/2 {
		return strings.TrimSpace(cut[:i+1])
	}
	cut = string(runes[:max-1])
	if i := strings.LastIndexByte(cut, ' '); i > len(cut)/2 {
		cut = cut[:i]
	}
	return strings.TrimSpace(cut) + ellipsis
}
