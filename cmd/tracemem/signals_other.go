//go:build js || plan9

// signals_other.go holds the signals that interrupt the command where the syscall package has no SIGTERM or SIGHUP (js, plan9).

package main

import "os"

// interrupts are the signals that end the command as they would without a
// handler, once the output being made is removed.
var interrupts = []os.Signal{os.Interrupt}

// signalNumber returns the number of an interrupt (2, SIGINT's).
func signalNumber(os.Signal) int { return 2 }
