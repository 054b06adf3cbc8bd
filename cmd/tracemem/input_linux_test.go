// input_linux_test.go holds edge cases of the input side found by mutation
// testing that need Linux: the progress bar on a real terminal (a
// pseudo-terminal) and the file descriptors the command leaves open.

package main

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"
)

// testTerminal returns a terminal to write to: a pseudo-terminal.
func testTerminal(t *testing.T) *os.File {
	tty, _ := openPTY(t)
	return tty
}

// openPTY opens a pseudo-terminal and returns its terminal end, and a
// function that closes it and returns all that was written to it.
func openPTY(t *testing.T) (*os.File, func() string) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	var unlock int32
	var n uint32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, m.Fd(), syscall.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); e != 0 {
		m.Close()
		t.Skipf("unlockpt: %v", e)
	}
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, m.Fd(), syscall.TIOCGPTN, uintptr(unsafe.Pointer(&n))); e != 0 {
		m.Close()
		t.Skipf("ptsname: %v", e)
	}
	s, err := os.OpenFile("/dev/pts/"+strconv.Itoa(int(n)), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		m.Close()
		t.Skipf("open the terminal end: %v", err)
	}
	var out bytes.Buffer
	done := make(chan struct{})
	go func() { io.Copy(&out, m); close(done) }() // ends with EIO once s is closed
	var once bool
	end := func() string {
		if !once {
			once = true
			s.Close()
			<-done
			m.Close()
		}
		return out.String()
	}
	t.Cleanup(func() { end() })
	return s, end
}

// bigGzip writes the sample gzipped, padded with zero bytes (which gzip
// readers skip) to a sparse file of size bytes, and returns its path.
func bigGzip(t *testing.T, size int64) string {
	t.Helper()
	data, err := os.ReadFile(sample(t))
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write(data)
	zw.Close()
	path := writeFile(t, t.TempDir(), "big.jsonl.gz", b.Bytes())
	if err := os.Truncate(path, size); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestProgressOnTerminal runs the command with stderr on a pseudo-terminal:
// a bar is drawn when the inputs that have a size add up to more than
// progressMinBytes, and erased at the end.
func TestProgressOnTerminal(t *testing.T) {
	big := bigGzip(t, progressMinBytes+1)
	small, err := os.ReadFile(writeTrace(t, "small.jsonl", memRec(5, "alloc", "t", "root", "cuda:0", 1024, "activation")))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name      string
		args      []string
		stdinFile string // stdin opened from this file, else small as a pipe
		reason    string
	}{
		{"file", []string{"summary", big}, "", "a file of 64 MiB and a byte: the bar is shown (found by mutation: isTerminal without its null-device check took no device for a terminal)"},
		{"stdin from a file", []string{"summary", "-"}, big, "stdin redirected from a regular file has its size (found by mutation: sourceSize(\"-\") = -1 went unnoticed)"},
		{"file and a pipe", []string{"summary", big, "-"}, "", "a pipe has no size and takes nothing off the total (found by mutation: its -1 made the total 64 MiB, no bar)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			tty, output := openPTY(t)
			if !isTerminal(tty) {
				t.Fatalf("a pseudo-terminal is not taken for a terminal")
			}
			var stdin io.Reader = bytes.NewReader(small)
			if c.stdinFile != "" {
				f, err := os.Open(c.stdinFile)
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				stdin = f
			}
			var stdout bytes.Buffer
			code := run(c.args, stdin, &stdout, tty)
			got := output()
			if code != 0 {
				t.Fatalf("%s: exit %d, terminal %q", c.reason, code, got)
			}
			if !strings.HasPrefix(got, "\r[") {
				t.Errorf("%s: no bar drawn; terminal %q", c.reason, got)
			}
			// The last thing written erases the widest line (found by
			// mutation: loadEach without prog.finish left the bar).
			if !endsErased(got) {
				t.Errorf("%s: the bar is not erased at the end; terminal ends %q", c.reason, got[max(0, len(got)-100):])
			}
		})
	}
}

// TestProgressPausedForOutput: with the bar and the summaries on one
// terminal, the bar is erased before each summary is written (each is
// written as soon as its file is done, while other files are still read
// and the bar drawn): no line shows what is left of a bar.
func TestProgressPausedForOutput(t *testing.T) {
	big := bigGzip(t, progressMinBytes+1)
	small := writeTrace(t, "small.jsonl", memRec(5, "alloc", "t", "root", "cuda:0", 1024, "activation"))
	tty, output := openPTY(t)
	if code := run([]string{"summary", small, big}, nil, tty, tty); code != 0 {
		t.Fatalf("exit %d, terminal %q", code, output())
	}
	got := output()
	if !strings.Contains(got, "ETA ") {
		t.Fatalf("no bar drawn: %q", got)
	}
	for line := range strings.SplitSeq(got, "\n") {
		if v := visible(line); strings.Contains(v, "ETA ") {
			t.Errorf("a line shows a bar: %q (written %q)", v, line)
		}
	}
	for _, name := range []string{small, big} {
		if !strings.Contains(got, "== "+name+" ==") {
			t.Errorf("no summary of %s on the terminal", name)
		}
	}
}

// visible returns what a terminal shows of line: each "\r" takes the
// cursor back to the start, and what follows overwrites what was there.
func visible(line string) string {
	var shown []rune
	pos := 0
	for _, r := range line {
		if r == '\r' {
			pos = 0
			continue
		}
		if pos < len(shown) {
			shown[pos] = r
		} else {
			shown = append(shown, r)
		}
		pos++
	}
	return string(shown)
}

// endsErased reports whether out ends with "\r", barLineWidth spaces
// or more, "\r".
func endsErased(out string) bool {
	if !strings.HasSuffix(out, "\r") {
		return false
	}
	body := out[:len(out)-1]
	i := strings.LastIndex(body, "\r")
	return i >= 0 && len(body)-i-1 >= barLineWidth && strings.Trim(body[i+1:], " ") == ""
}

// TestProgressEdges: the bar's fields and its erasure at their limits.
func TestProgressEdges(t *testing.T) {
	t.Run("ETA at its maximum", func(t *testing.T) {
		// 1 byte a second, 359999 s (99:59:59) left: shown as is, not as
		// more than that (found by mutation: > as >= went unnoticed).
		got := renderBar(1, 1+int64(maxETA/time.Second), time.Second)
		if !strings.Contains(got, "ETA 99:59:59") || strings.Contains(got, "ETA >") {
			t.Errorf("renderBar = %q, want ETA 99:59:59", got)
		}
	})
	t.Run("erase after a narrower line", func(t *testing.T) {
		// A line of 83 columns, then one of 80: finish erases 83 (found by
		// mutation: keeping the last width rather than the widest passed
		// TestProgressErasesWidest, whose second line was as wide).
		var out bytes.Buffer
		now := time.Unix(0, 0)
		p := &progress{w: &out, total: 1 << 62, start: now, now: func() time.Time { return now }}
		now = now.Add(time.Second)
		p.add(1 << 61)
		wide := len(strings.TrimPrefix(out.String(), "\r"))
		now = now.Add(1e6 * time.Second)
		p.add(1 << 61)
		narrow := len(out.String()[strings.LastIndex(out.String(), "\r")+1:])
		if wide <= narrow || wide <= barLineWidth {
			t.Fatalf("the test wants a line wider than %d columns then a narrower one: got %d then %d", barLineWidth, wide, narrow)
		}
		p.finish()
		if want := "\r" + strings.Repeat(" ", wide) + "\r"; !strings.HasSuffix(out.String(), want) {
			t.Errorf("finish does not erase the %d columns of the widest line: %q", wide, out.String()[strings.LastIndex(out.String()[:out.Len()-1], "\r"):])
		}
	})
}

// openFDs counts the descriptors the process has open.
func openFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	return len(ents)
}

// TestInputsClosed: every file the command opens is closed when it is done
// with it, a trace or a directory, not left to the garbage collector
// (found by mutation: without the Close in loadEach, TestManyFilesFewDescriptors
// still passed, as collections closed the files in time).
func TestInputsClosed(t *testing.T) {
	dir := t.TempDir()
	var files []string
	for i := range 5 {
		files = append(files, writeTrace(t, fmt.Sprintf("rank%d.jsonl", i), memRec(5, "alloc", "t", "root", "cuda:0", uint64(1024+i), "activation")))
	}
	defer debug.SetGCPercent(debug.SetGCPercent(-1)) // no finalizer closes a file behind the command's back
	for _, c := range []struct {
		name   string
		args   []string
		code   int
		reason string
	}{
		{"traces", append([]string{"summary"}, files...), 0, "each trace file is closed once analyzed"},
		{"a directory", []string{"summary", dir}, 1, "a directory given as a trace is closed when it is refused"},
		{"out of order", []string{"summary", writeTrace(t, "ooo.jsonl", memRec(30, "alloc", "a", "root", "cuda:0", 4, "activation"), memRec(20, "alloc", "b", "root", "cuda:0", 4, "activation"))}, 0, "a trace read again whole is closed too"},
	} {
		before := openFDs(t)
		got := runCmd(t, nil, c.args...)
		if got.code != c.code {
			t.Fatalf("%s: exit %d, stderr %q", c.reason, got.code, got.stderr)
		}
		if after := openFDs(t); after != before {
			t.Errorf("%s: %d descriptors open before the command, %d after", c.reason, before, after)
		}
	}
}

// TestStdinTerminalHint: "-" with standard input on a terminal says on
// stderr why the command waits (from a user trial: it waited without a
// word); from a file, a pipe or the null device it says nothing.
func TestStdinTerminalHint(t *testing.T) {
	tty, _ := openPTY(t)
	null, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	zero, err := os.Open("/dev/zero")
	if err != nil {
		t.Fatal(err)
	}
	defer zero.Close()
	file, err := os.Open(sample(t))
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	defer pw.Close()
	const hint = "tracemem: reading a trace from standard input, a terminal; give a file, or pipe the trace in\n"
	for _, c := range []struct {
		name  string
		stdin io.Reader
		want  string
	}{
		{"terminal", tty, hint},
		{"null device", null, ""},
		{"another character device", zero, ""}, // from a review: /dev/zero was taken for a terminal
		{"file", file, ""},
		{"pipe", pr, ""},
	} {
		var stderr bytes.Buffer
		if _, err := openSource(&env{stdin: c.stdin, stderr: &stderr}, "-"); err != nil {
			t.Fatal(err)
		}
		if stderr.String() != c.want {
			t.Errorf("%s: stderr %q, want %q", c.name, stderr.String(), c.want)
		}
	}
}
