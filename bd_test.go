package tracemem

import (
	"testing"

	"github.com/tracemem/tracemem/internal/gen"
)

func BenchmarkBreakdownOnly(b *testing.B) {
	doc := benchDoc(b, gen.Config{Seed: 1, MemoryEvents: 1_000_000, Devices: 2, Spans: 250_000, SteadyGrowth: true})
	a, _ := replayDocument(doc, Options{}, false)
	b.ReportAllocs()
	for b.Loop() {
		_ = a.breakdown(0)
	}
}
