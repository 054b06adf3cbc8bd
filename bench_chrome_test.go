// bench_chrome_test.go benchmarks ReadChromeTrace on rendered PyTorch traces of generated runs.

package tracemem

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/tracemem/tracemem/internal/gen"
)

// BenchmarkReadChromeTrace reads a Kineto-style trace rendered from a
// generated 2-device training run (renderChrome: [memory] events with Addr
// and totals, cpu_op events with Input Dims, a cuda_runtime and a kernel
// event per op, deviceProperties): 10k memory events (6 MB), and 500k (about
// 310 MB, the "300 MB trace"; skipped with -short). MB/s comes from
// b.SetBytes; the target is ≥ 150 MB/s.
//
//	go test -run '^$' -bench ReadChromeTrace -benchtime 3x .
func BenchmarkReadChromeTrace(b *testing.B) {
	for _, tc := range []struct {
		name string
		n    int
	}{{"10k", 10_000}, {"500k", 500_000}} {
		b.Run(tc.name, func(b *testing.B) {
			if testing.Short() && tc.n > 10_000 {
				b.Skip("large trace skipped with -short")
			}
			orig := genDoc(b, gen.Config{Seed: 1, MemoryEvents: tc.n, Devices: 2})
			data, _ := renderChrome(b, orig, chromeRender{Addr: true, Totals: true,
				Capacity: map[string]uint64{"cuda:0": gen.CapacityBytes, "cuda:1": gen.CapacityBytes}})
			orig = nil
			benchChromeBytes(b, data)
			b.ReportMetric(float64(len(data))/float64(tc.n), "bytes/event")
		})
	}
}

// BenchmarkReadChromeTraceDevices reads a trace of 20k [memory] events, each
// on a device of its own (a read was quadratic in the number of devices).
func BenchmarkReadChromeTraceDevices(b *testing.B) {
	const n = 20_000
	var buf bytes.Buffer
	fmt.Fprintf(&buf, `{"traceEvents":[{"name":"aten::op","ph":"X","cat":"cpu_op","ts":0,"dur":%d,"pid":1,"tid":1}`, n+10)
	for i := range n {
		fmt.Fprintf(&buf, `,{"name":"[memory]","ph":"i","ts":%d,"pid":1,"tid":1,"args":{"Bytes":8,"Addr":%d,"Device Type":1,"Device Id":%d}}`, i+1, 4096+i, i)
	}
	buf.WriteString("]}")
	benchChromeBytes(b, buf.Bytes())
}

// benchChromeBytes reads data in b's loop.
func benchChromeBytes(b *testing.B, data []byte) {
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := ReadChromeTrace(bytes.NewReader(data)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReadChromeTraceCreep reads a trace of 40k spans on one thread,
// each starting and ending 1 ns after the one before, so each is the child
// of the one before by the 1 µs rounding rule (a read was quadratic in the
// depth of such a chain).
func BenchmarkReadChromeTraceCreep(b *testing.B) {
	const n = 40_000
	var buf bytes.Buffer
	buf.WriteString(`{"traceEvents":[`)
	for i := range n {
		fmt.Fprintf(&buf, `{"name":"aten::op%d","ph":"X","cat":"cpu_op","ts":%d.%03d,"dur":1000,"pid":1,"tid":1},`, i, i/1000, i%1000)
	}
	buf.WriteString(`{"name":"[memory]","ph":"i","ts":0.5,"pid":1,"tid":1,"args":{"Bytes":8,"Device Type":1,"Device Id":0}}]}`)
	benchChromeBytes(b, buf.Bytes())
}
