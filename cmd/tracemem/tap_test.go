// tap_test.go holds tests of the line tap's memory on long lines.

package main

import (
	"bytes"
	"io"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/tracemem/tracemem"
)

// TestTapLongBlankLines: white space alone on a line, or before a record, is
// not held by the tap, and the record after it is still collected (a 522 KB
// gzip stream of a 512 MiB blank line took summary 3.3 GB and 52 s; found by
// a resource review).
func TestTapLongBlankLines(t *testing.T) {
	data, err := os.ReadFile(sample(t))
	if err != nil {
		t.Fatal(err)
	}
	first, rest, _ := bytes.Cut(data, []byte("\n"))
	const n = 64 << 20
	// A blank line of n spaces, then n spaces before the second record; made
	// once, before the measure.
	blank := "\n" + strings.Repeat(" ", n) + "\n" + strings.Repeat(" ", n)
	trace := func() io.Reader {
		return io.MultiReader(bytes.NewReader(first), strings.NewReader(blank), bytes.NewReader(rest))
	}
	doc, err := tracemem.ReadTrace(trace())
	if err != nil {
		t.Fatal(err)
	}
	c := newCollector(true)
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	tap := newLineTap(trace(), c)
	if _, err := io.Copy(io.Discard, tap); err != nil {
		t.Fatal(err)
	}
	if err := tap.wait(); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&m1)
	// The tap copies what it reads into buffers it reuses when the collector
	// has given them back: 16 MB here, on this trace of 1 MB.
	if a := m1.TotalAlloc - m0.TotalAlloc; a > n/2 {
		t.Errorf("the tap allocated %d bytes for %d bytes of white space, want at most %d", a, 2*n, n/2)
	}
	checkCollected(t, c, doc, treeFromDocument(doc))
}
