package products

import "math/bits"

// scores are a brief's scores of the products that passed the filters,
// bit-sliced and word-major like a term's planes: bit i%64 of
// planes[(i/64)*k + j] is bit j of product i's score. Adding a term's
// planes adds 64 products' weights with a few word operations, and the
// ranking is read by splitting the scored set plane by plane, highest
// first, so no product is sorted or even visited before its page is.
type scores struct {
	k      int
	planes []uint64
	// scored are the products with a score above zero.
	scored bitset
	// n is how many products scored counts.
	n int
	// sc is where planes, scored and each's masks are taken from.
	sc *scratch
}

// score adds up, for the products in pass, the weights of the terms of a
// brief they carry (found, the terms the catalogue has).
func (c *Catalogue) score(pass bitset, found []*term, sc *scratch) *scores {
	var top int64
	for _, x := range found {
		top += int64(x.max)
	}
	// Weights are at least 1, so k planes hold any sum of them; a brief
	// cannot have more terms than the catalogue has, and no weight is
	// above 3, so top stays far below 2^31.
	k := bits.Len64(uint64(top))
	words := len(pass)
	s := &scores{k: k, planes: sc.take(words * k), scored: sc.take((c.index.n + 63) / 64), sc: sc}
	for _, x := range found {
		if x.planes != nil {
			s.addPlanes(x, pass)
		} else {
			s.addPostings(x, pass)
		}
	}
	for w := range words {
		var any uint64
		for _, p := range s.planes[w*k : (w+1)*k] {
			any |= p
		}
		s.scored[w] = any
	}
	s.n = s.scored.count()
	return s
}

// addPlanes adds a term kept as planes, for the products in pass: a
// ripple-carry addition of 64 products at a time.
func (s *scores) addPlanes(x *term, pass bitset) {
	k, tk := s.k, x.planeCount()
	for w, m := range pass {
		if m == 0 {
			continue
		}
		acc := s.planes[w*k : (w+1)*k]
		add := x.planes[w*tk : (w+1)*tk]
		var carry uint64
		for j := range acc {
			var a uint64
			if j < tk {
				a = add[j] & m
			} else if carry == 0 {
				break
			}
			v := acc[j]
			acc[j] = v ^ a ^ carry
			carry = v&a | carry&(v^a)
		}
	}
}

// addPostings adds a term kept as postings, for the products in pass.
func (s *scores) addPostings(x *term, pass bitset) {
	k := s.k
	for _, p := range x.postings {
		if !pass.has(int(p.pos)) {
			continue
		}
		word, bit := int(p.pos)/64, uint(p.pos)%64
		acc := s.planes[word*k : (word+1)*k]
		var v int32
		for j := range acc {
			v |= int32(acc[j]>>bit&1) << j
		}
		v += p.weight
		for j := range acc {
			acc[j] = acc[j]&^(1<<bit) | uint64(v>>j&1)<<bit
		}
	}
}

// forget takes the product at i out of the scored ones.
func (s *scores) forget(i int) {
	if s.scored.has(i) {
		s.scored.clear(i)
		s.n--
	}
}

// each calls fn for the scored products in rank order (score descending,
// catalogue order within a score), the first skip of them left out, until
// fn returns false. It splits the scored set on the highest plane, then
// each half on the next, taking the half with the bit set first: a leaf
// is a set of products of one score. A subtree that lies wholly within
// skip is counted, not walked.
func (s *scores) each(skip int, fn func(int) bool) {
	if skip >= s.n {
		return
	}
	words := len(s.scored)
	// masks[j] holds the set being split on plane j-1; masks[k] is the
	// scored set itself.
	buf := s.sc.take(words * s.k)
	masks := make([]bitset, s.k+1)
	for j := range s.k {
		masks[j] = buf[j*words : (j+1)*words]
	}
	masks[s.k] = s.scored
	var visit func(j int) bool
	visit = func(j int) bool {
		mask := masks[j+1]
		if j < 0 {
			cont := true
			mask.each(func(i int) bool {
				if skip > 0 {
					skip--
					return true
				}
				cont = fn(i)
				return cont
			})
			return cont
		}
		dst := masks[j]
		for _, high := range [2]bool{true, false} {
			n := 0
			for w, m := range mask {
				p := s.planes[w*s.k+j]
				if !high {
					p = ^p
				}
				dst[w] = m & p
				n += bits.OnesCount64(dst[w])
			}
			if n == 0 {
				continue
			}
			if n <= skip {
				skip -= n
				continue
			}
			if !visit(j - 1) {
				return false
			}
		}
		return true
	}
	visit(s.k - 1)
}
