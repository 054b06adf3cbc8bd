//go:build !linux

// progress_other_test.go holds the terminal of the progress tests elsewhere than on Linux.

package main

import (
	"os"
	"testing"
)

// testTerminal returns a terminal to write to: /dev/zero, a character
// device other than the null device, which isTerminal takes for one where
// the terminal settings cannot be read.
func testTerminal(t *testing.T) *os.File {
	w, err := os.OpenFile("/dev/zero", os.O_WRONLY, 0)
	if err != nil {
		t.Skipf("no /dev/zero: %v", err)
	}
	t.Cleanup(func() { w.Close() })
	if !isTerminal(w) {
		t.Skip("/dev/zero is not taken for a terminal here")
	}
	return w
}
