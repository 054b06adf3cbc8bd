// breakdown_test.go tests the order of the peak breakdown.

package tracemem

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// TestBreakdownKeyOrder: the compact keys sort as bytes descending, then
// tensor id ascending, byte by byte: ids that share their first 8 bytes,
// ids that extend others, and ids with NUL bytes (which zero padding could
// confuse) included.
func TestBreakdownKeyOrder(t *testing.T) {
	alphabet := []string{"", "\x00", "a", "b", "ab", "a\x00", "abcdefgh", "abcdefghi", "abcdefgh\x00", "abcdefg", "abcdefgi", "\xff\xff\xff\xff\xff\xff\xff\xff\xff"}
	r := rand.New(rand.NewPCG(1, 2))
	var evs []MemoryEvent
	for range 2000 {
		id := alphabet[r.IntN(len(alphabet))] + alphabet[r.IntN(len(alphabet))]
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
			if got := compareBreakdownKeys(newBreakdownKey(x), newBreakdownKey(y)); got != want {
				t.Fatalf("compare(%q/%d, %q/%d) = %d, want %d", x.TensorID, x.Bytes, y.TensorID, y.Bytes, got, want)
			}
		}
	}
}
