//go:build !js && !plan9

// signals_posix.go holds the signals that interrupt the command where the syscall package has SIGTERM and SIGHUP.

package main

import (
	"os"
	"syscall"
)

// interrupts are the signals that end the command as they would without a
// handler, once the output being made is removed.
var interrupts = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}

// signalNumber returns sig's number (2 when it has none).
func signalNumber(sig os.Signal) int {
	if s, ok := sig.(syscall.Signal); ok {
		return int(s)
	}
	return 2
}
