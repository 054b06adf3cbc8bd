// Package prefault maps in the pages of a big buffer on another core while
// the caller writes it. Where fresh memory is slow to fault in (about 10 µs
// a page on the virtual machines the benchmarks ran on), the first touch of
// each page, not the writing, is most of what filling a big buffer costs;
// two cores fault pages in about twice as fast as one.
package prefault

import (
	"errors"
	"os"
	"runtime"
	"slices"
	"sync/atomic"
	"unsafe"
)

// MinBytes is the smallest buffer Ahead works on: below it, the pages are
// too few for the work to pay.
const MinBytes = 2 << 20

// chunk is what one system call maps in: small enough that a stop waits
// for little (64 pages, under a millisecond), big enough that the calls
// cost nothing beside the faults.
const chunk = 256 << 10

// unsupported is set once the system has refused to map pages in, so that
// later calls do not start a goroutine for nothing.
var unsupported atomic.Bool

// Bytes returns the memory of s[:cap(s)], as Ahead takes it.
func Bytes[T any](s []T) []byte {
	n := uintptr(cap(s)) * unsafe.Sizeof(*new(T))
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s[:cap(s)]))), n)
}

// Ahead starts mapping in the pages of the buffers on another goroutine,
// one buffer after the other, each from its end backward (the caller is
// expected to write it from the front, and the two meet), and returns a
// function that stops that work and waits for it to end. The caller must
// call stop before it returns; calling it again does nothing.
//
// The contents of the buffers do not change, and the caller may read and
// write them meanwhile: the kernel maps the pages in (MADV_POPULATE_WRITE
// on Linux), nothing is written to them. Buffers under MinBytes are left
// out. Ahead does nothing when GOMAXPROCS is 1, and where the system cannot
// map pages in ahead (other systems than Linux, Linux before 5.14).
func Ahead(bufs ...[]byte) (stop func()) {
	if !slices.ContainsFunc(bufs, isBig) || runtime.GOMAXPROCS(0) < 2 || unsupported.Load() {
		return func() {}
	}
	big := slices.DeleteFunc(slices.Clone(bufs), func(b []byte) bool { return !isBig(b) })
	var halt atomic.Bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		// Other errors (a fatal signal pending) only end this call.
		if errors.Is(populateAll(big, &halt), errors.ErrUnsupported) {
			unsupported.Store(true)
		}
	}()
	return func() {
		halt.Store(true)
		<-done
	}
}

func isBig(b []byte) bool { return len(b) >= MinBytes }

// populateAll maps in the pages of the buffers in turn, until halt is set
// or the system refuses.
func populateAll(bufs [][]byte, halt *atomic.Bool) error {
	for _, b := range bufs {
		if err := populateBackward(b, halt); err != nil {
			return err
		}
	}
	return nil
}

// populateBackward maps in the whole pages of b, a chunk at a time from the
// end, until halt is set; it returns the system's refusal, if any.
func populateBackward(b []byte, halt *atomic.Bool) error {
	page := uintptr(os.Getpagesize())
	base := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	lo := int((base+page-1)&^(page-1) - base) // first whole page
	hi := int((base+uintptr(len(b)))&^(page-1) - base)
	for hi > lo && !halt.Load() {
		from := max(lo, hi-chunk)
		if err := populate(b[from:hi]); err != nil {
			return err
		}
		hi = from
	}
	return nil
}
