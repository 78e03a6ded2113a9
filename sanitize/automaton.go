package sanitize

import (
	"slices"
	"strings"
)

// automaton is an Aho-Corasick matcher over bytes, laid out for size and
// build speed rather than the last nanosecond of a scan: a deny-list of
// 100,000 terms is rebuilt on every rulebook or catalogue edit, while the
// texts it scans are a few hundred bytes.
//
// The trie's nodes are numbered breadth first with each node's children in
// byte order, so the children of node n are the nodes first[n] up to
// first[n+1]-1 and a child is found by a binary search of their labels.
// Each node costs 17 bytes, where a dense transition table costs one word
// per node per byte class.
type automaton struct {
	label []byte  // label[n]: the byte on the edge into n
	first []int32 // first[n]: n's first child; len(first) = nodes+1
	fail  []int32 // fail[n]: the node of n's longest proper suffix
	// out[n] is the first pattern ending at n, or -1; the rest of those
	// are chained by same. next[n] is the nearest node on n's failure
	// chain where a pattern ends, or -1.
	out  []int32
	next []int32
	same []int32 // same[p]: the next pattern with p's bytes, or -1
	lens []int32 // lens[p]: pattern p's length
}

// match is one occurrence of a pattern: its index and the half-open byte
// range it covers.
type match struct {
	PatternID  int
	Start, End int
}

// newAutomaton compiles pats; nil when there are none. Empty patterns are
// never matched.
func newAutomaton(pats []string) *automaton {
	if len(pats) == 0 {
		return nil
	}
	order := make([]int32, len(pats))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int { return strings.Compare(pats[a], pats[b]) })

	// The trie, numbered breadth first straight from the sorted
	// patterns. A pattern shares its path with the one before it as far
	// as their common prefix and adds a node for each byte after it; the
	// nodes of one depth, taken in the patterns' order, are that depth's
	// prefixes in byte order, which is the breadth-first order (each
	// depth after the one above, siblings together in byte order). So a
	// first pass counts the nodes of each depth, and a second gives each
	// new node the next number of its depth.
	a := &automaton{same: make([]int32, len(pats)), lens: make([]int32, len(pats))}
	shared := make([]int32, len(order)) // shared[k]: the bytes order[k] shares with the pattern before it
	depth := []int32{1}                 // depth[d]: the nodes d bytes deep
	prev := ""
	for k, id := range order {
		p := pats[id]
		a.same[id], a.lens[id] = -1, int32(len(p))
		if p == "" {
			continue
		}
		c := 0
		for c < len(p) && c < len(prev) && p[c] == prev[c] {
			c++
		}
		shared[k] = int32(c)
		for len(depth) <= len(p) {
			depth = append(depth, 0)
		}
		for d := c + 1; d <= len(p); d++ {
			depth[d]++
		}
		prev = p
	}
	next := make([]int32, len(depth)) // next[d]: the next number at depth d
	total := int32(0)
	for d, n := range depth {
		next[d] = total
		total += n
	}
	a.label = make([]byte, total)
	a.first = make([]int32, total+1)
	a.out = make([]int32, total)
	for n := range a.out {
		a.first[n], a.out[n] = -1, -1
	}
	path := make([]int32, len(depth)) // path[d]: the current pattern's node d bytes deep
	next[0]++                         // the root, 0
	for k, id := range order {
		p := pats[id]
		if p == "" {
			continue
		}
		for d := int(shared[k]) + 1; d <= len(p); d++ {
			n := next[d]
			next[d]++
			a.label[n] = p[d-1]
			if parent := path[d-1]; a.first[parent] < 0 {
				a.first[parent] = n
			}
			path[d] = n
		}
		at := path[len(p)]
		if a.out[at] < 0 {
			a.out[at] = id
		} else {
			// Duplicates sort together: chain this one after the last.
			q := a.out[at]
			for a.same[q] >= 0 {
				q = a.same[q]
			}
			a.same[q] = id
		}
	}
	// A node without children has an empty range where the next node's
	// children begin.
	a.first[total] = total
	for n := total - 1; n >= 0; n-- {
		if a.first[n] < 0 {
			a.first[n] = a.first[n+1]
		}
	}

	// Failure and output links, breadth first: a node's links follow
	// from its parent's, which come earlier in the numbering.
	a.fail = make([]int32, total)
	a.next = make([]int32, total)
	a.next[0] = -1
	for n := int32(0); n < total; n++ {
		for c := a.first[n]; c < a.first[n+1]; c++ {
			f := int32(0)
			if n != 0 {
				f = a.step(a.fail[n], a.label[c])
			}
			a.fail[c] = f
			if a.out[f] >= 0 {
				a.next[c] = f
			} else {
				a.next[c] = a.next[f]
			}
		}
	}
	return a
}

// child is n's child on byte b, or -1.
func (a *automaton) child(n int32, b byte) int32 {
	lo, hi := a.first[n], a.first[n+1]
	for lo < hi {
		m := int32(uint32(lo+hi) >> 1)
		switch l := a.label[m]; {
		case l == b:
			return m
		case l < b:
			lo = m + 1
		default:
			hi = m
		}
	}
	return -1
}

// step is the node reached from n on byte b.
func (a *automaton) step(n int32, b byte) int32 {
	for {
		if c := a.child(n, b); c >= 0 {
			return c
		}
		if n == 0 {
			return 0
		}
		n = a.fail[n]
	}
}

// IsMatch reports whether any pattern occurs in text.
func (a *automaton) IsMatch(text []byte) bool {
	n := int32(0)
	for _, b := range text {
		n = a.step(n, b)
		if a.out[n] >= 0 || a.next[n] >= 0 {
			return true
		}
	}
	return false
}

// FindAllOverlapping lists every occurrence of every pattern in text,
// by end position, then from the longest pattern ending there.
func (a *automaton) FindAllOverlapping(text []byte) []match {
	var ms []match
	n := int32(0)
	for i, b := range text {
		n = a.step(n, b)
		at := n
		if a.out[at] < 0 {
			at = a.next[at]
		}
		for ; at >= 0; at = a.next[at] {
			for p := a.out[at]; p >= 0; p = a.same[p] {
				ms = append(ms, match{PatternID: int(p), Start: i + 1 - int(a.lens[p]), End: i + 1})
			}
		}
	}
	return ms
}
