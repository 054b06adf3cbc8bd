// Package prefault maps in the pages of a big buffer on another core while
// the caller writes it, on huge pages where the system gives them on
// request. Where fresh memory is slow to fault in (about 10 µs a page on
// the virtual machines the benchmarks ran on), the first touch of each
// page, not the writing, is most of what filling a big buffer costs; two
// cores fault pages in about twice as fast as one, and a huge page maps in
// 512 pages with one fault.
package prefault

import (
	"errors"
	"os"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"
)

// MinBytes is the smallest buffer Ahead works on: below it, the pages are
// too few for the work to pay.
const MinBytes = 2 << 20

// HugeMinBytes is the smallest buffer Ahead asks huge pages for: a smaller
// one holds few whole huge pages, and the two system calls of the advice,
// which split the mapping, cost about what the faults saved (the readers'
// 4 MB chunks were read 2.5% slower with it).
const HugeMinBytes = 8 << 20

// chunk is what one system call maps in: small enough that a stop waits
// for little (64 pages, under a millisecond), big enough that the calls
// cost nothing beside the faults.
const chunk = 256 << 10

// unsupported is set once the system has refused to map pages in, so that
// later calls do not start a goroutine for nothing.
var unsupported atomic.Bool

// pending counts the calls of Ahead given a buffer of MinBytes or more
// (whether or not a helper or advice then ran) whose stop has not been
// called.
var pending atomic.Int64

// Pending returns the number of Ahead calls given a buffer of MinBytes or
// more whose stop has not been called yet: for tests that a caller stops
// every helper it starts, on error paths too, also where none runs (one
// core, another system).
func Pending() int64 { return pending.Load() }

// Bytes returns the memory of s[:cap(s)], as Ahead takes it.
func Bytes[T any](s []T) []byte {
	n := uintptr(cap(s)) * unsafe.Sizeof(*new(T))
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s[:cap(s)]))), n)
}

// Ahead starts mapping in the pages of the buffers on another goroutine,
// one buffer after the other, each from its end backward (the caller is
// expected to write it from the front, and the two meet), and returns a
// function that stops that work and waits for it to end. The caller should
// call stop once it has written the buffers; calling it again does
// nothing. (A stop never called leaves the helper to end by itself once it
// has mapped the buffers in, and the huge-page advice below in place.)
//
// Where the system gives huge pages only to memory that asks for them
// (Linux with transparent huge pages in "madvise" mode), Ahead also asks
// for them on the whole huge-page blocks (2 MiB on x86-64) of the buffers
// of HugeMinBytes or more, until stop: one fault then maps in 512 pages.
// Stop replaces the advice with its opposite (MADV_NOHUGEPAGE: Linux has no
// call that removes an advice), so that the kernel does not later rebuild
// huge pages out of memory the Go runtime has returned (the cause of the
// runtime's own retreat from MADV_HUGEPAGE in Go 1.21.1). The blocks stay
// marked so, in mappings of their own (each at least a huge page; they
// merge with neighbours marked the same): in that mode memory that did not
// ask gets no huge pages either, so the mark changes nothing else for the
// Go runtime, which since Go 1.21.1 does not ask. GODEBUG=disablethp=1
// turns the advice off, as it does the runtime's.
//
// The contents of the buffers do not change, and the caller may read and
// write them meanwhile: the kernel maps the pages in (MADV_POPULATE_WRITE
// on Linux), nothing is written to them. Buffers under MinBytes are left
// out. The helper does not run when GOMAXPROCS is 1, nor, after a first
// call whose helper fails at once, where the system cannot map pages in
// ahead (other systems than Linux, Linux before 5.14).
func Ahead(bufs ...[]byte) (stop func()) {
	if !slices.ContainsFunc(bufs, isBig) {
		return func() {}
	}
	big := slices.DeleteFunc(slices.Clone(bufs), func(b []byte) bool { return !isBig(b) })
	unadvise := adviseHuge(slices.DeleteFunc(slices.Clone(big), func(b []byte) bool { return len(b) < HugeMinBytes }))
	pending.Add(1)
	if runtime.GOMAXPROCS(0) < 2 || unsupported.Load() {
		return sync.OnceFunc(func() {
			unadvise()
			pending.Add(-1)
		})
	}
	var halt atomic.Bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		// Other errors (a fatal signal pending) only end this call.
		if errors.Is(populateAll(big, &halt), errors.ErrUnsupported) {
			unsupported.Store(true)
		}
	}()
	return sync.OnceFunc(func() {
		halt.Store(true)
		<-done
		unadvise()
		pending.Add(-1)
	})
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
	b = whole(b, os.Getpagesize())
	for hi := len(b); hi > 0 && !halt.Load(); {
		from := max(0, hi-chunk)
		if err := populate(b[from:hi]); err != nil {
			return err
		}
		hi = from
	}
	return nil
}

// whole returns the part of b made of whole blocks of size bytes (a power
// of two), aligned on their size; it is empty when b holds none.
func whole(b []byte, size int) []byte {
	mask := uintptr(size - 1)
	base := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	lo := int((base+mask)&^mask - base)
	hi := int((base+uintptr(len(b)))&^mask - base)
	if hi <= lo {
		return nil
	}
	return b[lo:hi]
}
