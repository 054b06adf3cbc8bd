// term_linux.go holds the terminal check on Linux: the terminal's settings can be read.

package main

import (
	"os"
	"syscall"
	"unsafe"
)

// isTTY reports whether f is a terminal, and true for known: Linux can
// tell (a character device such as /dev/zero is not one).
func isTTY(f *os.File) (tty, known bool) {
	c, err := f.SyscallConn()
	if err != nil {
		return false, false
	}
	var errno syscall.Errno
	if err := c.Control(func(fd uintptr) {
		var t syscall.Termios
		_, _, errno = syscall.Syscall(syscall.SYS_IOCTL, fd, syscall.TCGETS, uintptr(unsafe.Pointer(&t)))
	}); err != nil {
		return false, false
	}
	return errno == 0, true
}
