// signals.go holds what the command does when it is interrupted: it removes the output file it is writing, then dies of the signal.

package main

import (
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"
)

// making is the output file the command created and is writing: an
// interrupt removes it, as a failed write does, so that no half-written
// file (a CSV cut mid-row, a JSON cut mid-string) is left for a later step
// to take for the whole. Its lock is held around the creation of the file,
// never while anything can block, so that a signal cannot come between the
// file's creation and its record here.
var making struct {
	sync.Mutex
	path string
}

// removeMade removes the output file being made, if any.
func removeMade() {
	making.Lock()
	defer making.Unlock()
	if making.path != "" {
		os.Remove(making.path)
		making.path = ""
	}
}

// interrupts are the signals that end the command as they would without a
// handler, once the output being made is removed.
var interrupts = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}

// handleInterrupts removes the output being made when one of interrupts
// comes, then dies of it (the shell and make see a death by the signal,
// not an exit status). main calls it; tests of run do not.
func handleInterrupts() {
	// A signal the command was started with ignored (SIGHUP under nohup,
	// SIGINT in a script's background job) stays ignored: Notify would
	// take it up again.
	var sigs []os.Signal
	for _, sig := range interrupts {
		if !signal.Ignored(sig) {
			sigs = append(sigs, sig)
		}
	}
	if len(sigs) == 0 {
		return
	}
	c := make(chan os.Signal, 1)
	signal.Notify(c, sigs...)
	go func() {
		sig := <-c
		removeMade()
		signal.Reset(sigs...)
		if p, err := os.FindProcess(os.Getpid()); err == nil && p.Signal(sig) == nil {
			time.Sleep(time.Second) // the signal's default action ends the process
		}
		// Where a process cannot signal itself (Windows), the shells'
		// status for a death by signal.
		n := 2
		if s, ok := sig.(syscall.Signal); ok {
			n = int(s)
		}
		os.Exit(128 + n)
	}()
}
