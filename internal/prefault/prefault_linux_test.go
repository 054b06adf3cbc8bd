package prefault

import (
	"errors"
	"sync/atomic"
	"syscall"
	"testing"
)

// minorFaults returns the process's minor page faults so far.
func minorFaults(t *testing.T) int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return ru.Minflt
}

// touchFaults maps n fresh bytes, calls populateBackward on them when
// populated (halted first when halt), writes every page and returns the
// minor faults the writes took.
func touchFaults(t *testing.T, n int, populated, halt bool) int64 {
	b, err := syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(b)
	if populated {
		var h atomic.Bool
		h.Store(halt)
		err := populateBackward(b, &h)
		if errors.Is(err, errors.ErrUnsupported) {
			t.Skip("this kernel cannot map pages in ahead (MADV_POPULATE_WRITE)")
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	before := minorFaults(t)
	for i := 0; i < n; i += syscall.Getpagesize() {
		b[i] = 1
	}
	return minorFaults(t) - before
}

// TestPopulateMapsPages: after populateBackward, writing a fresh mapping
// faults (nearly) no page; without it, or halted before it began, every
// page faults once (which also shows that the count tells them apart).
func TestPopulateMapsPages(t *testing.T) {
	const n = 16 << 20
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
		got := touchFaults(t, n, c.populated, c.halt)
		if c.mapped && got > pages/10 {
			t.Errorf("%s: %d faults writing %d pages, want under %d", c.name, got, pages, pages/10)
		}
		if !c.mapped && got < pages/2 {
			t.Errorf("%s: %d faults writing %d pages, want at least %d", c.name, got, pages, pages/2)
		}
	}
}
