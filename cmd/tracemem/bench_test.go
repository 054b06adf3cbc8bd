// bench_test.go holds the benchmarks of the command end to end on generated traces.

package main

import (
	"bytes"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"github.com/tracemem/tracemem"
	"github.com/tracemem/tracemem/internal/gen"
)

// benchSizes are the memory events of the generated traces; the largest is
// skipped with -short.
var benchSizes = []int{100_000, 1_000_000}

// benchTraces caches the generated traces by size for the process.
var benchTraces = struct {
	sync.Mutex
	dir   string
	paths map[int]string
	sizes map[int]int64
}{paths: map[int]string{}, sizes: map[int]int64{}}

// TestMain removes the benchmarks' generated traces.
func TestMain(m *testing.M) {
	flag.Parse()
	code := m.Run()
	if benchTraces.dir != "" {
		os.RemoveAll(benchTraces.dir)
	}
	os.Exit(code)
}

// benchTrace returns a generated training trace of n memory events on two
// devices, written once to a temporary file, and its size.
func benchTrace(b *testing.B, n int) (string, int64) {
	b.Helper()
	if n > 100_000 && testing.Short() {
		b.Skip("large trace skipped with -short")
	}
	benchTraces.Lock()
	defer benchTraces.Unlock()
	if p, ok := benchTraces.paths[n]; ok {
		return p, benchTraces.sizes[n]
	}
	if benchTraces.dir == "" {
		dir, err := os.MkdirTemp("", "tracemem-bench-")
		if err != nil {
			b.Fatal(err)
		}
		benchTraces.dir = dir
	}
	path := filepath.Join(benchTraces.dir, "trace-"+strconv.Itoa(n)+".jsonl")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	st, err := gen.Write(f, gen.Config{Seed: 1, MemoryEvents: n, Devices: 2})
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		b.Fatal(err)
	}
	benchTraces.paths[n], benchTraces.sizes[n] = path, st.Bytes
	return path, st.Bytes
}

// BenchmarkCommand runs summary, nodes, report and the exports on a
// generated trace, in-process, output discarded (files for report/export).
func BenchmarkCommand(b *testing.B) {
	for _, n := range benchSizes {
		for _, args := range [][]string{
			{"summary"},
			{"nodes"},
			{"profile", "--max-points", "1000"},
			{"report", "-o", "OUT"},
			{"export", "--format", "pprof", "-o", "OUT"},
			{"export", "--format", "chrome", "--max-points", "2000", "-o", "OUT"},
			{"export", "--format", "csv", "-o", "OUT"},
		} {
			name := args[0]
			if args[0] == "export" {
				name += "-" + args[2]
			}
			b.Run(name+"/events="+strconv.Itoa(n), func(b *testing.B) {
				path, size := benchTrace(b, n)
				out := filepath.Join(b.TempDir(), "out")
				full := make([]string, 0, len(args)+1)
				for _, a := range args {
					if a == "OUT" {
						a = out
					}
					full = append(full, a)
				}
				full = append(full, path)
				b.SetBytes(size)
				b.ReportAllocs()
				for b.Loop() {
					if code := run(full, nil, io.Discard, io.Discard); code != 0 {
						b.Fatalf("%v: exit %d", full, code)
					}
				}
				if fi, err := os.Stat(out); err == nil {
					b.ReportMetric(float64(fi.Size()), "out-bytes")
				}
			})
		}
	}
}

// BenchmarkTap measures the span tap's cost: the same streaming analysis
// with and without the tap in front of it.
func BenchmarkTap(b *testing.B) {
	path, size := benchTrace(b, benchSizes[0])
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	opts := tracemem.Options{MaxTimelinePoints: 16, SkipNodeMetrics: true}
	b.Run("without", func(b *testing.B) {
		b.SetBytes(size)
		b.ReportAllocs()
		for b.Loop() {
			if _, _, err := tracemem.AnalyzeStream(bytes.NewReader(data), opts); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("with", func(b *testing.B) {
		b.SetBytes(size)
		b.ReportAllocs()
		for b.Loop() {
			c := newCollector(false)
			tap := newLineTap(bytes.NewReader(data), c)
			if _, _, err := tracemem.AnalyzeStream(tap, opts); err != nil {
				b.Fatal(err)
			}
			if err := tap.wait(); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkSpanLanes: the Chrome export's thread placement of 100k spans,
// per span: a loop of steps whose spans nest (one thread), children that
// cannot go on their parent's thread, and spans of no length under one
// parent at one instant (a thread each); the last two once took quadratic
// time.
func BenchmarkSpanLanes(b *testing.B) {
	const n = 100_000
	for _, c := range []struct {
		name string
		add  func(t *spanTree)
	}{
		{"nested", func(t *spanTree) {
			for i := range uint64(n / 4) {
				step := "step" + strconv.FormatUint(i, 10)
				t.addSpan(spanInfo{id: step, name: "step", startNs: 100 * i, closed: true, durationNs: 100})
				for j := range uint64(3) {
					t.addSpan(spanInfo{id: step + "/" + strconv.FormatUint(j, 10), parent: step, name: "op", startNs: 100*i + 30*j, closed: true, durationNs: 20})
				}
			}
		}},
		{"beside-a-sibling", func(t *spanTree) {
			// Children of root that cannot go under it on its thread (a
			// long sibling is open there), after a deep chain that ended:
			// quadratic before the chain was dropped once (from a review).
			t.addSpan(spanInfo{id: "root", name: "root", closed: true, durationNs: 1e9})
			t.addSpan(spanInfo{id: "x", parent: "root", name: "x", startNs: 1, closed: true, durationNs: 1e9 - 3})
			parent := "x"
			for i := range uint64(n/2 - 1) {
				id := "c" + strconv.FormatUint(i, 10)
				t.addSpan(spanInfo{id: id, parent: parent, name: "c", startNs: 2 + i, closed: true, durationNs: 1e6 - 2*i - 4})
				parent = id
			}
			for i := range uint64(n / 2) {
				t.addSpan(spanInfo{id: "s" + strconv.FormatUint(i, 10), parent: "root", name: "s", startNs: 2e6 + 10*i, closed: true, durationNs: 5})
			}
		}},
		{"no-length", func(t *spanTree) {
			t.addSpan(spanInfo{id: "root", name: "root", closed: true, durationNs: 100})
			for i := range n - 1 {
				t.addSpan(spanInfo{id: strconv.Itoa(i), parent: "root", name: "op", startNs: 50, closed: true})
			}
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			tree := newSpanTree()
			c.add(tree)
			b.ReportAllocs()
			for b.Loop() {
				spanLanes(tree, 0)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/span")
		})
	}
}
