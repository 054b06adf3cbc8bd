// timeline_test.go tests MemoryProfile.PeakBetween on hand-made timelines, and on random profiles against a scan of every point and the devices' state recomputed from scratch.

package tracemem

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestPeakBetween: the window rules on a hand-made timeline of two devices.
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

// TestPeakBetweenRandom: PeakBetween on random traces and windows, by
// checkPeakBetween.
func TestPeakBetweenRandom(t *testing.T) {
	for seed := range 500 {
		r := rand.New(rand.NewPCG(uint64(seed), 17))
		doc := randomDoc(r)
		opts := Options{MaxTimelinePoints: r.IntN(4)}
		p, err := Analyze(doc, opts)
		if err != nil {
			t.Fatal(err)
		}
		windows := make([][2]uint64, 20)
		for i := range windows {
			windows[i] = [2]uint64{uint64(r.IntN(90)), uint64(r.IntN(90))}
		}
		t.Run("", func(t *testing.T) { checkPeakBetween(t, doc, p, windows) })
		if t.Failed() {
			t.Fatalf("seed %d", seed)
		}
	}
}

// checkPeakBetween checks p.PeakBetween, p a profile of doc, on each device
// of doc (and one it does not name) for each window: it equals a scan of
// every point of p; with the full timeline, the peak of the device's state
// recomputed from scratch (but for the documented exception, a duplicate
// alloc across devices); and over the whole trace and any window that holds
// a device's peak (downsampled or not), the device's peak.
func checkPeakBetween(t *testing.T, doc *TraceDocument, p *MemoryProfile, windows [][2]uint64) {
	t.Helper()
	devices := []string{"no such device"}
	for _, d := range p.ByDevice {
		devices = append(devices, d.Device)
	}
	var full *MemoryProfile // a point per event
	var evs []refEvent
	var liveAfter [][]refAllocation
	if !duplicateAcrossDevices(doc) {
		full = AnalyzeMemory(doc)
		evs, liveAfter = refReplay(refSorted(doc))
	}
	for _, dev := range devices {
		for _, w := range windows {
			got, ok := p.PeakBetween(dev, w[0], w[1])
			want, wantOK := refPeakBetween(p.Timeline, dev, w[0], w[1])
			if ok != wantOK || got != want {
				t.Fatalf("PeakBetween(%q, %d, %d) = %+v, %t; a scan of every point gives %+v, %t", dev, w[0], w[1], got, ok, want, wantOK)
			}
			if full == nil {
				continue
			}
			got, ok = full.PeakBetween(dev, w[0], w[1])
			want, wantOK = refTruePeak(evs, liveAfter, dev, w[0], w[1])
			if ok != wantOK || got.LiveBytes != want.LiveBytes || got.TimestampNs != want.TimestampNs {
				t.Fatalf("full timeline: PeakBetween(%q, %d, %d) = %d B at %d ns, %t; the device's state recomputed from scratch peaks at %d B at %d ns, %t", dev, w[0], w[1], got.LiveBytes, got.TimestampNs, ok, want.LiveBytes, want.TimestampNs, wantOK)
			}
		}
	}
	for _, d := range p.ByDevice {
		for _, w := range [][2]uint64{{0, math.MaxUint64}, {d.PeakTimestampNs, d.PeakTimestampNs}, {d.PeakTimestampNs - min(d.PeakTimestampNs, 3), d.PeakTimestampNs + 3}} {
			got, ok := p.PeakBetween(d.Device, w[0], w[1])
			if !ok || got.LiveBytes != d.PeakBytes || got.TimestampNs != d.PeakTimestampNs {
				t.Fatalf("%s, window %v: PeakBetween = %+v, %t; want the device's peak, %d B at %d ns", d.Device, w, got, ok, d.PeakBytes, d.PeakTimestampNs)
			}
		}
	}
}

// duplicateAcrossDevices tells whether doc allocates a tensor id again on
// another device while it is live: the one case where a device changes
// without a point of its own.
func duplicateAcrossDevices(doc *TraceDocument) bool {
	live := map[string]string{}
	for _, ev := range refSorted(doc) {
		d, ok := live[ev.TensorID]
		switch {
		case ev.Action == ActionAlloc && ok && d != ev.Device:
			return true
		case ev.Action == ActionAlloc:
			live[ev.TensorID] = ev.Device
		default:
			delete(live, ev.TensorID)
		}
	}
	return false
}

// refTruePeak is the highest of dev's live bytes from start to end by the
// device's state recomputed from scratch (refDeviceState): its state after
// the last event before start that changed it, and after each event in the
// window that changed it. A device has no state before its first event.
func refTruePeak(evs []refEvent, liveAfter [][]refAllocation, dev string, start, end uint64) (TimelinePoint, bool) {
	var best TimelinePoint
	ok := false
	if start > end {
		return best, false
	}
	consider := func(k int, ts uint64) {
		live, _ := refDeviceState(evs, liveAfter, dev, k)
		if !ok || live > best.LiveBytes {
			best, ok = TimelinePoint{TimestampNs: ts, Device: dev, LiveBytes: live}, true
		}
	}
	opening := -1
	for k, e := range evs {
		if e.dev == dev && e.ev.TimestampNs < start {
			opening = k
		}
	}
	if opening >= 0 {
		consider(opening, start)
	}
	for k, e := range evs {
		if e.dev == dev && e.ev.TimestampNs >= start && e.ev.TimestampNs <= end {
			consider(k, e.ev.TimestampNs)
		}
	}
	return best, ok
}

// TestPeakBetweenBeforeFirstPoint: the other exception PeakBetween's doc
// names. cuda:0's first event frees 1000 B of pre-existing memory at 5 ns:
// they were live from the trace's start, but no point shows them (Analyze's
// rule: a device's points come after its events), so neither does
// PeakBetween.
func TestPeakBetweenBeforeFirstPoint(t *testing.T) {
	doc := &TraceDocument{Memory: []MemoryEvent{
		{TimestampNs: 5, TensorID: "w", Device: "cuda:0", Bytes: 1000, Action: ActionFree},
		{TimestampNs: 10, TensorID: "a", Device: "cuda:0", Bytes: 300},
	}}
	p := AnalyzeMemory(doc)
	if p.Summary.PreexistingBytes != 1000 {
		t.Fatalf("PreexistingBytes = %d, want 1000", p.Summary.PreexistingBytes)
	}
	for _, tc := range []struct {
		start, end uint64
		live, at   uint64
		ok         bool
	}{
		{0, 4, 0, 0, false},    // before the first point: no state
		{0, 5, 0, 5, true},     // the first point, after the free
		{6, 20, 300, 10, true}, // the alloc in the window
	} {
		got, ok := p.PeakBetween("cuda:0", tc.start, tc.end)
		if ok != tc.ok || got.LiveBytes != tc.live || got.TimestampNs != tc.at {
			t.Errorf("PeakBetween(cuda:0, %d, %d) = %d B at %d ns, %t; want %d B at %d ns, %t, as its doc says", tc.start, tc.end, got.LiveBytes, got.TimestampNs, ok, tc.live, tc.at, tc.ok)
		}
	}
}

// TestPeakBetweenDuplicateAcrossDevices: the exception PeakBetween's doc
// names. A duplicate alloc of x on cuda:1 lowers cuda:0 to 0 B at 2 ns
// without a point, so cuda:0's state when a window opens at 5 ns is given
// as its last point, 1000 B; the Analyzer, which knows, says 0 B.
func TestPeakBetweenDuplicateAcrossDevices(t *testing.T) {
	doc := &TraceDocument{Memory: []MemoryEvent{
		{TimestampNs: 1, TensorID: "x", Device: "cuda:0", Bytes: 1000},
		{TimestampNs: 2, TensorID: "x", Device: "cuda:1", Bytes: 10},
		{TimestampNs: 9, TensorID: "y", Device: "cuda:0", Bytes: 1},
	}}
	if !duplicateAcrossDevices(doc) {
		t.Fatal("duplicateAcrossDevices missed the duplicate")
	}
	a := NewAnalyzer(Options{})
	for i := range doc.Memory[:2] {
		if err := a.Add(&doc.Memory[i]); err != nil {
			t.Fatal(err)
		}
	}
	if live, _ := a.LiveBytes("cuda:0"); live != 0 {
		t.Fatalf("LiveBytes(cuda:0) after the duplicate = %d, want 0", live)
	}
	got, ok := AnalyzeMemory(doc).PeakBetween("cuda:0", 5, 8)
	if !ok || got.LiveBytes != 1000 || got.TimestampNs != 5 {
		t.Errorf("PeakBetween(cuda:0, 5, 8) = %d B at %d ns, %t; want 1000 B at 5 ns, true, as its doc says", got.LiveBytes, got.TimestampNs, ok)
	}
}
