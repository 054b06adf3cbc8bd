//go:build unix

// signals_unix_test.go holds the test of the command's death by an interrupt, which needs Unix signals.

package main

import (
	"bufio"
	"errors"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// startedReady starts cmd, the test binary as the command, and returns a
// channel closed once the command's interrupt handler is in place (the
// line asCommand has it write on stderr).
func startedReady(t *testing.T, cmd *exec.Cmd) <-chan struct{} {
	t.Helper()
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if sc.Text() == interruptsReady {
				close(ready)
				break
			}
		}
		io.Copy(io.Discard, stderr)
	}()
	return ready
}

// skipIgnored skips a test that needs the command to die of sig when this
// process was started with sig ignored (a shell's background job ignores
// SIGINT, nohup SIGHUP): the command inherits it ignored and, rightly,
// lives on (from a review: the test then waited for ever).
func skipIgnored(t *testing.T, sig syscall.Signal) {
	t.Helper()
	if signal.Ignored(sig) {
		t.Skipf("%v is ignored in the test process, so the command inherits it ignored", sig)
	}
}

// waitOrKill waits for cmd, killing it after 30 s, so that a command that
// does not die of a signal fails the test instead of hanging it.
func waitOrKill(cmd *exec.Cmd) error {
	timer := time.AfterFunc(30*time.Second, func() { cmd.Process.Kill() })
	defer timer.Stop()
	return cmd.Wait()
}

// TestInterruptDies runs the test binary as the command (see asCommand),
// reading a trace from a pipe that never ends, as if it were making an
// output file, and interrupts it with each of SIGINT, SIGTERM and SIGHUP:
// the file is removed and the command dies of the signal, as it would
// without a handler, so that a shell or make sees the interrupt.
func TestInterruptDies(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP} {
		t.Run(sig.String(), func(t *testing.T) {
			skipIgnored(t, sig)
			out := filepath.Join(t.TempDir(), "out.csv")
			if err := os.WriteFile(out, []byte("half a row,"), 0o666); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(os.Args[0], "summary", "-")
			cmd.Env = append(os.Environ(), "TRACEMEM_TEST_AS_COMMAND=1", "TRACEMEM_TEST_MAKING="+out)
			stdin, err := cmd.StdinPipe() // kept open: the command waits for the trace
			if err != nil {
				t.Fatal(err)
			}
			defer stdin.Close()
			ready := startedReady(t, cmd)
			<-ready
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			err = waitOrKill(cmd)
			var ee *exec.ExitError
			if !errors.As(err, &ee) {
				t.Fatalf("the command ended with %v, want a death by %v", err, sig)
			}
			if ws, ok := ee.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != sig {
				t.Errorf("the command ended with %v, want a death by %v", ee, sig)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("the output being made: stat = %v after %v, want it removed", err, sig)
			}
		})
	}
}

// TestIgnoredInterruptStaysIgnored: a signal the command was started with
// ignored (SIGHUP under nohup) stays ignored, file and process untouched,
// where signal.Notify alone would take it up again; the others still work.
func TestIgnoredInterruptStaysIgnored(t *testing.T) {
	skipIgnored(t, syscall.SIGINT)
	out := filepath.Join(t.TempDir(), "out.csv")
	if err := os.WriteFile(out, []byte("half a row,"), 0o666); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "summary", "-")
	cmd.Env = append(os.Environ(), "TRACEMEM_TEST_AS_COMMAND=1", "TRACEMEM_TEST_MAKING="+out)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	// The child inherits an ignored signal, as nohup makes it.
	signal.Ignore(syscall.SIGHUP)
	ready := startedReady(t, cmd)
	signal.Reset(syscall.SIGHUP)
	<-ready
	if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- waitOrKill(cmd) }()
	select {
	case err := <-done:
		t.Fatalf("the command ended with %v on a SIGHUP it was started with ignored; want it to go on", err)
	case <-time.After(300 * time.Millisecond):
	}
	if _, err := os.Stat(out); err != nil {
		t.Errorf("the output being made: stat = %v after an ignored SIGHUP, want it kept", err)
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	err = <-done
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("the command ended with %v, want a death by SIGINT", err)
	}
	if ws, ok := ee.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGINT {
		t.Errorf("the command ended with %v, want a death by SIGINT", ee)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("the output being made: stat = %v after SIGINT, want it removed", err)
	}
}
