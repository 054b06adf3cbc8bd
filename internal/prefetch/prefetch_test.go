package prefetch

import (
	"testing"
	"unsafe"
)

// TestLine: prefetching any address in a slice, its ends included, neither
// faults nor changes it.
func TestLine(t *testing.T) {
	s := make([]uint64, 1024)
	for i := range s {
		s[i] = uint64(i)
	}
	for i := range s {
		Line(unsafe.Pointer(&s[i]))
	}
	for i := range s {
		if s[i] != uint64(i) {
			t.Fatalf("s[%d] = %d after prefetch", i, s[i])
		}
	}
}
