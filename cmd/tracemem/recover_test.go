// recover_test.go checks that a panic while a trace is read or analyzed
// becomes an error naming the file, on every path of analyze.

package main

import (
	"bytes"
	"errors"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/tracemem/tracemem"
)

// panicReader gives data, then panics when asked for more than its first
// n bytes (a stand-in for a panic anywhere below analyze).
type panicReader struct {
	data []byte
	n    int
}

var errPanicked = errors.New("boom")

func (r *panicReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 || r.n <= 0 {
		panic(errPanicked)
	}
	k := min(len(p), r.n, len(r.data))
	copy(p, r.data[:k])
	r.data, r.n = r.data[k:], r.n-k
	return k, nil
}

// TestAnalyzeRecovers: a panic below analyze is reported as an internal
// error of the file, whichever reader was running, and the span collector
// the stream started ends with it (found untested by a review: nothing in
// the library panics, so no other test reaches the recover).
func TestAnalyzeRecovers(t *testing.T) {
	jsonl, err := os.ReadFile(sample(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(jsonl) <= sniffSize+4096 {
		t.Fatalf("the sample is %d bytes, within the sniffed %d", len(jsonl), sniffSize)
	}
	_, _, _, gz := writeForms(t, jsonl)
	// A document past the MiB that is sniffed, so that the panic comes in
	// ReadTrace: the sample's memory events twice.
	d, err := tracemem.ReadTrace(bytes.NewReader(jsonl))
	if err != nil {
		t.Fatal(err)
	}
	d.Memory = append(d.Memory, d.Memory...)
	doc, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	if len(doc) <= sniffSize*5/4 {
		t.Fatalf("the document form is %d bytes, within the sniffed %d", len(doc), sniffSize)
	}
	for _, c := range []struct {
		name   string
		data   []byte
		n      int // bytes read before the panic
		lo     loadOptions
		reason string
	}{
		{"first read", jsonl, 0, loadOptions{}, "while the format is sniffed"},
		{"stream tapped", jsonl, sniffSize + 4096, loadOptions{wantNodes: true}, "past the sniffed MiB, in a stream whose spans a collector takes"},
		{"stream untapped", jsonl, sniffSize + 4096, loadOptions{noSpans: true}, "past the sniffed MiB, in a stream read alone"},
		{"gzip", gz, len(gz) / 2, loadOptions{}, "inside the decompressor's reads"},
		{"document", doc, sniffSize * 5 / 4, loadOptions{}, "while ReadTrace reads a document past the sniffed MiB"},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := runtime.NumGoroutine()
			tr, err := analyze(&source{name: "t.jsonl", r: &panicReader{data: c.data, n: c.n}, size: -1}, c.lo, nil)
			want := "t.jsonl: internal error: boom"
			if tr != nil || err == nil || err.Error() != want {
				t.Fatalf("%s: analyze = %v, %v; want nil, %q", c.reason, tr, err, want)
			}
			// The collector's goroutine, if any, has ended.
			for deadline := time.Now().Add(10 * time.Second); runtime.NumGoroutine() > before; {
				if time.Now().After(deadline) {
					t.Fatalf("%s: %d goroutines left running, %d before", c.reason, runtime.NumGoroutine(), before)
				}
				time.Sleep(time.Millisecond)
			}
		})
	}
}
