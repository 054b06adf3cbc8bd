//go:build !linux

// term_other.go holds the terminal check elsewhere than on Linux: unknown here, isTerminal guesses.

package main

import "os"

// isTTY reports false for known: only Linux tells here.
func isTTY(*os.File) (tty, known bool) { return false, false }
