// bench_test.go holds the benchmarks of the command end to end on generated traces.

package main

import (
	"bytes"
	"flag"
	"fmt"
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

// TestMain removes the benchmarks' generated traces. Run with
// TRACEMEM_TEST_AS_COMMAND set, the test binary is the command instead
// (see asCommand).
func TestMain(m *testing.M) {
	asCommand()
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
				full, out := benchArgs(b, args, path)
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

// shapeTrace writes a trace of one of the shapes the reviews measured
// (as their generator writes them) to a temporary file and returns its
// path: "devk" (n devices, 100 allocs each), "deep" (a chain of n spans,
// one alloc in each) or "chainleaf" (a chain of 1100 spans, n allocs in
// the innermost).
func shapeTrace(b *testing.B, shape string, n int) string {
	b.Helper()
	var w bytes.Buffer
	w.WriteString(`{"kind": "meta", "schema": "candle-graph/trace/6", "run_id": "r", "correlation_id": "c", "entrypoint": "e", "phase": "train", "timestamp": "2026-12-01T00:00:00Z", "capture_step": 1, "warmup_steps": 0, "device": "cuda:0", "timing_mode": "host", "tags": {}}` + "\n")
	mem := func(t, tensor, span int, dev int) {
		fmt.Fprintf(&w, `{"kind":"memory","timestamp_ns":%d,"tensor_id":"t%d","span_id":"s%d","device":"cuda:%d","bytes":8,"action":"alloc","shape":[8],"dtype":"u8","category":"activation","op_name":"x"}`+"\n", t, tensor, span, dev)
	}
	start := func(i, t int) {
		parent := ""
		if i > 0 {
			parent = `,"parent_id":"s` + strconv.Itoa(i-1) + `"`
		}
		fmt.Fprintf(&w, `{"kind":"span_start","id":"s%d","name":"n%d","start_ns":%d,"span_kind":"function","measured":true%s}`+"\n", i, i, t, parent)
	}
	end := func(i, d int) { fmt.Fprintf(&w, `{"kind":"span_end","id":"s%d","duration_ns":%d}`+"\n", i, d) }
	switch shape {
	case "devk":
		start(0, 0)
		for k := range 100 {
			for j := range n {
				mem(k*n+j, k*n+j, 0, j)
			}
		}
		end(0, 100*n+1)
	case "deep":
		for i := range n {
			start(i, i)
			mem(i, i, i, 0)
		}
		for i := n - 1; i >= 0; i-- {
			end(i, 2*n-2*i)
		}
	case "chainleaf":
		const depth = 1100
		for i := range depth {
			start(i, 0)
		}
		for j := range n {
			mem(j, j, depth-1, 0)
		}
		for i := depth - 1; i >= 0; i-- {
			end(i, n+1)
		}
	default:
		b.Fatalf("no shape %q", shape)
	}
	path := filepath.Join(b.TempDir(), shape+".jsonl")
	if err := os.WriteFile(path, w.Bytes(), 0o644); err != nil {
		b.Fatal(err)
	}
	return path
}

// benchArgs returns args, with "OUT" replaced by out, a file in b's temp
// dir, followed by the trace's path.
func benchArgs(b *testing.B, args []string, path string) (full []string, out string) {
	out = filepath.Join(b.TempDir(), "out")
	full = make([]string, 0, len(args)+1)
	for _, a := range args {
		if a == "OUT" {
			a = out
		}
		full = append(full, a)
	}
	return append(full, path), out
}

// benchShape runs the command with args on a trace of shape and size n,
// output to a file, "OUT" in args.
func benchShape(b *testing.B, shape string, n int, args ...string) {
	full, _ := benchArgs(b, args, shapeTrace(b, shape, n))
	b.ReportAllocs()
	for b.Loop() {
		if code := run(full, nil, io.Discard, io.Discard); code != 0 {
			b.Fatalf("%v: exit %d", full, code)
		}
	}
}

// BenchmarkReportDevices: the report of 1000 devices of 100 points each
// (devices × points when each chart scanned the whole timeline).
func BenchmarkReportDevices(b *testing.B) { benchShape(b, "devk", 1000, "report", "-o", "OUT") }

// BenchmarkSummaryDeep: summary --top 0 of a chain of 5000 spans, one
// alloc in each (quadratic in depth when each path walked its whole chain).
func BenchmarkSummaryDeep(b *testing.B) { benchShape(b, "deep", 5000, "summary", "--top", "0") }

// BenchmarkPprofChainLeaf: the pprof export of 5000 allocs in the leaf of
// a chain of 1100 spans (a stack of 1024 frames copied per sample when
// each sample built its own).
func BenchmarkPprofChainLeaf(b *testing.B) {
	benchShape(b, "chainleaf", 5000, "export", "--format", "pprof", "-o", "OUT")
}
