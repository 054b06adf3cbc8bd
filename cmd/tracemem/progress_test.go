// progress_test.go holds the tests of the progress bar: when it is shown, and what it says.

package main

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"
)

// TestProgressOnlyOnTerminal checks that no bar is made for writers that are
// not terminals, whatever the size, nor for small inputs.
func TestProgressOnlyOnTerminal(t *testing.T) {
	f, err := os.Create(t.TempDir() + "/stderr")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	devNull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer devNull.Close()
	cases := []struct {
		name   string
		w      io.Writer
		reason string
	}{
		{"buffer", &bytes.Buffer{}, "a buffer is not a terminal"},
		{"regular file", f, "a redirect to a file is not a terminal"},
		{"null device", devNull, "the null device is a character device but not a terminal"},
		{"null device as stderr", os.NewFile(devNull.Fd(), "/dev/stderr"), "stderr sent to the null device (2>/dev/null) is named /dev/stderr"},
	}
	for _, c := range cases {
		if isTerminal(c.w) {
			t.Errorf("%s: isTerminal = true", c.reason)
		}
		if p := newProgress(c.w, 10<<30); p != nil {
			t.Errorf("%s: a progress bar was made", c.reason)
		}
	}
	var nilBar *progress
	r := nilBar.wrap(strings.NewReader("abc"))
	if b, _ := io.ReadAll(r); string(b) != "abc" {
		t.Errorf("a nil bar changes the input")
	}
	nilBar.finish()
	// Last, as it skips where there is no terminal to open: a terminal
	// (a pseudo-terminal on Linux; from a test audit, /dev/tty, which this
	// test opened, exists in no test run here) gets a bar, above 64 MiB.
	tty := testTerminal(t)
	if !isTerminal(tty) {
		t.Errorf("%s is not taken for a terminal", tty.Name())
	}
	if newProgress(tty, progressMinBytes) != nil {
		t.Errorf("a bar for an input of exactly 64 MiB")
	}
	if p := newProgress(tty, progressMinBytes+1); p == nil {
		t.Errorf("no bar for an input of 64 MiB and a byte on a terminal")
	}
}

// TestProgressDraws drives a bar with a fake clock: it counts the bytes
// read, redraws at most every progressEvery, shows rate and ETA, and erases
// itself at the end.
func TestProgressDraws(t *testing.T) {
	var out bytes.Buffer
	now := time.Unix(0, 0)
	p := &progress{w: &out, total: 100 << 20, start: now, now: func() time.Time { return now }}
	r := p.wrap(bytes.NewReader(make([]byte, 50<<20)))
	buf := make([]byte, 5<<20)
	for range 10 { // reads at 50, 100, ..., 500 ms: draws at 50, 250 and 450 ms
		now = now.Add(50 * time.Millisecond)
		if _, err := r.Read(buf); err != nil {
			t.Fatal(err)
		}
	}
	if got := p.read.Load(); got != 50<<20 {
		t.Errorf("counted %d bytes, want %d", got, 50<<20)
	}
	if draws := strings.Count(out.String(), "\r["); draws != 3 {
		t.Errorf("%d draws for reads 50 ms apart over 500 ms, want 3 (one per %v)", draws, progressEvery)
	}
	last := out.String()[strings.LastIndex(out.String(), "\r[")+1:]
	if !strings.Contains(last, " 45.0%") || !strings.Contains(last, "45.00 MiB / 100.00 MiB  100.00 MiB/s ETA 0:01") {
		t.Errorf("last draw %q: want 45.0%%, 45.00 MiB / 100.00 MiB, 100.00 MiB/s, ETA 0:01", last)
	}
	p.finish()
	if !strings.HasSuffix(out.String(), "\r"+strings.Repeat(" ", len(last))+"\r") {
		t.Errorf("finish does not erase the bar")
	}
}

// TestProgressAgain: an input read a second time (a trace a stream could
// not take) adds its bytes to the total, so the bar does not pass 100%.
func TestProgressAgain(t *testing.T) {
	var out bytes.Buffer
	now := time.Unix(0, 0)
	p := &progress{w: &out, total: 100 << 20, start: now, now: func() time.Time { return now }}
	p.add(80 << 20)
	p.again(80 << 20)
	now = now.Add(time.Second)
	p.add(40 << 20)
	last := out.String()[strings.LastIndex(out.String(), "\r[")+1:]
	if !strings.Contains(last, "120.00 MiB / 180.00 MiB") {
		t.Errorf("draw after 80 MiB read again %q: want 120.00 MiB / 180.00 MiB", last)
	}
	var none *progress
	none.again(1) // no bar: nothing to do, no panic
}

func TestRenderBar(t *testing.T) {
	got := renderBar(25<<20, 100<<20, 5*time.Second)
	want := "[====>           ]  25.0%   25.00 MiB / 100.00 MiB    5.00 MiB/s ETA 0:15"
	if strings.TrimRight(got, " ") != want {
		t.Errorf("renderBar = %q\nwant       %q", got, want)
	}
	if got := renderBar(0, 100, 0); !strings.Contains(got, "ETA -") {
		t.Errorf("no rate yet: %q", got)
	}
	if got := renderBar(200, 100, time.Second); !strings.Contains(got, "100.0%") || !strings.Contains(got, "[================]") {
		t.Errorf("more read than the total (a growing file) is capped at 100%%: %q", got)
	}
	if got := formatClock(3725 * time.Second); got != "1:02:05" {
		t.Errorf("formatClock = %q", got)
	}
}

// TestProgressSeek: a wrapped reader that can seek stays one, and going
// back adds what will be read again to the total (as ReadTrace does for a
// Chrome trace with non-finite numbers); going forward adds nothing.
func TestProgressSeek(t *testing.T) {
	now := time.Unix(0, 0)
	p := &progress{w: io.Discard, total: 100, start: now, now: func() time.Time { return now }}
	r, ok := p.wrap(bytes.NewReader(make([]byte, 100))).(io.ReadSeeker)
	if !ok {
		t.Fatal("wrap of a bytes.Reader cannot seek")
	}
	io.CopyN(io.Discard, r, 60)
	if _, err := r.Seek(10, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	r.Seek(20, io.SeekCurrent)
	if p.total != 150 || p.read.Load() != 60 {
		t.Errorf("total %d, read %d after reading 60 B and going back to 10; want 150 and 60", p.total, p.read.Load())
	}
	if _, ok := p.wrap(strings.NewReader("x")).(io.Seeker); !ok {
		t.Error("wrap of a strings.Reader cannot seek")
	}
	if _, ok := p.wrap(io.MultiReader()).(io.Seeker); ok {
		t.Error("wrap of a reader that cannot seek claims to")
	}
}

// TestProgressThreshold: a bar is shown for inputs larger than 64 MiB, not
// for 64 MiB exactly. The writer is a terminal (testTerminal: on Linux a
// pseudo-terminal; it skipped there when it was /dev/zero, so no test saw
// the threshold, from a review).
func TestProgressThreshold(t *testing.T) {
	w := testTerminal(t)
	if !isTerminal(w) {
		t.Fatal("the test's terminal is not taken for one")
	}
	for _, c := range []struct {
		name   string
		total  int64
		bar    bool
		reason string
	}{
		{"empty", 0, false, "nothing to read"},
		{"64 KiB and a byte", 64<<10 + 1, false, "small inputs read in no time"},
		{"64 MiB", 64 << 20, false, "the bar is for inputs larger than 64 MiB"},
		{"64 MiB and a byte", 64<<20 + 1, true, "larger than 64 MiB"},
		{"1 GiB", 1 << 30, true, "larger than 64 MiB"},
	} {
		if got := newProgress(w, c.total) != nil; got != c.bar {
			t.Errorf("%s: bar %v for %d bytes, want %v: %s", c.name, got, c.total, c.bar, c.reason)
		}
	}
}

// TestFormatClock: the ETA reads m:ss below an hour and h:mm:ss from one
// hour on, rounded to the second.
func TestFormatClock(t *testing.T) {
	for _, c := range []struct {
		name   string
		d      time.Duration
		want   string
		reason string
	}{
		{"zero", 0, "0:00", "m:ss"},
		{"just under an hour", time.Hour - time.Second, "59:59", "m:ss below an hour"},
		{"an hour", time.Hour, "1:00:00", "h:mm:ss from an hour on, exactly"},
		{"rounds up to an hour", time.Hour - 400*time.Millisecond, "1:00:00", "rounded to the second first"},
		{"an hour and a second", time.Hour + time.Second, "1:00:01", "h:mm:ss"},
	} {
		if got := formatClock(c.d); got != c.want {
			t.Errorf("%s: formatClock(%v) = %q, want %q: %s", c.name, c.d, got, c.want, c.reason)
		}
	}
}

// TestRenderBarWidth: a line shorter than barLineWidth is padded to it with
// spaces, so that a redraw over "\r" covers a longer line drawn before; a
// longer one is left as is. Before the first byte there is no rate or ETA.
func TestRenderBarWidth(t *testing.T) {
	for _, c := range []struct {
		name        string
		read, total int64
		elapsed     time.Duration
		text        string // the line without its padding
		reason      string
	}{
		{"nothing read yet", 0, 100, 0, "[>               ]   0.0%         0 B / 100 B             - ETA -", "no time, no rate"},
		{"nothing read after a second", 0, 100, time.Second, "[>               ]   0.0%         0 B / 100 B             - ETA -", "no byte, no rate"},
		{"bytes read at no time yet", 50, 100, 0, "[========>       ]  50.0%        50 B / 100 B             - ETA -", "no time, no rate: a rate over 0 s is no number (found by mutation: secs >= 0 passed)"},
		{"a size of 0", 0, 0, time.Second, "[>               ]   0.0%         0 B / 0 B             - ETA -", "an empty file is 0% read, not 0/0 (found by mutation: total >= 0 passed)"},
		{"short line", 50, 100, time.Second, "[========>       ]  50.0%        50 B / 100 B        50 B/s ETA 0:01", "padded to the width"},
		{"full sizes", 1023<<40 + 1<<39, 1023<<40 + 1<<39, 1024 * time.Second, "[================] 100.0% 1023.50 TiB / 1023.50 TiB 1023.50 GiB/s ETA 0:00", "sizes and rate of the widest"},
		{"widest line", 1023<<30 + 1<<29, 1000 << 40, 1024 * time.Second, "[>               ]   0.1% 1023.50 GiB / 1000.00 TiB 1023.50 MiB/s ETA >99:59:59", "every field at its widest, a time left beyond 99:59:59 shown as more than that: 79 columns (found in review: lines of up to 91 columns wrapped on a terminal of 80)"},
	} {
		got := renderBar(c.read, c.total, c.elapsed)
		want := c.text
		if len(want) < barLineWidth {
			want += strings.Repeat(" ", barLineWidth-len(want))
		}
		if got != want {
			t.Errorf("%s: renderBar = %q\nwant %q: %s", c.name, got, want, c.reason)
		}
	}
}

// TestRenderBarFits: for inputs below 1024 TiB every line has exactly
// barLineWidth columns, so none wraps on a terminal of 80 and each covers
// the one before.
func TestRenderBarFits(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for range 20000 {
		total := rng.Int64N(1 << 50)
		read := rng.Int64N(total + 1)
		elapsed := time.Duration(rng.Int64N(int64(1000 * time.Hour)))
		if line := renderBar(read, total, elapsed); len(line) != barLineWidth {
			t.Fatalf("renderBar(%d, %d, %v) = %q: %d columns, want %d", read, total, elapsed, line, len(line), barLineWidth)
		}
	}
}

// TestProgressErasesWidest: finish erases every column drawn, even of a
// line wider than barLineWidth (sizes of 1024 TiB and more), not just
// barLineWidth of them (found in review: the tail of a wider line stayed).
func TestProgressErasesWidest(t *testing.T) {
	var out bytes.Buffer
	now := time.Unix(0, 0)
	p := &progress{w: &out, total: 1 << 62, start: now, now: func() time.Time { return now }}
	now = now.Add(time.Second)
	p.add(1 << 61)
	line := strings.TrimPrefix(out.String(), "\r")
	if len(line) <= barLineWidth {
		t.Fatalf("the test wants a line wider than %d columns, got %q", barLineWidth, line)
	}
	now = now.Add(time.Second)
	p.add(1 << 20) // a narrower line after it
	p.finish()
	if want := "\r" + strings.Repeat(" ", len(line)) + "\r"; !strings.HasSuffix(out.String(), want) {
		t.Errorf("finish wrote %q, want %d spaces", out.String()[strings.LastIndex(out.String()[:out.Len()-1], "\r"):], len(line))
	}
	out.Reset()
	p.finish()
	if out.Len() != 0 {
		t.Errorf("a second finish wrote %q", out.String())
	}
}

// openTemp writes content to a file in a temporary directory and opens it
// (closed at the end of the test).
func openTemp(t *testing.T, content string) (string, *os.File) {
	t.Helper()
	path := t.TempDir() + "/trace.jsonl"
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return path, f
}

// TestProgressTotalAfterReread: a JSONL trace a stream cannot take, read
// from a non-zero offset (standard input redirected from a file already
// partly read), is read again from that offset: the bytes from there to the
// end are added to the total, so a bar that read it all stands at 100%.
func TestProgressTotalAfterReread(t *testing.T) {
	const prefix = "already read by someone else\n"
	var b strings.Builder
	b.WriteString(prefix)
	b.WriteString(testMeta + "\n")
	for _, ts := range []uint64{10, 30, 20, 40} { // 30 before 20: out of order
		b.WriteString(memRec(ts, "alloc", fmt.Sprint("t", ts), "", "cuda:0", 100, "activation") + "\n")
	}
	_, f := openTemp(t, b.String())
	start, err := f.Seek(int64(len(prefix)), io.SeekStart)
	if err != nil {
		t.Fatal(err)
	}
	size := int64(b.Len())
	now := time.Unix(0, 0)
	p := &progress{w: io.Discard, total: size - start, start: now, now: func() time.Time { return now }}
	tr, err := analyze(&source{name: stdinName, r: f, size: size}, loadOptions{noSpans: true}, p)
	if err != nil {
		t.Fatal(err)
	}
	if tr.profile.Summary.AllocCount != 4 {
		t.Errorf("%d allocations, want 4", tr.profile.Summary.AllocCount)
	}
	if read := p.read.Load(); read != p.total || read%(size-start) != 0 || read < 2*(size-start) {
		t.Errorf("read %d bytes of a total of %d; want the %d bytes from the offset read more than once, and a total of as much", read, p.total, size-start)
	}
}

// TestProgressRereadAddsWhatWasRead: when a stream stops early at a record
// out of order, the bytes it read are what is read again, and the bar
// ends at 100% (found in review: the whole file was added to the total
// again, and the bar ended near half).
func TestProgressRereadAddsWhatWasRead(t *testing.T) {
	var b strings.Builder
	b.WriteString(testMeta + "\n")
	for _, ts := range []uint64{10, 30, 20} { // 30 before 20: out of order
		b.WriteString(memRec(ts, "alloc", fmt.Sprint("t", ts), "", "cuda:0", 100, "activation") + "\n")
	}
	for ts := uint64(100); b.Len() < 8<<20; ts++ { // far beyond what the stream reads before it stops
		b.WriteString(memRec(ts, "alloc", fmt.Sprint("t", ts), "", "cuda:0", 100, "activation") + "\n")
	}
	path, f := openTemp(t, b.String())
	size := int64(b.Len())
	now := time.Unix(0, 0)
	p := &progress{w: io.Discard, total: size, start: now, now: func() time.Time { return now }}
	if _, err := analyze(&source{name: path, r: f, size: size}, loadOptions{noSpans: true}, p); err != nil {
		t.Fatal(err)
	}
	if read := p.read.Load(); read != p.total || read >= 2*size {
		t.Errorf("read %d bytes of a total of %d for a file of %d: want the bytes the stream read and the file once more, and the total as much", read, p.total, size)
	}
}
