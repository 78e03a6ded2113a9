package requestschema

import "regexp/syntax"

// Most of the schemas' patterns are one shape: anchored at both ends, a
// run of ASCII characters each from a set, some runs of a fixed length
// and the last perhaps of a range (^[A-Z]{3}$, ^[A-Za-z0-9_.:-]{16,255}$,
// ^sha256:[a-f0-9]{64}$, ^\d{4}-\d{2}-\d{2}$). Such a pattern is matched
// by one pass over the bytes (pieces), which is what Go's regexp answers
// for it, at a fraction of its cost: a request's patterns were a third of
// the schema door's time.

// piece is a run of one set of ASCII bytes, from min to max long (max -1
// for no bound).
type piece struct {
	set      [2]uint64
	min, max int
}

func (p *piece) has(b byte) bool { return b < 128 && p.set[b>>6]&(1<<(b&63)) != 0 }

// pieces is a pattern of runs, every one but the last of a fixed length,
// so that a match is read left to right with no choice to undo. It is
// used by pointer: the schema compiler keys maps by its patterns.
type pieces struct {
	runs []piece
	src  string
}

func (ps *pieces) String() string { return ps.src }

func (ps *pieces) MatchString(s string) bool {
	at := 0
	for i := range ps.runs {
		p := &ps.runs[i]
		n := p.min
		if i == len(ps.runs)-1 {
			// The last run takes the rest, within its bounds.
			n = len(s) - at
			if n < p.min || (p.max >= 0 && n > p.max) {
				return false
			}
		} else if len(s)-at < n {
			return false
		}
		for _, b := range []byte(s[at : at+n]) {
			if !p.has(b) {
				return false
			}
		}
		at += n
	}
	return at == len(s)
}

// piecesOf reads src as pieces, or reports false for a pattern of any
// other shape, which Go's regexp (or regexp2) then runs.
func piecesOf(src string) (*pieces, bool) {
	re, err := syntax.Parse(src, syntax.Perl)
	if err != nil || re.Op != syntax.OpConcat || len(re.Sub) < 3 {
		return nil, false
	}
	subs := re.Sub
	if subs[0].Op != syntax.OpBeginText || subs[len(subs)-1].Op != syntax.OpEndText {
		return nil, false
	}
	var runs []piece
	for _, sub := range subs[1 : len(subs)-1] {
		got, ok := runsOf(sub)
		if !ok {
			return nil, false
		}
		runs = append(runs, got...)
	}
	for i, p := range runs {
		if i < len(runs)-1 && p.min != p.max {
			return nil, false
		}
	}
	return &pieces{runs: runs, src: src}, len(runs) > 0
}

// runsOf is the runs re, one part of an anchored concatenation, stands
// for: a literal is a run of one byte per character, a class one run, and
// a repeat of either (of one character) one run of its bounds.
func runsOf(re *syntax.Regexp) ([]piece, bool) {
	if re.Flags&syntax.FoldCase != 0 {
		return nil, false
	}
	switch re.Op {
	case syntax.OpLiteral:
		var out []piece
		for _, r := range re.Rune {
			p, ok := setOf([]rune{r, r})
			if !ok {
				return nil, false
			}
			out = append(out, p)
		}
		return out, true
	case syntax.OpCharClass:
		p, ok := setOf(re.Rune)
		return []piece{p}, ok
	case syntax.OpRepeat, syntax.OpPlus, syntax.OpStar, syntax.OpQuest:
		one := re.Sub[0]
		if one.Flags&syntax.FoldCase != 0 || re.Flags&syntax.NonGreedy != 0 {
			return nil, false
		}
		var p piece
		var ok bool
		switch {
		case one.Op == syntax.OpCharClass:
			p, ok = setOf(one.Rune)
		case one.Op == syntax.OpLiteral && len(one.Rune) == 1:
			p, ok = setOf([]rune{one.Rune[0], one.Rune[0]})
		}
		if !ok {
			return nil, false
		}
		switch re.Op {
		case syntax.OpRepeat:
			p.min, p.max = re.Min, re.Max
		case syntax.OpPlus:
			p.min, p.max = 1, -1
		case syntax.OpStar:
			p.min, p.max = 0, -1
		case syntax.OpQuest:
			p.min, p.max = 0, 1
		}
		return []piece{p}, true
	}
	return nil, false
}

// setOf is a run of one of the characters in ranges (pairs of first and
// last), when every one is ASCII.
func setOf(ranges []rune) (piece, bool) {
	p := piece{min: 1, max: 1}
	if len(ranges) == 0 || len(ranges)%2 != 0 {
		return p, false
	}
	for i := 0; i < len(ranges); i += 2 {
		lo, hi := ranges[i], ranges[i+1]
		if lo < 0 || hi >= 128 || lo > hi {
			return p, false
		}
		for r := lo; r <= hi; r++ {
			p.set[r>>6] |= 1 << (r & 63)
		}
	}
	return p, true
}
