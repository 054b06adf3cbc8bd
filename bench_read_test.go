// bench_read_test.go holds the reading benchmarks: throughput, allocations per memory event and live heap of the document.

package tracemem

import (
	"bytes"
	"compress/gzip"
	"flag"
	"fmt"
	"io"
	"runtime"
	"sync"
	"testing"

	"github.com/tracemem/tracemem/internal/gen"
)

var benchEvents = flag.Int("bench.events", 1_000_000, "memory events of the generated trace of the read benchmarks")

var (
	benchOnce  sync.Once
	benchTrace []byte
	benchStats gen.Stats
)

// benchInput returns the generated JSONL trace of the read benchmarks
// (-bench.events memory events, 2 devices, seed 1; 10k events with -short).
func benchInput(b *testing.B) ([]byte, gen.Stats) {
	benchOnce.Do(func() {
		n := *benchEvents
		if testing.Short() {
			n = 10_000
		}
		var buf bytes.Buffer
		st, err := gen.Write(&buf, gen.Config{Seed: 1, MemoryEvents: n, Devices: 2})
		if err != nil {
			b.Fatal(err)
		}
		benchTrace, benchStats = buf.Bytes(), st
	})
	return benchTrace, benchStats
}

// BenchmarkReadTraceJSONL reads the generated trace: MB/s from SetBytes,
// allocs/event = all allocations of one read / memory events, live-MB = the
// heap the resulting document holds after a GC (input bytes excluded).
// Targets (issue 2): >= 250 MB/s, <= 3 allocs/event, <= 400 live-MB at 1M
// events.
func BenchmarkReadTraceJSONL(b *testing.B) {
	data, st := benchInput(b)
	benchRead(b, data, st)
}

// benchRead reads data, the benchmarks' trace in some form, and reports
// the metrics of BenchmarkReadTraceJSONL.
func benchRead(b *testing.B, data []byte, st gen.Stats) {
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	var doc *TraceDocument
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	b.ResetTimer()
	for b.Loop() {
		doc = nil
		var err error
		doc, err = ReadTrace(bytes.NewReader(data))
		if err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	runtime.ReadMemStats(&m1)
	b.ReportMetric(float64(m1.Mallocs-m0.Mallocs)/float64(b.N)/float64(st.Memory), "allocs/event")
	if int64(len(doc.Memory)) != st.Memory {
		b.Fatalf("read %d memory events, generated %d", len(doc.Memory), st.Memory)
	}
	// live heap of one document: heap with the document minus heap without it
	runtime.GC()
	runtime.ReadMemStats(&m1)
	withDoc := m1.HeapAlloc
	runtime.KeepAlive(doc)
	doc = nil
	runtime.GC()
	runtime.ReadMemStats(&m1)
	b.ReportMetric(float64(withDoc-m1.HeapAlloc)/1e6, "live-MB")
	b.ReportMetric(float64(len(data))/1e6, "input-MB")
}

// BenchmarkReadTraceDocument reads the same trace in the document form.
func BenchmarkReadTraceDocument(b *testing.B) {
	data, st := benchInput(b)
	doc, err := ReadTrace(bytes.NewReader(data))
	if err != nil {
		b.Fatal(err)
	}
	var buf bytes.Buffer
	if err := doc.WriteJSON(&buf); err != nil {
		b.Fatal(err)
	}
	doc = nil
	benchRead(b, buf.Bytes(), st)
}

// BenchmarkReadTraceGzip reads the gzip-compressed trace (SetBytes counts
// the decompressed bytes).
func BenchmarkReadTraceGzip(b *testing.B) {
	data, _ := benchInput(b)
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	zw.Write(data)
	zw.Close()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ReadTrace(bytes.NewReader(buf.Bytes())); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReadTraceSpanEnds reads 200k spans of no memory, ended in three
// orders: the span opened last first (nested, as a trace written as things
// happen has them), the span opened first first (each end is looked up among
// all spans), and an old span ended after every second new one, the rest
// never. A span_end's span is found among the last few opened, else in a
// map: each order should read at about the same speed, linear in the spans.
func BenchmarkReadTraceSpanEnds(b *testing.B) {
	const n = 200_000
	for _, order := range []string{"last-first", "first-first", "old-after-new"} {
		b.Run("order="+order, func(b *testing.B) {
			var buf bytes.Buffer
			buf.WriteString(tMeta + "\n")
			end := func(i int) { fmt.Fprintf(&buf, `{"kind":"span_end","id":"s%d","duration_ns":1}`+"\n", i) }
			for i := range n {
				fmt.Fprintf(&buf, `{"kind":"span_start","id":"s%d","name":"n","start_ns":%d,"span_kind":"module","measured":false}`+"\n", i, i)
				if order == "old-after-new" && i%2 == 1 {
					end(i / 2)
				}
			}
			for i := range n {
				switch order {
				case "last-first":
					end(n - 1 - i)
				case "first-first":
					end(i)
				}
			}
			b.SetBytes(int64(buf.Len()))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := ReadTrace(bytes.NewReader(buf.Bytes())); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkWrite writes the document of the generated trace in each form
// (SetBytes counts what it writes).
func BenchmarkWrite(b *testing.B) {
	data, _ := benchInput(b)
	doc, err := ReadTrace(bytes.NewReader(data))
	if err != nil {
		b.Fatal(err)
	}
	for _, form := range []struct {
		name  string
		write func(io.Writer) error
	}{
		{"jsonl", doc.WriteJSONL},
		{"json", doc.WriteJSON},
	} {
		b.Run("form="+form.name, func(b *testing.B) {
			var buf bytes.Buffer
			b.ReportAllocs()
			for b.Loop() {
				buf.Reset()
				if err := form.write(&buf); err != nil {
					b.Fatal(err)
				}
				b.SetBytes(int64(buf.Len()))
			}
		})
	}
}
