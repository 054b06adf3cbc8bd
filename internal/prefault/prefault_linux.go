package prefault

import (
	"errors"
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
