// bench_analyze_test.go holds the analysis benchmarks: Analyze, NodeMemoryMetrics and AnalyzeStream on generated traces.

package tracemem

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"testing"

	"github.com/tracemem/tracemem/internal/gen"
)

var benchBig = flag.Bool("bench.big", false, "also run the analysis benchmarks on 10M-event traces (a 4 GB file in a temp dir)")

// benchSizes returns the event counts of the analysis benchmarks.
func benchSizes() []int {
	if testing.Short() {
		return []int{10_000}
	}
	if *benchBig {
		return []int{1_000_000, 10_000_000}
	}
	return []int{1_000_000}
}

// genFile writes a generated trace to a file in the benchmark's temp dir.
func genFile(b *testing.B, cfg gen.Config) (string, gen.Stats) {
	b.Helper()
	path := filepath.Join(b.TempDir(), "trace.jsonl")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	st, err := gen.Write(f, cfg)
	if err == nil {
		// On disk before any timed read, so that no write-back of a 4 GB
		// file runs during one.
		err = f.Sync()
	}
	if err == nil {
		err = f.Close()
	}
	if err != nil {
		b.Fatal(err)
	}
	return path, st
}

func benchDoc(b *testing.B, cfg gen.Config) *TraceDocument {
	b.Helper()
	path, _ := genFile(b, cfg)
	doc, err := ReadTraceFile(path)
	if err != nil {
		b.Fatal(err)
	}
	runtime.GC()
	return doc
}

func reportPerEvent(b *testing.B, events int) {
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(events), "ns/event")
}

// BenchmarkAnalyze: one profile of a whole in-memory document, one point per
// event (the default) and with MaxTimelinePoints 1000. Targets (issue 3):
// 1M events ≤ 0.35 s; 10M ≤ 12× the 1M time.
func BenchmarkAnalyze(b *testing.B) {
	for _, n := range benchSizes() {
		doc := benchDoc(b, gen.Config{Seed: 1, MemoryEvents: n, Devices: 2, Spans: n / 4})
		for _, maxPoints := range []int{0, 1000} {
			for _, cold := range []bool{false, true} {
				b.Run(fmt.Sprintf("events=%d/points=%d/memory=%s", n, maxPoints, memoryName(cold)), func(b *testing.B) {
					b.ReportAllocs()
					warmUp(cold, func() { _, _ = Analyze(doc, Options{MaxTimelinePoints: maxPoints}) })
					var p *MemoryProfile
					for b.Loop() {
						coldStart(b, cold)
						var err error
						if p, err = Analyze(doc, Options{MaxTimelinePoints: maxPoints}); err != nil {
							b.Fatal(err)
						}
					}
					reportPerEvent(b, n)
					b.ReportMetric(float64(len(p.Timeline)), "points")
					b.ReportMetric(float64(len(p.PeakBreakdown)), "breakdown")
				})
			}
		}
	}
}

func memoryName(cold bool) string {
	if cold {
		return "cold"
	}
	return "warm"
}

// warmUp, unless cold, makes three calls before the timed ones (b.Loop
// starts the timer afterwards), so that the heap has grown to what a call
// needs and the garbage collector's pacing has settled: otherwise the first
// timed calls of a warm run fault fresh memory in, as cold ones do.
func warmUp(cold bool, call func()) {
	if !cold {
		for range 3 {
			call()
		}
	}
}

// coldStart, when cold, returns the memory the heap holds free to the
// operating system (outside the timer), so that what the next call
// allocates is memory the process has not touched yet: the case of the
// first call in a process, such as a command's. Warm calls mostly reuse
// memory the previous call freed.
func coldStart(b *testing.B, cold bool) {
	if !cold {
		return
	}
	b.StopTimer()
	debug.FreeOSMemory()
	b.StartTimer()
}

// BenchmarkAnalyzeSteadyGrowth: every alloc is a new peak (a long forward
// pass); the target is no slower per event than BenchmarkAnalyze, whose
// trace has the same number of spans per event. Nothing is done per peak,
// but a million tensors stay live, and the answer's peak breakdown lists
// the half of them on the peak device (see BenchmarkReplay for the replay
// alone). The control, peak=first, is the same trace after a balloon
// allocated and freed first on each device, bigger than all the rest: the
// same replay, one peak per device, a breakdown of one entry. The
// difference between the two is what the peaks and their breakdown cost.
func BenchmarkAnalyzeSteadyGrowth(b *testing.B) {
	for _, n := range benchSizes()[:1] {
		doc := benchDoc(b, gen.Config{Seed: 1, MemoryEvents: n, Devices: 2, Spans: n / 4, SteadyGrowth: true})
		for _, c := range []struct {
			name string
			doc  func() *TraceDocument
		}{
			{"every-alloc", func() *TraceDocument { return doc }},
			// Made for its own runs only: its copy of the events (128 MB
			// at 1M) would make every garbage collection of the other runs
			// longer.
			{"first", func() *TraceDocument { return withBalloons(doc) }},
		} {
			for _, cold := range []bool{false, true} {
				b.Run(fmt.Sprintf("events=%d/peak=%s/memory=%s", n, c.name, memoryName(cold)), func(b *testing.B) {
					doc := c.doc()
					runtime.GC()
					b.ReportAllocs()
					warmUp(cold, func() { _, _ = Analyze(doc, Options{}) })
					var p *MemoryProfile
					for b.Loop() {
						coldStart(b, cold)
						var err error
						if p, err = Analyze(doc, Options{}); err != nil {
							b.Fatal(err)
						}
					}
					reportPerEvent(b, n)
					b.ReportMetric(float64(len(p.PeakBreakdown)), "breakdown")
				})
			}
		}
	}
}

// withBalloons returns doc with, on each device, an alloc and a free of a
// tensor bigger than all of doc's allocations put first.
func withBalloons(doc *TraceDocument) *TraceDocument {
	var total uint64
	var devices []string
	for i := range doc.Memory {
		ev := &doc.Memory[i]
		total += ev.Bytes
		if !slices.Contains(devices, ev.Device) {
			devices = append(devices, ev.Device)
		}
	}
	var mem []MemoryEvent
	for i, d := range devices {
		id := fmt.Sprintf("balloon%d", i)
		mem = append(mem,
			MemoryEvent{TensorID: id, Device: d, Bytes: total + 1, Action: ActionAlloc},
			MemoryEvent{TensorID: id, Device: d, Bytes: total + 1, Action: ActionFree})
	}
	c := *doc
	c.Memory = append(mem, doc.Memory...)
	return &c
}

// BenchmarkNodeMemoryMetrics: node metrics of a trace with 1M memory events
// and 250k spans. Target (issue 4): ≤ 1 s.
func BenchmarkNodeMemoryMetrics(b *testing.B) {
	n := benchSizes()[0]
	doc := benchDoc(b, gen.Config{Seed: 1, MemoryEvents: n, Devices: 2, Spans: n / 4})
	b.Run(fmt.Sprintf("events=%d/spans=%d", n, len(doc.Spans)), func(b *testing.B) {
		b.ReportAllocs()
		var m map[string]NodeMetrics
		for b.Loop() {
			m = NodeMemoryMetrics(doc, nil)
		}
		reportPerEvent(b, n)
		b.ReportMetric(float64(len(m)), "nodes")
	})
}

// BenchmarkStream: a JSONL file analyzed end to end with MaxTimelinePoints
// 1000, through AnalyzeStream (with and without node metrics) and, as the
// comparison rows, read by ReadTraceFile alone and then analyzed by
// Analyze. MB/s is end to end;
// peak-heap-MiB is the highest HeapAlloc sampled every 5 ms during the
// run. Targets (issue 5), on 10M events (-bench.big): ≥ 200 MB/s and peak
// resident memory ≤ 400 MB for the stream.
func BenchmarkStream(b *testing.B) {
	for _, n := range benchSizes() {
		path, st := genFile(b, gen.Config{Seed: 1, MemoryEvents: n, Devices: 2})
		opts := Options{MaxTimelinePoints: 1000}
		skip := Options{MaxTimelinePoints: 1000, SkipNodeMetrics: true}
		run := func(name string, analyze func() error) {
			b.Run(fmt.Sprintf("events=%d/%s", n, name), func(b *testing.B) {
				b.SetBytes(st.Bytes)
				b.ReportAllocs()
				runtime.GC()
				var peak uint64
				for b.Loop() {
					stop := heapWatch()
					err := analyze()
					peak = max(peak, stop())
					if err != nil {
						b.Fatal(err)
					}
				}
				reportPerEvent(b, n)
				b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
			})
		}
		run("AnalyzeStream", func() error {
			f, err := os.Open(path)
			if err != nil {
				return err
			}
			defer f.Close()
			_, _, err = AnalyzeStream(f, skip)
			return err
		})
		run("AnalyzeStream+nodes", func() error {
			f, err := os.Open(path)
			if err != nil {
				return err
			}
			defer f.Close()
			_, _, err = AnalyzeStream(f, opts)
			return err
		})
		run("AddJSONLine", func() error {
			// The same trace a line at a time, as a program following
			// it would feed it: bufio.Scanner and Analyzer.AddJSONLine.
			f, err := os.Open(path)
			if err != nil {
				return err
			}
			defer f.Close()
			a := NewAnalyzer(skip)
			sc := bufio.NewScanner(f)
			sc.Buffer(make([]byte, 0, 64<<10), 64<<20)
			for sc.Scan() {
				if err := a.AddJSONLine(sc.Bytes()); err != nil {
					return err
				}
			}
			a.Profile()
			return sc.Err()
		})
		run("ReadTraceFile", func() error {
			_, err := ReadTraceFile(path)
			return err
		})
		run("ReadTrace+Analyze", func() error {
			doc, err := ReadTraceFile(path)
			if err != nil {
				return err
			}
			_, err = Analyze(doc, opts)
			return err
		})
	}
}

// BenchmarkReplay: the replay alone (no profile built), on the traces of
// BenchmarkAnalyze and BenchmarkAnalyzeSteadyGrowth, one point per event.
// It separates the cost per event from the cost of the answer: a peak
// breakdown of every allocation is part of the steady-growth answer.
func BenchmarkReplay(b *testing.B) {
	n := benchSizes()[0]
	for _, steady := range []bool{false, true} {
		doc := benchDoc(b, gen.Config{Seed: 1, MemoryEvents: n, Devices: 2, Spans: n / 4, SteadyGrowth: steady})
		b.Run(fmt.Sprintf("events=%d/steady=%t", n, steady), func(b *testing.B) {
			b.ReportAllocs()
			warmUp(false, func() { _, _ = replayDocument(doc, Options{}, false) })
			for b.Loop() {
				if _, err := replayDocument(doc, Options{}, false); err != nil {
					b.Fatal(err)
				}
			}
			reportPerEvent(b, n)
		})
	}
}

// BenchmarkAnalyzerAsk: one question to an Analyzer that replayed the 1M
// traces of BenchmarkAnalyze and BenchmarkAnalyzeSteadyGrowth with
// MaxTimelinePoints 1000, as a program that follows a trace would ask it:
// Summary, LiveBytes and DeviceStats against Profile, whose cost grows with
// the allocations live at the peak (its breakdown).
func BenchmarkAnalyzerAsk(b *testing.B) {
	n := benchSizes()[0]
	for _, steady := range []bool{false, true} {
		doc := benchDoc(b, gen.Config{Seed: 1, MemoryEvents: n, Devices: 2, Spans: n / 4, SteadyGrowth: steady})
		a, err := replayDocument(doc, Options{MaxTimelinePoints: 1000}, false)
		if err != nil {
			b.Fatal(err)
		}
		dev := doc.Memory[len(doc.Memory)-1].Device
		for _, q := range []struct {
			name string
			ask  func() uint64
		}{
			{"Summary", func() uint64 { return a.Summary().PeakBytes }},
			{"LiveBytes", func() uint64 { b, _ := a.LiveBytes(dev); return b }},
			{"DeviceStats", func() uint64 { s, _ := a.DeviceStats(dev); return s.PeakBytes }},
			{"Profile", func() uint64 { return a.Profile().Summary.PeakBytes }},
		} {
			b.Run(fmt.Sprintf("events=%d/steady=%t/%s", n, steady, q.name), func(b *testing.B) {
				b.ReportAllocs()
				var sink uint64
				for b.Loop() {
					sink += q.ask()
				}
				if sink == 0 {
					b.Fatal("every answer was 0")
				}
			})
		}
	}
}
