// bench_chrome_test.go benchmarks ReadChromeTrace on rendered PyTorch traces of generated runs.

package tracemem

import (
	"bytes"
	"testing"

	"github.com/tracemem/tracemem/internal/gen"
)

// BenchmarkReadChromeTrace reads a Kineto-style trace (Addr, totals,
// deviceProperties) rendered from a generated 2-device training run: 10k
// memory events, and 1M (about 330 MB, the "300 MB trace"; skipped
// with -short). Report MB/s with b.SetBytes; the target is ≥ 150 MB/s.
//
//	go test -run '^$' -bench ReadChromeTrace -benchtime 3x .
func BenchmarkReadChromeTrace(b *testing.B) {
	for _, tc := range []struct {
		name string
		n    int
	}{{"10k", 10_000}, {"200k", 200_000}, {"1M", 1_000_000}} {
		b.Run(tc.name, func(b *testing.B) {
			if testing.Short() && tc.n > 10_000 {
				b.Skip("large trace skipped with -short")
			}
			orig := genDoc(b, gen.Config{Seed: 1, MemoryEvents: tc.n, Devices: 2})
			data, _ := renderChrome(b, orig, chromeRender{Addr: true, Totals: true,
				Capacity: map[string]uint64{"cuda:0": gen.CapacityBytes, "cuda:1": gen.CapacityBytes}})
			orig = nil
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if _, err := ReadChromeTrace(bytes.NewReader(data)); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(data))/float64(tc.n), "bytes/event")
		})
	}
}
