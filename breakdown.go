// breakdown.go holds the peak breakdown: the allocations live at the peak, and the order they are listed in.

package tracemem

import (
	"cmp"
	"encoding/binary"
	"slices"
	"strings"

	"github.com/tracemem/tracemem/internal/prefault"
)

// breakdown lists the allocations live on device dev at its peak: those
// still live that were made by then, and those freed since.
func (a *Analyzer) breakdown(dev int32) []LiveAllocation {
	d := &a.devices[dev]
	atPeak := func(al *liveAlloc) bool { return al.ev != nil && al.dev == dev && al.seq <= d.peak.seq }
	n := len(d.lostPeak)
	for i := range int32(a.allocs.n) {
		if atPeak(a.allocs.at(i)) {
			n++
		}
	}
	evs := make([]*MemoryEvent, 0, n)
	keys := make([]breakdownKey, 0, n)
	var tmp []breakdownKey
	if n >= radixMin {
		tmp = make([]breakdownKey, n)
	}
	out := make([]LiveAllocation, n)
	// Written in that order: evs and keys from the front before the sort,
	// tmp all over during it, out from the front after it; another core
	// maps their pages in meanwhile.
	stop := prefault.Ahead(prefault.Bytes(evs), prefault.Bytes(keys), prefault.Bytes(tmp), prefault.Bytes(out))
	defer stop()
	for i := range int32(a.allocs.n) {
		if al := a.allocs.at(i); atPeak(al) {
			keys = append(keys, newBreakdownKey(al.ev, len(evs)))
			evs = append(evs, al.ev)
		}
	}
	for i := range d.lostPeak {
		keys = append(keys, newBreakdownKey(&d.lostPeak[i], len(evs)))
		evs = append(evs, &d.lostPeak[i])
	}
	keys = sortBreakdownKeys(keys, tmp, evs)

	opNames := make(map[string]*string) // one pointer per op name
	var last *string
	for i, k := range keys {
		ev, la := evs[k.ev], &out[i]
		la.TensorID, la.SpanID, la.Bytes, la.Shape = ev.TensorID, ev.SpanID, ev.Bytes, ev.Shape
		if la.Shape == nil {
			la.Shape = scalarShape
		}
		la.DType, la.Device, la.Category = ev.DType, ev.Device, ev.Category
		if ev.OpName == "" {
			continue
		}
		if last == nil || *last != ev.OpName {
			if last = opNames[ev.OpName]; last == nil {
				last = new(string)
				*last = ev.OpName
				opNames[*last] = last
			}
		}
		la.OpName = last
	}
	return out
}

// scalarShape is the shape of an allocation whose event has none (a scalar,
// or unknown): empty, not nil, so that it is [] in JSON, not null. Its
// capacity is 0, so an append to it allocates: sharing it is safe.
var scalarShape = []uint64{}

// breakdownKey orders the peak breakdown: bytes descending, then tensor id
// ascending. The id's first eight bytes are kept in the key, so that most
// comparisons read neither the event nor the id. The event is an index, not
// a pointer: keys without pointers move without write barriers while the
// garbage collector marks (which a big breakdown's allocations set off, and
// which made moving keys with pointers four times slower), and are not
// scanned.
type breakdownKey struct {
	bytes  uint64
	prefix uint64 // the id's first 8 bytes, big-endian, zero-padded
	ev     int    // index of the alloc event in the list sorted
}

func newBreakdownKey(ev *MemoryEvent, i int) breakdownKey {
	var b [8]byte
	copy(b[:], ev.TensorID)
	return breakdownKey{bytes: ev.Bytes, prefix: binary.BigEndian.Uint64(b[:]), ev: i}
}

// compareBreakdownKeys returns the comparison of keys whose events are evs.
func compareBreakdownKeys(evs []*MemoryEvent) func(x, y breakdownKey) int {
	return func(x, y breakdownKey) int {
		if x.bytes != y.bytes {
			return cmp.Compare(y.bytes, x.bytes)
		}
		if x.prefix != y.prefix {
			// Zero padding keeps byte order: a shorter id that the other
			// one does not extend differs from it within the first 8 bytes.
			return cmp.Compare(x.prefix, y.prefix)
		}
		return strings.Compare(evs[x.ev].TensorID, evs[y.ev].TensorID)
	}
}

// radixMin is the fewest keys sortBreakdownKeys sorts by radix; below it a
// comparison sort is about as fast and needs no second buffer. Tests lower
// it to run the radix sort on small breakdowns.
var radixMin = 1 << 12

// sortBreakdownKeys sorts keys, whose events are evs, in breakdown order and
// returns them: keys itself, or tmp (at least len(keys) long, overwritten)
// when len(keys) ≥ radixMin. A breakdown can list every allocation of a
// trace whose memory only grows: for its 500k keys, measured alone, the
// radix sort takes 15 ms where slices.SortFunc takes 51 ms.
func sortBreakdownKeys(keys, tmp []breakdownKey, evs []*MemoryEvent) []breakdownKey {
	compare := compareBreakdownKeys(evs)
	if len(keys) < max(radixMin, 2) {
		slices.SortFunc(keys, compare)
		return keys
	}
	sorted := radixSortKeys(keys, tmp[:len(keys)])
	// The radix sort is stable and saw only bytes and prefix: keys equal in
	// both are still in input order, and their ids decide.
	for i := 0; i < len(sorted); {
		j := i + 1
		for j < len(sorted) && sorted[j].bytes == sorted[i].bytes && sorted[j].prefix == sorted[i].prefix {
			j++
		}
		if j-i > 1 {
			slices.SortFunc(sorted[i:j], compare)
		}
		i = j
	}
	return sorted
}

// radixSortKeys sorts keys by bytes descending, then prefix ascending,
// stably: least significant key byte first, 16 passes at most, between keys
// and tmp (both len(keys) long, len ≥ 1). A pass is skipped when every key
// has the same byte there, as the high bytes of sizes mostly are. It
// returns the slice that holds the result.
func radixSortKeys(keys, tmp []breakdownKey) []breakdownKey {
	// Byte d of the 16-byte sort key: d < 8 are the prefix's, from its
	// lowest; d ≥ 8 are those of ^bytes (descending sizes), from its lowest.
	var counts [16][256]int
	for i := range keys {
		p, b := keys[i].prefix, ^keys[i].bytes
		for d := range 8 {
			counts[d][byte(p>>(8*d))]++
			counts[8+d][byte(b>>(8*d))]++
		}
	}
	src, dst := keys, tmp
	for d := range counts {
		shift, high := 8*(d%8), d >= 8
		digit := func(k *breakdownKey) byte {
			if high {
				return byte(^k.bytes >> shift)
			}
			return byte(k.prefix >> shift)
		}
		c := &counts[d]
		if c[digit(&src[0])] == len(src) {
			continue // every key has this byte
		}
		var next [256]int
		sum := 0
		for v, n := range c {
			next[v] = sum
			sum += n
		}
		for i := range src {
			v := digit(&src[i])
			dst[next[v]] = src[i]
			next[v]++
		}
		src, dst = dst, src
	}
	return src
}
