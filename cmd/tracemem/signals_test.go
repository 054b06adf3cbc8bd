// signals_test.go holds the tests of what the command does when it is interrupted.

package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// interruptsReady is what the test binary run as the command writes on
// stderr once its interrupt handler is in place.
const interruptsReady = "test: interrupts handled"

// asCommand runs main when the test binary is run as the command (by
// TestInterruptDies), with the output file named by TRACEMEM_TEST_MAKING
// taken for one the command is making, as if it were writing it.
func asCommand() {
	if os.Getenv("TRACEMEM_TEST_AS_COMMAND") == "" {
		return
	}
	making.path = os.Getenv("TRACEMEM_TEST_MAKING")
	interruptsHandled = func() { fmt.Fprintln(os.Stderr, interruptsReady) }
	os.Args = append([]string{"tracemem"}, os.Args[1:]...)
	main()
}

// TestInterruptRemovesOutput: while the command writes an output file it
// created, an interrupt removes it (from a review: Ctrl-C while a big
// export was written left a JSON file cut mid-string); a file that was
// there before is never removed; once the output is written whole, or
// removed after a failed write, the interrupt has nothing to remove.
func TestInterruptRemovesOutput(t *testing.T) {
	e := &env{stdout: io.Discard, stderr: io.Discard}
	dir := t.TempDir()

	made := filepath.Join(dir, "new.csv")
	// The handler keeps making's lock until the process dies, so the write
	// never ends; here it goes on, on a closed file, and fails.
	writeOutput(e, made, func(w io.Writer) error {
		io.WriteString(w, "half a row,")
		removeMade() // the interrupt's handler
		if _, err := os.Stat(made); !os.IsNotExist(err) {
			t.Errorf("a file the command created and was writing: stat after the interrupt = %v, want it removed", err)
		}
		return nil
	})
	if _, err := os.Stat(made); !os.IsNotExist(err) {
		t.Errorf("a file the command created and was writing: stat after the write = %v, want it removed", err)
	}

	existing := filepath.Join(dir, "existing.csv")
	if err := os.WriteFile(existing, []byte("old"), 0o666); err != nil {
		t.Fatal(err)
	}
	if err := writeOutput(e, existing, func(w io.Writer) error {
		removeMade()
		_, err := io.WriteString(w, "new")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(existing); err != nil || string(got) != "new" {
		t.Errorf("a file that was there before: %q, %v after an interrupt; want it kept (and written)", got, err)
	}

	done := filepath.Join(dir, "done.csv")
	if err := writeOutput(e, done, func(w io.Writer) error { _, err := io.WriteString(w, "whole"); return err }); err != nil {
		t.Fatal(err)
	}
	removeMade()
	if got, err := os.ReadFile(done); err != nil || string(got) != "whole" {
		t.Errorf("an output written whole: %q, %v after a later interrupt; want it kept", got, err)
	}
	if making.path != "" {
		t.Errorf("making.path = %q after the write, want none", making.path)
	}
	// The open fails (checkOutput, which would catch it first, is not
	// called here): nothing is recorded for the handler.
	if err := writeOutput(e, filepath.Join(dir, "nodir", "x.csv"), func(io.Writer) error { return nil }); err == nil || making.path != "" || making.f != nil {
		t.Errorf("an output that cannot be created: %v, making.path %q; want an error and nothing recorded", err, making.path)
	}
}
