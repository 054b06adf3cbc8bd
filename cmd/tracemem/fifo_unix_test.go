//go:build unix && !aix && !solaris

// fifo_unix_test.go holds the command's tests that need FIFOs or file descriptor limits (where the syscall package can make a FIFO: not on AIX, Solaris or illumos).

package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// mkfifo makes a FIFO in a temporary directory.
func mkfifo(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Skipf("no FIFO here: %v", err)
	}
	return p
}

// TestOutputToGoneFIFO: -o to a FIFO whose reader stops early fails the
// write, as a pipe to stdout does, instead of waiting forever (a FIFO the
// command opened for reading too would never see its reader gone), and the
// FIFO is not removed.
func TestOutputToGoneFIFO(t *testing.T) {
	fifo := mkfifo(t)
	go func() {
		f, err := os.Open(fifo)
		if err != nil {
			return
		}
		io.CopyN(io.Discard, f, 10)
		f.Close()
	}()
	done := make(chan result, 1)
	go func() { done <- runCmd(t, nil, "export", "--format", "csv", "-o", fifo, sample(t)) }()
	select {
	case got := <-done:
		if got.code != 1 || !strings.Contains(got.stderr, fifo) || !strings.Contains(got.stderr, "broken pipe") {
			t.Errorf("exit %d, stderr %q; want exit 1 and a broken pipe on %s", got.code, got.stderr, fifo)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the export still waits 30 s after the FIFO's reader went away")
	}
	if _, err := os.Lstat(fifo); err != nil {
		t.Errorf("the FIFO is gone: %v", err)
	}
}

// TestOutOfOrderFromFIFOPath: a trace a stream cannot take, named by a path
// that is a pipe (as <(cmd) gives), cannot be read again; the error says
// so, as it does for standard input.
func TestOutOfOrderFromFIFOPath(t *testing.T) {
	fifo := mkfifo(t)
	data := reorderedSample(t)
	go func() {
		f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		f.Write(data)
		f.Close()
	}()
	got := runCmd(t, nil, "summary", fifo)
	wantErr := regexp.MustCompile(`^tracemem: .*fifo: line \d+: memory: out of order: .* \(such a trace can be read whole from a file, not from a pipe\)\n$`)
	if got.code != 1 || !wantErr.MatchString(got.stderr) {
		t.Errorf("exit %d, stderr %q; want exit 1 and an error matching %s", got.code, got.stderr, wantErr)
	}
}

// TestManyFilesFewDescriptors: summary of more files than the process may
// open at once works: a file is opened only when a worker takes it.
func TestManyFilesFewDescriptors(t *testing.T) {
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &old); err != nil {
		t.Skip(err)
	}
	const limit = 64
	if old.Cur < limit {
		t.Skipf("the limit is already %d", old.Cur)
	}
	dir := t.TempDir()
	args := []string{"summary"}
	for i := range 3 * limit {
		trace := fmt.Sprintf(`{"kind":"meta","schema":"candle-graph/trace/6","run_id":"rank%d","correlation_id":"c","entrypoint":"e","phase":"train","timestamp":"2026-12-01T00:00:00Z","capture_step":1,"warmup_steps":0,"device":"cuda:0","timing_mode":"host","tags":{}}
{"kind":"memory","timestamp_ns":1,"tensor_id":"t","span_id":"","device":"cuda:0","bytes":%d,"action":"alloc","shape":[],"dtype":"u8","category":"other"}
`, i, 1024+i)
		args = append(args, writeFile(t, dir, fmt.Sprintf("rank%03d.jsonl", i), []byte(trace)))
	}
	lower := old
	lower.Cur = limit
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lower); err != nil {
		t.Skip(err)
	}
	got := runCmd(t, nil, args...)
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &old); err != nil {
		t.Fatal(err)
	}
	if got.code != 0 || strings.Contains(got.stderr, "too many open files") {
		t.Errorf("%d files with %d descriptors: exit %d, stderr %.300s", len(args)-1, limit, got.code, got.stderr)
	}
	// The highest peak is the last file's, marked in the files table.
	if want := fmt.Sprintf("rank%03d.jsonl", 3*limit-1); !regexp.MustCompile(`(?m)^\s*\*\s+\S*` + regexp.QuoteMeta(want)).MatchString(got.stdout) {
		t.Errorf("the files table does not mark %s:\n%.2000s", want, got.stdout[max(0, len(got.stdout)-2000):])
	}
}

// TestSummaryReadsFilesConcurrently: summary analyzes its files at the same
// time (issue 7), up to GOMAXPROCS. Two FIFOs are written second first: read
// one after the other, the command would wait on the first while the writer
// waits on the second.
func TestSummaryReadsFilesConcurrently(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	dir := t.TempDir()
	first, second := filepath.Join(dir, "first"), filepath.Join(dir, "second")
	for _, p := range []string{first, second} {
		if err := syscall.Mkfifo(p, 0o600); err != nil {
			t.Skipf("no FIFO here: %v", err)
		}
	}
	trace := rootTrace(memRec(5, "alloc", "t", "root", "cuda:0", 1024, "activation"))
	go func() {
		for _, p := range []string{second, first} {
			f, err := os.OpenFile(p, os.O_WRONLY, 0)
			if err != nil {
				return
			}
			io.WriteString(f, trace)
			f.Close()
		}
	}()
	done := make(chan result, 1)
	go func() { done <- runCmd(t, nil, "summary", first, second) }()
	select {
	case got := <-done:
		if got.code != 0 || strings.Count(got.stdout, "Peak: 1.00 KiB") != 2 {
			t.Errorf("exit %d, stderr %q, stdout:\n%s\nwant two summaries with a 1 KiB peak", got.code, got.stderr, got.stdout)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("summary still waits after 30 s: it reads its files one after another")
	}
}
