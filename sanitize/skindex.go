package sanitize

// skIndex maps skeletons to int32 values: a hash table keyed by the
// FNV-1a hash the deny-list's matching already computes for every span of
// a text (spanHash), so a lookup costs no second hash, and laid out for a
// build that inserts a few hundred thousand skeletons at a time. Each
// slot holds a key's hash tag and its place in keys, so a probe reads the
// key itself only when the tags agree.
type skIndex struct {
	slots []uint64 // 0: empty; else tag<<32 | place+1
	keys  []string
	vals  []int32
	bits  uint // len(slots) = 1<<bits
}

// spanHash is the FNV-1a hash of b.
func spanHash[T string | []byte](b T) uint64 {
	h := uint64(hashStart)
	for i := 0; i < len(b); i++ {
		h = (h ^ uint64(b[i])) * hashPrime
	}
	return h
}

func (x *skIndex) len() int { return len(x.keys) }

// slot is where a probe for h starts; tag is what a slot keeps of h.
func (x *skIndex) slot(h uint64) uint64 { return h >> (64 - x.bits) }
func tag(h uint64) uint64               { return h & 0xffffffff00000000 }

// get returns the value of sk, whose hash is h.
func (x *skIndex) get(h uint64, sk []byte) (int32, bool) {
	if x.bits == 0 {
		return 0, false
	}
	mask := uint64(len(x.slots) - 1)
	for i := x.slot(h); ; i = (i + 1) & mask {
		s := x.slots[i]
		if s == 0 {
			return 0, false
		}
		if s&0xffffffff00000000 == tag(h) {
			if j := uint32(s) - 1; x.keys[j] == string(sk) {
				return x.vals[j], true
			}
		}
	}
}

// put adds sk, whose hash is h and which get does not find, with value v.
func (x *skIndex) put(h uint64, sk string, v int32) {
	if 4*(len(x.keys)+1) > 3*len(x.slots) {
		x.grow()
	}
	x.keys = append(x.keys, sk)
	x.vals = append(x.vals, v)
	x.place(h, uint32(len(x.keys)))
}

func (x *skIndex) place(h uint64, placePlus1 uint32) {
	mask := uint64(len(x.slots) - 1)
	i := x.slot(h)
	for x.slots[i] != 0 {
		i = (i + 1) & mask
	}
	x.slots[i] = tag(h) | uint64(placePlus1)
}

func (x *skIndex) grow() { x.resize(max(x.bits+1, 4)) }

// reserve makes room for n keys, to be put without growing.
func (x *skIndex) reserve(n int) {
	bits := uint(4)
	for 3<<bits < 4*n {
		bits++
	}
	if bits > x.bits {
		x.resize(bits)
	}
	x.keys = append(make([]string, 0, n), x.keys...)
	x.vals = append(make([]int32, 0, n), x.vals...)
}

func (x *skIndex) resize(bits uint) {
	x.bits = bits
	x.slots = make([]uint64, 1<<bits)
	for j, k := range x.keys {
		x.place(spanHash(k), uint32(j+1))
	}
}
