// progress_test.go holds the tests of the progress bar: when it is shown, and what it says.

package main

import (
	"bytes"
	"io"
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
	if tty, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0); err == nil {
		defer tty.Close()
		if !isTerminal(tty) {
			t.Errorf("/dev/tty is not taken for a terminal")
		}
		if newProgress(tty, progressMinBytes) != nil {
			t.Errorf("a bar for an input of exactly 64 MiB")
		}
	}
	var nilBar *progress
	r := nilBar.wrap(strings.NewReader("abc"))
	if b, _ := io.ReadAll(r); string(b) != "abc" {
		t.Errorf("a nil bar changes the input")
	}
	nilBar.finish()
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
	if !strings.Contains(last, " 45.0%") || !strings.Contains(last, "45.00 MiB / 100.00 MiB  100.00 MiB/s  ETA 0:01") {
		t.Errorf("last draw %q: want 45.0%%, 45.00 MiB / 100.00 MiB, 100.00 MiB/s, ETA 0:01", last)
	}
	p.finish()
	if !strings.HasSuffix(out.String(), "\r"+strings.Repeat(" ", barLineWidth)+"\r") {
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
	want := "[=======>                      ]  25.0%  25.00 MiB / 100.00 MiB  5.00 MiB/s  ETA 0:15"
	if strings.TrimRight(got, " ") != want {
		t.Errorf("renderBar = %q\nwant       %q", got, want)
	}
	if got := renderBar(0, 100, 0); !strings.Contains(got, "ETA -") {
		t.Errorf("no rate yet: %q", got)
	}
	if got := renderBar(200, 100, time.Second); !strings.Contains(got, "100.0%") || !strings.Contains(got, "[==============================]") {
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
