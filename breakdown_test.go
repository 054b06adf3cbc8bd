// breakdown_test.go tests the order of the peak breakdown: its compact keys and its radix sort.

package tracemem

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tracemem/tracemem/internal/gen"
)

// idParts make ids that tie on their first 8 bytes, extend one another, or
// hold NUL bytes, which the zero padding of breakdownKey.prefix could
// confuse; tests join two of them.
var idParts = []string{"", "\x00", "a", "b", "ab", "a\x00", "abcdefgh", "abcdefghi", "abcdefgh\x00", "abcdefg", "abcdefgi", "\xff\xff\xff\xff\xff\xff\xff\xff\xff"}

// TestBreakdownKeyOrder: the compact keys sort as bytes descending, then
// tensor id ascending, byte by byte: ids that share their first 8 bytes,
// ids that extend others, and ids with NUL bytes (which zero padding could
// confuse) included.
func TestBreakdownKeyOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var evs []MemoryEvent
	for range 2000 {
		id := idParts[r.IntN(len(idParts))] + idParts[r.IntN(len(idParts))]
		evs = append(evs, MemoryEvent{TensorID: id, Bytes: uint64(r.IntN(3))})
	}
	for i := range evs {
		for j := range evs {
			x, y := &evs[i], &evs[j]
			want := 0
			switch {
			case x.Bytes > y.Bytes:
				want = -1
			case x.Bytes < y.Bytes:
				want = 1
			default:
				want = strings.Compare(x.TensorID, y.TensorID)
			}
			if got := compareBreakdownKeys([]*MemoryEvent{x, y})(newBreakdownKey(x, 0), newBreakdownKey(y, 1)); got != want {
				t.Fatalf("compare(%q/%d, %q/%d) = %d, want %d", x.TensorID, x.Bytes, y.TensorID, y.Bytes, got, want)
			}
		}
	}
}

// withRadixMin runs f with radixMin set to n.
func withRadixMin(n int, f func()) {
	defer func(old int) { radixMin = old }(radixMin)
	radixMin = n
	f()
}

// TestSortBreakdownKeys: sortBreakdownKeys, by radix or not, orders keys as
// slices.SortFunc with compareBreakdownKeys does, for key sets that tie on
// sizes, on id prefixes (ids longer than 8 bytes, NUL bytes that zero
// padding could confuse), on whole keys, and that vary in every byte of the
// sort key (so that no radix pass is skipped).
func TestSortBreakdownKeys(t *testing.T) {
	kinds := []struct {
		name  string
		bytes func(r *rand.Rand) uint64
		id    func(r *rand.Rand) string
	}{
		{"few sizes, tricky ids", func(r *rand.Rand) uint64 { return []uint64{0, 1, 2, 1 << 40, ^uint64(0)}[r.IntN(5)] },
			func(r *rand.Rand) string { return idParts[r.IntN(len(idParts))] + idParts[r.IntN(len(idParts))] }},
		{"any size, numbered ids", func(r *rand.Rand) uint64 { return r.Uint64() >> r.IntN(64) },
			func(r *rand.Rand) string { return fmt.Sprintf("t%d", r.IntN(1_000_000_000)) }},
		{"every key byte varies", func(r *rand.Rand) uint64 { return r.Uint64() },
			func(r *rand.Rand) string {
				return string(binary.LittleEndian.AppendUint64(nil, r.Uint64())) + idParts[r.IntN(len(idParts))]
			}},
		{"one size, one id", func(*rand.Rand) uint64 { return 7 }, func(*rand.Rand) string { return "same" }},
	}
	r := rand.New(rand.NewPCG(3, 4))
	for _, kind := range kinds {
		for _, n := range []int{0, 1, 2, 3, 17, 300, 5000} {
			for _, rmin := range []int{2, radixMin} {
				evs := make([]*MemoryEvent, n)
				keys := make([]breakdownKey, n)
				for i := range evs {
					evs[i] = &MemoryEvent{TensorID: kind.id(r), Bytes: kind.bytes(r)}
					keys[i] = newBreakdownKey(evs[i], i)
				}
				want := slices.Clone(keys)
				slices.SortFunc(want, compareBreakdownKeys(evs))
				var got []breakdownKey
				withRadixMin(rmin, func() { got = sortBreakdownKeys(keys, make([]breakdownKey, n), evs) })
				if diff := cmp.Diff(sortedView(want, evs), sortedView(got, evs)); diff != "" {
					t.Fatalf("%s, %d keys, radixMin %d: order differs (-want +got):\n%s", kind.name, n, rmin, diff)
				}
			}
		}
	}
}

// sortedView lists what the order of keys shows: sizes and ids (keys equal
// in both may come in any order).
func sortedView(keys []breakdownKey, evs []*MemoryEvent) []string {
	v := make([]string, len(keys))
	for i, k := range keys {
		v[i] = fmt.Sprintf("%d %q", evs[k.ev].Bytes, evs[k.ev].TensorID)
	}
	return v
}

// TestBreakdownRadixMatchesComparison: the profile of a trace whose peak
// breakdown lists thousands of allocations (memory only grows) is the same
// whether the breakdown is sorted by radix (the default at that size) or by
// comparison.
func TestBreakdownRadixMatchesComparison(t *testing.T) {
	doc := genDoc(t, gen.Config{Seed: 5, MemoryEvents: 20_000, Devices: 2, SteadyGrowth: true})
	var radix, comparison *MemoryProfile
	radix = AnalyzeMemory(doc)
	withRadixMin(len(doc.Memory)+1, func() { comparison = AnalyzeMemory(doc) })
	if len(radix.PeakBreakdown) < radixMin {
		t.Fatalf("the breakdown lists %d allocations, too few for the radix sort (%d)", len(radix.PeakBreakdown), radixMin)
	}
	if diff := cmp.Diff(comparison, radix); diff != "" {
		t.Fatalf("the profile differs (-comparison +radix):\n%s", diff)
	}
}

// TestBreakdownSharesOpNames: entries of one breakdown with the same op
// name share the pointer, as LiveAllocation.OpName says; entries without
// one have nil.
func TestBreakdownSharesOpNames(t *testing.T) {
	doc := &TraceDocument{Memory: []MemoryEvent{
		{TimestampNs: 1, TensorID: "a", Device: "d", Bytes: 300, OpName: "x"},
		{TimestampNs: 2, TensorID: "b", Device: "d", Bytes: 200, OpName: "y"},
		{TimestampNs: 3, TensorID: "c", Device: "d", Bytes: 100, OpName: "x"},
		{TimestampNs: 4, TensorID: "e", Device: "d", Bytes: 50},
	}}
	bd := AnalyzeMemory(doc).PeakBreakdown
	if len(bd) != 4 || bd[0].OpName == nil || bd[2].OpName == nil || bd[1].OpName == nil {
		t.Fatalf("breakdown %+v, want a, b, c with op names, then e", bd)
	}
	if bd[0].OpName != bd[2].OpName || *bd[0].OpName != "x" || *bd[1].OpName != "y" || bd[3].OpName != nil {
		t.Errorf("op names %v %v %v %v: want the two x entries to share one pointer, e none", bd[0].OpName, bd[1].OpName, bd[2].OpName, bd[3].OpName)
	}
}
