//go:build unix && !aix && !solaris

// fifo_unix_test.go holds the command's tests that need FIFOs or file descriptor limits (where the syscall package can make a FIFO: not on AIX, Solaris or illumos).

package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync/atomic"
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

// mkfifos makes n FIFOs, f00, f01, ..., in a temporary directory.
func mkfifos(t *testing.T, n int) []string {
	t.Helper()
	dir := t.TempDir()
	var paths []string
	for i := range n {
		p := filepath.Join(dir, fmt.Sprintf("f%02d", i))
		if err := syscall.Mkfifo(p, 0o600); err != nil {
			t.Skipf("no FIFO here: %v", err)
		}
		paths = append(paths, p)
	}
	return paths
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

// TestSummaryWritesEachFileWhenDone: the report of a file is written as
// soon as it and the files before it are done, not after the last (from a
// review: 3000 files held every trace until the end, 440 MB resident, and
// printed nothing until then). The second file is a FIFO written only once
// the first report has come out.
func TestSummaryWritesEachFileWhenDone(t *testing.T) {
	fifo := mkfifo(t)
	first := writeTrace(t, "first.jsonl", memRec(5, "alloc", "t", "root", "cuda:0", 1024, "activation"))
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	var stderr strings.Builder
	go func() {
		code := run([]string{"summary", first, fifo}, nil, pw, &stderr)
		pw.Close()
		done <- code
	}()
	feed := func() {
		f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err != nil {
			t.Error(err)
			return
		}
		io.WriteString(f, rootTrace(memRec(5, "alloc", "t", "root", "cuda:0", 2048, "activation")))
		f.Close()
	}
	header := make(chan bool, 1)
	go func() {
		line, err := bufio.NewReader(pr).ReadString('\n')
		header <- err == nil && line == "== "+first+" ==\n"
		io.Copy(io.Discard, pr)
	}()
	select {
	case ok := <-header:
		if !ok {
			t.Error("the first line of the output is not the first file's header")
		}
		feed()
	case <-time.After(30 * time.Second):
		t.Error("no report after 30 s while the second file waits: the first is held until the last is done")
		feed()
	}
	if code := <-done; code != 0 {
		t.Errorf("exit %d, stderr %q", code, stderr.String())
	}
}

// TestSummaryHoldsFewFiles: while the first file is not done, no more than
// twice GOMAXPROCS files are started (from a review: the traces of every
// file done were held until the first was), yet those after it go on in
// parallel. Each file is a FIFO, and a writer counts its open.
func TestSummaryHoldsFewFiles(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	const others = 12
	args := append([]string{"summary"}, mkfifos(t, others+1)...)
	trace := rootTrace(memRec(5, "alloc", "t", "root", "cuda:0", 1024, "activation"))
	var opened atomic.Int32
	for _, p := range args[2:] { // every file but the first
		go func() {
			f, err := os.OpenFile(p, os.O_WRONLY, 0) // returns when the command opens it
			if err != nil {
				return
			}
			opened.Add(1)
			io.WriteString(f, trace)
			f.Close()
		}()
	}
	done := make(chan result, 1)
	go func() { done <- runCmd(t, nil, args...) }()
	const window = 2 * 2 // files started and not yet written: the first and three more
	deadline := time.Now().Add(30 * time.Second)
	for opened.Load() < window-1 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond) // time to start more, were it allowed
	if n := opened.Load(); n != window-1 {
		t.Errorf("%d files after the first opened while it is not done, want %d", n, window-1)
	}
	f, err := os.OpenFile(args[1], os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(f, trace)
	f.Close()
	got := <-done
	if got.code != 0 || strings.Count(got.stdout, "Peak: 1.00 KiB") != others+1 || opened.Load() != others {
		t.Errorf("exit %d, stderr %q, %d summaries, %d files opened; want %d summaries", got.code, got.stderr, strings.Count(got.stdout, "Peak: 1.00 KiB"), opened.Load(), others+1)
	}
}

// TestSummaryAnalyzesFewAtOnce: no more files are analyzed at once than
// GOMAXPROCS, though more may be started and waiting (from a review:
// without its semaphore, twice as many ran at once and no test saw it).
// Each file is a FIFO whose writer opens it, counts, and writes nothing
// until told: a file opened is a file being analyzed.
func TestSummaryAnalyzesFewAtOnce(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	args := append([]string{"summary"}, mkfifos(t, 6)...)
	trace := rootTrace(memRec(5, "alloc", "t", "root", "cuda:0", 1024, "activation"))
	var opened atomic.Int32
	release := make(chan struct{})
	for _, p := range args[1:] {
		go func() {
			f, err := os.OpenFile(p, os.O_WRONLY, 0) // returns when the command opens it
			if err != nil {
				return
			}
			opened.Add(1)
			<-release
			io.WriteString(f, trace)
			f.Close()
		}()
	}
	done := make(chan result, 1)
	go func() { done <- runCmd(t, nil, args...) }()
	deadline := time.Now().Add(30 * time.Second)
	for opened.Load() < 2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond) // time to open more, were it allowed
	n := opened.Load()
	close(release)
	if n != 2 {
		t.Errorf("%d files open at once at GOMAXPROCS 2, want 2", n)
	}
	if got := <-done; got.code != 0 || strings.Count(got.stdout, "Peak: 1.00 KiB") != 6 {
		t.Errorf("exit %d, stderr %q, %d summaries; want 6", got.code, got.stderr, strings.Count(got.stdout, "Peak: 1.00 KiB"))
	}
}
