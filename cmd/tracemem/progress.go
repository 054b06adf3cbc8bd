// progress.go holds the progress bar shown on a terminal while large inputs are read.

package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// progressMinBytes is the input size above which a progress bar is shown.
const progressMinBytes = 64 << 20

// progressEvery is how often the bar is redrawn at most.
const progressEvery = 200 * time.Millisecond

// progress draws a one-line bar with bytes read, rate and ETA on a terminal.
// A nil *progress draws nothing; its methods are safe for concurrent use.
type progress struct {
	w     io.Writer
	read  atomic.Int64
	start time.Time
	now   func() time.Time

	mu    sync.Mutex
	total int64     // bytes of all inputs, plus those read again
	last  time.Time // last draw
	width int       // of the widest line drawn since the last erase; 0 when none is on screen
}

// newProgress returns a progress bar on w for total input bytes, or nil when
// w is not a terminal or total is at most progressMinBytes.
func newProgress(w io.Writer, total int64) *progress {
	if total <= progressMinBytes || !isTerminal(w) {
		return nil
	}
	return &progress{w: w, total: total, start: time.Now(), now: time.Now}
}

// isTerminal reports whether v (standard input, output or error) is a
// terminal: on Linux one whose terminal settings can be read, elsewhere an
// *os.File on a character device other than the null device (no
// dependency on a terminal library).
func isTerminal(v any) bool {
	f, ok := v.(*os.File)
	if !ok || f == nil {
		return false
	}
	if tty, known := isTTY(f); known {
		return tty
	}
	fi, err := f.Stat()
	if err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		return false
	}
	// The null device is a character device too, whatever the file's name
	// (stderr sent there is still /dev/stderr).
	null, err := os.Stat(os.DevNull)
	return err != nil || !os.SameFile(fi, null)
}

// wrap returns r counting its bytes into the bar.
func (p *progress) wrap(r io.Reader) io.Reader {
	if p == nil {
		return r
	}
	if s, ok := r.(io.Seeker); ok {
		return &progressSeeker{progressReader{r: r, p: p}, s}
	}
	return &progressReader{r: r, p: p}
}

type progressReader struct {
	r io.Reader
	p *progress
}

func (pr *progressReader) Read(b []byte) (int, error) {
	n, err := pr.r.Read(b)
	pr.p.add(int64(n))
	return n, err
}

// progressSeeker is a progressReader that can seek: going back adds what
// will be read again to the total.
type progressSeeker struct {
	progressReader
	s io.Seeker
}

func (ps *progressSeeker) Seek(offset int64, whence int) (int64, error) {
	at, err := ps.s.Seek(0, io.SeekCurrent)
	if err != nil {
		return 0, err
	}
	to, err := ps.s.Seek(offset, whence)
	if err == nil && to < at {
		ps.p.again(at - to)
	}
	return to, err
}

func (p *progress) add(n int64) {
	read := p.read.Add(n)
	now := p.now()
	p.mu.Lock()
	defer p.mu.Unlock()
	if now.Sub(p.last) < progressEvery {
		return
	}
	p.last = now
	line := renderBar(read, p.total, now.Sub(p.start))
	fmt.Fprint(p.w, "\r"+line)
	p.width = max(p.width, len(line))
}

// again adds n bytes to the total: an input read a second time.
func (p *progress) again(n int64) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.total += n
}

// finish erases the bar: every column a line drew.
func (p *progress) finish() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.erase()
}

// pause erases the bar and runs f with no bar drawn while it runs, for
// output to the terminal between the bar's draws; the next read draws it
// again.
func (p *progress) pause(f func()) {
	if p == nil {
		f()
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.erase()
	f()
}

// erase erases the bar, if one is on screen; p.mu is held.
func (p *progress) erase() {
	if p.width > 0 {
		fmt.Fprint(p.w, "\r"+strings.Repeat(" ", p.width)+"\r")
		p.width = 0
	}
}

const (
	barWidth = 16
	// barLineWidth is the width every line is padded to, so that a redraw
	// over "\r" covers the line before; the widest line the fields allow
	// (sizes below 1024 TiB) fits in it, so that no line wraps on a
	// terminal of 80 columns.
	barLineWidth = 79
)

// renderBar renders the bar for read of total bytes after elapsed:
// "[====>           ]  25.0%   25.00 MiB / 100.00 MiB    5.00 MiB/s ETA 0:15".
// The fields that change at every draw keep their width, so the line does
// not shift as it is redrawn.
func renderBar(read, total int64, elapsed time.Duration) string {
	frac := 0.0
	if total > 0 {
		frac = min(float64(read)/float64(total), 1)
	}
	filled := int(frac * barWidth)
	bar := strings.Repeat("=", filled)
	if filled < barWidth {
		bar += ">" + strings.Repeat(" ", barWidth-filled-1)
	}
	rate, eta := "-", "-"
	if secs := elapsed.Seconds(); secs > 0 && read > 0 {
		bps := float64(read) / secs
		rate = formatBytes(uint64(bps)) + "/s"
		// In seconds first: a time left beyond 292 years overflows a Duration.
		if left := float64(max(total-read, 0)) / bps; left > maxETA.Seconds() {
			eta = ">" + formatClock(maxETA)
		} else {
			eta = formatClock(time.Duration(left * float64(time.Second)))
		}
	}
	line := fmt.Sprintf("[%s] %5.1f%% %11s / %s %13s ETA %s", bar, 100*frac,
		formatBytes(uint64(max(read, 0))), formatBytes(uint64(max(total, 0))), rate, eta)
	if len(line) < barLineWidth {
		line += strings.Repeat(" ", barLineWidth-len(line))
	}
	return line
}

// maxETA is the longest time left the bar shows ("99:59:59"); beyond it
// shows ">99:59:59".
const maxETA = 100*time.Hour - time.Second

// formatClock renders d as m:ss, or h:mm:ss from an hour on.
func formatClock(d time.Duration) string {
	s := int64(d.Round(time.Second) / time.Second)
	if s >= 3600 {
		return fmt.Sprintf("%d:%02d:%02d", s/3600, s/60%60, s%60)
	}
	return fmt.Sprintf("%d:%02d", s/60, s%60)
}
