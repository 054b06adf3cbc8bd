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
	keys := make([]breakdownKey, 0, n)
	out := make([]LiveAllocation, n)
	// Both are written from the front once, keys before the sort and out
	// after it; another core maps their pages in meanwhile.
	stop := prefault.Ahead(prefault.Bytes(keys), prefault.Bytes(out))
	defer stop()
	for i := range int32(a.allocs.n) {
		if al := a.allocs.at(i); atPeak(al) {
			keys = append(keys, newBreakdownKey(al.ev))
		}
	}
	for i := range d.lostPeak {
		keys = append(keys, newBreakdownKey(&d.lostPeak[i]))
	}
	slices.SortFunc(keys, compareBreakdownKeys)

	opNames := make(map[string]*string) // one pointer per op name
	var last *string
	for i, k := range keys {
		ev, la := k.ev, &out[i]
		la.TensorID, la.SpanID, la.Bytes, la.Shape = ev.TensorID, ev.SpanID, ev.Bytes, ev.Shape
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

// breakdownKey orders the peak breakdown: bytes descending, then tensor id
// ascending. The id's first eight bytes are kept in the key, so that most
// comparisons read neither the event nor the id.
type breakdownKey struct {
	bytes  uint64
	prefix uint64 // the id's first 8 bytes, big-endian, zero-padded
	ev     *MemoryEvent
}

func newBreakdownKey(ev *MemoryEvent) breakdownKey {
	var b [8]byte
	copy(b[:], ev.TensorID)
	return breakdownKey{bytes: ev.Bytes, prefix: binary.BigEndian.Uint64(b[:]), ev: ev}
}

func compareBreakdownKeys(x, y breakdownKey) int {
	if x.bytes != y.bytes {
		return cmp.Compare(y.bytes, x.bytes)
	}
	if x.prefix != y.prefix {
		// Zero padding keeps byte order: a shorter id that the other one
		// does not extend differs from it within the first 8 bytes.
		return cmp.Compare(x.prefix, y.prefix)
	}
	return strings.Compare(x.ev.TensorID, y.ev.TensorID)
}
