package prefault

import (
	"errors"
	"runtime"
	"sync/atomic"
	"syscall"
	"testing"
)

// fresh returns n bytes of memory the process has not touched.
func fresh(t *testing.T, n int) []byte {
	b, err := syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Munmap(b) })
	// Pages of the base size, so that a fault is a page even where
	// transparent huge pages are on for every mapping.
	if err := syscall.Madvise(b, syscall.MADV_NOHUGEPAGE); err != nil {
		t.Logf("MADV_NOHUGEPAGE: %v", err)
	}
	return b
}

// writeFaults writes every page of b and returns the minor page faults the
// process took meanwhile.
func writeFaults(t *testing.T, b []byte) int64 {
	minor := func() int64 {
		var ru syscall.Rusage
		if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
			t.Fatal(err)
		}
		return ru.Minflt
	}
	before := minor()
	for i := 0; i < len(b); i += syscall.Getpagesize() {
		b[i] = 1
	}
	return minor() - before
}

// TestPopulateMapsPages: after populateAll, writing fresh memory faults
// (nearly) no page, in every buffer given; without it, or halted before it
// began, every page faults once (which also shows that the count tells the
// two apart).
func TestPopulateMapsPages(t *testing.T) {
	const n = 8 << 20
	pages := int64(n / syscall.Getpagesize())
	for _, c := range []struct {
		name            string
		populated, halt bool
		mapped          bool // the pages should be mapped in before the writes
	}{
		{"populated", true, false, true},
		{"not populated", false, false, false},
		{"halted", true, true, false},
	} {
		bufs := [][]byte{fresh(t, n), fresh(t, n)}
		if c.populated {
			var halt atomic.Bool
			halt.Store(c.halt)
			err := populateAll(bufs, &halt)
			if errors.Is(err, errors.ErrUnsupported) {
				t.Skip("this kernel cannot map pages in ahead (MADV_POPULATE_WRITE)")
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		for i, b := range bufs {
			got := writeFaults(t, b)
			if c.mapped && got > pages/10 {
				t.Errorf("%s: buffer %d: %d faults writing %d pages, want under %d", c.name, i, got, pages, pages/10)
			}
			if !c.mapped && got < pages/2 {
				t.Errorf("%s: buffer %d: %d faults writing %d pages, want at least %d", c.name, i, got, pages, pages/2)
			}
		}
	}
}

// TestAheadStops: stop ends the helper promptly: called at once on 128 MB
// of fresh memory (about 0.3 s of work here), it leaves most pages to fault
// when written. A helper that ignored it would have mapped them all in by
// the time stop returned.
func TestAheadStops(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		t.Skip("Ahead does nothing with GOMAXPROCS 1")
	}
	const n = 128 << 20
	b := fresh(t, n)
	Ahead(b)()
	if unsupported.Load() {
		t.Skip("this kernel cannot map pages in ahead (MADV_POPULATE_WRITE)")
	}
	pages := int64(n / syscall.Getpagesize())
	if got := writeFaults(t, b); got < pages/2 {
		t.Errorf("%d of %d pages faulted after an immediate stop, want at least half", got, pages)
	}
}
