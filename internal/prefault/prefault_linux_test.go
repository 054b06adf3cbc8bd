package prefault

import (
	"errors"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
	"unsafe"
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
		return int64(ru.Minflt) // int32 on 32-bit systems
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
			if errors.Is(err, errors.ErrUnsupported) && !systemPopulates(t) {
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

// TestPopulateBackward: a buffer is mapped in from its end: with its first
// chunk unmapped (so that populating it fails, ENOMEM), the call fails only
// after it has mapped in the rest (from a test audit: a forward walk passed
// every test, as the tests map whole buffers or stop at once).
func TestPopulateBackward(t *testing.T) {
	const n = 4 * chunk
	b := fresh(t, n)
	// Directly: syscall.Munmap takes whole mappings only. The cleanup's
	// Munmap of all of b still works.
	if _, _, errno := syscall.Syscall(syscall.SYS_MUNMAP, uintptr(unsafe.Pointer(&b[0])), chunk, 0); errno != 0 {
		t.Fatal(errno)
	}
	var halt atomic.Bool
	err := populateBackward(b, &halt)
	if errors.Is(err, errors.ErrUnsupported) {
		t.Skip("this kernel cannot map pages in ahead (MADV_POPULATE_WRITE)")
	}
	if err == nil {
		t.Fatal("populating a buffer whose first chunk is unmapped did not fail")
	}
	rest := b[chunk:]
	pages := int64(len(rest) / syscall.Getpagesize())
	if got := writeFaults(t, rest); got > pages/10 {
		t.Errorf("%d faults writing the %d pages after the unmapped chunk, want under %d: they were not mapped in before it", got, pages, pages/10)
	}
}

// systemPopulates reports whether this system maps pages in ahead: a raw
// MADV_POPULATE_WRITE on a fresh page, not populate, so that a populate
// that called a success unsupported is caught, not skipped (found by
// mutation: the tests skipped whenever populate said unsupported).
func systemPopulates(t *testing.T) bool {
	t.Helper()
	b := fresh(t, syscall.Getpagesize())
	return syscall.Madvise(b, madvPopulateWrite) == nil
}

// TestAheadHelper: with two procs, a buffer of exactly MinBytes gets a
// helper, which maps its pages in and then ends by itself (no stop
// needed); with GOMAXPROCS 1 no helper runs, and every page still faults
// when written (found by mutation: MinBytes itself left out, the helper
// kept off at two procs or run at one, and a helper that went on past
// the buffer's start, which the system refused, so that no later call got
// a helper, all went unnoticed).
func TestAheadHelper(t *testing.T) {
	for _, c := range []struct {
		name   string
		procs  int
		mapped bool
		why    string
	}{
		{"two procs", 2, true, "the helper maps a buffer of MinBytes in and ends"},
		{"two procs again", 2, true, "a helper that mapped its buffers in leaves the next call one too"},
		{"one proc", 1, false, "no helper with GOMAXPROCS 1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			// Asked before Ahead: the helper says unsupported only once
			// it has run, which a check after Ahead could come before.
			if c.mapped && !systemPopulates(t) {
				t.Skip("this kernel cannot map pages in ahead (MADV_POPULATE_WRITE)")
			}
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(c.procs))
			pages := int64(MinBytes / syscall.Getpagesize())
			// Pages mapped in can still fault when written if the system
			// takes them back meanwhile (under a storm of compiles, as
			// `go test ./...` makes, 1 run in 300 saw every page fault),
			// so a mapped buffer gets three tries; a helper that never
			// maps pages in fails all three.
			var faults []int64
			for range 3 {
				b := fresh(t, MinBytes)
				n0 := runtime.NumGoroutine()
				stop := Ahead(b)
				if c.mapped {
					deadline := time.Now().Add(20 * time.Second)
					for runtime.NumGoroutine() > n0 {
						if time.Now().After(deadline) {
							stop()
							t.Fatalf("%s: the helper still runs after 20 s", c.why)
						}
						time.Sleep(time.Millisecond)
					}
				} else {
					time.Sleep(100 * time.Millisecond) // time a helper would use
				}
				got := writeFaults(t, b)
				stop()
				faults = append(faults, got)
				if !c.mapped || got <= pages/10 {
					break
				}
			}
			if got := faults[len(faults)-1]; c.mapped && got > pages/10 {
				t.Errorf("%s: %v faults writing %d pages in %d tries, want under %d", c.why, faults, pages, len(faults), pages/10)
			}
			if got := faults[0]; !c.mapped && got < pages/2 {
				t.Errorf("%s: %d faults writing %d pages, want at least %d", c.why, got, pages, pages/2)
			}
		})
	}
}

// TestHugeSizeMode: where the system gives huge pages only when asked and
// GODEBUG leaves them on, Ahead asks (TestAheadAdvisesHugePages skips
// otherwise; found by mutation: a hugeSize of 0 in madvise mode passed).
func TestHugeSizeMode(t *testing.T) {
	enabled, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if err != nil || !asksForTHP(string(enabled)) || disablesTHP(os.Getenv("GODEBUG")) {
		t.Skip("huge pages are not given only on request here")
	}
	if size := hugeSize(); size <= 0 || size&(size-1) != 0 {
		t.Errorf("hugeSize() = %d in madvise mode, want a power of two", size)
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

func TestAsksForTHP(t *testing.T) {
	for _, c := range []struct {
		enabled string
		want    bool
		why     string
	}{
		{"always [madvise] never\n", true, "huge pages only where asked: ask"},
		{"[always] madvise never\n", false, "every mapping gets them already"},
		{"always madvise [never]\n", false, "asking gets nothing"},
		{"", false, "no such file content: do not ask"},
	} {
		if got := asksForTHP(c.enabled); got != c.want {
			t.Errorf("asksForTHP(%q) = %v, want %v: %s", c.enabled, got, c.want, c.why)
		}
	}
}

// TestPmdSize: the huge-page size is read from the system's file; text that
// is not a power of two falls back to 2 MiB (the machine the tests run on
// says 2 MiB, so only this table tells a misread from the default).
func TestPmdSize(t *testing.T) {
	for _, c := range []struct {
		text string
		want int
		why  string
	}{
		{"2097152\n", 2 << 20, "x86-64's size, as the file ends it"},
		{"33554432\n", 32 << 20, "arm64 with 16 KiB pages: read, not assumed"},
		{" 524288 \n", 512 << 10, "white space around the number"},
		{"", 2 << 20, "no file: the default"},
		{"0\n", 2 << 20, "0 is no size (and 0&(0-1) is 0)"},
		{"-4096\n", 2 << 20, "negative"},
		{"3145728\n", 2 << 20, "3 MiB is not a power of two"},
		{"2M\n", 2 << 20, "not a number"},
	} {
		if got := pmdSize(c.text); got != c.want {
			t.Errorf("pmdSize(%q) = %d, want %d: %s", c.text, got, c.want, c.why)
		}
	}
}

func TestDisablesTHP(t *testing.T) {
	for _, c := range []struct {
		godebug string
		want    bool
		why     string
	}{
		{"", false, "nothing set"},
		{"disablethp=1", true, "set"},
		{"gctrace=1,disablethp=1", true, "among others"},
		{"disablethp=0", false, "set to 0"},
		{"disablethp=1,disablethp=0", false, "the last setting wins"},
		{"disablethp=0,disablethp=1", true, "the last setting wins"},
		{"disablethp=x", false, "not a number: ignored, as by the runtime"},
		{"xdisablethp=1", false, "another setting"},
	} {
		if got := disablesTHP(c.godebug); got != c.want {
			t.Errorf("disablesTHP(%q) = %v, want %v: %s", c.godebug, got, c.want, c.why)
		}
	}
}

// vmFlags returns the VmFlags of the mapping that holds p, from
// /proc/self/smaps ("rd wr mr mw me ac hg": hg is MADV_HUGEPAGE, nh
// MADV_NOHUGEPAGE), and its AnonHugePages in kB.
func vmFlags(t *testing.T, p uintptr) (flags []string, hugeKB int) {
	t.Helper()
	data, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		t.Skipf("no smaps: %v", err)
	}
	in := false
	for line := range strings.Lines(string(data)) {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if lo, hi, ok := strings.Cut(f[0], "-"); ok && !strings.HasSuffix(f[0], ":") {
			l, err1 := strconv.ParseUint(lo, 16, 64)
			h, err2 := strconv.ParseUint(hi, 16, 64)
			in = err1 == nil && err2 == nil && uint64(p) >= l && uint64(p) < h
			continue
		}
		if !in {
			continue
		}
		switch f[0] {
		case "AnonHugePages:":
			hugeKB, _ = strconv.Atoi(f[1])
		case "VmFlags:":
			return f[1:], hugeKB
		}
	}
	t.Fatalf("no mapping holds %#x", p)
	return nil, 0
}

// TestAheadAdvisesHugePages: where huge pages come only when asked, the
// whole huge-page blocks of a buffer of HugeMinBytes or more ask for them
// until stop, and then say no, with GOMAXPROCS 1 (no helper) too; a smaller
// buffer is left alone; the contents are kept.
func TestAheadAdvisesHugePages(t *testing.T) {
	size := hugeSize()
	if size == 0 {
		t.Skip("this system gives huge pages without asking, or never (or GODEBUG disablethp=1)")
	}
	for _, c := range []struct {
		name  string
		n     int
		procs int
		want  bool // advised until stop
	}{
		{"big", HugeMinBytes + 2*size, 2, true},
		{"big, GOMAXPROCS=1", HugeMinBytes + 2*size, 1, true},
		{"exactly HugeMinBytes", HugeMinBytes, 2, true}, // found by mutation
		{"under HugeMinBytes", HugeMinBytes - size, 2, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(c.procs))
			b, err := syscall.Mmap(-1, 0, c.n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
			if err != nil {
				t.Fatal(err)
			}
			defer syscall.Munmap(b)
			blocks := whole(b, size)
			if len(blocks) == 0 {
				t.Fatalf("no whole block in %d bytes", c.n)
			}
			p := uintptr(unsafe.Pointer(&blocks[0]))
			stop := Ahead(b)
			if flags, _ := vmFlags(t, p); slices.Contains(flags, "hg") != c.want {
				t.Errorf("before stop: VmFlags %v, want hg: %v", flags, c.want)
			}
			for i := range b {
				b[i] = byte(i)
			}
			_, hugeKB := vmFlags(t, p)
			t.Logf("%d kB of huge pages in the mapping", hugeKB)
			stop()
			if flags, _ := vmFlags(t, p); slices.Contains(flags, "hg") || slices.Contains(flags, "nh") != c.want {
				t.Errorf("after stop: VmFlags %v, want nh: %v, and not hg", flags, c.want)
			}
			for i := range b {
				if b[i] != byte(i) {
					t.Fatalf("b[%d] = %d, want %d", i, b[i], byte(i))
				}
			}
		})
	}
}

// TestPending: Pending counts the Ahead calls with work whose stop has not
// been called, with a helper and without one (GOMAXPROCS 1), once per stop
// however often it is called; calls without work count for nothing.
func TestPending(t *testing.T) {
	b := fresh(t, 4*MinBytes)
	before := Pending()
	for _, procs := range []int{2, 1} {
		old := runtime.GOMAXPROCS(procs)
		stop := Ahead(b)
		small := Ahead(make([]byte, MinBytes-1))
		if n := Pending() - before; n != 1 {
			t.Errorf("GOMAXPROCS %d: Pending = %d after one Ahead with work, want 1", procs, n)
		}
		stop()
		stop()
		small()
		if n := Pending() - before; n != 0 {
			t.Errorf("GOMAXPROCS %d: Pending = %d after stop, want 0", procs, n)
		}
		runtime.GOMAXPROCS(old)
	}
}
