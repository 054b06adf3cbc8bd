// intern.go holds the per-read interner of strings and shapes that repeat across records.

package tracemem

// interner hands out shared copies of strings and shapes seen during one
// read, so that a million records naming "cuda:0" hold one "cuda:0".
//
// Strings go through a direct-mapped cache (a hash picks one slot; a hit
// is a comparison, a miss copies the bytes and takes the slot). Values that
// recur (devices, dtypes, span ids, op names, a tensor id of an alloc and
// its free) are shared as long as no other value took their slot in the
// meantime; the table grows with the number of distinct values up to
// maxInternSlots, so memory stays bounded and lookups stay in cache even
// for millions of distinct tensor ids. Lookups do not allocate.
//
// Shapes are interned by their raw JSON text in a map (shapes are few; the
// map is emptied when it reaches the slot bound).
// It is not safe for concurrent use; the values it returns are immutable
// and may be kept after the interner is dropped.
type interner struct {
	slots  []string
	misses int
	shapes map[string][]uint64 // keyed by the shape's raw JSON text
}

const (
	minInternSlots = 1 << 10
	maxInternSlots = 1 << 16
)

func newInterner() *interner {
	return &interner{
		slots:  make([]string, minInternSlots),
		shapes: make(map[string][]uint64, 64),
	}
}

// bytes returns a string equal to b, shared with earlier calls when the
// cache still holds it.
func (in *interner) bytes(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	slot := &in.slots[hashBytes(b)&uint64(len(in.slots)-1)]
	if *slot == string(b) { // no allocation for the comparison
		return *slot
	}
	s := string(b)
	*slot = s
	if in.misses++; in.misses > 4*len(in.slots) && len(in.slots) < maxInternSlots {
		in.grow()
	}
	return s
}

// grow doubles the table, keeping the cached strings.
func (in *interner) grow() {
	old := in.slots
	in.slots = make([]string, 2*len(old))
	for _, s := range old {
		if s != "" {
			in.slots[hashBytes([]byte(s))&uint64(len(in.slots)-1)] = s
		}
	}
	in.misses = 0
}

// shape returns the interned shape for the raw JSON array text raw, calling
// parse on the first sight of that text. A parse error is returned as is and
// nothing is stored.
func (in *interner) shape(raw []byte, parse func([]byte) ([]uint64, error)) ([]uint64, error) {
	if s, ok := in.shapes[string(raw)]; ok {
		return s, nil
	}
	s, err := parse(raw)
	if err != nil {
		return nil, err
	}
	if len(in.shapes) >= maxInternSlots {
		clear(in.shapes) // a stream of distinct shapes does not grow the map without bound
	}
	in.shapes[string(raw)] = s
	return s, nil
}

// hashBytes is FNV-1a with a final mix: deterministic, so that which
// strings share memory does not change from run to run.
func hashBytes(b []byte) uint64 {
	h := uint64(14695981039346656037)
	for _, c := range b {
		h ^= uint64(c)
		h *= 1099511628211
	}
	h ^= h >> 29
	h *= 0xbf58476d1ce4e5b9
	return h ^ h>>32
}
