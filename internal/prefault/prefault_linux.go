package prefault

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// madvPopulateWrite is MADV_POPULATE_WRITE (Linux 5.14): fault the pages in
// as if written, without writing them.
const madvPopulateWrite = 23

// populate maps in b's pages; b starts and ends on a page boundary. Older
// kernels reject the advice as invalid.
func populate(b []byte) error {
	err := syscall.Madvise(b, madvPopulateWrite)
	if err == syscall.EINVAL {
		return errors.ErrUnsupported
	}
	return err
}

// hugeSize is the size of the huge pages Ahead asks for, 0 when it should
// not ask: the system gives them without asking ("always"), never gives
// them ("never"), or GODEBUG keeps the heap off them.
var hugeSize = sync.OnceValue(func() int {
	if disablesTHP(os.Getenv("GODEBUG")) {
		return 0
	}
	enabled, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if err != nil || !asksForTHP(string(enabled)) {
		return 0
	}
	// A file that cannot be read gives "", and so the default.
	b, _ := os.ReadFile("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size")
	return pmdSize(string(b))
})

// pmdSize reads the text of /sys/kernel/mm/transparent_hugepage/hpage_pmd_size,
// a huge page's size in bytes; 2 MiB (x86-64's, and arm64's with 4 KiB pages)
// when the text is not a power of two.
func pmdSize(text string) int {
	if n, err := strconv.Atoi(strings.TrimSpace(text)); err == nil && n > 0 && n&(n-1) == 0 {
		return n
	}
	return 2 << 20
}

// asksForTHP reports whether the mode in
// /sys/kernel/mm/transparent_hugepage/enabled ("always [madvise] never",
// the chosen one in brackets) gives huge pages only to memory that asks.
func asksForTHP(enabled string) bool { return strings.Contains(enabled, "[madvise]") }

// disablesTHP reports whether a GODEBUG value sets disablethp to a nonzero
// number; as in the runtime, the last setting wins.
func disablesTHP(godebug string) bool {
	off := false
	for kv := range strings.SplitSeq(godebug, ",") {
		if v, ok := strings.CutPrefix(kv, "disablethp="); ok {
			if n, err := strconv.Atoi(v); err == nil {
				off = n != 0
			}
		}
	}
	return off
}

// adviseHuge asks for huge pages on the whole huge-page blocks of the
// buffers, and returns the function that marks them against huge pages
// (Linux has no call that removes an advice).
func adviseHuge(bufs [][]byte) (undo func()) {
	size := hugeSize()
	if size == 0 {
		return func() {}
	}
	var advised [][]byte
	for _, b := range bufs {
		if blocks := whole(b, size); len(blocks) > 0 && syscall.Madvise(blocks, syscall.MADV_HUGEPAGE) == nil {
			advised = append(advised, blocks)
		}
	}
	return func() {
		for _, blocks := range advised {
			_ = syscall.Madvise(blocks, syscall.MADV_NOHUGEPAGE)
		}
	}
}
