// timeline_test.go tests MemoryProfile.PeakBetween against hand-made timelines and a linear scan of random profiles.

package tracemem

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestPeakBetween(t *testing.T) {
	pt := func(ts uint64, dev string, live uint64) TimelinePoint {
		return TimelinePoint{TimestampNs: ts, Device: dev, LiveBytes: live, HeapBytes: live}
	}
	p := &MemoryProfile{Timeline: []TimelinePoint{
		pt(10, "a", 100),
		pt(20, "b", 900),
		pt(20, "a", 300),
		pt(30, "a", 200),
		pt(40, "a", 300),
		pt(50, "b", 50),
		pt(60, "a", 0),
	}}
	tests := []struct {
		name, why  string
		dev        string
		start, end uint64
		want       TimelinePoint
		ok         bool
	}{
		{"before the first point", "the device has no state before its first memory event", "a", 0, 9, TimelinePoint{}, false},
		{"ends at the first point", "both ends are included", "a", 0, 10, pt(10, "a", 100), true},
		{"state when the window opens", "a point holds until the device's next: 200 B live from 30 ns, stamped at the window's start", "a", 33, 39, pt(33, "a", 200), true},
		{"opening state beats the window", "the state when the window opens (300 B, from 40 ns) is higher than the window's point (0 B)", "a", 55, 70, pt(55, "a", 300), true},
		{"after the last point", "the last point holds for ever", "a", 100, 200, pt(100, "a", 0), true},
		{"first reached on ties", "300 B at 20 ns and again at 40 ns", "a", 15, 45, pt(20, "a", 300), true},
		{"tie with the opening state", "300 B live when the window opens at 25 ns (from 20 ns), and 300 B at 40 ns is not higher", "a", 25, 45, pt(25, "a", 300), true},
		{"point at the start is inside", "a point stamped at startNs is in the window, not the opening state", "a", 20, 20, pt(20, "a", 300), true},
		{"other device's points", "b's points are skipped: 900 B at 20 ns is b's", "b", 30, 45, pt(30, "b", 900), true},
		{"unknown device", "no point names it", "c", 0, math.MaxUint64, TimelinePoint{}, false},
		{"start after end", "an empty window", "a", 50, 40, TimelinePoint{}, false},
		{"the whole trace", "the device's peak", "b", 0, math.MaxUint64, pt(20, "b", 900), true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := p.PeakBetween(tc.dev, tc.start, tc.end)
			if ok != tc.ok || got != tc.want {
				t.Errorf("PeakBetween(%q, %d, %d) = %+v, %t; want %+v, %t (%s)", tc.dev, tc.start, tc.end, got, ok, tc.want, tc.ok, tc.why)
			}
		})
	}
	var empty MemoryProfile
	if got, ok := empty.PeakBetween("a", 0, math.MaxUint64); ok || got != (TimelinePoint{}) {
		t.Errorf("empty profile: %+v, %t; want the zero point, false", got, ok)
	}
}

// refPeakBetween is PeakBetween by a scan of every point.
func refPeakBetween(tl []TimelinePoint, dev string, start, end uint64) (TimelinePoint, bool) {
	var open *TimelinePoint // the device's state when the window opens
	var best TimelinePoint
	ok := false
	for i := range tl {
		q := tl[i]
		switch {
		case q.Device != dev || start > end:
		case q.TimestampNs < start:
			open = &tl[i]
		case q.TimestampNs <= end:
			if !ok && open != nil {
				best, ok = *open, true
				best.TimestampNs = start
			}
			if !ok || q.LiveBytes > best.LiveBytes {
				best, ok = q, true
			}
		}
	}
	if !ok && open != nil && start <= end {
		best, ok = *open, true
		best.TimestampNs = start
	}
	return best, ok
}

// TestPeakBetweenRandom: on random traces, PeakBetween equals a scan of every
// point for random windows; over the whole trace, and over any window that
// holds a device's peak (downsampled or not), it is the device's peak.
func TestPeakBetweenRandom(t *testing.T) {
	devices := []string{"cuda:0", "cuda:1", "cpu", "nowhere"}
	for seed := range 500 {
		r := rand.New(rand.NewPCG(uint64(seed), 17))
		doc := randomDoc(r)
		opts := Options{MaxTimelinePoints: r.IntN(4)}
		p, err := Analyze(doc, opts)
		if err != nil {
			t.Fatal(err)
		}
		for range 20 {
			dev := devices[r.IntN(len(devices))]
			start, end := uint64(r.IntN(90)), uint64(r.IntN(90))
			got, ok := p.PeakBetween(dev, start, end)
			want, wantOK := refPeakBetween(p.Timeline, dev, start, end)
			if ok != wantOK || got != want {
				t.Fatalf("seed %d: PeakBetween(%q, %d, %d) = %+v, %t; a scan of every point gives %+v, %t", seed, dev, start, end, got, ok, want, wantOK)
			}
		}
		for _, d := range p.ByDevice {
			for _, w := range [][2]uint64{{0, math.MaxUint64}, {d.PeakTimestampNs, d.PeakTimestampNs}, {d.PeakTimestampNs - min(d.PeakTimestampNs, 3), d.PeakTimestampNs + 3}} {
				got, ok := p.PeakBetween(d.Device, w[0], w[1])
				if !ok || got.LiveBytes != d.PeakBytes || got.TimestampNs != d.PeakTimestampNs {
					t.Fatalf("seed %d, %s, window %v: PeakBetween = %+v, %t; want the device's peak, %d B at %d ns", seed, d.Device, w, got, ok, d.PeakBytes, d.PeakTimestampNs)
				}
			}
		}
	}
}
