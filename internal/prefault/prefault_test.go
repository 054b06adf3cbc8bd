package prefault

import (
	"testing"
	"unsafe"
)

// TestAheadKeepsContents: the buffer is written while its pages are mapped
// in, and read back whole; under the race detector this also shows that
// the helper makes no access Go can see.
func TestAheadKeepsContents(t *testing.T) {
	for _, c := range []struct {
		name  string
		n     int // elements
		reuse bool
	}{
		{"fresh", 8 << 20 / 8, false},
		{"written before", 8 << 20 / 8, true},
		{"under MinBytes", MinBytes / 8 / 2, false},
		{"odd size", MinBytes/8*3 + 13, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := make([]uint64, 0, c.n)
			if c.reuse {
				s = s[:c.n]
				for i := range s {
					s[i] = ^uint64(i)
				}
				s = s[:0]
			}
			stop := Ahead(Bytes(s), make([]byte, MinBytes))
			for i := range c.n {
				s = append(s, uint64(i)*3)
			}
			stop()
			stop() // a second call does nothing
			for i, v := range s {
				if v != uint64(i)*3 {
					t.Fatalf("s[%d] = %d, want %d", i, v, uint64(i)*3)
				}
			}
		})
	}
}

// TestWhole: the part returned lies in b, starts on a block boundary, is
// whole blocks long, and leaves less than a block at either end (so it is
// the largest such part); nil when b holds no whole block.
func TestWhole(t *testing.T) {
	mem := make([]byte, 1<<16)
	for _, size := range []int{1, 64, 4096} {
		for _, off := range []int{0, 1, 63, 64, 100, 4095, 4096} {
			for _, n := range []int{0, 1, 63, 64, 65, 4096, 8191, 8192, 12345} {
				b := mem[off : off+n]
				w := whole(b, size)
				base := uintptr(unsafe.Pointer(unsafe.SliceData(mem)))
				bStart, bEnd := base+uintptr(off), base+uintptr(off+n)
				if len(w) == 0 {
					// No block boundary pair inside b.
					first := (bStart + uintptr(size) - 1) &^ uintptr(size-1)
					if first+uintptr(size) <= bEnd {
						t.Errorf("size %d, b at %d+%d: no whole block returned, but one fits at %d", size, off, n, first-base)
					}
					continue
				}
				wStart := uintptr(unsafe.Pointer(unsafe.SliceData(w)))
				wEnd := wStart + uintptr(len(w))
				switch {
				case wStart < bStart || wEnd > bEnd:
					t.Errorf("size %d, b at %d+%d: result [%d, %d) outside b", size, off, n, wStart-base, wEnd-base)
				case wStart%uintptr(size) != 0 || len(w)%size != 0:
					t.Errorf("size %d, b at %d+%d: result [%d, %d) not whole blocks", size, off, n, wStart-base, wEnd-base)
				case wStart-bStart >= uintptr(size) || bEnd-wEnd >= uintptr(size):
					t.Errorf("size %d, b at %d+%d: result [%d, %d) leaves a whole block out", size, off, n, wStart-base, wEnd-base)
				}
			}
		}
	}
}

// TestBytes: Bytes spans the whole capacity of s, in bytes (found by
// mutation: capacity divided by the element size went unnoticed).
func TestBytes(t *testing.T) {
	for _, c := range []struct {
		name string
		got  []byte
		want int
	}{
		{"uint64", Bytes(make([]uint64, 3, 10)), 80},
		{"bytes", Bytes(make([]byte, 0, 7)), 7},
		{"empty", Bytes([]uint32(nil)), 0},
	} {
		if len(c.got) != c.want {
			t.Errorf("%s: %d bytes, want %d", c.name, len(c.got), c.want)
		}
	}
}
