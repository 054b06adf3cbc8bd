// signals.go holds what the command does when it is interrupted: it removes the output file it created and is writing, then dies of the signal.

package main

import (
	"os"
	"os/signal"
	"sync"
	"time"
)

// making is the output file the command created and is writing: an
// interrupt removes it, as a failed write does, so that no half-written
// file (a CSV cut mid-row, a JSON cut mid-string) is left for a later step
// to take for the whole. Its lock is held around the creation of the file
// and around the end of the write (close, and removal after a failure),
// never while anything can block, so that an interrupt finds the file being
// written or nothing; the interrupt's handler takes the lock and keeps it
// until the process dies, so that nothing is created, and no success
// reported, after it removed the file.
var making struct {
	sync.Mutex
	path string
	f    *os.File // closed before the removal: Windows cannot remove an open file
}

// removeMadeLocked removes the output file being made, if any; making's
// lock is held.
func removeMadeLocked() {
	if making.f != nil {
		making.f.Close()
	}
	if making.path != "" {
		os.Remove(making.path)
	}
	making.path, making.f = "", nil
}

// removeMade removes the output file being made, if any, as an interrupt
// does (for tests: the handler keeps the lock).
func removeMade() {
	making.Lock()
	defer making.Unlock()
	removeMadeLocked()
}

// handleInterrupts removes the output being made when one of interrupts
// (signals_*.go) comes, then dies of it (the shell and make see a death by
// the signal, not an exit status). main calls it; tests of run do not.
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
		making.Lock() // kept: see making
		removeMadeLocked()
		signal.Reset(sigs...)
		if p, err := os.FindProcess(os.Getpid()); err == nil && p.Signal(sig) == nil {
			time.Sleep(time.Second) // the signal's default action ends the process
		}
		// Where a process cannot signal itself (Windows), the shells'
		// status for a death by signal.
		os.Exit(128 + signalNumber(sig))
	}()
	if interruptsHandled != nil {
		interruptsHandled()
	}
}

// interruptsHandled, when set (by tests), is called once the handler is in
// place.
var interruptsHandled func()
